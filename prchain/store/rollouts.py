"""The rollouts aggregate: rollouts (`rollouts`), their stages (`rollout_stages`), every message
as it happened (`steps`) and the judge's verdicts (`judgements`), written and read here only.

Writers and readers on an engine (`Rollouts(engine)`, or `store.rollouts`), and the writers and
readers that run inside a caller's transaction (they take its session: a runner's writes commit
only while it holds the chain's lease, a report reads every page in one transaction). Rows are
handed out as frozen records of their columns. No module outside `prchain.store` names the
`Rollout`, `RolloutStage`, `Step` or `Judgement` model (tests/store/test_store_seam.py holds it).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any

from sqlalchemy import Engine, case, delete, func, insert, select, update
from sqlalchemy.orm import Session

from prchain.store.db import session_scope, upsert
from prchain.store.environments import TransitionRow, drop_transitions, transitions
from prchain.store.llm_calls import rollout_costs
from prchain.store.models import (
    Chain,
    Judgement,
    PRMCall,
    Repo,
    Rollout,
    RolloutStage,
    Step,
)
from prchain.store.models.base import utcnow

FINISHED_EXPORTABLE = ("kept", "rejected")  # the rollouts an export reads


@dataclass(frozen=True)
class RolloutRow:
    """One `rollouts` row (prchain/store/models/rollouts.py says what each column holds)."""

    id: int
    chain_id: int
    status: str
    reason: str | None
    source: str
    conflict_policy: str
    keep_policy: str
    prm_variant: str | None
    kept_stages: int
    models: dict[str, Any]
    config: dict[str, Any]
    action_format: str
    prompt_hash: str
    tool_schema_hash: str
    prompt_tokens: int
    completion_tokens: int
    trajectory_tokens: int
    agent_steps: int
    tool_calls: int
    cost_usd: float
    started_at: datetime
    finished_at: datetime | None


@dataclass(frozen=True)
class StageRow:
    """One `rollout_stages` row."""

    id: int
    rollout_id: int
    stage_idx: int
    status: str
    reason: str | None
    score: float | None
    rounds: int
    stage_diff: str
    cumulative_diff: str
    carried_patch: bytes | None
    test_result: dict[str, Any] | None
    tests_passed: bool | None
    agent_steps: int
    started_at: datetime
    finished_at: datetime | None


@dataclass(frozen=True)
class StepRow:
    """One `steps` row: a message of a trajectory."""

    id: int
    rollout_id: int
    stage_idx: int
    idx: int
    kind: str
    message: dict[str, Any]
    tool_call: dict[str, Any] | None
    observation: str | None
    prompt_tokens: int
    completion_tokens: int
    latency_ms: float
    created_at: datetime


@dataclass(frozen=True)
class JudgementRow:
    """One `judgements` row: the judge's verdict on one round of a stage."""

    id: int
    rollout_id: int
    stage_idx: int
    round: int
    score: float
    comment: str
    passed: bool
    attempts: int
    redacted: bool
    created_at: datetime


@dataclass(frozen=True)
class Trajectory:
    """Everything stored about one rollout (what `prchain trajectories show` prints)."""

    rollout: RolloutRow
    stages: list[StageRow]
    steps: list[StepRow]
    judgements: list[JudgementRow]
    transitions: list[TransitionRow]


def _record(kind: type[Any], row: Any) -> Any:
    return kind(**{f.name: getattr(row, f.name) for f in fields(kind)})


def _rollout(row: Rollout | None) -> RolloutRow | None:
    return _record(RolloutRow, row) if row is not None else None


