"""The job's funnel, per repository and per language: PRs mined → stages in chains → stages whose PR
changes or adds tests, and stages whose PR changes none that a later stage lent tests
(prchain/chains/building/lent.py) → those run in a verified environment → stages with FAIL_TO_PASS
→ stages whose gold patch resolves in the clean room → chains runnable whole → kept trajectories,
each loss counted by its reason."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session

from prchain.store.db import session_scope
from prchain.store.environments import recipe_ecosystems, stage_outcomes
from prchain.store.models import PullRequest, Repo
from prchain.store.rollouts import kept_repos
from prchain.verdicts.losses import era_loss

COLUMNS = (
    "PRs",
    "stages",
    "with tests",
    "lent tests",
    "tested",
    "FAIL_TO_PASS",
    "gold resolves",
    "chains whole",
    "kept trajectories",
)

Gold = Mapping[tuple[int, int], str]  # (chain id, stage idx) → the clean room's status


@dataclass
class FunnelRow:
    """One repository (or one language, summed) through the job."""

    name: str
    language: str
    counts: Counter[str] = field(default_factory=Counter)
    losses: Counter[str] = field(default_factory=Counter)  # "step: reason" → stages

    def add(self, other: FunnelRow) -> None:
        self.counts.update(other.counts)
        self.losses.update(other.losses)


@dataclass(frozen=True)
class _Stage:
    repo: str
    chain_id: int
    idx: int
    verdict: tuple[str, str | None] | None  # (status, reason) of its verification
    era: tuple[str, str] | None = None  # (status, root error) of its era's recipe
    tests: str = "own"  # own | lent | none (`StageOutcome.tests`)


def funnel(engine: Engine, gold: Gold) -> list[FunnelRow]:
    """One row per repository of the store, in name order."""
    with session_scope(engine) as session:
        prs = dict(
            session.execute(
                select(Repo.full_name, func.count(PullRequest.id))
                .join(PullRequest, PullRequest.repo_id == Repo.id)
                .group_by(Repo.full_name)
            ).all()
        )
        languages = _languages(recipe_ecosystems(session))
        stages = _stages(session)
        kept = Counter(kept_repos(session))
    rows = {name: FunnelRow(name, languages.get(name, "-")) for name in sorted(prs)}
    for name, row in rows.items():
        row.counts["PRs"] = prs[name]
        row.counts["kept trajectories"] = kept[name]
    for stage in stages:
        _count(rows[stage.repo], stage, gold)
    for name, whole in _whole_chains(stages, gold).items():
        rows[name].counts["chains whole"] = whole
    return list(rows.values())


def by_language(rows: Iterable[FunnelRow]) -> list[FunnelRow]:
    """The repositories' rows summed per language."""
    summed: dict[str, FunnelRow] = {}
    for row in rows:
        summed.setdefault(row.language, FunnelRow(row.language, row.language)).add(row)
    return [summed[name] for name in sorted(summed)]


def _languages(pairs: Iterable[tuple[str, str]]) -> dict[str, str]:
    """Each repository's language: the ecosystem most of its era recipes are of, an era no room
    recognised (`unknown`: a base before the repository's manifests) counting only when no room
    recognised any."""
    seen: dict[str, Counter[str]] = defaultdict(Counter)
    for repo, ecosystem in pairs:
        seen[repo][ecosystem] += 1
    return {
        repo: max(counts, key=lambda name: (name != "unknown", counts[name]))
        for repo, counts in seen.items()
    }


def _stages(session: Session) -> list[_Stage]:
    return [
        _Stage(
            repo,
            chain,
            idx,
            None if status is None else (status, reason),
            None if era_status is None else (era_status, root or ""),
            tests,
        )
        for repo, chain, idx, status, reason, era_status, root, tests in stage_outcomes(session)
    ]


# A stage whose PR changes no test, and to which no later stage of its chain lent tests, can be
# judged (the LLM judge against its gold patch) but not run as a task: it leaves the funnel here
# whatever its environment, so the later steps count over the stages a clean room could judge.
NO_TESTS = "with tests: no test file in its PR or a later stage's (judge it, or write tests)"


def _count(row: FunnelRow, stage: _Stage, gold: Gold) -> None:
    row.counts["stages"] += 1
    if stage.tests == "none":
        row.losses[NO_TESTS] += 1
        return
    row.counts["lent tests" if stage.tests == "lent" else "with tests"] += 1
    # a verdict made on an image its era no longer verifies with (an era set up again with
    # `--redo` that did not verify) is no verdict: `tasks export --runnable` refuses the stage too
    if stage.verdict is None or (stage.era is not None and stage.era[0] != "verified"):
        row.losses[f"tested: {_untested(stage)}"] += 1
        return
    row.counts["tested"] += 1
    status, reason = stage.verdict
    if status != "usable":
        row.losses[f"FAIL_TO_PASS: {_short(reason)}"] += 1
        return
    row.counts["FAIL_TO_PASS"] += 1
    outcome = gold.get((stage.chain_id, stage.idx), "not evaluated")
    if outcome == "resolved":
        row.counts["gold resolves"] += 1
    else:
        row.losses[f"gold resolves: {outcome}"] += 1


def _untested(stage: _Stage) -> str:
    """Why no verified environment ran a stage's tests: its era's loss (`prchain.verdicts.losses`,
    as `env setup` and `stats` count it), or the step not run yet."""
    if stage.era is None:
        return "no era environment set up"
    status, root = stage.era
    if status != "verified":
        return f"era not verified: {era_loss(root).label}"
    return "its tests not verified yet"


def _whole_chains(stages: list[_Stage], gold: Gold) -> Counter[str]:
    """Per repository, the chains every stage of which resolves in the clean room."""
    chains: dict[int, list[_Stage]] = defaultdict(list)
    for stage in stages:
        chains[stage.chain_id].append(stage)
    return Counter(
        members[0].repo
        for chain, members in chains.items()
        if all(gold.get((chain, s.idx)) == "resolved" for s in members)
    )


def _short(reason: str | None) -> str:
    """A reason as a loss label: its first clause, so that like reasons count together."""
    text = (reason or "no reason stored").split(":")[0].split(";")[0].strip()
    return text[:60]
