"""Wiring for the store-to-store steps: mining, chain building and query writing, each given only
its own config section and the store the command opened (a job's steps share one)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from prchain.app.config import Config
from prchain.app.scale import Notify, backend_for, portable
from prchain.app.store import opened
from prchain.app.work import MineWork, QueryWork

if TYPE_CHECKING:
    from prchain.chains.building.build import BuildSummary
    from prchain.chains.writers.queries import QuerySummary
    from prchain.chains.writers.vet import VetSummary
    from prchain.llm.estimate import RoleEstimate
    from prchain.miner.mine import MineSummary, RepoSummary
    from prchain.scale.protocol import Done
    from prchain.store.handle import Store

MineProgress = Callable[[str, int, int | None], None]
"""progress(repository, PRs done, PRs expected or None when unknown)."""
Progress = Callable[[str, int, int], None]
"""progress(what is being done, done, total)."""


def read_repos_file(path: str) -> list[str]:
    from prchain.miner.mine import read_repos_file as read

    return read(path)


def mine_from_config(
    config: Config,
    repos: list[str],
    *,
    source: str | None = None,
    clone_dir: str | None = None,
    name: str | None = None,
    since: str | datetime | None = None,
    limit: int | None = None,
    progress: MineProgress | None = None,
    notify: Notify = print,
    store: Store | None = None,
) -> MineSummary:
    from prchain.miner.mine import mine

    with opened(config.store.url, store) as store:
        if config.scale.backend != "local" and len(repos) > 1 and not name:
            options = {"source": source, "clone_dir": clone_dir, "since": since, "limit": limit}
            return _mine_spread(config, repos, options, progress, notify)
        return mine(
            config.miner,
            store.engine,
            repos,
            source=source,
            clone_dir=clone_dir,
            name=name,
            since=since,
            limit=limit,
            progress=progress,
        )


def chains_from_config(
    config: Config,
    *,
    strategy: str | None = None,
    min_len: int | None = None,
    max_len: int | None = None,
    decontaminate: tuple[str, ...] = (),
    progress: Progress | None = None,
    store: Store | None = None,
) -> BuildSummary:
    from prchain.chains.building.build import build_chains

    with opened(config.store.url, store) as store:
        return build_chains(
            config.chains,
            store.engine,
            strategy=strategy,
            min_len=min_len,
            max_len=max_len,
            decontaminate=decontaminate,
            progress=progress,
        )


def vet_from_config(
    config: Config,
    *,
    workers: int | None = None,
    redo: bool = False,
    limit: int | None = None,
    rebuild: bool = True,
    progress: Progress | None = None,
    store: Store | None = None,
) -> tuple[VetSummary, BuildSummary | None]:
    """`chains vet`: ask the link vetter about the pending links (with `redo`: again about every
    such link and every rejected one), then build the chains again so that the links it rejects
    leave them, the drops it rescues join them and the PRs it calls thin stages cut them. With
    scope `chains`, the rebuilt chains may join stages by links not yet asked about: they are
    asked about in turn, until a round changes nothing (at most MAX_ROUNDS). No build when
    `rebuild` is off or nothing could change."""
    with opened(config.store.url, store) as store:
        return _vet(config, store, workers or config.llm.workers, redo, limit, rebuild, progress)


def _vet(
    config: Config,
    store: Store,
    workers: int,
    redo: bool,
    limit: int | None,
    rebuild: bool,
    progress: Progress | None,
) -> tuple[VetSummary, BuildSummary | None]:
    from prchain.chains.writers.vet import MAX_ROUNDS, VetSummary, vet_links
    from prchain.llm.client import LLMClient

    engine = store.engine
    # Asked again means a fresh answer, not the stored reply to the same prompt.
    llm = config.llm.model_copy(update={"workers": workers, "cache": config.llm.cache and not redo})
    client = LLMClient(llm, engine)
    total = VetSummary()
    build = None
    for round_ in range(MAX_ROUNDS):
        again = redo and round_ == 0  # only the first round asks about judged links again
        left = None if limit is None else limit - total.asked - total.failed
        summary = vet_links(
            config.chains,
            engine,
            client,
            workers=workers,
            redo=again,
            limit=left,
            progress=progress,
        )
        if round_ == 0:
            total.already = summary.already
        total.merge(summary)
        total.rounds += 1
        changes = summary.rejected or summary.rescued or (summary.thin and config.chains.vet_thin)
        if not rebuild or not (changes or (again and summary.asked)):
            break
        build = chains_from_config(config, progress=progress, store=store)
        spent = limit is not None and total.asked + total.failed >= limit
        if config.chains.vet_scope != "chains" or spent:
            break
    return total, build


def reset_leaking_queries(
    config: Config, chain_ids: list[int] | None = None, store: Store | None = None
) -> int:
    """`queries build --redo-leaking`: forget the queries that still leak, so the build rewrites them."""
    from prchain.chains.writers.queries import reset_leaking

    with opened(config.store.url, store) as store:
        return reset_leaking(store.engine, chain_ids)


def queries_from_config(
    config: Config,
    *,
    workers: int | None = None,
    chain_ids: list[int] | None = None,
    progress: Progress | None = None,
    notify: Notify = print,
    store: Store | None = None,
) -> QuerySummary:
    with opened(config.store.url, store) as store:
        return _queries(config, store, workers, chain_ids, progress, notify)


def _queries(
    config: Config,
    store: Store,
    workers: int | None,
    chain_ids: list[int] | None,
    progress: Progress | None,
    notify: Notify,
) -> QuerySummary:
    from prchain.chains.writers.queries import build_queries
    from prchain.llm.client import LLMClient

    engine = store.engine
    if config.scale.backend != "local":
        spread = _queries_spread(
            config, engine, workers or config.llm.workers, chain_ids, progress, notify
        )
        if spread is not None:
            return spread
    workers = workers or config.llm.workers
    client = LLMClient(config.llm.model_copy(update={"workers": workers}), engine)
    return build_queries(
        config.chains, engine, client, workers=workers, chain_ids=chain_ids, progress=progress
    )


# -- one task per repository / chain on a cluster backend ------------------------------------------


def _mine_spread(
    config: Config,
    repos: list[str],
    options: dict[str, Any],
    progress: MineProgress | None,
    notify: Notify,
) -> MineSummary:
    """One task per repository; a local clone's path is made absolute so another process finds it."""
    from prchain.miner.mine import MineSummary, validate_repo_name

    if (options["source"] or config.miner.source) == "git":
        repos = [str(Path(repo).resolve()) for repo in repos]
    else:
        repos = [validate_repo_name(repo) for repo in repos]  # every name checked before any work
    # The caller opened the store, so its tables exist before the first worker writes.
    summary = MineSummary()

    def report(done: Done[str, RepoSummary]) -> None:
        if done.result is None:
            notify(f"{done.item}: lost ({done.lost}); rerun to continue it")
            return
        summary.repos.append(done.result)
        if progress:
            progress(f"{done.result.repo} on {done.node}", len(summary.repos), len(repos))

    with backend_for(config, workers=len(repos), notify=notify) as backend:
        backend.map(MineWork(portable(config), options), repos, on_done=report)
    return summary