@dataclass(frozen=True)
class Rollouts:
    engine: Engine

    def new(self, chain_id: int, **values: Any) -> int:
        """A running rollout of the chain (`values`: its other columns by name); its id."""
        with session_scope(self.engine) as session:
            rollout = Rollout(chain_id=chain_id, status="running", **values)
            session.add(rollout)
            session.flush()
            return rollout.id

    def reopen(self, rollout_id: int) -> None:
        """A failed rollout being resumed is running again (its old reason no longer holds)."""
        with session_scope(self.engine) as session:
            rollout = session.get(Rollout, rollout_id)
            if rollout is not None and rollout.status != "running":
                rollout.status, rollout.reason, rollout.finished_at = "running", None, None

    def get(self, rollout_id: int) -> RolloutRow | None:
        with session_scope(self.engine) as session:
            return _rollout(session.get(Rollout, rollout_id))

    def newest_agent(self, chain_id: int) -> RolloutRow | None:
        """The chain's newest agent rollout (running ones first: those are resumed)."""
        with session_scope(self.engine) as session:
            return _rollout(
                session.scalars(
                    select(Rollout)
                    .filter_by(chain_id=chain_id, source="agent")
                    .order_by((Rollout.status == "running").desc(), Rollout.id.desc())
                ).first()
            )

    def running_curation(self, chain_id: int) -> RolloutRow | None:
        """The chain's newest curation that is still running (a killed one, to resume)."""
        with session_scope(self.engine) as session:
            return _rollout(
                session.scalars(
                    select(Rollout)
                    .filter_by(chain_id=chain_id, source="p2t", status="running")
                    .order_by(Rollout.id.desc())
                ).first()
            )

    def finished_chains(self, statuses: Iterable[str]) -> set[int]:
        """The chains with an agent rollout in one of `statuses`."""
        with session_scope(self.engine) as session:
            return set(
                session.scalars(
                    select(Rollout.chain_id).where(
                        Rollout.status.in_(list(statuses)), Rollout.source == "agent"
                    )
                )
            )

    def passed_stages(self, rollout_id: int) -> list[StageRow]:
        """The completed stages a resume keeps: the leading run of passed stages, in order."""
        with session_scope(self.engine) as session:
            kept: list[StageRow] = []
            for stage in stages(session, rollout_id):
                if stage.status != "passed" or stage.stage_idx != len(kept) + 1:
                    break
                kept.append(stage)
            return kept

    def rewind(self, rollout_id: int, keep_through: int) -> list[StepRow]:
        """Drop every row of stages after `keep_through`; return the kept steps in order."""
        with session_scope(self.engine) as session:
            for model in (Step, Judgement, RolloutStage):
                session.execute(
                    delete(model).where(
                        model.rollout_id == rollout_id, model.stage_idx > keep_through
                    )
                )
            drop_transitions(session, rollout_id, keep_through)
            return steps(session, rollout_id)

    def scores(self, rollout_id: int) -> list[float | None]:
        """The judge's score of each stage of the rollout, in stage order."""
        with session_scope(self.engine) as session:
            query = select(RolloutStage.score).filter_by(rollout_id=rollout_id)
            return list(session.scalars(query.order_by(RolloutStage.stage_idx)))

    def stage(self, rollout_id: int, stage_idx: int) -> StageRow:
        """The rollout's stage row (it must exist)."""
        with session_scope(self.engine) as session:
            row = session.scalars(
                select(RolloutStage).filter_by(rollout_id=rollout_id, stage_idx=stage_idx)
            ).one()
            return _record(StageRow, row)

    def latest(self, limit: int = 100) -> list[RolloutRow]:
        """The newest `limit` rollouts, newest first."""
        with session_scope(self.engine) as session:
            query = select(Rollout).order_by(Rollout.id.desc()).limit(limit)
            return [_record(RolloutRow, row) for row in session.scalars(query)]

    def trajectory(self, rollout_id: int) -> Trajectory | None:
        with session_scope(self.engine) as session:
            rollout = _rollout(session.get(Rollout, rollout_id))
            if rollout is None:
                return None
            return Trajectory(
                rollout,
                stages(session, rollout_id),
                steps(session, rollout_id),
                judgements(session, rollout_id),
                transitions(session, rollout_id),
            )


# ---- writers inside a caller's transaction ------------------------------------------------------


def add_step(session: Session, row: dict[str, Any]) -> None:
    """One message at its position (`row`: the columns by name); a second writer at the same
    (rollout, idx) is refused by the unique key."""
    session.execute(insert(Step), [row])


def drop_steps(session: Session, rollout_id: int, idxs: Sequence[int]) -> None:
    session.execute(delete(Step).where(Step.rollout_id == rollout_id, Step.idx.in_(idxs)))


def start_stage(session: Session, row: dict[str, Any]) -> None:
    """Record (or reset) a stage as running; a replayed stage overwrites its row."""
    upsert(session, RolloutStage, [row], ["rollout_id", "stage_idx"])


