"""The store as one object: what the composition layer opens once per command and hands down.

`prchain.store.opener.open_store` makes it; nothing below the composition layer does. It holds the
engine and the dialect facts, gives sessions, and groups the readers and writers of the aggregates
that have moved behind it (`store.llm_calls`, `store.environments`,
`store.rollouts`, ...). Code not yet converted takes `store.engine`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from types import TracebackType
from typing import TYPE_CHECKING

from sqlalchemy import Engine
from sqlalchemy.orm import Session

from prchain.store.db import session_scope
from prchain.store.environments import Environments
from prchain.store.llm_calls import LLMCalls
from prchain.store.rollouts import Rollouts

if TYPE_CHECKING:
    from typing import Self


@dataclass(frozen=True)
class Store:
    engine: Engine
    url: str  # as shown to a user: password masked

    @property
    def dialect(self) -> str:
        """The SQL dialect's name: "sqlite" or "postgresql"."""
        return self.engine.dialect.name

    @contextmanager
    def session(self) -> Iterator[Session]:
        """One transaction: committed on success, rolled back on any exception."""
        with session_scope(self.engine) as session:
            yield session

    @property
    def llm_calls(self) -> LLMCalls:
        """Every LLM call's row: recorded, marked refused, summed."""
        return LLMCalls(self.engine)

    @property
    def environments(self) -> Environments:
        """Era recipes, the era of each stage, verified tests: written, replaced, read."""
        return Environments(self.engine)

    @property
    def rollouts(self) -> Rollouts:
        """Rollouts, their stages, steps and judgements: started, resumed, rewound, read."""
        return Rollouts(self.engine)

    def close(self) -> None:
        """Release the engine's connections (the store stays usable: a new one is made on use)."""
        self.engine.dispose()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.close()
