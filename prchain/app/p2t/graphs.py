"""The process graph of a chain stage: built by the reverse phase in a sandbox at the stage, stored
with what its LLM calls cost, and loaded from the store when it is there."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine

from prchain.agent.tasks import ChainTask, StageTask, load_chain
from prchain.app.config import Config
from prchain.app.p2t.parts import full_gold, make_llm, stage_env
from prchain.app.store import opened
from prchain.core.errors import NothingToDo
from prchain.environments.protocol import Environment
from prchain.llm.protocol import ChatLLM
from prchain.p2t import store
from prchain.p2t.graph import ProcessGraph
from prchain.p2t.reverse import ReversePhase, ReverseResult
from prchain.store.llm_calls import LLMCalls

if TYPE_CHECKING:
    from prchain.store.handle import Store


def _spent(engine: Engine, since_id: int) -> float:
    return LLMCalls(engine).cost_after(since_id)


def _last_call(engine: Engine) -> int:
    return LLMCalls(engine).last_id()


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
    held: Store | None = None,
) -> tuple[ProcessGraph, Any]:
    """The stored graph of a chain stage, built first (in a fresh sandbox) when missing or asked;
    `held`: the store the caller opened (else this call opens its own)."""
    with opened(config.store.url, held) as opened_store:
        return _graph_for_stage(config, opened_store.engine, chain_id, stage_idx, rebuild)


def _graph_for_stage(
    config: Config, engine: Engine, chain_id: int, stage_idx: int, rebuild: bool
) -> tuple[ProcessGraph, Any]:
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
