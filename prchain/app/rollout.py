"""Wiring for `prchain rollout`: sandboxes from the environment config, the PRM from its config, the
runner from the agent config, and the pending chains fanned out over the configured backend (threads
here, or one Ray task per chain)."""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine
from sqlalchemy.engine import make_url

from prchain.agent.lease import busy_chains
from prchain.agent.results import RolloutResult
from prchain.agent.runner import ChainRunner, EnvFactory, HookFactory
from prchain.agent.scaffold import Scaffold
from prchain.agent.tasks import ChainTask, pending_chains, ready_chains
from prchain.app.config import Config, configured_secrets, masked_config
from prchain.app.scale import Notify, backend_for, portable
from prchain.app.store import opened
from prchain.app.verdicts import environment_config, tests_oracle
from prchain.app.work import Lazy
from prchain.core.errors import NothingToDo, PrchainError
from prchain.core.text import plural
from prchain.environments.config import EnvironmentConfig
from prchain.environments.eras.config import ErasConfig
from prchain.environments.protocol import Environment
from prchain.llm.protocol import ChatLLM
from prchain.scale.protocol import Done, Needs

if TYPE_CHECKING:
    from prchain.store.handle import Store


def store_label(url: str) -> str:
    """A short tag of the store a sandbox works for, so one engine's containers can be told apart
    by run (several stores, users or test databases may share a Docker engine or a cluster)."""
    shown = make_url(url).render_as_string(hide_password=True)
    return hashlib.sha256(shown.encode()).hexdigest()[:12]


def remove_orphans(labels: dict[str, str]) -> list[str]:
    """Remove the sandboxes carrying all of `labels` whose owner process is gone (a runner killed
    mid-rollout); live owners' and other hosts' containers are left alone. Returns their ids."""
    from prchain.environments.admin import gc

    try:
        return [container["id"] for container in gc(labels=labels)]
    except PrchainError:  # no engine to ask: opening the sandbox will say so in one line
        return []


def environment_factory(
    config: EnvironmentConfig,
    store_url: str | None = None,
    registry: str | None = None,
    eras: ErasConfig | None = None,
) -> EnvFactory:
    """The configured sandbox backend, one container per rollout, labelled so orphans can be found;
    an era image this node lacks is pulled from `registry` (scale.registry)."""
    store = {"prchain.store": store_label(store_url)} if store_url else {}

    def factory(task: ChainTask, rollout_id: int) -> contextlib.AbstractContextManager[Environment]:
        from prchain.app.envsetup import era_stages
        from prchain.environments.factory import (
            open_environment,  # the docker SDK loads only when a sandbox opens
        )

        env_config, specs = era_stages(config, engine(), task, registry, eras)
        labels = {
            "prchain.rollout": str(rollout_id),
            "prchain.chain": str(task.chain_id),
            **store,
        }
        if store and env_config.backend == "docker":
            remove_orphans(labels)  # a killed runner's sandbox of this rollout, if any
        env: Any = open_environment(
            env_config, repo=task.repo, clone_path=task.clone_path, stages=specs, labels=labels
        )
        return env  # type: ignore[no-any-return]

    engines: list[Engine] = []

    def engine() -> Engine | None:
        # Each stage's era image and test command come from recipe memory (`prchain env setup`).
        if store_url is None:
            return None
        if not engines:
            from prchain.store.opener import make_engine

            engines.append(make_engine(store_url))
        return engines[0]

    return factory


def prm_hook_factory(config: Config, llm: ChatLLM, engine: Engine) -> HookFactory | None:
    """The SWE-PRM watching each rollout, when a variant is configured."""
    if config.prm.variant is None:
        return None
    from prchain.prm.hook import build_prm_hook  # the PRM is optional; load it only when asked for

    return lambda rollout_id: build_prm_hook(config.prm, llm, engine, rollout_id)


def public_config(config: Config) -> dict[str, Any]:
    """The config as stored with a rollout (and exported): a database password never leaves the host."""
    return masked_config(config)


def prompt_dirs(config: Config) -> list[Path]:
    """The template directories whose text shapes a rollout: the agent's, and the PRM's when on."""
    from prchain.agent.provenance import AGENT_PROMPTS

    dirs = [AGENT_PROMPTS]
    if config.prm.variant is not None:
        dirs.append(Path(str(resources.files("prchain.prm") / "prompts")))
    return dirs


def rollout_fields(config: Config) -> dict[str, Any]:
    """What a new rollout row records about how it was made (provenance hashes included; the
    scaffold is in its config, `agent.scaffold`)."""
    from prchain.agent.provenance import prompts_hash, tool_schema_hash

    hashes = {
        "prompt_hash": prompts_hash(*prompt_dirs(config)),
        "tool_schema_hash": tool_schema_hash(),
    }
    if config.agent.scaffold == "mini-swe-agent":
        from prchain.agent.mini import provenance

        hashes = provenance(config.agent.mini_config)
    return {
        **hashes,
        "conflict_policy": config.environment.conflict_policy,
        "keep_policy": config.agent.keep_policy,
        "prm_variant": config.prm.variant,
        "action_format": config.agent.action_format,
        "models": {role: config.llm.model_for(role) for role in ("policy", "judge", "prm")},
        "config": masked_config(config),
    }


