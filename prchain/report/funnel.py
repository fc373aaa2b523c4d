"""The funnel: each pipeline step's count, and every drop on the way with its reason and count."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from prchain.chains.building.lengths import STOP_REASONS
from prchain.chains.building.links import drop_examples
from prchain.chains.views.stats import latest_lengths
from prchain.report.facts import PipelineFacts
from prchain.store.environments import verdict_tally
from prchain.store.models import Chain, ChainStage, PullRequest
from prchain.store.rollouts import stage_endings, status_counts, unkept_reasons


@dataclass
class FunnelStep:
    name: str
    count: int
    drops: list[tuple[str, int]] = field(default_factory=list)  # (reason, how many), largest first
    detail: list[tuple[str, int]] = field(default_factory=list)  # breakdown that is not a loss
    examples: dict[str, list[str]] = field(default_factory=dict)  # reason → a few cases ("#9 → #4")


def _sorted(counts: dict[str, int] | Counter[str]) -> list[tuple[str, int]]:
    return sorted(((k, v) for k, v in counts.items() if v), key=lambda kv: (-kv[1], kv[0]))


def _mined(session: Session) -> tuple[FunnelStep, FunnelStep]:
    pr = PullRequest
    total = session.scalar(select(func.count()).select_from(pr)) or 0
    drops: Counter[str] = Counter()
    merged = pr.merged_at.is_not(None)
    grouped = select(merged, pr.patch_status, func.count()).group_by(merged, pr.patch_status)
    for is_merged, status, n in session.execute(grouped):
        if not is_merged:
            drops["not merged"] += n
        elif status != "ok":
            drops[f"patch {status}"] += n
    usable = total - sum(drops.values())
    return FunnelStep("pull requests mined", total), FunnelStep(
        "merged with a usable patch", usable, _sorted(drops)
    )


def _graph(session: Session, facts: PipelineFacts, usable: FunnelStep) -> list[FunnelStep]:
    graph = facts.graph
    if graph is None:
        return []
    # Examples come from the links the latest `chains build` stored (`prchain chains links`).
    examples = {
        rule: [f"#{newer} → #{older}" for newer, older in pairs]
        for rule, pairs in drop_examples(session).items()
    }
    return [
        FunnelStep("PRs past the chain filters", graph.nodes, _sorted(graph.filtered)),
        FunnelStep(
            "reference graph edges",
            graph.edges,
            _sorted(graph.dropped),
            [("PR-to-PR references read", graph.references)],
            examples,
        ),
    ]


def _chains(session: Session) -> list[FunnelStep]:
    lengths = session.execute(
        select(Chain.length, func.count()).group_by(Chain.length).order_by(Chain.length)
    ).all()
    chains = sum(n for _, n in lengths)
    stages = session.scalar(select(func.count()).select_from(ChainStage)) or 0
    queried = session.scalar(select(func.count()).where(ChainStage.query.is_not(None))) or 0
    return [
        FunnelStep("chains", chains, detail=_lengths(dict(lengths), latest_lengths(session))),
        FunnelStep("chain stages", stages),
        FunnelStep("stages with a query", queried, _sorted({"no query yet": stages - queried})),
    ]


def _lengths(lengths: dict[int, int], latest: dict[str, list[list[Any]]]) -> list[tuple[str, int]]:
    """Chains of each length from 2 to 5 (none too), then why the latest builds' chains short of
    their longest are no longer (`prchain.chains.building.lengths`), summed over lengths and strategies."""
    found = [(f"length {k}", lengths.get(k, 0)) for k in sorted(set(lengths) | {2, 3, 4, 5})]
    why: Counter[str] = Counter()
    for rows in latest.values():
        for _length, _count, reasons in rows:
            why.update({r: n for r, n in reasons.items() if r != "full"})
    return found + [(f"shorter: {r.replace('_', ' ')}", why[r]) for r in STOP_REASONS if why[r]]


def _rollouts(session: Session, facts: PipelineFacts) -> list[FunnelStep]:
    steps: list[FunnelStep] = []
    by_status = status_counts(session)
    rollouts = sum(by_status.values())
    rolled = stage_endings(session)
    tested = sum(1 for _, _, has_tests in rolled if has_tests)
    steps.append(
        FunnelStep(
            "stages rolled out",
            len(rolled),
            detail=_sorted(Counter(status for status, _, _ in rolled)),
        )
    )
    steps.append(
        FunnelStep(
            "stages with test results", tested, _sorted({"no test run": len(rolled) - tested})
        )
    )
    failed = Counter(
        f"{status}: {reason or 'no reason given'}"
        for status, reason, _ in rolled
        if status != "passed"
    )
    passed = sum(1 for status, _, _ in rolled if status == "passed")
    steps.append(FunnelStep("judge-passed stages", passed, _sorted(failed)))
    reasons = Counter(
        f"{status}: {reason or 'no reason given'}" for status, reason in unkept_reasons(session)
    )
    steps.insert(0, FunnelStep("rollouts", rollouts, detail=_sorted(by_status)))
    steps.append(FunnelStep("kept trajectories", by_status.get("kept", 0), _sorted(reasons)))
    if facts.export is not None:
        steps.append(FunnelStep("exported", facts.export.written, _sorted(facts.export.skipped)))
    return steps


def _environments(session: Session) -> list[FunnelStep]:
    """Stages → eras → verified era environments (by method), when `env setup` has run."""
    from prchain.verdicts.era_stats import collect  # the same numbers as `prchain stats`

    found = collect(session)
    if not found["env_eras_set_up"]:
        return []
    unverified = Counter(found["env_eras_unverified_by_reason"])
    return [
        FunnelStep("stages with an era", found["env_stages_with_era"]),
        FunnelStep("eras (era images needed)", found["env_eras"]),
        FunnelStep(
            "verified environments",
            found["env_eras_verified"],
            _sorted(unverified),
            _sorted(found["env_eras_verified_by_method"])
            + [
                ("build seconds per environment", int(found["env_build_seconds_per_era"])),
                ("LLM cost per environment (cents)", int(found["env_cost_per_era"] * 100)),
            ],
        ),
        FunnelStep(
            "stages on a verified environment",
            found["env_stages_on_verified"],
            detail=[
                (f"{name} (of {c['stages']} stages)", c["stages_on_verified"])
                for name, c in found["env_by_ecosystem"].items()
            ],
        ),
    ]


def build_funnel(session: Session, facts: PipelineFacts) -> list[FunnelStep]:
    """Every step in pipeline order; steps without data (no verdict table, no rollouts) included."""
    mined, usable = _mined(session)
    funnel = [mined, usable, *_graph(session, facts, usable), *_chains(session)]
    funnel += _environments(session)
    verdicts = verdict_tally(session)
    if verdicts is not None:
        funnel.append(FunnelStep("stages with verified tests", *verdicts))
    return funnel + _rollouts(session, facts)
