"""The units of work a backend fans out: one rollout per chain, one chain's queries, one repository.

Each is a small picklable object holding only config. It builds its engine, LLM client and runner on
first use in whatever process runs it and keeps them for its next items: a thread pool shares one
set, and each Ray worker process keeps one set for every task of the run it serves
(`prchain/scale/ray_backend.py`). Workers never create tables: the driver has already done so.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from prchain.app.config import Config

if TYPE_CHECKING:
    from sqlalchemy import Engine

    from prchain.chains.writers.queries import QuerySummary
    from prchain.llm.client import LLMClient
    from prchain.miner.mine import RepoSummary


@dataclass
class Lazy:
    """Per-process state: made on first call, dropped when pickled, released by close()."""

    config: Config
    _lock: threading.Lock = field(default_factory=threading.Lock, init=False, repr=False)
    _engine: Engine | None = field(default=None, init=False, repr=False)
    _llm: LLMClient | None = field(default=None, init=False, repr=False)

    def engine(self) -> Engine:
        from prchain.store.opener import make_engine  # one engine per worker process

        with self._lock:
            if self._engine is None:
                self._engine = make_engine(self.config.store.url, create=False)
            return self._engine

    def llm(self) -> LLMClient:
        from prchain.llm.client import LLMClient

        engine = self.engine()
        with self._lock:
            if self._llm is None:
                self._llm = LLMClient(self.config.llm, engine)
            return self._llm

    def close(self) -> None:
        with self._lock:
            if self._engine is not None:
                self._engine.dispose()
            self._engine, self._llm = None, None

    def __getstate__(self) -> dict[str, Any]:
        return {"config": self.config}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["config"])  # type: ignore[misc]


@dataclass
class QueryWork(Lazy):
    """Write the missing queries and overview of one chain."""

    def __call__(self, chain_id: int) -> QuerySummary:
        from prchain.chains.writers.queries import build_queries

        engine = self.engine()
        return build_queries(
            self.config.chains, engine, self.llm(), workers=1, chain_ids=[chain_id]
        )


@dataclass
class MineWork(Lazy):
    """Mine one repository (its own batches, cursors and reference resolution)."""

    options: dict[str, Any] = field(default_factory=dict)

    def __call__(self, repo: str) -> RepoSummary:
        from prchain.miner.mine import mine

        return mine(self.config.miner, self.engine(), [repo], **self.options).repos[0]

    def __getstate__(self) -> dict[str, Any]:
        return {"config": self.config, "options": self.options}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["config"], state["options"])  # type: ignore[misc]
