"""Rolling out many chains at once on this machine: one thread (and one sandbox) per chain."""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from typing import TypeVar

Result = TypeVar("Result")


def run_in_threads(
    work: Callable[[int], Result],
    chain_ids: list[int],
    *,
    workers: int = 1,
    on_done: Callable[[Result], None] | None = None,
) -> list[Result]:
    """`work(chain_id)` for every chain on `workers` threads; results in completion order."""
    results: list[Result] = []
    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="rollout") as pool:
        futures = [pool.submit(work, cid) for cid in chain_ids]
        for future in as_completed(futures):
            results.append(future.result())
            if on_done is not None:
                on_done(results[-1])
    return results
