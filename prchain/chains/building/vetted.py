"""What a build makes of the link vetter's stored verdicts (`prchain chains vet`, prchain/chains/writers/vet.py).

A kept link whose verdict is weaker than `chains.vet_keep` is dropped (rule `vetter_rejected`).
A link dropped by one of the rules that only guess at shared code (`chains.vet_rescue`) and judged
`dependent` becomes an edge again: those rules read lines, names, file overlap and time, and miss
dependencies the wording states and the lines do not show ("Depends on #586" for a stack on a new
API, a fix after the code moved to another file). Both happen before the ancestry check, which a
rescued link must pass like any other.

The vetter also says whether either PR of a link is too slight to teach as a stage (a cleanup,
a bump, a rename through call sites, a few lines): with `chains.vet_thin`, a build takes every
link touching such a PR out of the graph (rule `vetter_thin`), which cuts a chain at that stage.
Thinness is what a change is for, which no size or shape told apart in rounds 36-38 of the hand
check (docs/chains.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, get_args

from sqlalchemy import Engine, select

from prchain.chains.config import ChainsConfig, VetKeep
from prchain.chains.record import LinkEvidence
from prchain.chains.rulebook import RuleName
from prchain.store.models import LinkVerdict

if TYPE_CHECKING:
    from prchain.chains.building.report import GraphReport
    from prchain.chains.evidence.nodes import PRNode
    from prchain.chains.rules.decisions import LinkDecision

REJECTED_RULE: RuleName = "vetter_rejected"
THIN_RULE: RuleName = "vetter_thin"

Verdict = Literal["dependent", "borderline", "independent"]
VERDICTS: tuple[str, ...] = get_args(Verdict)
# How strong each verdict is; a build keeps a link whose verdict reaches `vet_keep`.
STRENGTH = {"independent": 0, "borderline": 1, "dependent": 2}
RESCUED_AT = "dependent"  # a dropped link becomes an edge again only at the strongest verdict


@dataclass(frozen=True)
class Said:
    """One stored verdict: its word, its reason, and whether it called either PR thin."""

    verdict: str
    reason: str
    older_thin: bool = False
    newer_thin: bool = False


Verdicts = dict[tuple[int, int], Said]


def keeps(verdict: str, keep: VetKeep) -> bool:
    return STRENGTH.get(verdict, 0) >= STRENGTH[keep]


def rescuable(rule: str | None, config: ChainsConfig) -> bool:
    """Whether `chains vet` asks about a link this rule dropped."""
    return rule is not None and rule in config.vet_rescue


def load_verdicts(engine: Engine) -> Verdicts:
    """(newer, older) → what the vetter said, for every stored verdict."""
    with engine.connect() as conn:
        rows = conn.execute(
            select(
                LinkVerdict.newer_pr_id,
                LinkVerdict.older_pr_id,
                LinkVerdict.verdict,
                LinkVerdict.reason,
                LinkVerdict.older_thin,
                LinkVerdict.newer_thin,
            )
        )
        return {(row[0], row[1]): Said(*row[2:]) for row in rows}


def thin_prs(verdicts: Verdicts) -> dict[int, tuple[int, int]]:
    """Every PR some verdict called a thin stage → the link whose verdict said so."""
    thin: dict[int, tuple[int, int]] = {}
    for (newer, older), said in sorted(verdicts.items()):
        if said.older_thin:
            thin.setdefault(older, (newer, older))
        if said.newer_thin:
            thin.setdefault(newer, (newer, older))
    return thin


def apply_verdicts(
    candidates: dict[tuple[int, int], LinkEvidence],
    report: GraphReport,
    verdicts: Verdicts,
    config: ChainsConfig,
    nodes: Mapping[int, PRNode] | None = None,
) -> None:
    """Drop the candidate edges the vetter rejected and add back the rescuable drops it judged
    dependent, recording both on their links and in the report's counts; then, with
    `vet_thin`, drop every candidate edge touching a PR it called thin."""
    for link in report.links:
        said = verdicts.get((link.newer, link.older))
        if said is None:
            continue
        verdict, reason = said.verdict, said.reason
        link.attrs["vetted"] = verdict  # the rules after lexing read it (`incidental_code_link`)
        if link.rule is None and not keeps(verdict, config.vet_keep):
            candidates.pop((link.newer, link.older), None)
            _record(link, REJECTED_RULE, verdict, reason, "the rules had kept it")
            report.dropped[REJECTED_RULE] += 1
        elif rescuable(link.rule, config) and verdict == RESCUED_AT:
            rule = str(link.rule)
            report.dropped[rule] -= 1
            if not report.dropped[rule]:
                del report.dropped[rule]
            link.attrs["rescued_from"] = rule
            _record(link, None, verdict, reason, f"the rules had dropped it as {rule}")
            candidates[(link.newer, link.older)] = link.attrs
            report.rescued += 1
        elif rescuable(link.rule, config):
            _record(link, link.rule, verdict, reason, "the rules dropped it")
    if config.vet_thin:
        cut_thin_stages(candidates, report, thin_prs(verdicts), nodes or {})


def cut_thin_stages(
    candidates: dict[tuple[int, int], LinkEvidence],
    report: GraphReport,
    thin: Mapping[int, tuple[int, int]],
    nodes: Mapping[int, PRNode],
) -> None:
    """Take out every candidate edge with a thin PR at either end: no chain has it as a stage."""

    def number(pr: int) -> str:
        return f"#{nodes[pr].number}" if pr in nodes else f"PR id {pr}"

    for link in report.links:
        if link.rule is not None or (link.newer, link.older) not in candidates:
            continue
        slight = next((pr for pr in (link.older, link.newer) if pr in thin), None)
        if slight is None:
            continue
        del candidates[(link.newer, link.older)]
        newer, older = thin[slight]
        said = (
            f"the link vetter called {number(slight)} too slight to teach as a stage "
            f"(asked about {number(newer)} → {number(older)})"
        )
        rules = link.attrs.get("why")
        link.attrs["why"] = said + (f"; {rules}" if rules else "")
        link.rule = THIN_RULE
        report.dropped[THIN_RULE] += 1
        report.rescued -= "rescued_from" in link.attrs


def _record(
    link: LinkDecision, rule: RuleName | None, verdict: str, reason: str, before: str
) -> None:
    """The link's new rule, and a `why` that puts the vetter's verdict before the rules' reading."""
    said = f"the link vetter judged it {verdict}: {reason}".rstrip(": ")
    rules = link.attrs.get("why")
    link.attrs["why"] = f"{said}; {before}" + (f" ({rules})" if rules else "")
    link.rule = rule