def mini_scaffold(config: Config) -> Scaffold | None:
    """mini-swe-agent with its config read, when agent.scaffold asks for it (its model calls go
    through the runner's client, as the built-in loop's do)."""
    if config.agent.scaffold != "mini-swe-agent":
        return None
    from prchain.agent.mini import MiniScaffold, mini_config

    return MiniScaffold(mini_config(config.agent.mini_config))


def make_chain_runner(
    config: Config, engine: Engine, llm: ChatLLM, open_env: EnvFactory | None = None
) -> ChainRunner:
    """A runner wired from the whole config: sandbox backend, PRM hook, agent settings."""
    return ChainRunner(
        config.agent,
        engine,
        llm,
        open_env
        or environment_factory(
            environment_config(config), config.store.url, config.scale.registry, config.eras
        ),
        hook_factory=prm_hook_factory(config, llm, engine),
        rollout_fields=rollout_fields(config),
        check_tests=tests_oracle(config, engine),
        secrets=configured_secrets(config),
        scaffold=mini_scaffold(config),
    )


def rollout_from_config(
    config: Config,
    *,
    chain_ids: Iterable[int] = (),
    limit: int | None = None,
    on_start: Callable[[int], None] | None = None,
    on_done: Callable[[RolloutResult], None] | None = None,
    notify: Notify = print,
    redo: Iterable[int] = (),
    store: Store | None = None,
) -> list[RolloutResult]:
    """What `prchain rollout` does: pick pending chains and roll each out on the configured backend,
    one sandbox per chain. Each result says which node ran it. Chains in `redo` get a new rollout
    beside their earlier one. An empty list: every chain asked for has a finished rollout."""
    with opened(config.store.url, store) as store:
        return _rollout(config, store, chain_ids, limit, on_start, on_done, notify, redo)


def _rollout(
    config: Config,
    store: Store,
    chain_ids: Iterable[int],
    limit: int | None,
    on_start: Callable[[int], None] | None,
    on_done: Callable[[RolloutResult], None] | None,
    notify: Notify,
    redo: Iterable[int],
) -> list[RolloutResult]:
    mini_scaffold(config)  # a wrong agent.mini_config or a missing server says so before any work
    again = frozenset(redo)
    engine = store.engine  # opening it made the tables; workers only use them
    pending = pending_chains(engine, chain_ids, redo=again)
    # Chains another live runner holds are left to it (the claim re-checks this atomically).
    busy = busy_chains(engine, config.agent.lease_timeout_seconds)
    todo = [chain_id for chain_id in pending if chain_id not in busy][:limit]
    ready = todo or ready_chains(engine, chain_ids)
    store.close()  # no pooled connection is held while the workers run
    if not todo:
        if pending:
            raise NothingToDo(
                f"{plural(len(pending), 'pending chain')} "
                f"{'is' if len(pending) == 1 else 'are all'} being rolled out by other runners",
                hint="let them finish; a runner that died elsewhere frees its chains after "
                "agent.lease_timeout_seconds",
            )
        if ready:
            return []  # all work done: every chain with queries has a finished rollout
        raise NothingToDo(
            "no chain has its queries yet, so none can be rolled out",
            hint="run the earlier pipeline steps first (mine → chains build → queries build)",
        )
    if on_start is not None:
        on_start(len(todo))

    def report(done: Done[int, RolloutResult]) -> None:
        if on_done is not None:
            on_done(as_result(done))

    with backend_for(
        config, workers=config.agent.workers, notify=notify, sandboxes=True
    ) as backend:
        done = backend.map(
            RolloutWork(portable(config), redo=again),
            todo,
            needs=Needs(sandboxes=1),
            on_done=report,
        )
    return sorted((as_result(d) for d in done), key=lambda r: r.chain_id)


def as_result(done: Done[int, RolloutResult]) -> RolloutResult:
    """The runner's result with the node that ran it; a chain whose task was lost says so."""
    if done.result is None:
        return RolloutResult(done.item, 0, "lost", reason=done.lost, node=done.node)
    return replace(done.result, node=done.node)


def plan_rollouts_from_config(
    config: Config,
    *,
    chain_ids: Iterable[int] = (),
    limit: int | None = None,
    redo: Iterable[int] = (),
    store: Store | None = None,
) -> list[Any]:
    """What `prchain rollout --dry-run` prints: expected calls, tokens and cost per role."""
    from prchain.agent.plan import plan_rollouts

    with opened(config.store.url, store) as store:
        return plan_rollouts(
            config.agent, config.llm, store.engine, list(chain_ids), limit, list(redo)
        )


@dataclass
class RolloutWork(Lazy):
    """Roll out one chain (resuming its rollout if an earlier attempt died)."""

    redo: frozenset[int] = frozenset()  # chains to roll out again, beside their old rollout
    _runner: ChainRunner | None = field(default=None, init=False, repr=False)

    def __call__(self, chain_id: int) -> RolloutResult:
        return self.runner().run(chain_id, redo=chain_id in self.redo)

    def runner(self) -> ChainRunner:
        engine, llm = self.engine(), self.llm()
        with self._lock:
            if self._runner is None:
                self._runner = make_chain_runner(self.config, engine, llm)
            return self._runner

    def close(self) -> None:
        self._runner = None
        super().close()