def finish_stage(session: Session, rollout_id: int, stage_idx: int, values: dict[str, Any]) -> None:
    """Set the stage's columns of `values` and its finish time."""
    stage = session.scalars(
        select(RolloutStage).filter_by(rollout_id=rollout_id, stage_idx=stage_idx)
    ).one()
    for key, value in values.items():
        setattr(stage, key, value)
    stage.finished_at = utcnow()


def set_stage_diff(session: Session, rollout_id: int, stage_idx: int, diff: str) -> None:
    stage = session.scalars(
        select(RolloutStage).filter_by(rollout_id=rollout_id, stage_idx=stage_idx)
    ).one()
    stage.stage_diff = diff


def fail_running_stages(session: Session, rollout_id: int, reason: str | None) -> None:
    """The rollout's running stages failed, for `reason`."""
    session.execute(
        update(RolloutStage)
        .where(RolloutStage.rollout_id == rollout_id, RolloutStage.status == "running")
        .values(status="failed", reason=reason, finished_at=utcnow())
    )


def save_judgement(session: Session, row: dict[str, Any]) -> None:
    """Record (or replace) the verdict of a (rollout, stage, round)."""
    upsert(session, Judgement, [row], ["rollout_id", "stage_idx", "round"])


def finish(
    session: Session, rollout_id: int, status: str, reason: str | None, values: dict[str, Any]
) -> None:
    """The rollout ended: its status, reason, finish time, the cost of its LLM calls, and the
    columns of `values`."""
    rollout = session.get(Rollout, rollout_id)
    assert rollout is not None
    rollout.status, rollout.finished_at = status, utcnow()
    rollout.reason = reason
    # fsum is exact, so the total does not depend on the order the calls are read in (a
    # chain resumed on another worker stores its calls in another order).
    rollout.cost_usd = math.fsum(rollout_costs(session, rollout_id))
    for key, value in values.items():
        setattr(rollout, key, value)


# ---- readers inside a caller's transaction ------------------------------------------------------


def stages(session: Session, rollout_id: int) -> list[StageRow]:
    """The rollout's stages in stage order."""
    query = select(RolloutStage).filter_by(rollout_id=rollout_id).order_by(RolloutStage.stage_idx)
    return [_record(StageRow, row) for row in session.scalars(query)]


def steps(
    session: Session,
    rollout_id: int,
    *,
    stage_idx: int | None = None,
    through: int | None = None,
    kinds: Sequence[str] | None = None,
) -> list[StepRow]:
    """The rollout's steps in order (of one stage, of the stages up to `through`, of `kinds`)."""
    query = select(Step).where(Step.rollout_id == rollout_id)
    if stage_idx is not None:
        query = query.where(Step.stage_idx == stage_idx)
    if through is not None:
        query = query.where(Step.stage_idx <= through)
    if kinds is not None:
        query = query.where(Step.kind.in_(kinds))
    return [_record(StepRow, row) for row in session.scalars(query.order_by(Step.idx))]


def judgements(session: Session, rollout_id: int) -> list[JudgementRow]:
    """The rollout's verdicts by stage and round."""
    query = (
        select(Judgement)
        .filter_by(rollout_id=rollout_id)
        .order_by(Judgement.stage_idx, Judgement.round)
    )
    return [_record(JudgementRow, row) for row in session.scalars(query)]


def exportable(session: Session, ids: Sequence[int] | None = None) -> list[RolloutRow]:
    """The kept and rejected rollouts (of `ids`), by id."""
    query = select(Rollout).where(Rollout.status.in_(FINISHED_EXPORTABLE)).order_by(Rollout.id)
    if ids is not None:
        query = query.where(Rollout.id.in_(ids))
    return [_record(RolloutRow, row) for row in session.scalars(query)]


def every_rollout(session: Session) -> list[RolloutRow]:
    return [_record(RolloutRow, r) for r in session.scalars(select(Rollout).order_by(Rollout.id))]


def of_chains(session: Session, chain_ids: Sequence[int]) -> list[RolloutRow]:
    """The rollouts of `chain_ids`, newest first."""
    query = select(Rollout).where(Rollout.chain_id.in_(chain_ids)).order_by(Rollout.id.desc())
    return [_record(RolloutRow, row) for row in session.scalars(query)]


def stages_of(session: Session, rollout_ids: Iterable[int]) -> list[StageRow]:
    query = select(RolloutStage).where(RolloutStage.rollout_id.in_(rollout_ids))
    return [_record(StageRow, row) for row in session.scalars(query)]


