"""Roll the agent through one whole chain: stage after stage, judged, refined, kept or rejected.

`ChainRunner.run(chain_id)` owns one sandbox and one rollout row. A rollout that was killed (or failed
on infrastructure) is resumed: its passed stages are kept, the sandbox is rebuilt to the end of the
last one from the stored cumulative diff, and work restarts at the start of the next stage.

The runner knows nothing of how sandboxes are made or whether a PRM watches: both come in as
factories (the app layer wires them from the config).
"""

from __future__ import annotations

import contextlib
import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import Engine

from prchain.agent.choices import FINISHED
from prchain.agent.config import AgentConfig
from prchain.agent.gates import leaking_query
from prchain.agent.hooks import StepHook
from prchain.agent.judge import Judge
from prchain.agent.judging import StageJudging, StageOutcome, over_cap
from prchain.agent.keep import decide
from prchain.agent.lease import (
    Lease,
    LeaseLost,
    held_here,
    holder_of,
    new_owner_id,
    try_claim,
)
from prchain.agent.loop import AgentLoop, Counters
from prchain.agent.opening import task_text
from prchain.agent.persist import (
    Recorder,
    new_rollout,
    open_rollout,
    passed_stages,
    reopen,
    rewind,
)
from prchain.agent.results import RolloutResult, failure_reason, stored_scores, totals
from prchain.agent.resume import carried, rebuild, restored_counters
from prchain.agent.scaffold import Scaffold, StageAgent, scaffold_of
from prchain.agent.tasks import ChainTask, StageTask, load_chain
from prchain.core.errors import BudgetExhausted, PrchainError
from prchain.environments.protocol import Environment
from prchain.llm.protocol import ChatLLM, Message
from prchain.store.rollouts import StageRow
from prchain.verdicts.oracle import TestVerdict

EnvFactory = Callable[[ChainTask, int], contextlib.AbstractContextManager[Environment]]
"""(chain, rollout id) → a context manager holding the chain's sandbox."""
HookFactory = Callable[[int], StepHook | None]
"""rollout id → the step hook watching that rollout (a PRM), or None."""
TestsCheck = Callable[[Environment, int], TestVerdict | None]
"""(sandbox, chain stage id) → T(p̂) on the sandbox's state, None when the stage has no verified tests."""


log = logging.getLogger(__name__)


@dataclass
class _Rollout:
    """A claimed rollout, cut back to its last kept stage: what its remaining stages go on from."""

    id: int
    recorder: Recorder
    kept: list[StageRow]
    messages: list[Message]
    counters: Counters


