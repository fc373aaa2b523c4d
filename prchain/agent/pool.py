"""Rolling out many chains at once on this machine with a ready-made runner: the local backend of
`prchain.scale` over a plain callable (the app layer uses the configured backend instead)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from prchain.scale.local import LocalBackend

Result = TypeVar("Result")


@dataclass
class _Plain(Generic[Result]):
    call: Callable[[int], Result]

    def __call__(self, item: int) -> Result:
        return self.call(item)

    def close(self) -> None:
        pass


def run_in_threads(
    work: Callable[[int], Result],
    chain_ids: list[int],
    *,
    workers: int = 1,
    on_done: Callable[[Result], None] | None = None,
) -> list[Result]:
    """`work(chain_id)` for every chain on `workers` threads; results in completion order."""
    done = LocalBackend(workers).map(
        _Plain(work),
        chain_ids,
        on_done=None if on_done is None else (lambda d: on_done(d.result)),  # type: ignore[arg-type]
    )
    return [d.result for d in done]  # type: ignore[misc]
