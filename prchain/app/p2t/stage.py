"""Curating one stage of a chain: enter it (carrying the admitted stages' patches), get its process
graph, run the forward phase window by window (each committed window stored as a resume point) and
record the stage's outcome."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sqlalchemy import Engine

from prchain.agent.opening import stage_opening
from prchain.agent.persist import Recorder
from prchain.agent.tasks import ChainTask, StageTask
from prchain.app.config import Config
from prchain.app.p2t.graphs import build_graph
from prchain.environments.protocol import Environment
from prchain.llm.protocol import ChatLLM, Message
from prchain.p2t import store
from prchain.p2t.forward import Checkpoint, ForwardPhase, StageCuration
from prchain.p2t.graph import ProcessGraph
from prchain.p2t.metrics import coverage, redundant_view_fraction
from prchain.p2t.oracle import TestOracle
from prchain.p2t.roles_forward import StepRec

Notify = Callable[[str], None]


@dataclass
class Curation:
    """One chain's curation under way: what each of its stages works with. `history` is the
    conversation so far, grown stage by stage."""

    config: Config
    engine: Engine
    llm: ChatLLM
    env: Environment
    task: ChainTask
    recorder: Recorder
    history: list[Message]
    notify: Notify


def opening(task: ChainTask, stage: StageTask) -> list[tuple[str, Message]]:
    """The same task messages a plain rollout starts each stage with (P2T acts through tools)."""
    return stage_opening(task, stage, "tools")


def curate_stage(
    run: Curation, stage: StageTask, oracle: TestOracle, resume: Checkpoint | None = None
) -> tuple[bool, str]:
    """Curate `stage` (continuing from `resume` when given); whether it was admitted, and why."""
    if resume is None and (stopped := _enter(run, stage)) is not None:
        return False, stopped
    graph_id, graph = _stage_graph(run, stage)
    _open(run, stage, graph, resume)
    issue = next(
        (n.id for n in graph.nodes if n.unlocker.action.startswith("VIEW problem_statement")), None
    )
    curation = _forward_phase(run, stage, graph, oracle).run(
        list(run.history),
        {issue} if issue else set(),
        resume=resume,
        on_commit=_WindowCommit(run, stage.idx, graph_id),
    )
    _record(run, stage.idx, graph_id, graph, curation)
    return curation.admitted, f"stage {stage.idx}: {curation.reason}"


def _enter(run: Curation, stage: StageTask) -> str | None:
    """Move the sandbox to the stage's base; why the stage stops there, if it does."""
    transition = run.env.enter_stage(stage.idx)
    run.recorder.transition(transition)
    run.recorder.stage_started(stage.idx)
    if not transition.stopped:
        return None
    run.recorder.stage_finished(stage.idx, status="stopped", reason="the carried patch conflicts")
    return f"stage {stage.idx}: the carried patch conflicts with the new base"


def _stage_graph(run: Curation, stage: StageTask) -> tuple[int, ProcessGraph]:
    """The stage's stored process graph, built here (in the sandbox at the stage) when missing."""
    loaded = store.load_graph(run.engine, run.task.chain_id, stage.idx)
    if loaded is not None:
        return loaded
    run.notify(f"stage {stage.idx}: building the process graph")
    graph_id, result = build_graph(run.config, run.engine, run.llm, run.env, run.task, stage)
    return graph_id, result.graph


def _open(run: Curation, stage: StageTask, graph: ProcessGraph, resume: Checkpoint | None) -> None:
    """Record the stage's task messages, unless a resumed stage has them already."""
    if resume is not None:
        run.notify(
            f"stage {stage.idx}: resuming after window {len(resume.windows)} ({resume.steps} steps)"
        )
        return
    for kind, message in opening(run.task, stage):
        run.recorder.step(stage.idx, kind, message)
        run.history.append(message)
    run.notify(f"stage {stage.idx}: curating against {len(graph.nodes)} nodes")


def _forward_phase(
    run: Curation, stage: StageTask, graph: ProcessGraph, oracle: TestOracle
) -> ForwardPhase:
    agent = run.config.agent
    return ForwardPhase(
        run.llm,
        run.env,
        run.config.p2t,
        graph,
        stage.query,
        oracle,
        command_timeout=agent.command_timeout,
        max_observation_chars=agent.max_observation_chars,
        rollout_id=run.recorder.rollout_id,
    )


@dataclass
class _WindowCommit:
    """Stores a committed window: its steps, then its record and Δ together (the resume point)."""

    run: Curation
    stage_idx: int
    graph_id: int

    def __call__(self, state: Checkpoint, steps: Sequence[StepRec]) -> None:
        recorder = self.run.recorder
        for rec in steps:
            recorder.step(
                self.stage_idx, "assistant", rec.assistant, completion_tokens=rec.response_tokens
            )
            for message in rec.tools:
                recorder.step(self.stage_idx, "tool", message, observation=message.get("content"))
        with recorder.transaction() as session:
            store.save_checkpoint(
                session,
                recorder.rollout_id,
                self.stage_idx,
                graph_id=self.graph_id,
                windows=store.windows_json(state.windows),
                established=sorted(state.established),
                steps=state.steps,
                response_tokens=sum(state.step_tokens),
                stage_diff=self.run.env.diff(),
            )


def _record(
    run: Curation, stage_idx: int, graph_id: int, graph: ProcessGraph, curation: StageCuration
) -> None:
    """The stage's final record (its steps were stored window by window)."""
    run.history.extend(curation.messages)
    store.save_stage(
        run.engine,
        run.recorder.rollout_id,
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
    run.recorder.stage_finished(
        stage_idx,
        status="passed" if curation.admitted else "failed",
        reason=None if curation.admitted else curation.reason,
        score=1.0 if curation.admitted else 0.0,
        stage_diff=run.env.diff(),
        cumulative_diff=run.env.cumulative_diff(),
        agent_steps=curation.steps,
    )
