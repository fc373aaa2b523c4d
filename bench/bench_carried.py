"""How fast the lines a patch only carries are found where it rewrites a minified bundle.

tauri commits its bundled scripts: a PR that rebuilds them changes a few lines of hundreds of
thousands of characters each. Lining such lines up as possible repeated edits made difflib compare
their tokens pairwise, quadratic in a line's length: tauri's chains build ran over 30 minutes and
was stopped. Lines longer than code anyone writes (`prchain.chains.reading.generated.MAX_CODE_LINE_CHARS`) are now
never lined up, and two lines' likeness is bounded cheaply before it is computed. This makes one
hunk of `--lines` minified lines of `--chars` characters each, every line edited a little, plus a
hunk of ordinary code edited the same way over and over, and times `carried_in_patch` on it.

Code moved to another file and edited on the way is looked for across the whole diff: each line
no block lined up is compared with the other side's lines that share one of its rarer names. The
second figure times a move of `--files` files of `--functions` functions each from one crate to
another, every signature made public on the way (vello #1744's kind of change, scaled up).

Usage: python bench/bench_carried.py [--lines 4] [--chars 20000] [--files 200] [--functions 20]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from prchain.chains.reading.carried import carried_in_patch  # noqa: E402


def _hunks(lines: int, chars: int) -> list[list[str]]:
    statement = "var a{i}=abs(b{i}),c{i}=d{i}.map(function(e){{return e+{i}}});"
    bundle = []
    for n in range(lines):
        text, i = "", 0
        while len(text) < chars:
            text += statement.format(i=f"{n}_{i}")
            i += 1
        bundle.append(text)
    minified = [f"-{line}" for line in bundle] + [
        f"+{line.replace('abs(', 'Math.abs(')}" for line in bundle
    ]
    code = [f"    total_{i} = abs(values[{i}]) + offset" for i in range(40)]
    ordinary = [f"-{line}" for line in code] + [
        f"+{line.replace('abs(', 'numpy.abs(')}" for line in code
    ]
    return [minified, ordinary]


def _moved(files: int, functions: int) -> list[list[str]]:
    """One removed hunk and one added hunk per file: its functions moved, made public."""
    hunks = []
    for f in range(files):
        code = []
        for i in range(functions):
            code += [
                f"pub(crate) fn handle_{f}_{i}(state: &mut State{f}, value: u32) -> u32 {{",
                f"    state.total_{i} = state.total_{i}.wrapping_add(value * {i + 1});",
                f"    state.total_{i}",
                "}",
            ]
        hunks.append([f"-{line}" for line in code])
        hunks.append([f"+{line.replace('pub(crate)', 'pub')}" for line in code])
    return hunks


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--lines", type=int, default=4)
    parser.add_argument("--chars", type=int, default=20_000)
    parser.add_argument("--files", type=int, default=200)
    parser.add_argument("--functions", type=int, default=20)
    args = parser.parse_args()
    hunks = _hunks(args.lines, args.chars)
    start = time.perf_counter()
    found = carried_in_patch(hunks)
    seconds = time.perf_counter() - start
    print(
        f"carried_in_patch: {args.lines} minified lines of {args.chars:,} characters and 40 "
        f"ordinary lines edited alike: {seconds:.3f} s; carried: {len(found[0])} of the minified "
        f"hunk's {len(hunks[0])} lines, {len(found[1])} of the ordinary hunk's {len(hunks[1])}"
    )
    moved = _moved(args.files, args.functions)
    start = time.perf_counter()
    found = carried_in_patch(moved)
    seconds = time.perf_counter() - start
    lines = sum(map(len, moved))
    print(
        f"carried_in_patch: {args.files} files of {args.functions} functions moved and made "
        f"public, {lines:,} changed lines: {seconds:.3f} s; carried: "
        f"{sum(map(len, found)):,} lines"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
