"""Everything a rollout writes to the store, each row as it happens, and what a resume reads back.

Stage rows are upserted on their natural keys (rollout, stage[, round]), so a resumed rollout that
replays a stage overwrites instead of duplicating. Steps are plain inserts at the rollout's next
position: the unique (rollout, idx) refuses a second writer at the same position, and with a lease
every write first checks in its own transaction that this runner still owns the chain.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine
from sqlalchemy.orm import Session

from prchain.core.secrets import Redactor
from prchain.core.text import storable
from prchain.environments.protocol import Transition
from prchain.llm.protocol import Message
from prchain.llm.repairs import record_repairs
from prchain.store import rollouts as stored
from prchain.store.db import session_scope
from prchain.store.environments import TRANSITION_COLUMNS, save_transition
from prchain.store.models.base import utcnow
from prchain.store.rollouts import RolloutRow, Rollouts, StageRow, StepRow, Trajectory

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
            stored.add_step(session, row)
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
            stored.start_stage(session, row)

    def stage_finished(self, stage_idx: int, **fields: Any) -> None:
        with self._write() as session:
            values = {key: self._clean(value) for key, value in fields.items()}
            stored.finish_stage(session, self.rollout_id, stage_idx, values)

    def fail(self, reason: str, **fields: Any) -> None:
        """The rollout failed: the stage it was in and the rollout row both say so, with one reason."""
        with self._write() as session:
            stored.fail_running_stages(session, self.rollout_id, self._clean(reason))
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
            stored.save_judgement(session, row)

    def transition(self, transition: Transition) -> None:
        fields = {
            k: v for k, v in asdict(transition).items() if k in TRANSITION_COLUMNS
        }  # backends may report more
        row = {**self._clean(fields), "rollout_id": self.rollout_id, "created_at": utcnow()}
        with self._write() as session:
            save_transition(session, row)

    def finish(self, status: str, reason: str | None, **fields: Any) -> None:
        with self._write() as session:
            stored.finish(session, self.rollout_id, status, self._clean(reason), fields)


def new_rollout(engine: Engine, chain_id: int, **fields: Any) -> int:
    return Rollouts(engine).new(chain_id, **fields)


def reopen(engine: Engine, rollout_id: int) -> None:
    """A failed rollout being resumed is running again (its old reason no longer holds)."""
    Rollouts(engine).reopen(rollout_id)


def open_rollout(engine: Engine, chain_id: int) -> RolloutRow | None:
    """The chain's newest rollout (running ones first: those are resumed)."""
    return Rollouts(engine).newest_agent(chain_id)


def passed_stages(engine: Engine, rollout_id: int) -> list[StageRow]:
    """The completed stages a resume keeps: the leading run of passed stages, in order."""
    return Rollouts(engine).passed_stages(rollout_id)


def rewind(engine: Engine, rollout_id: int, keep_through: int) -> list[StepRow]:
    """Drop every row of stages after `keep_through`; return the kept steps in order."""
    return Rollouts(engine).rewind(rollout_id, keep_through)


def list_rollouts(engine: Engine, limit: int = 100) -> list[RolloutRow]:
    return Rollouts(engine).latest(limit)


RolloutView = Trajectory  # everything `prchain trajectories show` prints about one rollout


def load_rollout(engine: Engine, rollout_id: int) -> RolloutView | None:
    return Rollouts(engine).trajectory(rollout_id)
