"""How long `prchain --help` takes, against the floor of starting Python at all.

Each figure is the median of several fresh processes, so the OS file cache is warm for both.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

RUNS = 7
PRCHAIN = Path(sys.executable).with_name("prchain")


def median_seconds(argv: list[str]) -> float:
    times = []
    for _ in range(RUNS):
        started = time.perf_counter()
        subprocess.run(argv, check=True, capture_output=True)
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    floor = median_seconds([sys.executable, "-c", "pass"])
    help_all = median_seconds([str(PRCHAIN), "--help"])
    help_rollout = median_seconds([str(PRCHAIN), "rollout", "--help"])
    print(f"python -c pass:          {floor * 1000:6.0f} ms")
    print(f"prchain --help:          {help_all * 1000:6.0f} ms ({help_all / floor:.1f}x the floor)")
    print(
        f"prchain rollout --help:  {help_rollout * 1000:6.0f} ms ({help_rollout / floor:.1f}x the floor)"
    )


if __name__ == "__main__":
    main()