def judgements_of(session: Session, rollout_ids: Iterable[int]) -> list[JudgementRow]:
    """The verdicts of `rollout_ids`, by round."""
    query = select(Judgement).where(Judgement.rollout_id.in_(rollout_ids))
    return [_record(JudgementRow, row) for row in session.scalars(query.order_by(Judgement.round))]


def chains_with_rollouts(session: Session, chain_ids: Sequence[int]) -> set[int]:
    """Those of `chain_ids` with a rollout of any source."""
    return set(session.scalars(select(Rollout.chain_id).where(Rollout.chain_id.in_(chain_ids))))


def status_counts(session: Session) -> dict[str, int]:
    """Rollouts per status."""
    return dict(
        session.execute(select(Rollout.status, func.count()).group_by(Rollout.status)).all()
    )


def unkept_reasons(session: Session) -> list[tuple[str, str | None]]:
    """(status, reason) of every rollout not kept."""
    rows = session.execute(select(Rollout.status, Rollout.reason).where(Rollout.status != "kept"))
    return [(status, reason) for status, reason in rows]


def kept_repos(session: Session) -> list[str]:
    """The repository of every kept rollout (one name per rollout)."""
    rows = session.execute(
        select(Repo.full_name)
        .join(Chain, Chain.repo_id == Repo.id)
        .join(Rollout, Rollout.chain_id == Chain.id)
        .where(Rollout.status == "kept")
    )
    return [name for (name,) in rows]


def summaries(session: Session) -> list[tuple[int, int, str, int, int, float, int]]:
    """(id, chain, status, agent steps, trajectory tokens, cost, tool calls) of every rollout,
    by id."""
    r = Rollout
    query = select(
        r.id, r.chain_id, r.status, r.agent_steps, r.trajectory_tokens, r.cost_usd, r.tool_calls
    ).order_by(r.id)
    return [tuple(row) for row in session.execute(query)]  # type: ignore[misc]


def kept_means(session: Session) -> tuple[int, Any, Any, Any]:
    """(kept rollouts, their mean trajectory tokens, mean tool calls, mean cost)."""
    kept = select(
        func.count(),
        func.avg(Rollout.trajectory_tokens),
        func.avg(Rollout.tool_calls),
        func.avg(Rollout.cost_usd),
        func.sum(Rollout.cost_usd),
    ).where(Rollout.status == "kept")
    n_kept, tokens, calls, cost, _ = session.execute(kept).one()
    return n_kept, tokens, calls, cost


def total_cost(session: Session) -> float:
    """The cost of every rollout."""
    return session.scalar(select(func.coalesce(func.sum(Rollout.cost_usd), 0.0))) or 0.0


def stage_count(session: Session) -> int:
    """Rollout stages in the store (of every rollout)."""
    return session.scalar(select(func.count()).select_from(RolloutStage)) or 0


def stage_scores(session: Session) -> list[float]:
    """Every rollout stage's judge score (those with one)."""
    return [s for s in session.scalars(select(RolloutStage.score)) if s is not None]


def stage_scores_by_rollout(session: Session) -> list[tuple[int, float | None]]:
    """(rollout, score) of every scored rollout stage."""
    rows = session.execute(
        select(RolloutStage.rollout_id, RolloutStage.score).where(RolloutStage.score.is_not(None))
    )
    return [(rid, score) for rid, score in rows]


def latest_statuses(session: Session) -> list[tuple[int, int, str]]:
    """(rollout, chain, status) of every rollout, by id."""
    rows = session.execute(
        select(Rollout.id, Rollout.chain_id, Rollout.status).order_by(Rollout.id)
    )
    return [(rid, chain, status) for rid, chain, status in rows]


def pass_by_stage(session: Session) -> dict[int, tuple[int, int]]:
    """Stage index → (rollout stages passed, rollout stages)."""
    query = select(
        RolloutStage.stage_idx,
        func.sum(case((RolloutStage.status == "passed", 1), else_=0)),
        func.count(),
    ).group_by(RolloutStage.stage_idx)
    return {idx: (int(p or 0), int(n)) for idx, p, n in session.execute(query)}


def round_scores(session: Session) -> list[tuple[int, float]]:
    """(round, score) of every verdict."""
    return [
        (int(rnd), float(s)) for rnd, s in session.execute(select(Judgement.round, Judgement.score))
    ]


