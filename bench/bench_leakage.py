"""The leakage check on a 3 MB query reply (finding 7 of issue 16: 64 KB used to take 11 s).

Prints seconds per reply shape; asserts nothing."""

from __future__ import annotations

import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from prchain.chains.reading.leakage import changed_identifiers, find_leaks  # noqa: E402

SIZE = 3_000_000
SHAPES = {
    "one 3 MB word": "a" * SIZE,
    "dashed run": "a-" * (SIZE // 2),
    "dotted run": "a." * (SIZE // 2),
    "prose": "The parser should accept trailing commas in calc/ops.py lists. " * (SIZE // 64),
}


def main() -> None:
    identifiers = {"max_positional_args", "frobnicate", "ops_registry"}
    for name, reply in SHAPES.items():
        started = time.perf_counter()
        find_leaks(reply, identifiers)
        print(
            f"find_leaks, {name} ({len(reply) / 1e6:.1f} MB): {time.perf_counter() - started:.2f} s"
        )
    diff = "diff --git a/x.py b/x.py\n@@ -1 +1 @@\n+cache_dir: " + " " * SIZE + "Path\n"
    started = time.perf_counter()
    changed_identifiers([diff])
    print(f"changed_identifiers, 3 MB annotated line: {time.perf_counter() - started:.2f} s")


if __name__ == "__main__":
    main()
