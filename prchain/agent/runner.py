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
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, select

from environments.protocol import Environment, diff_cap_hit
from prchain.agent.choices import FINISHED
from prchain.agent.config import AgentConfig
from prchain.agent.gates import before_judge, leaking_query
from prchain.agent.hooks import StepHook
from prchain.agent.judge import Judge
from prchain.agent.keep import decide, stage_passes
from prchain.agent.lease import (
    Lease,
    LeaseLost,
    held_here,
    holder_of,
    new_owner_id,
    try_claim,
)
from prchain.agent.loop import AgentLoop, Counters
from prchain.agent.persist import (
    Recorder,
    new_rollout,
    open_rollout,
    passed_stages,
    reopen,
    rewind,
)
from prchain.agent.resume import carried, rebuild, restored_counters
from prchain.agent.tasks import ChainTask, StageTask, load_chain
from prchain.core.errors import BudgetExhausted, JudgeInputTooLarge, PrchainError
from prchain.llm.prompts import render
from prchain.llm.protocol import ChatLLM, Message
from prchain.verdicts.oracle import TestVerdict
from sql.db import session_scope
from sql.models import RolloutStage

PROMPTS = Path(__file__).with_name("prompts")

EnvFactory = Callable[[ChainTask, int], contextlib.AbstractContextManager[Environment]]
"""(chain, rollout id) → a context manager holding the chain's sandbox."""
HookFactory = Callable[[int], StepHook | None]
"""rollout id → the step hook watching that rollout (a PRM), or None."""
TestsCheck = Callable[[Environment, int], TestVerdict | None]
"""(sandbox, chain stage id) → T(p̂) on the sandbox's state, None when the stage has no verified tests."""


log = logging.getLogger(__name__)


