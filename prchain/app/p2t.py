"""Wiring for `prchain p2t …`: graphs per stage (reverse phase) and curated chains (forward phase),
each in the configured sandbox, recorded as a rollout with source p2t so the export takes it."""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import Engine, func, select

from environments.protocol import Environment
from prchain.agent.loop import PROMPTS as AGENT_PROMPTS
from prchain.agent.persist import Recorder, new_rollout, passed_stages, rewind
from prchain.agent.resume import rebuild
from prchain.agent.tasks import ChainTask, StageTask, load_chain
from prchain.app.config import Config, configured_secrets
from prchain.app.rollout import environment_factory, rollout_fields
from prchain.core.errors import EnvironmentFailure, NothingToDo
from prchain.llm.prompts import render
from prchain.llm.protocol import ChatLLM, Message
from prchain.p2t import store
from prchain.p2t.draw import draw_text, draw_tree
from prchain.p2t.forward import Checkpoint, ForwardPhase, StageCuration
from prchain.p2t.graph import ProcessGraph
from prchain.p2t.metrics import coverage, redundant_view_fraction
from prchain.p2t.oracle import GoldTestsOracle, TestOracle
from prchain.p2t.patches import split_patch, touched_files
from prchain.p2t.reverse import ReversePhase, ReverseResult
from prchain.p2t.roles_forward import StepRec
from prchain.p2t.stats import compare
from sql.db import session_scope
from sql.models import LLMCall

Notify = Callable[[str], None]
__all__ = ["compare", "curate_chain", "draw_text", "draw_tree", "graph_for_stage", "make_llm"]


def p2t_llm_config(config: Config) -> Any:
    """The LLM config with P2T's per-role temperatures wherever llm.temperature sets none."""
    temperatures = {**config.p2t.temperatures, **config.llm.temperature}
    return config.llm.model_copy(update={"temperature": temperatures})


def make_llm(config: Config, engine: Engine) -> ChatLLM:
    from prchain.llm.client import LLMClient  # openai loads only when a command needs it

    return LLMClient(p2t_llm_config(config), engine)


@contextlib.contextmanager
def stage_env(config: Config, task: ChainTask, label: int) -> Iterator[Environment]:
    from prchain.app.verdicts import environment_config  # the repo's test install baked in

    # labelled with the store, so `prchain env gc` finds a killed curation's sandbox
    with environment_factory(environment_config(config), config.store.url)(task, label) as env:
        yield env


def _spent(engine: Engine, since_id: int) -> float:
    with session_scope(engine) as session:
        return float(
            session.scalar(
                select(func.coalesce(func.sum(LLMCall.cost_usd), 0.0)).where(LLMCall.id > since_id)
            )
            or 0.0
        )


def _last_call(engine: Engine) -> int:
    with session_scope(engine) as session:
        return int(session.scalar(select(func.coalesce(func.max(LLMCall.id), 0))) or 0)


def build_graph(
    config: Config,
    engine: Engine,
    llm: ChatLLM,
    env: Environment,
    task: ChainTask,
    stage: StageTask,
) -> tuple[int, ReverseResult]:
    """Run the reverse phase in `env` (already at the stage) and store the graph."""
    before = _last_call(engine)
    result = ReversePhase(llm, env, config.p2t, stage.query, full_gold(engine, stage)).run()
    graph_id = store.save_graph(engine, task.chain_id, stage.idx, result, _spent(engine, before))
    return graph_id, result


def graph_for_stage(
    config: Config,
    chain_id: int,
    stage_idx: int,
    *,
    rebuild: bool = False,
    engine: Engine | None = None,
) -> tuple[ProcessGraph, Any]:
    """The stored graph of a chain stage, built first (in a fresh sandbox) when missing or asked."""
    from sql.db import make_engine

    engine = engine or make_engine(config.store.url)
    if not rebuild and (row := store.load_graph_row(engine, chain_id, stage_idx)) is not None:
        return ProcessGraph.from_dict(row.graph), row
    task = load_chain(engine, chain_id)
    stage = next((s for s in task.stages if s.idx == stage_idx), None)
    if stage is None:
        raise NothingToDo(f"chain {chain_id} has no stage {stage_idx}")
    llm = make_llm(config, engine)
    with stage_env(config, task, 0) as env:
        for s in task.stages:
            if s.idx <= stage_idx:
                env.enter_stage(s.idx)  # with nothing carried: the gold history up to the stage
        build_graph(config, engine, llm, env, task, stage)
    row = store.load_graph_row(engine, chain_id, stage_idx)
    assert row is not None
    return ProcessGraph.from_dict(row.graph), row


