"""Curating a whole chain with P2T: under the chain's p2t work lease, in one sandbox, stage after
stage with each admitted patch carried forward; a curation a killed run left `running` resumes
from its admitted stages and its last committed window."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine

from prchain.agent.persist import Recorder, new_rollout, passed_stages, rewind
from prchain.agent.resume import rebuild
from prchain.agent.tasks import ChainTask, StageTask, load_chain
from prchain.app.config import Config, configured_secrets
from prchain.app.p2t.oracle import default_oracle
from prchain.app.p2t.parts import stage_env
from prchain.app.p2t.stage import Curation, Notify, curate_stage, opening
from prchain.app.rollout import rollout_fields
from prchain.core.errors import EnvironmentFailure
from prchain.environments.protocol import Environment
from prchain.llm.protocol import ChatLLM, Message
from prchain.p2t import store
from prchain.p2t.forward import Checkpoint
from prchain.p2t.oracle import TestOracle
from prchain.store.rollouts import Rollouts, StageRow


@dataclass
class CurationResult:
    chain_id: int
    rollout_id: int
    status: (
        str  # kept | rejected | busy (another runner holds the chain) | lost (its task kept dying)
    )
    admitted_stages: int
    reason: str
    cost_usd: float
    resumed: bool = False  # continued a curation an earlier (killed) run had started
    node: str | None = None  # where it ran, filled in by whoever scheduled it


EnvOpener = Callable[[ChainTask, int], contextlib.AbstractContextManager[Environment]]


def curate_chain(
    config: Config,
    engine: Engine,
    llm: ChatLLM,
    chain_id: int,
    *,
    oracle: TestOracle | None = None,
    open_env: EnvOpener | None = None,
    notify: Notify = lambda _m: None,
) -> CurationResult:
    """Curate every stage of a chain in one sandbox, carrying each committed patch forward.

    The chain's p2t work lease is held throughout, so two runners never curate one chain at once
    (a plain rollout of the same chain holds another kind and is not blocked). A
    curation an earlier run left `running` (killed, out of budget) is resumed: its admitted stages
    are kept, and the stage it was in continues from its last committed window."""
    from prchain.store import leases

    agent = config.agent
    with leases.holding(
        engine,
        "p2t",
        str(chain_id),
        timeout_seconds=agent.lease_timeout_seconds,
        heartbeat_seconds=agent.lease_heartbeat_seconds,
        wait_seconds=agent.lease_wait_seconds,
    ) as lease:
        if lease is None:
            holder = leases.holder_of(engine, "p2t", str(chain_id))
            return CurationResult(chain_id, 0, "busy", 0, f"curated by {holder}", 0.0)
        return _curate_claimed(config, engine, llm, chain_id, lease, oracle, open_env, notify)


@dataclass
class _ResumePoint:
    """Where a curation (re)starts: its admitted stages, the stage after them, that stage's last
    committed checkpoint (None: it starts afresh) and the steps kept in the store."""

    kept: list[Any]
    current: StageTask | None
    checkpoint: Any
    steps: list[Any]


def _curate_claimed(
    config: Config,
    engine: Engine,
    llm: ChatLLM,
    chain_id: int,
    lease: Any,
    oracle: TestOracle | None,
    open_env: EnvOpener | None,
    notify: Notify,
) -> CurationResult:
    task = load_chain(engine, chain_id)
    rollout_id, resumed = _open_rollout(config, engine, chain_id, notify)
    point = _resume_point(engine, task, rollout_id)
    recorder = Recorder(
        engine,
        rollout_id,
        next_idx=point.steps[-1].idx + 1 if point.steps else 0,
        lease=lease,
        secrets=configured_secrets(config),
    )
    opener = open_env or (lambda t, rid: stage_env(config, t, rid))
    with opener(task, rollout_id) as env:
        resume, history = _restore(engine, env, task, rollout_id, point)
        run = Curation(config, engine, llm, env, task, recorder, history, notify)
        admitted, reason = len(point.kept), ""
        for stage in task.stages[len(point.kept) :]:
            stage_oracle = oracle or default_oracle(config, task, stage, engine)
            at = resume if stage is point.current else None
            ok, reason = curate_stage(run, stage, stage_oracle, at)
            if not ok:
                break
            admitted += 1
    return _finish(engine, recorder, task, history, admitted, reason, resumed)


def _open_rollout(
    config: Config, engine: Engine, chain_id: int, notify: Notify
) -> tuple[int, bool]:
    """The chain's curation left `running` by an earlier run, else a new one; whether resumed."""
    existing = store.open_curation(engine, chain_id)
    if existing is not None:
        notify(f"chain {chain_id}: resuming curation {existing.id}")
        return existing.id, True
    fields = rollout_fields(config)
    fields["models"] = {
        r: config.llm.model_for(r) for r in ("p2t_seed", "p2t_verifier", "p2t_curator")
    }
    return new_rollout(engine, chain_id, source="p2t", **fields), False