@dataclass
class RolloutResult:
    chain_id: int
    rollout_id: int
    status: (
        str  # a RolloutStatus value, "busy" (another runner has it) or "lost" (its task kept dying)
    )
    kept_stages: int = 0
    reason: str | None = None
    scores: list[float | None] = field(default_factory=list)
    node: str | None = None  # where it ran, filled in by whoever scheduled it
    # An earlier attempt had started this rollout (it was resumed) or finished it (its stored final
    # state is reported): a task Ray reran after its node died, or a rerun of the command.
    retried: bool = False
    # What a resumed sandbox could not restore exactly (empty when Δ came back byte for byte).
    resume_notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class StageOutcome:
    passed: bool
    score: float | None  # None when no judge verdict stands (a gate failed it, or a contradiction)
    reason: str | None = None
    judged: bool = False  # the stage ended on the judge's verdict (the keep signal may apply)


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
    ) -> None:
        self.config, self.engine, self.llm, self.open_env = config, engine, llm, open_env
        self.secrets = secrets  # redacted from every stored row, beside the recogniser's patterns
        self.hook_factory = hook_factory
        self.check_tests = check_tests
        self.rollout_fields = rollout_fields or {}
        self.judge = Judge(
            llm,
            retries=config.judge_retries,
            leak_min_chars=config.leak_min_chars,
            max_prompt_tokens=config.max_judge_prompt_tokens,
            threshold=config.judge_threshold,
        )

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
        chain_id = task.chain_id
        existing = open_rollout(self.engine, chain_id)
        if redo and existing is not None:
            if existing.status == "running":  # else a later run would resume it, not the redo
                Recorder(self.engine, existing.id, lease=lease).fail("superseded by a redo")
            existing = None
        if existing is not None and existing.status in FINISHED:
            # e.g. the worker finished the chain but died before Ray heard back: the rerun task
            # reports what is stored, not that it did nothing.
            return RolloutResult(
                chain_id,
                existing.id,
                existing.status,
                existing.kept_stages,
                existing.reason,
                scores=stored_scores(self.engine, existing.id),
                retried=True,
            )
        if existing is not None:
            rollout_id = existing.id
            reopen(self.engine, rollout_id)  # a failed rollout resumes after its kept stages
        else:
            rollout_id = new_rollout(self.engine, chain_id, **self.rollout_fields)
        kept = passed_stages(self.engine, rollout_id)
        steps = rewind(self.engine, rollout_id, len(kept))
        if not steps:
            kept = []
        next_idx = steps[-1].idx + 1 if steps else 0
        recorder = Recorder(
            self.engine, rollout_id, next_idx=next_idx, lease=lease, secrets=self.secrets
        )
        counters = restored_counters(steps)
        try:
            scores, reason = self._run(
                task, rollout_id, recorder, kept, [s.message for s in steps], counters
            )
        except LeaseLost:
            raise
        except BudgetExhausted:
            raise  # the rollout stays `running`: the next run resumes it
        except PrchainError as exc:
            # Infrastructure (server, sandbox, store): one typed line; a rerun resumes the rollout.
            reason = failure_reason(exc)
            recorder.fail(reason, **_totals(counters))
            return RolloutResult(
                chain_id, rollout_id, "failed", 0, reason, retried=existing is not None
            )
        except Exception as exc:
            # A bug: the rows still agree (nothing is left `running`), and the traceback is kept.
            recorder.fail(f"internal error: {failure_reason(exc)}", **_totals(counters))
            raise
        result = self._finish(task, rollout_id, recorder, counters, scores, reason)
        return replace(
            result, retried=existing is not None, resume_notes=tuple(recorder.resume_notes)
        )

    def _run(
        self,
        task: ChainTask,
        rollout_id: int,
        recorder: Recorder,
        kept: list[RolloutStage],
        messages: list[Message],
        counters: Counters,
    ) -> tuple[list[float | None], str | None]:
        scores: list[float | None] = [stage.score for stage in kept]
        with self.open_env(task, rollout_id) as env:
            hook = self.hook_factory(rollout_id) if self.hook_factory else None
            loop = AgentLoop(
                self.llm,
                env,
                self.config,
                recorder,
                hook,
                rollout_id,
                messages=messages,
                chain=counters,
            )
            if kept:
                recorder.resume_notes = rebuild(env, kept[-1])
                for note in recorder.resume_notes:
                    log.warning("rollout %s resumed: %s", rollout_id, note)
            for stage in task.stages[len(kept) :]:
                outcome = self._stage(env, loop, recorder, task, stage)
                scores.append(outcome.score)
                if not outcome.passed:
                    return scores, outcome.reason
        return scores, None

    def _stage(
        self,
        env: Environment,
        loop: AgentLoop,
        recorder: Recorder,
        task: ChainTask,
        stage: StageTask,
    ) -> StageOutcome:
        if reason := leaking_query(stage.idx, stage.query_leaks):
            recorder.stage_started(stage.idx)
            recorder.stage_finished(stage.idx, status="stopped", reason=reason)
            return StageOutcome(False, None, reason)
        transition = env.enter_stage(stage.idx)
        recorder.transition(transition)
        recorder.stage_started(stage.idx)
        if transition.stopped:
            reason = transition.stop_reason()
            recorder.stage_finished(stage.idx, status="stopped", reason=reason)
            return StageOutcome(False, None, reason)
        run = loop.run_stage(stage.idx, _task_text(task, stage), opening=self._opening(task, stage))
        outcome, rounds = self._judged_rounds(env, loop, recorder, stage, run.submitted, run.reason)
        # T(p̂) beside the judge's score; with agent.keep_on tests|both it decides too.
        verdict = self.check_tests(env, stage.stage_id) if self.check_tests else None
        if outcome.judged:
            outcome = self._signal(stage.idx, outcome, verdict)
        cumulative = env.cumulative_diff()
        if outcome.passed and (hit := _over_cap(stage.idx, "cumulative diff", cumulative)):
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

    def _judged_rounds(
        self,
        env: Environment,
        loop: AgentLoop,
        recorder: Recorder,
        stage: StageTask,
        submitted: bool,
        reason: str | None,
    ) -> tuple[StageOutcome, int]:
        """Judge the submitted patch; below the threshold the comment goes back for another try."""
        config, score = self.config, None
        for round_ in range(config.max_refinements + 1):
            if not submitted:
                return StageOutcome(False, score, f"stage {stage.idx}: {reason}"), round_
            agent_patch = env.diff()
            if hit := _over_cap(stage.idx, "diff", agent_patch):
                return StageOutcome(False, score, hit), round_
            if gated := before_judge(stage.idx, agent_patch, stage.gold_patch):
                return StageOutcome(False, None, gated), round_
            try:
                judged = self.judge.judge(
                    query=stage.query,
                    gold_patch=stage.gold_patch,
                    agent_patch=agent_patch,
                    rollout_id=loop.rollout_id,
                )
            except JudgeInputTooLarge as exc:
                return StageOutcome(False, score, f"stage {stage.idx}: {exc}"), round_
            score = judged.score
            passed = score >= config.judge_threshold and not judged.contradicted
            recorder.judgement(
                stage.idx,
                round_,
                score=score,
                comment=judged.comment,
                passed=passed,
                attempts=judged.attempts,
                redacted=judged.redacted,
            )
            if passed:
                return StageOutcome(True, score, judged=True), round_
            if round_ == config.max_refinements:
                if judged.contradicted:
                    why = f"stage {stage.idx}: the judge's score contradicts its own comment"
                    return StageOutcome(False, None, why), round_
                break
            feedback = render(PROMPTS, "feedback.j2", comment=judged.comment)
            loop.add("feedback", {"role": "user", "content": feedback})
            run = loop.work()
            submitted, reason = run.submitted, run.reason
        why = (
            f"stage {stage.idx}: score {score:.2f} below {config.judge_threshold:g} "
            f"after {config.max_refinements} refinements"
        )
        return StageOutcome(False, score, why, judged=True), config.max_refinements

    def _signal(self, idx: int, outcome: StageOutcome, verdict: TestVerdict | None) -> StageOutcome:
        """Apply agent.keep_on: the hidden tests pass the stage, or must agree with the judge."""
        config = self.config
        tests = verdict.passed if verdict is not None else None
        passed = stage_passes(outcome.score, tests, config.judge_threshold, config.keep_on)
        if passed == outcome.passed:
            return outcome
        if passed:
            return StageOutcome(True, outcome.score, None, judged=True)
        failing = ", ".join(verdict.failing[:3]) if verdict and verdict.failing else "none named"
        why = f"stage {idx}: the judge passed it but its hidden tests failed (failing: {failing})"
        return StageOutcome(False, outcome.score, why, judged=True)

    def _opening(self, task: ChainTask, stage: StageTask) -> list[tuple[str, Message]]:
        n = len(task.stages)
        if stage.idx == task.stages[0].idx:
            system = render(PROMPTS, "system.j2", action_format=self.config.action_format)
            first = render(
                PROMPTS, "first_task.j2", n_stages=n, overview=task.overview, query=stage.query
            )
            return [
                ("system", {"role": "system", "content": system}),
                ("query", {"role": "user", "content": first}),
            ]
        text = render(PROMPTS, "next_task.j2", idx=stage.idx, n_stages=n, query=stage.query)
        return [("query", {"role": "user", "content": text})]

    def _finish(
        self,
        task: ChainTask,
        rollout_id: int,
        recorder: Recorder,
        counters: Counters,
        scores: list[float | None],
        reason: str | None,
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
        recorder.finish(
            status, stored_reason, kept_stages=decision.kept_stages, **_totals(counters)
        )
        return RolloutResult(
            task.chain_id,
            rollout_id,
            status,
            decision.kept_stages,
            reason or decision.reason,
            scores,
        )


def stored_scores(engine: Engine, rollout_id: int) -> list[float | None]:
    """The judge's score of each stage of a stored rollout, in stage order."""
    with session_scope(engine) as session:
        query = select(RolloutStage.score).filter_by(rollout_id=rollout_id)
        return list(session.scalars(query.order_by(RolloutStage.stage_idx)))


REASON_CHARS = 500


def failure_reason(exc: BaseException) -> str:
    """`ErrorType: first line of the message`: what a stored reason of a failed rollout holds."""
    text = next((line.strip() for line in str(exc).splitlines() if line.strip()), "")
    if len(text) > REASON_CHARS:
        text = text[: REASON_CHARS - 1] + "…"
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _over_cap(idx: int, what: str, diff: str) -> str | None:
    """The stage's reason when `diff` is only the summary of a diff past the environment's cap."""
    hit = diff_cap_hit(diff)
    if hit is None:
        return None
    size, cap = hit
    return (
        f"stage {idx}: the {what} is {size} bytes, over environment.max_diff_bytes ({cap}); "
        "a diffstat was stored instead and the stage was not judged"
    )


def _task_text(task: ChainTask, stage: StageTask) -> str:
    return f"{task.overview}\n\n{stage.query}" if stage.idx == 1 else stage.query


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


def _totals(counters: Counters) -> dict[str, Any]:
    return {
        "prompt_tokens": counters.prompt_tokens,
        "completion_tokens": counters.completion_tokens,
        "trajectory_tokens": counters.context_tokens,
        "agent_steps": counters.steps,
        "tool_calls": counters.tool_calls,
    }