def opening(task: ChainTask, stage: StageTask) -> list[tuple[str, Message]]:
    """The same task messages a plain rollout starts each stage with."""
    n = len(task.stages)
    if stage.idx == task.stages[0].idx:
        system = render(AGENT_PROMPTS, "system.j2", action_format="tools")
        first = render(
            AGENT_PROMPTS, "first_task.j2", n_stages=n, overview=task.overview, query=stage.query
        )
        return [
            ("system", {"role": "system", "content": system}),
            ("query", {"role": "user", "content": first}),
        ]
    text = render(AGENT_PROMPTS, "next_task.j2", idx=stage.idx, n_stages=n, query=stage.query)
    return [("query", {"role": "user", "content": text})]


@dataclass
class VerifiedOracle:
    """T(p̂) from the stage's verified FAIL_TO_PASS / PASS_TO_PASS (`prchain tests verify`)."""

    check: Callable[[Environment, int], Any]
    stage_id: int
    last_output: str = ""

    def passes(self, env: Environment) -> bool:
        verdict = self.check(env, self.stage_id)
        self.last_output = verdict.output_tail if verdict is not None else "no verified tests"
        return verdict is not None and bool(verdict.passed)


def full_gold(engine: Engine, stage: StageTask) -> str:
    """Code and test parts of the stage's gold patch (chains store them apart)."""
    from sql.models import ChainStage

    with session_scope(engine) as session:
        row = session.get(ChainStage, stage.stage_id) if stage.stage_id else None
        tests = row.gold_test_patch if row is not None else ""
    code = stage.gold_patch
    return code if not tests else code.rstrip("\n") + "\n" + tests