def _resume_point(engine: Engine, task: ChainTask, rollout_id: int) -> _ResumePoint:
    """Drop the steps past the last admitted stage or committed window; what is left to go on."""
    kept = passed_stages(engine, rollout_id)
    current = next((s for s in task.stages if s.idx == len(kept) + 1), None)
    checkpoint = store.load_checkpoint_row(engine, rollout_id, current.idx) if current else None
    if checkpoint is None:
        return _ResumePoint(kept, current, None, rewind(engine, rollout_id, len(kept)))
    assert current is not None
    steps = store.trim_steps(
        engine,
        rollout_id,
        current.idx,
        opening=len(opening(task, current)),
        assistant_steps=sum(w["committed"] for w in checkpoint.windows),
    )
    return _ResumePoint(kept, current, checkpoint, steps)


def _restore(
    engine: Engine, env: Environment, task: ChainTask, rollout_id: int, point: _ResumePoint
) -> tuple[Checkpoint | None, list[Message]]:
    """Bring a fresh sandbox to the resume point; the stage's checkpoint and the history so far."""
    history: list[Message] = [s.message for s in point.steps]
    if point.kept:
        rebuild(env, point.kept, task.replays)  # the end of the last admitted stage
    current, row = point.current, point.checkpoint
    if row is None or current is None:
        return None, history
    stage_steps = [s for s in point.steps if s.stage_idx == current.idx]
    n_open = len(opening(task, current))
    resume = Checkpoint.stored(row.windows, row.established, stage_steps[n_open:])
    history = [s.message for s in point.steps if s.stage_idx < current.idx] + [
        s.message for s in stage_steps[:n_open]
    ]
    env.enter_stage(current.idx)  # carries Δ of the admitted stages, as the first time
    _apply(env, _stage_row(engine, rollout_id, current.idx).stage_diff or "")
    return resume, history


def _finish(
    engine: Engine,
    recorder: Recorder,
    task: ChainTask,
    history: list[Message],
    admitted: int,
    reason: str,
    resumed: bool,
) -> CurationResult:
    """Close the rollout as kept (every stage admitted) or rejected, with its totals."""
    status = "kept" if admitted == len(task.stages) else "rejected"
    totals = {
        "agent_steps": sum(1 for m in history if m.get("role") == "assistant"),
        "kept_stages": admitted,
    }
    recorder.finish(status, None if status == "kept" else reason, **totals)
    row = Rollouts(engine).get(recorder.rollout_id)
    cost = float(row.cost_usd) if row else 0.0
    return CurationResult(
        task.chain_id, recorder.rollout_id, status, admitted, reason, cost, resumed=resumed
    )


def _apply(env: Environment, diff: str) -> None:
    """Replay the committed windows' changes (the stored stage diff) in a fresh sandbox."""
    if not diff.strip():
        return
    marker = f"PRCHAIN_P2T_{uuid.uuid4().hex}"
    result = env.execute(f"git apply --whitespace=nowarn - <<'{marker}'\n{diff}\n{marker}\n")
    if result.exit_code != 0:
        raise EnvironmentFailure(
            f"could not restore the committed windows on resume: {result.output[-500:]}"
        )


def _stage_row(engine: Engine, rollout_id: int, stage_idx: int) -> StageRow:
    return Rollouts(engine).stage(rollout_id, stage_idx)