def judge_retries(session: Session) -> int:
    """Verdicts that needed more than one judge call."""
    return int(session.scalar(select(func.count()).where(Judgement.attempts > 1)) or 0)


def judged_passes(session: Session) -> set[tuple[int, int]]:
    """(rollout, stage) of every verdict that passed."""
    rows = session.execute(
        select(Judgement.rollout_id, Judgement.stage_idx).where(Judgement.passed.is_(True))
    )
    return {(rid, idx) for rid, idx in rows}


def scored_test_outcomes(session: Session) -> list[tuple[int, int, bool | None]]:
    """(rollout, stage, T(p̂)) of every stage with both a judge score and hidden-test outcome."""
    rows = session.execute(
        select(RolloutStage.rollout_id, RolloutStage.stage_idx, RolloutStage.tests_passed).where(
            RolloutStage.tests_passed.is_not(None), RolloutStage.score.is_not(None)
        )
    )
    return [(rid, idx, tests) for rid, idx, tests in rows]


def test_outcome_counts(session: Session) -> dict[bool | None, int]:
    """T(p̂) → rollout stages with it."""
    return dict(
        session.execute(
            select(RolloutStage.tests_passed, func.count())
            .where(RolloutStage.tests_passed.is_not(None))
            .group_by(RolloutStage.tests_passed)
        ).all()
    )


def stage_endings(session: Session) -> list[tuple[str, str | None, bool]]:
    """(status, reason, has a test result) of every rollout stage."""
    rows = session.execute(
        select(RolloutStage.status, RolloutStage.reason, RolloutStage.test_result.is_not(None))
    )
    return [(status, reason, tested) for status, reason, tested in rows]


def passed_stages_of(session: Session, source: str) -> list[tuple[int, int, int]]:
    """(chain, stage, rollout) of every passed stage of a rollout of `source`, by rollout id."""
    rows = session.execute(
        select(Rollout.chain_id, RolloutStage.stage_idx, Rollout.id)
        .join(RolloutStage, RolloutStage.rollout_id == Rollout.id)
        .where(Rollout.source == source, RolloutStage.status == "passed")
        .order_by(Rollout.id)
    )
    return [(chain, stage, rid) for chain, stage, rid in rows]


def by_prm_variant(session: Session) -> list[tuple[str | None, int, Any, Any, Any]]:
    """Per PRM variant (None: none): (variant, rollouts, kept, assistant steps, cost)."""
    counted = (
        select(Step.rollout_id, func.count().label("n"))
        .where(Step.kind == "assistant")
        .group_by(Step.rollout_id)
        .subquery()
    )
    query = (
        select(
            Rollout.prm_variant,
            func.count(Rollout.id),
            func.sum(case((Rollout.status == "kept", 1), else_=0)),
            func.sum(func.coalesce(counted.c.n, 0)),
            func.sum(Rollout.cost_usd),
        )
        .outerjoin(counted, counted.c.rollout_id == Rollout.id)
        .group_by(Rollout.prm_variant)
    )
    return [tuple(row) for row in session.execute(query)]  # type: ignore[misc]


def prm_calls_by_variant(session: Session, suboptimal: Sequence[str]) -> list[tuple[Any, ...]]:
    """Per PRM variant of the rollout: (variant, calls, on track, `suboptimal`, judged, failed,
    injected, prompt tokens, completion tokens, cost) of its PRM calls."""
    query = (
        select(
            Rollout.prm_variant,
            func.count(PRMCall.id),
            func.sum(case((PRMCall.task_status == "on_track", 1), else_=0)),
            func.sum(case((PRMCall.task_status.in_(suboptimal), 1), else_=0)),
            func.sum(case((PRMCall.task_status.is_not(None), 1), else_=0)),
            func.sum(case((PRMCall.status != "ok", 1), else_=0)),
            func.sum(case((PRMCall.injected, 1), else_=0)),
            func.sum(PRMCall.prompt_tokens),
            func.sum(PRMCall.completion_tokens),
            func.sum(PRMCall.cost_usd),
        )
        .join(Rollout, Rollout.id == PRMCall.rollout_id)
        .group_by(Rollout.prm_variant)
    )
    return [tuple(row) for row in session.execute(query)]