class ChainRunner:
    def __init__(
        self,
        config: AgentConfig,
        engine: Engine,
        llm: ChatLLM,
        open_env: EnvFactory,
        *,
        hook_factory: HookFactory | None = None,
        rollout_fields: dict[str, Any] | None = None,
        check_tests: TestsCheck | None = None,
        secrets: tuple[str, ...] = (),
        scaffold: Scaffold | None = None,
    ) -> None:
        self.config, self.engine, self.llm, self.open_env = config, engine, llm, open_env
        self.scaffold = scaffold  # None: the built-in loop works each stage
        self.secrets = secrets  # redacted from every stored row, beside the recogniser's patterns
        self.hook_factory = hook_factory
        self.check_tests = check_tests
        self.rollout_fields = rollout_fields or {}
        judge = Judge(
            llm,
            retries=config.judge_retries,
            leak_min_chars=config.leak_min_chars,
            max_prompt_tokens=config.max_judge_prompt_tokens,
            threshold=config.judge_threshold,
        )
        self.judging = StageJudging(config, judge)

    def run(self, chain_id: int, *, redo: bool = False) -> RolloutResult:
        """Claim the chain's lease and roll it out; a chain another live runner holds is left alone.

        `redo` starts a new rollout beside the chain's earlier one, whatever its status."""
        task = load_chain(self.engine, chain_id)
        owner, config = new_owner_id(), self.config
        if not self._claim(chain_id, owner):
            holder = holder_of(self.engine, chain_id)
            return RolloutResult(chain_id, 0, "busy", reason=f"rolled out by {holder}")
        with Lease(self.engine, chain_id, owner, config.lease_heartbeat_seconds) as lease:
            try:
                return self._run_claimed(task, lease, redo)
            except LeaseLost as exc:  # nothing more may be written: the new owner carries on
                return RolloutResult(chain_id, 0, "busy", reason=str(exc))

    def _claim(self, chain_id: int, owner: str) -> bool:
        """Claim the lease; a holder on this host gets a short while to finish dying (its
        heartbeat stops with it, and a dead holder of this host is taken over at once)."""
        config = self.config
        deadline = time.monotonic() + config.lease_wait_seconds
        while not try_claim(self.engine, chain_id, owner, config.lease_timeout_seconds):
            if time.monotonic() >= deadline or not held_here(self.engine, chain_id):
                return False
            time.sleep(0.5)
        return True

    def _run_claimed(self, task: ChainTask, lease: Lease, redo: bool = False) -> RolloutResult:
        existing = self._previous(task.chain_id, lease, redo)
        if existing is not None and existing.status in FINISHED:
            # e.g. the worker finished the chain but died before Ray heard back: the rerun task
            # reports what is stored, not that it did nothing.
            return RolloutResult(
                task.chain_id,
                existing.id,
                existing.status,
                existing.kept_stages,
                existing.reason,
                scores=stored_scores(self.engine, existing.id),
                retried=True,
            )
        if (
            existing is not None
            and (started := scaffold_of(existing.config)) != self.config.scaffold
        ):
            # One trajectory, one scaffold: its tools and prompts differ.
            reason = (
                f"rollout {existing.id} was started with agent.scaffold {started}; resume it with "
                f"--scaffold {started}, or roll the chain out anew with --redo {task.chain_id}"
            )
            return RolloutResult(task.chain_id, existing.id, "failed", reason=reason)
        rollout = self._resumed(self._open(task.chain_id, existing), lease)
        return self._run_guarded(task, rollout, retried=existing is not None)

    def _previous(self, chain_id: int, lease: Lease, redo: bool) -> Any:
        """The chain's open (or finished) rollout; with `redo`, none (a running one is failed)."""
        existing = open_rollout(self.engine, chain_id)
        if redo and existing is not None:
            if existing.status == "running":  # else a later run would resume it, not the redo
                Recorder(self.engine, existing.id, lease=lease).fail("superseded by a redo")
            return None
        return existing

    def _open(self, chain_id: int, existing: Any) -> int:
        if existing is None:
            return new_rollout(self.engine, chain_id, **self.rollout_fields)
        reopen(self.engine, existing.id)  # a failed rollout resumes after its kept stages
        return int(existing.id)

    def _resumed(self, rollout_id: int, lease: Lease) -> _Rollout:
        """The rollout cut back to its last kept stage (its later steps dropped)."""
        kept = passed_stages(self.engine, rollout_id)
        steps = rewind(self.engine, rollout_id, len(kept))
        if not steps:
            kept = []
        next_idx = steps[-1].idx + 1 if steps else 0
        recorder = Recorder(
            self.engine, rollout_id, next_idx=next_idx, lease=lease, secrets=self.secrets
        )
        messages = [s.message for s in steps]
        return _Rollout(rollout_id, recorder, kept, messages, restored_counters(steps))

    def _run_guarded(self, task: ChainTask, rollout: _Rollout, *, retried: bool) -> RolloutResult:
        """Run and finish the rollout; a failure leaves rows that agree with each other."""
        rollout_id, recorder, counters = rollout.id, rollout.recorder, rollout.counters
        try:
            scores, reason = self._run(task, rollout)
        except LeaseLost:
            raise
        except BudgetExhausted:
            raise  # the rollout stays `running`: the next run resumes it
        except PrchainError as exc:
            # Infrastructure (server, sandbox, store): one typed line; a rerun resumes the rollout.
            reason = failure_reason(exc)
            recorder.fail(reason, **totals(counters))
            return RolloutResult(task.chain_id, rollout_id, "failed", 0, reason, retried=retried)
        except Exception as exc:
            # A bug: the rows still agree (nothing is left `running`), and the traceback is kept.
            recorder.fail(f"internal error: {failure_reason(exc)}", **totals(counters))
            raise
        result = self._finish(task, rollout, scores, reason)
        return replace(result, retried=retried, resume_notes=tuple(recorder.resume_notes))

    def _run(self, task: ChainTask, rollout: _Rollout) -> tuple[list[float | None], str | None]:
        rollout_id, recorder, kept = rollout.id, rollout.recorder, rollout.kept
        scores: list[float | None] = [stage.score for stage in kept]
        with self.open_env(task, rollout_id) as env:
            loop = self._agent(env, rollout)
            if kept:
                recorder.resume_notes = rebuild(env, kept, task.replays)
                for note in recorder.resume_notes:
                    log.warning("rollout %s resumed: %s", rollout_id, note)
            for stage in task.stages[len(kept) :]:
                outcome = self._stage(env, loop, recorder, task, stage)
                scores.append(outcome.score)
                if not outcome.passed:
                    return scores, outcome.reason
        return scores, None

    def _agent(self, env: Environment, rollout: _Rollout) -> StageAgent:
        """The agent that works the rollout's stages: the configured scaffold, or the built-in loop."""
        hook = self.hook_factory(rollout.id) if self.hook_factory else None
        args = (env, self.config, rollout.recorder, hook, rollout.id)
        if self.scaffold is not None:
            return self.scaffold.loop(self.llm, *args, rollout.messages, rollout.counters)
        return AgentLoop(self.llm, *args, messages=rollout.messages, chain=rollout.counters)

    def _stage(
        self,
        env: Environment,
        loop: StageAgent,
        recorder: Recorder,
        task: ChainTask,
        stage: StageTask,
    ) -> StageOutcome:
        if (stopped := self._enter(env, recorder, stage)) is not None:
            return stopped
        opening = loop.opening(task, stage)
        run = loop.run_stage(stage.idx, task_text(task, stage), opening=opening)
        outcome, rounds = self.judging.rounds(env, loop, recorder, stage, run.submitted, run.reason)
        # T(p̂) beside the judge's score; with agent.keep_on tests|both it decides too.
        verdict = self.check_tests(env, stage.stage_id) if self.check_tests else None
        if outcome.judged:
            outcome = self.judging.signal(stage.idx, outcome, verdict)
        cumulative = env.cumulative_diff()
        if outcome.passed and (hit := over_cap(stage.idx, "cumulative diff", cumulative)):
            outcome = StageOutcome(False, outcome.score, hit)  # a resume could not rebuild it
        recorder.stage_finished(
            stage.idx,
            status="passed" if outcome.passed else "failed",
            reason=outcome.reason,
            score=outcome.score,
            rounds=rounds,
            stage_diff=env.diff(),
            cumulative_diff=cumulative,
            carried_patch=carried(env.cumulative_patch(), self.secrets) if outcome.passed else None,
            agent_steps=loop.stage.steps,
            test_result=_verdict(verdict) if verdict else _tests(env),
            tests_passed=verdict.passed if verdict else None,
        )
        return outcome

    def _enter(self, env: Environment, recorder: Recorder, stage: StageTask) -> StageOutcome | None:
        """Start the stage in the sandbox; the outcome when it stops before the agent works."""
        if reason := leaking_query(stage.idx, stage.query_leaks):
            recorder.stage_started(stage.idx)
            recorder.stage_finished(stage.idx, status="stopped", reason=reason)
            return StageOutcome(False, None, reason)
        transition = env.enter_stage(stage.idx)
        recorder.transition(transition)
        recorder.stage_started(stage.idx)
        if not transition.stopped:
            return None
        reason = transition.stop_reason()
        recorder.stage_finished(stage.idx, status="stopped", reason=reason)
        return StageOutcome(False, None, reason)

    def _finish(
        self, task: ChainTask, rollout: _Rollout, scores: list[float | None], reason: str | None
    ) -> RolloutResult:
        config = self.config
        # The chain stops at its first failed stage, and every failure has a reason: every stage
        # before the last passed, and the last one did when no reason came back.
        passed = [reason is None or i < len(scores) - 1 for i in range(len(scores))]
        decision = decide(config.keep_policy, passed, len(task.stages), config.judge_threshold)
        status = "kept" if decision.kept else "rejected"
        if decision.kept and decision.kept_stages < len(task.stages):
            reason = f"kept stages 1-{decision.kept_stages}; {reason}"
        stored_reason = None if status == "kept" and reason is None else (reason or decision.reason)
        rollout.recorder.finish(
            status, stored_reason, kept_stages=decision.kept_stages, **totals(rollout.counters)
        )
        return RolloutResult(
            task.chain_id,
            rollout.id,
            status,
            decision.kept_stages,
            reason or decision.reason,
            scores,
        )


def _tests(env: Environment) -> dict[str, Any] | None:
    result = env.run_tests()
    if result is None:
        return None
    return {
        "exit_code": result.exit_code,
        "timed_out": result.timed_out,
        "output": result.output[-4000:],
    }


def _verdict(verdict: TestVerdict) -> dict[str, Any]:
    return {
        "passed": verdict.passed,
        "failing": verdict.failing,
        "error": verdict.error,
        "output": verdict.output_tail,
    }
