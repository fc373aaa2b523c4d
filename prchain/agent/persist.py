"""Everything a rollout writes to the store, each row as it happens, and what a resume reads back.

Rows are upserted on their natural keys (rollout, idx) / (rollout, stage[, round]), so a resumed
rollout that replays a stage overwrites instead of duplicating.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from sqlalchemy import Engine, delete, func, select

from environments.protocol import Transition
from prchain.llm.protocol import Message
from sql.db import session_scope, upsert
from sql.models import EnvTransition, Judgement, LLMCall, Rollout, RolloutStage, Step
from sql.models.base import utcnow


class Recorder:
    """Writes one rollout's rows; `next_idx` is the position of the next message."""

    def __init__(self, engine: Engine, rollout_id: int, next_idx: int = 0) -> None:
        self.engine = engine
        self.rollout_id = rollout_id
        self.next_idx = next_idx

    def step(self, stage_idx: int, kind: str, message: Message, **extra: Any) -> int:
        row = {
            "rollout_id": self.rollout_id,
            "stage_idx": stage_idx,
            "idx": self.next_idx,
            "kind": kind,
            "message": message,
            "tool_call": extra.get("tool_call"),
            "observation": extra.get("observation"),
            "prompt_tokens": extra.get("prompt_tokens", 0),
            "completion_tokens": extra.get("completion_tokens", 0),
            "latency_ms": extra.get("latency_ms", 0.0),
            "created_at": utcnow(),
        }
        with session_scope(self.engine) as session:
            upsert(session, Step, [row], ["rollout_id", "idx"])
        self.next_idx += 1
        return self.next_idx - 1

    def stage_started(self, stage_idx: int) -> None:
        row = {
            "rollout_id": self.rollout_id,
            "stage_idx": stage_idx,
            "status": "running",
            "reason": None,
            "score": None,
            "rounds": 0,
            "started_at": utcnow(),
            "finished_at": None,
        }
        with session_scope(self.engine) as session:
            upsert(session, RolloutStage, [row], ["rollout_id", "stage_idx"])

    def stage_finished(self, stage_idx: int, **fields: Any) -> None:
        with session_scope(self.engine) as session:
            stage = session.scalars(
                select(RolloutStage).filter_by(rollout_id=self.rollout_id, stage_idx=stage_idx)
            ).one()
            for key, value in fields.items():
                setattr(stage, key, value)
            stage.finished_at = utcnow()

    def judgement(
        self,
        stage_idx: int,
        round_: int,
        *,
        score: float,
        comment: str,
        passed: bool,
        attempts: int,
        redacted: bool,
    ) -> None:
        row = {
            "rollout_id": self.rollout_id,
            "stage_idx": stage_idx,
            "round": round_,
            "score": score,
            "comment": comment,
            "passed": passed,
            "attempts": attempts,
            "redacted": redacted,
            "created_at": utcnow(),
        }
        with session_scope(self.engine) as session:
            upsert(session, Judgement, [row], ["rollout_id", "stage_idx", "round"])

    def transition(self, transition: Transition) -> None:
        columns = set(EnvTransition.__table__.columns.keys())
        fields = {
            k: v for k, v in asdict(transition).items() if k in columns
        }  # backends may report more
        row = {**fields, "rollout_id": self.rollout_id, "created_at": utcnow()}
        with session_scope(self.engine) as session:
            upsert(session, EnvTransition, [row], ["rollout_id", "stage_idx"])

    def finish(self, status: str, reason: str | None, **fields: Any) -> None:
        with session_scope(self.engine) as session:
            rollout = session.get(Rollout, self.rollout_id)
            assert rollout is not None
            rollout.status, rollout.reason, rollout.finished_at = status, reason, utcnow()
            rollout.cost_usd = float(
                session.scalar(
                    select(func.coalesce(func.sum(LLMCall.cost_usd), 0.0)).filter_by(
                        rollout_id=self.rollout_id
                    )
                )
                or 0.0
            )
            for key, value in fields.items():
                setattr(rollout, key, value)


def new_rollout(engine: Engine, chain_id: int, **fields: Any) -> int:
    with session_scope(engine) as session:
        rollout = Rollout(chain_id=chain_id, status="running", **fields)
        session.add(rollout)
        session.flush()
        return rollout.id


def open_rollout(engine: Engine, chain_id: int) -> Rollout | None:
    """The chain's newest rollout (running ones first: those are resumed)."""
    with session_scope(engine) as session:
        return session.scalars(
            select(Rollout)
            .filter_by(chain_id=chain_id, source="agent")
            .order_by((Rollout.status == "running").desc(), Rollout.id.desc())
        ).first()


def passed_stages(engine: Engine, rollout_id: int) -> list[RolloutStage]:
    """The completed stages a resume keeps: the leading run of passed stages, in order."""
    with session_scope(engine) as session:
        stages = session.scalars(
            select(RolloutStage).filter_by(rollout_id=rollout_id).order_by(RolloutStage.stage_idx)
        )
        kept: list[RolloutStage] = []
        for stage in stages:
            if stage.status != "passed" or stage.stage_idx != len(kept) + 1:
                break
            kept.append(stage)
        return kept


def rewind(engine: Engine, rollout_id: int, keep_through: int) -> list[Step]:
    """Drop every row of stages after `keep_through`; return the kept steps in order."""
    with session_scope(engine) as session:
        for model in (Step, Judgement, RolloutStage, EnvTransition):
            session.execute(
                delete(model).where(model.rollout_id == rollout_id, model.stage_idx > keep_through)
            )
        return list(
            session.scalars(select(Step).filter_by(rollout_id=rollout_id).order_by(Step.idx))
        )


def list_rollouts(engine: Engine, limit: int = 100) -> list[Rollout]:
    with session_scope(engine) as session:
        return list(session.scalars(select(Rollout).order_by(Rollout.id.desc()).limit(limit)))


@dataclass
class RolloutView:
    """Everything `prchain trajectories show` prints about one rollout."""

    rollout: Rollout
    stages: list[RolloutStage]
    steps: list[Step]
    judgements: list[Judgement]
    transitions: list[EnvTransition]


def load_rollout(engine: Engine, rollout_id: int) -> RolloutView | None:
    with session_scope(engine) as session:
        rollout = session.get(Rollout, rollout_id)
        if rollout is None:
            return None

        def rows(model: Any, *order: Any) -> list[Any]:
            return list(
                session.scalars(select(model).filter_by(rollout_id=rollout_id).order_by(*order))
            )

        return RolloutView(
            rollout,
            rows(RolloutStage, RolloutStage.stage_idx),
            rows(Step, Step.idx),
            rows(Judgement, Judgement.stage_idx, Judgement.round),
            rows(EnvTransition, EnvTransition.stage_idx),
        )
