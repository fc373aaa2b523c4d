"""The one interface every execution backend fits."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Generic, Protocol, Self, TypeVar

Item = TypeVar("Item")
Result = TypeVar("Result")
Item_contra = TypeVar("Item_contra", contravariant=True)
Result_co = TypeVar("Result_co", covariant=True)


class Work(Protocol[Item_contra, Result_co]):
    """One picklable unit of work. A backend may call a copy of it in another process, so it builds
    what it needs (engine, LLM client, sandbox) on first use there; `close` releases that."""

    def __call__(self, item: Item_contra, /) -> Result_co: ...

    def close(self) -> None: ...


@dataclass(frozen=True)
class Needs:
    """What one call needs on the node that runs it; backends that cannot count ignore it."""

    sandboxes: int = 0


NO_NEEDS = Needs()


@dataclass(frozen=True)
class Done(Generic[Item, Result]):
    """One finished call: its item, where it ran, and its result (None when `lost` says why not)."""

    item: Item
    node: str
    result: Result | None
    lost: str | None = None


class Backend(Protocol):
    name: str

    def map(
        self,
        work: Work[Item, Result],
        items: Sequence[Item],
        *,
        needs: Needs = NO_NEEDS,
        on_done: Callable[[Done[Item, Result]], None] | None = None,
    ) -> list[Done[Item, Result]]:
        """`work(item)` for every item, results in completion order. Ctrl-C stops the calls still
        running (each one's own cleanup runs) and re-raises."""
        ...

    def single_machine(self) -> bool:
        """Whether every call runs on this machine (so a SQLite file is safe to share)."""
        ...

    def close(self) -> None: ...

    def __enter__(self) -> Self: ...

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None: ...
