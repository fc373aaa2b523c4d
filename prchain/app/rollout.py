"""Wiring for `prchain rollout`: sandboxes from the environment config, the PRM from its config, the
runner from the agent config, and the pending chains fanned out over the configured workers."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable
from typing import Any

from sqlalchemy import Engine
from sqlalchemy.engine import make_url

from environments.config import EnvironmentConfig
from environments.protocol import Environment, StageSpec
from prchain.agent.pool import run_in_threads
from prchain.agent.runner import ChainRunner, EnvFactory, HookFactory, RolloutResult
from prchain.agent.tasks import ChainTask, pending_chains
from prchain.app.config import Config
from prchain.app.verdicts import environment_config, tests_oracle
from prchain.core.errors import NothingToDo
from prchain.llm.protocol import ChatLLM


def environment_factory(config: EnvironmentConfig) -> EnvFactory:
    """The configured sandbox backend, one container per rollout, labelled so orphans can be found."""

    def factory(task: ChainTask, rollout_id: int) -> contextlib.AbstractContextManager[Environment]:
        from environments.factory import (
            open_environment,  # the docker SDK loads only when a sandbox opens
        )

        specs = [StageSpec(s.idx, s.base_sha, s.gold_patch) for s in task.stages]
        labels = {"prchain.rollout": str(rollout_id), "prchain.chain": str(task.chain_id)}
        env: Any = open_environment(
            config, repo=task.repo, clone_path=task.clone_path, stages=specs, labels=labels
        )
        return env  # type: ignore[no-any-return]

    return factory


def prm_hook_factory(config: Config, llm: ChatLLM, engine: Engine) -> HookFactory | None:
    """The SWE-PRM watching each rollout, when a variant is configured."""
    if config.prm.variant is None:
        return None
    from prchain.prm.hook import build_prm_hook  # the PRM is optional; load it only when asked for

    return lambda rollout_id: build_prm_hook(config.prm, llm, engine, rollout_id)


def public_config(config: Config) -> dict[str, Any]:
    """The config as stored with a rollout (and exported): a database password never leaves the host."""
    data = config.model_dump(mode="json")
    data["store"]["url"] = make_url(config.store.url).render_as_string(hide_password=True)
    return data


def rollout_fields(config: Config) -> dict[str, Any]:
    """What a new rollout row records about how it was made."""
    return {
        "conflict_policy": config.environment.conflict_policy,
        "keep_policy": config.agent.keep_policy,
        "prm_variant": config.prm.variant,
        "action_format": config.agent.action_format,
        "models": {role: config.llm.model_for(role) for role in ("policy", "judge", "prm")},
        "config": public_config(config),
    }


def make_chain_runner(
    config: Config, engine: Engine, llm: ChatLLM, open_env: EnvFactory | None = None
) -> ChainRunner:
    """A runner wired from the whole config: sandbox backend, PRM hook, agent settings."""
    return ChainRunner(
        config.agent,
        engine,
        llm,
        open_env or environment_factory(environment_config(config)),
        hook_factory=prm_hook_factory(config, llm, engine),
        rollout_fields=rollout_fields(config),
        check_tests=tests_oracle(config, engine),
    )


def rollout_from_config(
    config: Config,
    *,
    chain_ids: Iterable[int] = (),
    limit: int | None = None,
    on_start: Callable[[int], None] | None = None,
    on_done: Callable[[RolloutResult], None] | None = None,
) -> list[RolloutResult]:
    """What `prchain rollout` does: pick pending chains and roll them out with the configured workers."""
    from prchain.llm.client import LLMClient  # the openai import stays out of module import
    from sql.db import make_engine

    engine = make_engine(config.store.url)
    todo = pending_chains(engine, chain_ids, limit)
    if not todo:
        raise NothingToDo(
            "no chain is waiting for a rollout (every chain with queries has a finished rollout)"
        )
    if on_start is not None:
        on_start(len(todo))
    runner = make_chain_runner(config, engine, LLMClient(config.llm, engine))
    results = run_in_threads(runner.run, todo, workers=config.agent.workers, on_done=on_done)
    return sorted(results, key=lambda r: r.chain_id)
