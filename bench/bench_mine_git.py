"""Mine astral-sh/ruff's history from a local clone, twice, and print what it took, next to the
floor: how long git itself takes to print every first-parent patch (`git log --first-parent -p`).

A snapshot can lack objects; plain `git log -p` then dies at the first unreadable commit (on the
2026 ruff snapshot after two months of a four-year history), which would make the floor look tiny.
The floor here restarts past each unreadable commit, so it covers the same history the miner reads.

Acceptance: >= 15,000 PRs and >= 1,500 PR→PR references; the first run within 3x the floor
measured in the same run; a rerun with nothing new < 5 s. Peak memory is the largest resident set
of the miner or any git process it ran.
The clone defaults to the snapshot at /work/.mirror/astral-sh+ruff/repo (PRCHAIN_BENCH_RUFF
overrides); without one the benchmark says so and skips. Runs the real CLI, as a user would.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DEFAULT_CLONE = "/work/.mirror/astral-sh+ruff/repo"
PRCHAIN = [sys.executable, "-c", "from prchain.cli import main; main()"]


def _timed(args: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(PRCHAIN + args, check=True, stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def git_log_floor(clone: Path) -> tuple[float, int, int]:
    """(seconds, bytes printed, unreadable commits skipped) for every first-parent patch."""
    started, size, skipped, rev = time.perf_counter(), 0, 0, "HEAD"
    while True:
        done = subprocess.run(
            ["git", "-C", str(clone), "log", "--first-parent", "-p", "-M", "--format=%x00%H", rev],
            capture_output=True,
        )
        size += len(done.stdout)
        if done.returncode == 0:
            return time.perf_counter() - started, size, skipped
        # The last header printed is the commit whose diff could not be read: go on below it.
        last = done.stdout.rsplit(b"\x00", 1)[-1][:40].decode()
        parent = subprocess.run(
            ["git", "-C", str(clone), "rev-parse", "-q", "--verify", f"{last}^1"],
            capture_output=True,
            text=True,
        ).stdout.strip()
        if not parent:
            return time.perf_counter() - started, size, skipped
        rev, skipped = parent, skipped + 1


def _stats(db: str) -> dict[str, object]:
    done = subprocess.run(
        PRCHAIN + ["stats", "--db", db, "--json"], check=True, capture_output=True, text=True
    )
    return json.loads(done.stdout)


def main() -> int:
    clone = Path(os.environ.get("PRCHAIN_BENCH_RUFF", DEFAULT_CLONE))
    if not (clone / "HEAD").exists() and not (clone / ".git").exists():
        print(f"skipped: no clone of astral-sh/ruff at {clone} (set PRCHAIN_BENCH_RUFF to one)")
        return 0
    with tempfile.TemporaryDirectory(prefix="bench-mine-") as tmp:
        db = f"sqlite:///{tmp}/ruff.db"
        mine = ["mine", "--source", "git", "--name", "astral-sh/ruff", str(clone), "--db", db]
        floor, floor_bytes, skipped = git_log_floor(clone)
        first = _timed(mine)
        second = _timed(mine)
        stats = _stats(db)
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    prs, pr_pr = int(stats["prs"]), int(stats["pr_pr_references"])  # type: ignore[call-overload]
    by_type: dict[str, int] = stats["references_by_type"]  # type: ignore[assignment]
    print(f"cores available          {os.cpu_count()}")
    print(
        f"PRs                      {prs}  (with a patch: {stats['prs_with_patch']}, by patch status: {stats['prs_by_patch_status']})"
    )
    print(f"references               {stats['references']}")
    print(
        f"PR→PR references         {pr_pr}  (of which issue-mediated: {by_type.get('issue_mediated', 0)})"
    )
    print(
        f"git log -p floor         {floor:.1f} s ({floor_bytes / 1e6:.0f} MB of patches, "
        f"{skipped} unreadable commits skipped)"
    )
    print(f"first run seconds        {first:.1f}  ({first / floor:.2f}x the floor)")
    print(f"peak memory              {peak_mb:.0f} MB (largest resident set of any process run)")
    print(f"second run seconds       {second:.1f}")
    print(f"PRs/s (first run)        {prs / first:.0f}")
    ok = prs >= 15_000 and pr_pr >= 1_500 and first <= 3 * floor and second < 5
    print(
        f"acceptance (>=15000 PRs, >=1500 PR→PR, <=3x the floor, rerun <5 s): "
        f"{'met' if ok else 'NOT met'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
