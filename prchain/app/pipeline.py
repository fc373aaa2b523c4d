"""Wiring for the store-to-store steps: mining, chain building and query writing, each given only
its own config section and an engine made from the store section."""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

from prchain.app.config import Config

if TYPE_CHECKING:
    from chains.build import BuildSummary
    from chains.queries import QuerySummary
    from miner.mine import MineSummary

MineProgress = Callable[[str, int, int | None], None]
"""progress(repository, PRs done, PRs expected or None when unknown)."""
Progress = Callable[[str, int, int], None]
"""progress(what is being done, done, total)."""


def read_repos_file(path: str) -> list[str]:
    from miner.mine import read_repos_file as read

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
) -> MineSummary:
    from miner.mine import mine
    from sql.db import make_engine

    return mine(
        config.miner,
        make_engine(config.store.url),
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
    progress: Progress | None = None,
) -> BuildSummary:
    from chains.build import build_chains
    from sql.db import make_engine

    return build_chains(
        config.chains,
        make_engine(config.store.url),
        strategy=strategy,
        min_len=min_len,
        max_len=max_len,
        progress=progress,
    )


def queries_from_config(
    config: Config,
    *,
    workers: int | None = None,
    chain_ids: list[int] | None = None,
    progress: Progress | None = None,
) -> QuerySummary:
    from chains.queries import build_queries
    from prchain.llm.client import LLMClient
    from sql.db import make_engine

    engine = make_engine(config.store.url)
    workers = workers or config.llm.workers
    client = LLMClient(config.llm.model_copy(update={"workers": workers}), engine)
    return build_queries(
        config.chains, engine, client, workers=workers, chain_ids=chain_ids, progress=progress
    )
