"""Roll the agent through whole chains: stage after stage, judged, refined, kept or rejected.

One `ChainRunner.run(chain_id)` owns one sandbox and one rollout row. A rollout that was killed (or
failed on infrastructure) is resumed: its passed stages are kept, the sandbox is rebuilt to the end
of the last one from the stored cumulative diff, and work restarts at the start of the next stage.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, select
from sqlalchemy.engine import make_url

from agent.hooks import StepHook
from agent.judge import Judge
from agent.keep import decide
from agent.loop import AgentLoop, Counters
from agent.persist import Recorder, new_rollout, open_rollout, passed_stages, rewind
from environments.protocol import Environment, StageSpec
from llm.prompts import render
from llm.protocol import ChatLLM, Message
from prchain.config import Config
from prchain.errors import EnvironmentFailure, NothingToDo, PrchainError
from sql.db import session_scope
from sql.models import Chain, ChainStage, PullRequest, Repo, Rollout, RolloutStage, Step

PROMPTS = Path(__file__).with_name("prompts")
FINISHED = ("kept", "rejected")
EnvFactory = Callable[["ChainTask", int], contextlib.AbstractContextManager[Environment]]


@dataclass(frozen=True)
class StageTask:
    idx: int
    pr_number: int
    base_sha: str
    gold_patch: str
    query: str


@dataclass(frozen=True)
class ChainTask:
    chain_id: int
    repo: str
    clone_path: str
    overview: str
    stages: list[StageTask]


@dataclass
class RolloutResult:
    chain_id: int
    rollout_id: int
    status: str  # kept | rejected | failed | skipped (already finished before)
    kept_stages: int = 0
    reason: str | None = None
    scores: list[float | None] = field(default_factory=list)


@dataclass(frozen=True)
class StageOutcome:
    passed: bool
    score: float | None
    reason: str | None = None


def load_chain(engine: Engine, chain_id: int) -> ChainTask:
    with session_scope(engine) as session:
        chain = session.get(Chain, chain_id)
        if chain is None:
            raise NothingToDo(f"chain {chain_id} does not exist", hint="`prchain chains build` makes chains")
        repo = session.get(Repo, chain.repo_id)
        rows = session.execute(
            select(ChainStage, PullRequest.number).join(PullRequest, PullRequest.id == ChainStage.pr_id)
            .where(ChainStage.chain_id == chain_id).order_by(ChainStage.idx)
        ).all()
        missing = [stage.idx for stage, _ in rows if not stage.query]
        if missing or not rows:
            raise NothingToDo(f"chain {chain_id} has no query for stage(s) {missing or 'any'}",
                              hint="run `prchain queries build` first")
        if repo is None or not repo.clone_path:
            raise NothingToDo(f"chain {chain_id}: its repository has no local clone",
                              hint="mine with --source git or give the repo a clone_path")
        stages = [StageTask(s.idx, number, s.base_sha or "", s.gold_patch, s.query or "") for s, number in rows]
        overview = chain.overview or f"{len(stages)} related changes to {repo.full_name}, in the order they were made."
        return ChainTask(chain_id, repo.full_name, repo.clone_path, overview, stages)


def open_environment_for(config: Config) -> EnvFactory:
    """The configured sandbox backend, one container per rollout, labelled so orphans can be found."""

    def factory(task: ChainTask, rollout_id: int) -> contextlib.AbstractContextManager[Environment]:
        from environments.factory import open_environment  # the docker SDK loads only when a sandbox opens

        specs = [StageSpec(s.idx, s.base_sha, s.gold_patch) for s in task.stages]
        labels = {"prchain.rollout": str(rollout_id), "prchain.chain": str(task.chain_id)}
        env: Any = open_environment(config.environment, repo=task.repo, clone_path=task.clone_path,
                                    stages=specs, labels=labels)
        return env  # type: ignore[no-any-return]

    return factory


def build_hook(config: Config, llm: ChatLLM, engine: Engine, rollout_id: int) -> StepHook | None:
    if config.prm.variant is None:
        return None
    from prm.hook import build_prm_hook  # the PRM is optional; load it only when asked for

    return build_prm_hook(config, llm, engine, rollout_id)


class ChainRunner:
    def __init__(self, config: Config, engine: Engine, llm: ChatLLM, open_env: EnvFactory | None = None) -> None:
        self.config, self.engine, self.llm = config, engine, llm
        self.open_env = open_env or open_environment_for(config)
        self.judge = Judge(llm, retries=config.agent.judge_retries, leak_min_chars=config.agent.leak_min_chars)

    def run(self, chain_id: int) -> RolloutResult:
        task = load_chain(self.engine, chain_id)
        existing = open_rollout(self.engine, chain_id)
        if existing is not None and existing.status in FINISHED:
            return RolloutResult(chain_id, existing.id, "skipped", existing.kept_stages, existing.reason)
        rollout_id = existing.id if existing else new_rollout(self.engine, chain_id, **self._rollout_fields())
        kept = passed_stages(self.engine, rollout_id)
        steps = rewind(self.engine, rollout_id, len(kept))
        if not steps:
            kept = []
        recorder = Recorder(self.engine, rollout_id, next_idx=len(steps))
        loop = AgentLoop(self.llm, _NoEnv(), self.config.agent, recorder, None, rollout_id,
                         messages=[s.message for s in steps])
        _restore_counters(loop.chain, steps)
        try:
            scores, reason = self._run(task, rollout_id, loop, recorder, kept)
        except PrchainError as exc:
            recorder.finish("failed", f"{type(exc).__name__}: {exc}", **_totals(loop))
            return RolloutResult(chain_id, rollout_id, "failed", 0, str(exc))
        return self._finish(task, rollout_id, recorder, loop, scores, reason)

    def _run(self, task: ChainTask, rollout_id: int, loop: AgentLoop, recorder: Recorder,
             kept: list[RolloutStage]) -> tuple[list[float | None], str | None]:
        scores: list[float | None] = [stage.score for stage in kept]
        with self.open_env(task, rollout_id) as env:
            loop.attach(env, build_hook(self.config, self.llm, self.engine, rollout_id))
            if kept:
                rebuild(env, kept[-1])
            for stage in task.stages[len(kept):]:
                outcome = self._stage(env, loop, recorder, task, stage)
                scores.append(outcome.score)
                if not outcome.passed:
                    return scores, outcome.reason
        return scores, None

    def _stage(self, env: Environment, loop: AgentLoop, recorder: Recorder, task: ChainTask,
               stage: StageTask) -> StageOutcome:
        transition = env.enter_stage(stage.idx)
        recorder.transition(transition)
        recorder.stage_started(stage.idx)
        if transition.stopped:
            reason = f"stage {stage.idx}: the carried patch conflicts with the new base ({transition.policy} policy)"
            recorder.stage_finished(stage.idx, status="stopped", reason=reason)
            return StageOutcome(False, None, reason)
        run = loop.run_stage(stage.idx, self._task_text(task, stage), opening=self._opening(task, stage))
        outcome, rounds = self._judged_rounds(env, loop, recorder, stage, run.submitted, run.reason)
        recorder.stage_finished(
            stage.idx, status="passed" if outcome.passed else "failed", reason=outcome.reason, score=outcome.score,
            rounds=rounds, stage_diff=env.diff(), cumulative_diff=env.cumulative_diff(),
            agent_steps=loop.stage.steps, test_result=_tests(env),
        )
        return outcome

    def _judged_rounds(self, env: Environment, loop: AgentLoop, recorder: Recorder, stage: StageTask,
                       submitted: bool, reason: str | None) -> tuple[StageOutcome, int]:
        agent, score = self.config.agent, None
        for round_ in range(agent.max_refinements + 1):
            if not submitted:
                return StageOutcome(False, score, f"stage {stage.idx}: {reason}"), round_
            judged = self.judge.judge(query=stage.query, gold_patch=stage.gold_patch, agent_patch=env.diff(),
                                      rollout_id=loop.rollout_id)
            score, passed = judged.score, judged.score >= agent.judge_threshold
            recorder.judgement(stage.idx, round_, score=score, comment=judged.comment, passed=passed,
                               attempts=judged.attempts, redacted=judged.redacted)
            if passed:
                return StageOutcome(True, score), round_
            if round_ == agent.max_refinements:
                break
            loop.add("feedback", {"role": "user", "content": render(PROMPTS, "feedback.j2", comment=judged.comment)})
            run = loop.work()
            submitted, reason = run.submitted, run.reason
        why = f"stage {stage.idx}: score {score:.2f} below {agent.judge_threshold:g} after {agent.max_refinements} refinements"
        return StageOutcome(False, score, why), agent.max_refinements

    def _opening(self, task: ChainTask, stage: StageTask) -> list[tuple[str, Message]]:
        n = len(task.stages)
        if stage.idx == task.stages[0].idx:
            system = render(PROMPTS, "system.j2", action_format=self.config.agent.action_format)
            first = render(PROMPTS, "first_task.j2", n_stages=n, overview=task.overview, query=stage.query)
            return [("system", {"role": "system", "content": system}), ("query", {"role": "user", "content": first})]
        text = render(PROMPTS, "next_task.j2", idx=stage.idx, n_stages=n, query=stage.query)
        return [("query", {"role": "user", "content": text})]

    @staticmethod
    def _task_text(task: ChainTask, stage: StageTask) -> str:
        return f"{task.overview}\n\n{stage.query}" if stage.idx == 1 else stage.query

    def _finish(self, task: ChainTask, rollout_id: int, recorder: Recorder, loop: AgentLoop,
                scores: list[float | None], reason: str | None) -> RolloutResult:
        agent = self.config.agent
        decision = decide(agent.keep_policy, scores, len(task.stages), agent.judge_threshold)
        status = "kept" if decision.kept else "rejected"
        if decision.kept and decision.kept_stages < len(task.stages):
            reason = f"kept stages 1-{decision.kept_stages}; {reason}"
        recorder.finish(status, None if status == "kept" and reason is None else (reason or decision.reason),
                        kept_stages=decision.kept_stages, **_totals(loop))
        return RolloutResult(task.chain_id, rollout_id, status, decision.kept_stages, reason or decision.reason, scores)

    def _rollout_fields(self) -> dict[str, Any]:
        c = self.config
        return {
            "conflict_policy": c.environment.conflict_policy, "keep_policy": c.agent.keep_policy,
            "prm_variant": c.prm.variant, "action_format": c.agent.action_format,
            "models": {role: c.llm.model_for(role) for role in ("policy", "judge", "prm")},
            "config": _public_config(c),
        }


class _NoEnv:
    """Placeholder until the sandbox is open; any use is a bug, so it fails loudly."""

    def __getattr__(self, name: str) -> Any:
        raise EnvironmentFailure(f"the sandbox is not open yet ({name})")


def rebuild(env: Environment, last: RolloutStage) -> None:
    """Bring a fresh sandbox to the end of stage `last`: its start state plus the stored Δ."""
    env.enter_stage(last.stage_idx)
    delta = last.cumulative_diff
    if not delta.strip():
        return
    marker = f"PRCHAIN_DELTA_{uuid.uuid4().hex}"
    result = env.execute(f"git apply --whitespace=nowarn - <<'{marker}'\n{delta}\n{marker}\n")
    if result.exit_code != 0:
        raise EnvironmentFailure(f"could not restore stage {last.stage_idx}'s changes on resume: {result.output[-500:]}")


def _public_config(config: Config) -> dict[str, Any]:
    """The config as stored with the rollout (and exported): a database password never leaves the host."""
    data = config.model_dump(mode="json")
    data["store"]["url"] = make_url(config.store.url).render_as_string(hide_password=True)
    return data


def _tests(env: Environment) -> dict[str, Any] | None:
    result = env.run_tests()
    if result is None:
        return None
    return {"exit_code": result.exit_code, "timed_out": result.timed_out, "output": result.output[-4000:]}


def _restore_counters(counters: Counters, steps: Iterable[Step]) -> None:
    for step in steps:
        if step.kind in ("assistant", "format_error") and step.message.get("role") == "assistant":
            counters.steps += 1
            counters.tool_calls += len(step.message.get("tool_calls") or [])
            counters.prompt_tokens += step.prompt_tokens
            counters.completion_tokens += step.completion_tokens
            counters.context_tokens = step.prompt_tokens + step.completion_tokens


def _totals(loop: AgentLoop) -> dict[str, Any]:
    c = loop.chain
    return {"prompt_tokens": c.prompt_tokens, "completion_tokens": c.completion_tokens,
            "trajectory_tokens": c.context_tokens, "agent_steps": c.steps, "tool_calls": c.tool_calls}


def pending_chains(engine: Engine, chain_ids: Iterable[int] = (), limit: int | None = None) -> list[int]:
    """Chains whose every stage has a query and that have no finished rollout, in id order."""
    wanted = set(chain_ids)
    with session_scope(engine) as session:
        ids = [cid for cid in session.scalars(select(Chain.id).order_by(Chain.id)) if not wanted or cid in wanted]
        done = set(session.scalars(select(Rollout.chain_id).where(Rollout.status.in_(FINISHED))))
        unready = set(session.scalars(select(ChainStage.chain_id).where(ChainStage.query.is_(None))))
        staged = set(session.scalars(select(ChainStage.chain_id)))
    todo = [cid for cid in ids if cid not in done and cid in staged and cid not in unready]
    return todo[:limit] if limit else todo


def run_rollouts(runner: ChainRunner, chain_ids: list[int], *, workers: int = 1,
                 on_done: Callable[[RolloutResult], None] | None = None) -> list[RolloutResult]:
    """Roll out chains in parallel threads, each chain in its own sandbox."""
    results: list[RolloutResult] = []
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="rollout") as pool:
        futures = [pool.submit(runner.run, cid) for cid in chain_ids]
        for future in as_completed(futures):
            results.append(future.result())
            if on_done is not None:
                on_done(results[-1])
    return sorted(results, key=lambda r: r.chain_id)



def rollout_from_config(config: Config, *, chain_ids: Iterable[int] = (), limit: int | None = None,
                        on_start: Callable[[int], None] | None = None,
                        on_done: Callable[[RolloutResult], None] | None = None) -> list[RolloutResult]:
    """What `prchain rollout` does: pick pending chains and roll them out with the configured workers."""
    from llm.client import LLMClient  # the openai import stays out of module import
    from sql.db import make_engine

    engine = make_engine(config.store.url)
    todo = pending_chains(engine, chain_ids, limit)
    if not todo:
        raise NothingToDo("no chain is waiting for a rollout (every chain with queries has a finished rollout)")
    if on_start is not None:
        on_start(len(todo))
    runner = ChainRunner(config, engine, LLMClient(config.llm, engine))
    return run_rollouts(runner, todo, workers=config.agent.workers, on_done=on_done)
