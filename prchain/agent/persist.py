"""Everything a rollout writes to the store, each row as it happens, and what a resume reads back.

Stage rows are upserted on their natural keys (rollout, stage[, round]), so a resumed rollout that
replays a stage overwrites instead of duplicating. Steps are plain inserts at the rollout's next
position: the unique (rollout, idx) refuses a second writer at the same position, and with a lease
every write first checks in its own transaction that this runner still owns the chain.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine, delete, insert, select, update
from sqlalchemy.orm import Session

from prchain.core.secrets import Redactor
from prchain.core.text import storable
from prchain.environments.protocol import Transition
from prchain.llm.protocol import Message
from prchain.llm.repairs import record_repairs
from prchain.store.db import session_scope, upsert
from prchain.store.environments import (
    TRANSITION_COLUMNS,
    TransitionRow,
    drop_transitions,
    save_transition,
    transitions,
)
from prchain.store.llm_calls import rollout_costs
from prchain.store.models import Judgement, Rollout, RolloutStage, Step
from prchain.store.models.base import utcnow

if TYPE_CHECKING:
    from prchain.agent.lease import Lease


class Recorder:
    """Writes one rollout's rows; `next_idx` is the position of the next message.

    Every text is redacted before it is stored (an agent that echoes a key must not put it in the
    store, whatever shell later exports it) and made storable (NUL and lone surrogates replaced);
    `redactions` and `scrubbed` count both.
    """

    def __init__(
        self,
        engine: Engine,
        rollout_id: int,
        next_idx: int = 0,
        lease: Lease | None = None,
        secrets: tuple[str, ...] = (),
    ) -> None:
        self.engine = engine
        self.rollout_id = rollout_id
        self.next_idx = next_idx
        self.lease = lease
        self.redact = Redactor(secrets)
        self.scrubbed = 0
        self.resume_notes: list[str] = []  # what a resume could not restore exactly

    @property
    def redactions(self) -> int:
        return self.redact.count

    def _clean(self, value: Any) -> Any:
        value, scrubbed = storable(self.redact.value(value))
        self.scrubbed += scrubbed
        return value

    @contextmanager
    def _write(self) -> Iterator[Session]:
        """One transaction that commits only while this runner still holds the chain's lease."""
        with session_scope(self.engine) as session:
            if self.lease is not None:
                self.lease.check(session.connection())
            yield session

    @contextmanager
    def transaction(self) -> Iterator[Session]:
        """A transaction of the caller's own rows, committed only while the lease is held."""
        with self._write() as session:
            yield session

    def step(self, stage_idx: int, kind: str, message: Message, **extra: Any) -> int:
        row = {
            "rollout_id": self.rollout_id,
            "stage_idx": stage_idx,
            "idx": self.next_idx,
            "kind": kind,
            "message": self._clean(message),
            "tool_call": self._clean(extra.get("tool_call")),
            "observation": self._clean(extra.get("observation")),
            "prompt_tokens": extra.get("prompt_tokens", 0),
            "completion_tokens": extra.get("completion_tokens", 0),
            "latency_ms": extra.get("latency_ms", 0.0),
            "created_at": utcnow(),
        }
        with self._write() as session:
            session.execute(insert(Step), [row])
        # The policy's repaired replies are counted with every other role's in llm_repairs.
        record_repairs(
            self.engine, "policy", extra.get("repairs") or (), rollout_id=self.rollout_id
        )
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
        with self._write() as session:
            upsert(session, RolloutStage, [row], ["rollout_id", "stage_idx"])

    def stage_finished(self, stage_idx: int, **fields: Any) -> None:
        with self._write() as session:
            stage = session.scalars(
                select(RolloutStage).filter_by(rollout_id=self.rollout_id, stage_idx=stage_idx)
            ).one()
            for key, value in fields.items():
                setattr(stage, key, self._clean(value))
            stage.finished_at = utcnow()

    def fail(self, reason: str, **fields: Any) -> None:
        """The rollout failed: the stage it was in and the rollout row both say so, with one reason."""
        with self._write() as session:
            session.execute(
                update(RolloutStage)
                .where(RolloutStage.rollout_id == self.rollout_id, RolloutStage.status == "running")
                .values(status="failed", reason=self._clean(reason), finished_at=utcnow())
            )
        self.finish("failed", reason, **fields)

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
            "comment": self._clean(comment),
            "passed": passed,
            "attempts": attempts,
            "redacted": redacted,
            "created_at": utcnow(),
        }
        with self._write() as session:
            upsert(session, Judgement, [row], ["rollout_id", "stage_idx", "round"])

    def transition(self, transition: Transition) -> None:
        fields = {
            k: v for k, v in asdict(transition).items() if k in TRANSITION_COLUMNS
        }  # backends may report more
        row = {**self._clean(fields), "rollout_id": self.rollout_id, "created_at": utcnow()}
        with self._write() as session:
            save_transition(session, row)

    def finish(self, status: str, reason: str | None, **fields: Any) -> None:
        with self._write() as session:
            rollout = session.get(Rollout, self.rollout_id)
            assert rollout is not None
            rollout.status, rollout.finished_at = status, utcnow()
            rollout.reason = self._clean(reason)
            # fsum is exact, so the total does not depend on the order the calls are read in (a
            # chain resumed on another worker stores its calls in another order).
            rollout.cost_usd = math.fsum(rollout_costs(session, self.rollout_id))
            for key, value in fields.items():
                setattr(rollout, key, value)


def new_rollout(engine: Engine, chain_id: int, **fields: Any) -> int:
    with session_scope(engine) as session:
        rollout = Rollout(chain_id=chain_id, status="running", **fields)
        session.add(rollout)
        session.flush()
        return rollout.id


def reopen(engine: Engine, rollout_id: int) -> None:
    """A failed rollout being resumed is running again (its old reason no longer holds)."""
    with session_scope(engine) as session:
        rollout = session.get(Rollout, rollout_id)
        if rollout is not None and rollout.status != "running":
            rollout.status, rollout.reason, rollout.finished_at = "running", None, None


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
        for model in (Step, Judgement, RolloutStage):
            session.execute(
                delete(model).where(model.rollout_id == rollout_id, model.stage_idx > keep_through)
            )
        drop_transitions(session, rollout_id, keep_through)
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
    transitions: list[TransitionRow]


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
            transitions(session, rollout_id),
        )
