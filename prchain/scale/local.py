"""The default backend: a thread pool on this machine, one thread (and one sandbox) per item."""

from __future__ import annotations

import socket
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from types import TracebackType
from typing import Self, TypeVar

from prchain.scale.protocol import NO_NEEDS, Done, Needs, Work

Item = TypeVar("Item")
Result = TypeVar("Result")


class LocalBackend:
    name = "local"

    def __init__(self, workers: int = 1) -> None:
        self.workers = max(1, workers)
        self.node = socket.gethostname()

    def map(
        self,
        work: Work[Item, Result],
        items: Sequence[Item],
        *,
        needs: Needs = NO_NEEDS,
        on_done: Callable[[Done[Item, Result]], None] | None = None,
    ) -> list[Done[Item, Result]]:
        done: list[Done[Item, Result]] = []
        pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="prchain")
        try:
            futures: dict[Future[Result], Item] = {pool.submit(work, item): item for item in items}
            for future in as_completed(futures):
                done.append(Done(futures[future], self.node, future.result()))
                if on_done is not None:
                    on_done(done[-1])
        finally:
            # On an error or Ctrl-C, calls not yet started are dropped; running ones finish their
            # current step (their sandboxes are removed by the cleanup handlers).
            pool.shutdown(wait=True, cancel_futures=True)
            work.close()
        return done

    def single_machine(self) -> bool:
        return True

    def close(self) -> None:
        pass

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()
