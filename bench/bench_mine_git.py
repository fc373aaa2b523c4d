"""Mine astral-sh/ruff's history from a local clone, twice, and print what it took.

Acceptance: >= 15,000 PRs and >= 1,500 PR→PR references in < 60 s; a rerun with nothing new < 5 s.
The clone defaults to the snapshot at /work/.mirror/astral-sh+ruff/repo (PRCHAIN_BENCH_RUFF
overrides); without one the benchmark says so and skips. Runs the real CLI, as a user would.
"""

from __future__ import annotations

import json
import os
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
        first = _timed(mine)
        second = _timed(mine)
        stats = _stats(db)
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
    print(f"first run seconds        {first:.1f}")
    print(f"second run seconds       {second:.1f}")
    print(f"PRs/s (first run)        {prs / first:.0f}")
    ok = prs >= 15_000 and pr_pr >= 1_500 and first < 60 and second < 5
    print(
        f"acceptance (>=15000 PRs, >=1500 PR→PR, <60 s, rerun <5 s): {'met' if ok else 'NOT met'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
