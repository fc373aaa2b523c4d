"""What the build's stage-base check costs per chain, in a repository of many files.

Every kept chain asks git whether its earlier stages' gold patches revert at each later stage's
base (prchain/chains/evidence/revertible.py): one `read-tree` of the base into a throwaway index, then one
`apply -R --cached --3way` per earlier stage. This builds a repository of `--files` files, makes
`--prs` commits that each rewrite a few lines of a few hot files, and checks chains of five stages
made of every other commit (the commits in between are outside the chain): once cold, once again
from the cache (chains of one start share their first stages). Some chains must conflict (a commit
in between rewrites a stage's lines) and some must not.

Usage: python bench/bench_stage_bases.py [--files 3000] [--prs 60]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from prchain.chains.evidence.revertible import StageBases  # noqa: E402
from prchain.dev.repos import git  # noqa: E402


def _history(root: Path, files: int, prs: int) -> tuple[list[str], list[str]]:
    """(base commit, diff) of each of `prs` commits over a tree of `files` files."""
    git(root, "init", "-q", "-b", "main")
    for i in range(files):
        path = root / f"pkg{i % 40}" / f"mod{i}.py"
        path.parent.mkdir(exist_ok=True)
        path.write_text("".join(f"value_{j} = compute({i}, {j})\n" for j in range(30)))
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "Initial commit")
    rng = random.Random(11)
    bases, diffs = [], []
    for n in range(prs):
        bases.append(git(root, "rev-parse", "HEAD"))
        for i in rng.sample(range(12), 3):  # 12 hot files: later commits meet earlier lines
            path = root / f"pkg{i % 40}" / f"mod{i}.py"
            lines = path.read_text().splitlines(keepends=True)
            j = rng.randrange(len(lines))
            lines[j] = f"value_{j} = compute({i}, {j}, revision={n})\n"
            path.write_text("".join(lines))
        git(root, "commit", "-q", "-am", f"Change {n}")
        diffs.append(git(root, "diff", "HEAD~1", "HEAD") + "\n")
    return bases, diffs


def _check_all(bases: StageBases, starts: list[str], diffs: list[str]) -> list[tuple[int, int]]:
    """Chains of every other commit: the commits between two stages are outside the chain."""
    return [
        bases.enterable_run(1, starts[s : s + 9 : 2], diffs[s : s + 9 : 2])
        for s in range(len(diffs) - 8)
    ]


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--files", type=int, default=3000)
    parser.add_argument("--prs", type=int, default=60)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        starts, diffs = _history(root, args.files, args.prs)
        chains = len(diffs) - 8
        bases = StageBases({1: str(root)})
        begin = time.perf_counter()
        runs = _check_all(bases, starts, diffs)
        cold = time.perf_counter() - begin
        begin = time.perf_counter()
        again = _check_all(bases, starts, diffs)
        warm = time.perf_counter() - begin
    whole = sum(1 for start, end in runs if (start, end) == (0, 5))
    print(f"  {args.files} files, {chains} chains of 5 stages: {whole} can be entered whole")
    print(f"  cold  {cold:6.2f} s ({1000 * cold / chains:6.1f} ms a chain)")
    print(f"  again {warm:6.2f} s (answers cached)")
    if runs != again or whole in (0, chains):
        print("  expected the same answers twice, and chains of both kinds")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
