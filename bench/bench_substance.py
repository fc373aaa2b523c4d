"""How fast a stage's substance is measured where PRs edit one large Python file.

mypy's `checker.py` has about 8,000 lines and hundreds of docstrings; lexing it whole for every PR
that touched it took 20 of the 24 CPU minutes of mypy's chains build. This builds a git repository
with one such file (`--functions` functions, each with a docstring), makes `--prs` commits that
each edit a few functions, and measures `patch_code_lines` of each commit's diff with the clone at
hand: once as it runs (a hunk lexes alone unless it begins or ends inside a string spanning lines)
and once with every hunk read from the whole file lexed, as it ran before. Both must count the
same lines.

Usage: python bench/bench_substance.py [--functions 800] [--prs 30]
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from prchain.chains.reading import substance  # noqa: E402
from prchain.dev.repos import git  # noqa: E402


def _function(i: int, version: int) -> str:
    return (
        f"def check_{i}(node, context):\n"
        f'    """Check node kind {i} against its context.\n\n'
        f"    The check reports a mismatch once per node (revision {version}).\n"
        f'    """\n'
        f"    expected = context.lookup({i})\n"
        f"    if node.kind != expected:\n"
        f"        context.fail(node, 'kind {i}, revision {version}')\n"
        f"    return expected\n\n\n"
    )


def _history(root: Path, functions: int, prs: int) -> list[str]:
    """A repository whose `checker.py` each of `prs` commits edits in a few places: the diffs."""
    git(root, "init", "-q", "-b", "main")
    versions = [0] * functions
    path = root / "checker.py"

    def write() -> None:
        path.write_text("".join(_function(i, v) for i, v in enumerate(versions)))

    write()
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "Initial commit")
    rng = random.Random(7)
    diffs = []
    for n in range(prs):
        for i in rng.sample(range(functions), 4):
            versions[i] += 1
        write()
        git(root, "commit", "-q", "-am", f"Change {n}")
        diffs.append(git(root, "diff", "HEAD~1", "HEAD") + "\n")
    return diffs


def _measure(diffs: list[str], clone: str) -> tuple[float, list[int]]:
    start = time.perf_counter()
    counts = [substance.patch_code_lines(diff, clone) for diff in diffs]
    return time.perf_counter() - start, counts


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--functions", type=int, default=800)
    parser.add_argument("--prs", type=int, default=30)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        diffs = _history(root, args.functions, args.prs)
        lines = (root / "checker.py").read_text().count("\n")
        print(f"  checker.py: {lines} lines; {args.prs} PRs editing 4 functions each")
        seconds, counts = _measure(diffs, str(root))
        print(f"  hunks lexed alone where they can {seconds:8.2f} s", flush=True)
        cut = substance.WholeFile.cut
        substance.WholeFile.cut = lambda self, start, count: True  # type: ignore[method-assign]
        try:
            whole_seconds, whole_counts = _measure(diffs, str(root))
        finally:
            substance.WholeFile.cut = cut  # type: ignore[method-assign]
        print(f"  every hunk from the whole file     {whole_seconds:8.2f} s", flush=True)
    if counts != whole_counts:
        print("  the two ways counted different lines")
        return 1
    print(f"  same code lines both ways; {whole_seconds / max(seconds, 1e-9):.1f}x faster")
    return 0


if __name__ == "__main__":
    sys.exit(main())
