"""Hand-check labels read against the latest build: what the rules now decide for each labelled pair.

A label file is a CSV with at least `repository`, `older`, `newer` and `verdict` (the files of
`docs/handcheck/`). A verdict says whether the newer PR really builds on the older one: `dep` (a
kept link judged right) or `real` (a dropped link that was a real dependency) are both dependent;
`borderline` and `not` are what they say. A `rule` column, where present, holds the rule that had
dropped the pair when it was labelled (empty: the link was kept then).

Scoring a store looks every labelled pair of its repositories up in `chain_links`, in either
orientation, and counts verdicts by today's decision: so a rule change is measured on every pair
ever labelled, not only on a new sample.
"""

from __future__ import annotations

import csv
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from sqlalchemy import Engine, select

from prchain.chains.building.links import drop_kind, list_links
from prchain.core.errors import PrchainError
from prchain.store.models import PullRequest, Repo

Verdict = Literal["dependent", "borderline", "not"]
Decided = Literal["kept", "link", "stage", "absent"]  # kept, dropped (by kind), no candidate
DECISIONS: tuple[Decided, ...] = ("kept", "link", "stage", "absent")

VERDICTS: dict[str, Verdict] = {
    "dep": "dependent",
    "real": "dependent",
    "borderline": "borderline",
    "not": "not",
}
REQUIRED = ("repository", "older", "newer", "verdict")


class BadLabels(PrchainError):
    hint = "a label file is a CSV of repository, older, newer, verdict (dep|real|borderline|not)"
    exit_status = 2


@dataclass(frozen=True)
class Label:
    repository: str
    older: int
    newer: int
    verdict: Verdict
    was: str  # "kept", or the rule that had dropped the pair when it was labelled
    where: str  # file:line


@dataclass(frozen=True)
class Scored:
    label: Label
    decided: Decided
    rule: str | None = None  # the rule that drops the pair today


@dataclass
class Score:
    """The labelled pairs of one store, by verdict and today's decision."""

    scored: list[Scored] = field(default_factory=list)

    def counts(self) -> Counter[tuple[Verdict, Decided]]:
        return Counter((s.label.verdict, s.decided) for s in self.scored)

    def table(self) -> list[tuple[Verdict, list[int]]]:
        """Per verdict, how many pairs each decision (`DECISIONS`, in order) holds."""
        counts = self.counts()
        return [(v, [counts[v, d] for d in DECISIONS]) for v in ("dependent", "borderline", "not")]

    def share(self, decided: Decided, verdicts: Iterable[Verdict]) -> tuple[int, int]:
        """(pairs with one of `verdicts`, all pairs) among those decided so."""
        wanted = set(verdicts)
        pairs = [s for s in self.scored if s.decided == decided]
        return sum(s.label.verdict in wanted for s in pairs), len(pairs)

    def moved(self) -> list[Scored]:
        """The pairs decided otherwise than when they were labelled (kept then and dropped now,
        or the other way round, or dropped by another rule)."""
        return [s for s in self.scored if s.decided != "absent" and s.label.was != _now(s)]


def _now(scored: Scored) -> str:
    return "kept" if scored.decided == "kept" else scored.rule or ""


def read_labels(paths: Sequence[str | Path]) -> list[Label]:
    """Every label of the files, in order. A file that lacks a column, or a row with an unknown
    verdict or a PR number that is not one, stops the read with one line naming file and row."""
    labels: list[Label] = []
    for path in paths:
        try:
            with open(path, newline="", encoding="utf-8") as handle:
                rows = list(csv.DictReader(handle))
        except OSError as e:
            raise BadLabels(f"cannot read label file {path}: {e.strerror}") from e
        if rows and (missing := [c for c in REQUIRED if c not in rows[0]]):
            raise BadLabels(f"{path}: no column {', '.join(missing)}")
        for line, row in enumerate(rows, start=2):  # line 1 is the header
            labels.append(_label(row, f"{path}:{line}"))
    return labels


def _label(row: dict[str, str], where: str) -> Label:
    verdict = VERDICTS.get((row.get("verdict") or "").strip().lower())
    if verdict is None:
        raise BadLabels(f"{where}: unknown verdict {row.get('verdict')!r}")
    try:
        older, newer = int(row["older"]), int(row["newer"])
    except (TypeError, ValueError):
        raise BadLabels(f"{where}: PR numbers must be integers") from None
    rule = (row.get("rule") or "").strip()
    return Label(row["repository"].strip(), older, newer, verdict, rule or "kept", where)


def score(engine: Engine, labels: Iterable[Label]) -> Score:
    """Today's decision for each label of a repository this store holds (others are left out)."""
    with engine.connect() as conn:
        repos: dict[str, int] = dict(conn.execute(select(Repo.full_name, Repo.id)).all())
        mine = [label for label in labels if label.repository in repos]
        numbers = {(label.repository, n) for label in mine for n in (label.older, label.newer)}
        ids: dict[tuple[str, int], int] = {}
        for repo, repo_id in repos.items():
            wanted = [n for r, n in numbers if r == repo]
            if wanted:
                found = select(PullRequest.number, PullRequest.id).where(
                    PullRequest.repo_id == repo_id, PullRequest.number.in_(wanted)
                )
                ids.update(((repo, n), i) for n, i in conn.execute(found).all())
    # (newer, older) PR ids, 0 for a PR the store does not hold.
    pairs = [
        (ids.get((la.repository, la.newer), 0), ids.get((la.repository, la.older), 0))
        for la in mine
    ]
    known = [(a, b) for a, b in pairs if a and b]
    stored = list_links(engine, pairs=[*known, *((b, a) for a, b in known)])
    links = {(v.link.newer_pr_id, v.link.older_pr_id): (v.link.kept, v.link.rule) for v in stored}
    result = Score()
    for label, (newer, older) in zip(mine, pairs, strict=True):
        link = links.get((newer, older)) or links.get((older, newer))
        if link is None:
            result.scored.append(Scored(label, "absent"))
            continue
        kept, rule = link
        decided: Decided = "kept" if kept else drop_kind(rule) or "link"
        result.scored.append(Scored(label, decided, None if kept else rule))
    return result