def _queries_spread(
    config: Config,
    engine: Any,
    workers: int,
    chain_ids: list[int] | None,
    progress: Progress | None,
    notify: Notify,
) -> QuerySummary | None:
    """One task per chain needing queries; None when nothing is pending (the local path says so)."""
    from prchain.chains.writers.queries import QuerySummary, count_stages, load_pending

    chains = load_pending(engine, chain_ids)
    if not chains:
        return None
    pending = {c.chain_id: sum(s.query is None for s in c.stages) for c in chains}
    total = sum(pending.values())
    summary = QuerySummary(stages_skipped=count_stages(engine, chain_ids) - total)
    finished = 0

    def report(done: Done[int, QuerySummary]) -> None:
        nonlocal finished
        if done.result is None:
            summary.failures.append(f"chain {done.item}: lost ({done.lost})")
            return
        summary.merge(done.result)
        summary.usage.merge(done.result.usage)
        finished += pending[done.item]
        if progress:
            progress(f"queries (last on {done.node})", finished, total)

    with backend_for(config, workers=workers, notify=notify) as backend:
        backend.map(QueryWork(portable(config)), list(pending), on_done=report)
    return summary


def plan_queries_from_config(
    config: Config, *, chain_ids: list[int] | None = None, store: Store | None = None
) -> list[RoleEstimate]:
    from prchain.chains.writers.plan import plan_queries

    with opened(config.store.url, store) as store:
        return plan_queries(config.chains, config.llm, store.engine, chain_ids)


def plan_vet_from_config(
    config: Config, *, redo: bool = False, limit: int | None = None, store: Store | None = None
) -> list[RoleEstimate]:
    from prchain.chains.writers.vet import plan_vet

    with opened(config.store.url, store) as store:
        return plan_vet(config.chains, config.llm, store.engine, redo=redo, limit=limit)