def default_oracle(
    config: Config, task: ChainTask, stage: StageTask, engine: Engine | None = None
) -> TestOracle:
    """The stage's verified tests when it has them; else its hidden gold tests run by the repo's
    test command (verdicts.repos or environment.test_command), whole-command pass/fail."""
    from prchain.app.verdicts import tests_oracle
    from prchain.verdicts.oracle import stage_tests

    if engine is not None and stage.stage_id and stage_tests(engine, stage.stage_id) is not None:
        return VerifiedOracle(tests_oracle(config, engine), stage.stage_id)
    gold = full_gold(engine, stage) if engine is not None else stage.gold_patch
    test_patch = split_patch(gold)[1]
    repo_tests = config.verdicts.repos.get(task.repo)
    command = repo_tests.test if repo_tests else config.environment.test_command.get(task.repo)
    if command and "{files}" in command:
        command = command.replace("{files}", " ".join(touched_files(test_patch)))
    if not command:
        raise NothingToDo(
            f"no test command is configured for {task.repo}: a curated stage is admitted "
            "only when its tests pass",
            hint=f"run `prchain tests verify`, or set verdicts.repos.{task.repo}.test "
            "(see docs/verdicts.md)",
        )
    return GoldTestsOracle(test_patch, command, config.environment.test_timeout)


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
    from sql import leases

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
    existing = store.open_curation(engine, chain_id)
    if existing is not None:
        rollout_id = existing.id
        notify(f"chain {chain_id}: resuming curation {rollout_id}")
    else:
        fields = rollout_fields(config)
        fields["models"] = {
            r: config.llm.model_for(r) for r in ("p2t_seed", "p2t_verifier", "p2t_curator")
        }
        rollout_id = new_rollout(engine, chain_id, source="p2t", **fields)
    kept = passed_stages(engine, rollout_id)
    current = next((s for s in task.stages if s.idx == len(kept) + 1), None)
    checkpoint_row = store.load_checkpoint_row(engine, rollout_id, current.idx) if current else None
    if checkpoint_row is None:
        steps = rewind(engine, rollout_id, len(kept))
    else:
        assert current is not None
        steps = store.trim_steps(
            engine,
            rollout_id,
            current.idx,
            opening=len(opening(task, current)),
            assistant_steps=sum(w["committed"] for w in checkpoint_row.windows),
        )
    recorder = Recorder(
        engine,
        rollout_id,
        next_idx=steps[-1].idx + 1 if steps else 0,
        lease=lease,
        secrets=configured_secrets(config),
    )
    opener = open_env or (lambda t, rid: stage_env(config, t, rid))
    history: list[Message] = [s.message for s in steps]
    admitted, reason = len(kept), ""
    with opener(task, rollout_id) as env:
        if kept:
            rebuild(env, kept[-1])  # the end of the last admitted stage
        resume: Checkpoint | None = None
        if checkpoint_row is not None and current is not None:
            stage_steps = [s for s in steps if s.stage_idx == current.idx]
            n_open = len(opening(task, current))
            resume = Checkpoint.stored(
                checkpoint_row.windows, checkpoint_row.established, stage_steps[n_open:]
            )
            history = [s.message for s in steps if s.stage_idx < current.idx] + [
                s.message for s in stage_steps[:n_open]
            ]
            env.enter_stage(current.idx)  # carries Δ of the admitted stages, as the first time
            _apply(env, _stage_row(engine, rollout_id, current.idx).stage_diff or "")
        for stage in task.stages[len(kept) :]:
            ok, reason = _curate_stage(
                config,
                engine,
                llm,
                env,
                task,
                stage,
                recorder,
                history,
                oracle or default_oracle(config, task, stage, engine),
                notify,
                resume if stage is current else None,
            )
            if not ok:
                break
            admitted += 1
    status = "kept" if admitted == len(task.stages) else "rejected"
    totals = {
        "agent_steps": sum(1 for m in history if m.get("role") == "assistant"),
        "kept_stages": admitted,
    }
    recorder.finish(status, None if status == "kept" else reason, **totals)
    with session_scope(engine) as session:
        from sql.models import Rollout

        row = session.get(Rollout, rollout_id)
        cost = float(row.cost_usd) if row else 0.0
    return CurationResult(
        chain_id, rollout_id, status, admitted, reason, cost, resumed=existing is not None
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


def _stage_row(engine: Engine, rollout_id: int, stage_idx: int) -> Any:
    from sql.models import RolloutStage

    with session_scope(engine) as session:
        return session.scalars(
            select(RolloutStage).filter_by(rollout_id=rollout_id, stage_idx=stage_idx)
        ).one()


def _curate_stage(
    config: Config,
    engine: Engine,
    llm: ChatLLM,
    env: Environment,
    task: ChainTask,
    stage: StageTask,
    recorder: Recorder,
    history: list[Message],
    oracle: TestOracle,
    notify: Notify,
    resume: Checkpoint | None = None,
) -> tuple[bool, str]:
    if resume is None:
        transition = env.enter_stage(stage.idx)
        recorder.transition(transition)
        recorder.stage_started(stage.idx)
        if transition.stopped:
            recorder.stage_finished(
                stage.idx, status="stopped", reason="the carried patch conflicts"
            )
            return False, f"stage {stage.idx}: the carried patch conflicts with the new base"
    loaded = store.load_graph(engine, task.chain_id, stage.idx)
    if loaded is None:
        notify(f"stage {stage.idx}: building the process graph")
        graph_id, result = build_graph(config, engine, llm, env, task, stage)
        graph = result.graph
    else:
        graph_id, graph = loaded
    if resume is None:
        for kind, message in opening(task, stage):
            recorder.step(stage.idx, kind, message)
            history.append(message)
        notify(f"stage {stage.idx}: curating against {len(graph.nodes)} nodes")
    else:
        notify(
            f"stage {stage.idx}: resuming after window {len(resume.windows)} ({resume.steps} steps)"
        )
    issue = next(
        (n.id for n in graph.nodes if n.unlocker.action.startswith("VIEW problem_statement")), None
    )
    phase = ForwardPhase(
        llm,
        env,
        config.p2t,
        graph,
        stage.query,
        oracle,
        command_timeout=config.agent.command_timeout,
        max_observation_chars=config.agent.max_observation_chars,
        rollout_id=recorder.rollout_id,
    )

    def commit(state: Checkpoint, steps: Sequence[StepRec]) -> None:
        """Store the window's steps, then its record and Δ together: the resume point."""
        for rec in steps:
            recorder.step(
                stage.idx, "assistant", rec.assistant, completion_tokens=rec.response_tokens
            )
            for message in rec.tools:
                recorder.step(stage.idx, "tool", message, observation=message.get("content"))
        with recorder.transaction() as session:
            store.save_checkpoint(
                session,
                recorder.rollout_id,
                stage.idx,
                graph_id=graph_id,
                windows=store.windows_json(state.windows),
                established=sorted(state.established),
                steps=state.steps,
                response_tokens=sum(state.step_tokens),
                stage_diff=env.diff(),
            )

    curation = phase.run(
        list(history),
        {issue} if issue else set(),
        resume=resume,
        on_commit=commit,
    )
    _record(engine, recorder, stage.idx, graph_id, graph, curation, history, env)
    return curation.admitted, f"stage {stage.idx}: {curation.reason}"


def _record(
    engine: Engine,
    recorder: Recorder,
    stage_idx: int,
    graph_id: int,
    graph: ProcessGraph,
    curation: StageCuration,
    history: list[Message],
    env: Environment,
) -> None:
    """The stage's final record (its steps were stored window by window)."""
    history.extend(curation.messages)
    store.save_stage(
        engine,
        recorder.rollout_id,
        stage_idx,
        graph_id=graph_id,
        admitted=curation.admitted,
        reason=curation.reason,
        established=sorted(curation.established),
        coverage=coverage(curation.established, graph.ids),
        windows=store.windows_json(curation.windows),
        steps=curation.steps,
        response_tokens=curation.response_tokens,
        redundant_view_fraction=redundant_view_fraction(curation.messages),
    )
    recorder.stage_finished(
        stage_idx,
        status="passed" if curation.admitted else "failed",
        reason=None if curation.admitted else curation.reason,
        score=1.0 if curation.admitted else 0.0,
        stage_diff=env.diff(),
        cumulative_diff=env.cumulative_diff(),
        agent_steps=curation.steps,
    )


def curate_from_config(
    config: Config,
    chain_ids: Sequence[int],
    *,
    on_done: Callable[[CurationResult], None] | None = None,
    notify: Notify = print,
) -> list[CurationResult]:
    """What `prchain p2t curate` does: each chain curated on the configured backend (threads here,
    or one Ray task per chain), `p2t.workers` sandboxes at once. Results in chain order."""
    from prchain.app.scale import backend_for, portable
    from prchain.app.work import CurationWork
    from prchain.scale.protocol import Done, Needs
    from sql.db import make_engine

    make_engine(config.store.url).dispose()  # the driver makes the tables; workers only use them
    work_config = config.model_copy(update={"llm": p2t_llm_config(config)})

    def result(done: Done[int, CurationResult]) -> CurationResult:
        if done.result is None:
            return CurationResult(done.item, 0, "lost", 0, done.lost or "", 0.0, node=done.node)
        return replace(done.result, node=done.node)

    def report(done: Done[int, CurationResult]) -> None:
        if on_done is not None:
            on_done(result(done))

    with backend_for(config, workers=config.p2t.workers, notify=notify) as backend:
        finished = backend.map(
            CurationWork(portable(work_config)),
            list(dict.fromkeys(chain_ids)),
            needs=Needs(sandboxes=1),
            on_done=report,
        )
    return sorted((result(d) for d in finished), key=lambda r: r.chain_id)


ASSUMED_NODES = 12  # graph size assumed for a stage whose graph is not built yet
ASSUMED_PROMPT, ASSUMED_COMPLETION = 4000, 200  # tokens per call when the store has no history


def plan_curation(config: Config, chain_ids: Sequence[int]) -> list[Any]:
    """What `prchain p2t curate --dry-run` prints: an upper bound of calls per role (every stage
    runs its ⌈max_steps/commit⌉ windows; most submit sooner), tokens and cost from the store's
    history of each role when it has one. The verifier's share uses the prefilter's measured
    keep rate from stored windows when there are any."""
    import math

    from prchain.llm.config import ROLES
    from prchain.llm.estimate import estimate_role
    from sql.db import make_engine

    engine = make_engine(config.store.url)
    c = config.p2t
    calls: dict[str, int] = dict.fromkeys((r for r in ROLES if r.startswith("p2t_")), 0)
    keep = _verifier_keep_rate(engine)
    windows = math.ceil(c.max_steps / c.commit)
    candidates = c.seeds * (2 if c.mutate else 1)
    for chain_id in dict.fromkeys(chain_ids):
        for stage in load_chain(engine, chain_id).stages:
            loaded = store.load_graph(engine, chain_id, stage.idx)
            if loaded is None:
                calls["p2t_proposer"] += c.max_rounds
                calls["p2t_critic"] += c.max_rounds
            nodes = len(loaded[1].nodes) if loaded else ASSUMED_NODES
            calls["p2t_seed"] += windows * candidates * c.window
            calls["p2t_curator"] += windows * c.seeds if c.mutate else 0
            calls["p2t_claim_judge"] += windows * c.seeds if c.mutate and c.groundedness_gate else 0
            calls["p2t_verifier"] += math.ceil(windows * candidates * c.window * nodes * keep)
    llm = p2t_llm_config(config)
    return [
        estimate_role(
            llm,
            engine,
            role,
            n,
            prompt_per_call=ASSUMED_PROMPT,
            completion_per_call=ASSUMED_COMPLETION,
        )
        for role, n in calls.items()
        if n
    ]


def _verifier_keep_rate(engine: Engine) -> float:
    """Share of pending nodes the prefilter sent to the verifier in stored windows (1 if none)."""
    from sql.models import P2TStage

    asked = skipped = 0
    with session_scope(engine) as session:
        for windows in session.scalars(select(P2TStage.windows)):
            for w in windows or []:
                asked += int(w.get("verifier_calls", 0))
                skipped += int(w.get("verifier_skipped", 0))
    return asked / (asked + skipped) if asked + skipped else 1.0
