"""How fast `prchain report` writes the site of a store, and how big the site is.

Runs `prchain report` as a user would (a subprocess, interpreter start-up included) and reports
wall time, peak memory of that process, pages written and the site's size on disk.
Targets (issue 11, on the mined ruff store without rollouts): under 30 s and under 50 MB.

Usage:
  python bench/bench_report.py --db sqlite:////work/data/ruff.db   # a mined store (chains built)
  python bench/bench_report.py                                     # a synthetic store (default)
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.synth_db import make_synthetic_db  # noqa: E402
from prchain.app.config import Config  # noqa: E402
from prchain.chains.building.build import build_chains  # noqa: E402
from prchain.store.opener import make_engine  # noqa: E402

TARGET_SECONDS = 30.0
TARGET_MB = 50.0
PRCHAIN = Path(sys.executable).parent / "prchain"


def synthetic_store(directory: Path, prs: int, refs: int) -> str:
    path = directory / "synthetic.db"
    make_synthetic_db(path, prs, refs)
    url = f"sqlite:///{path}"
    summary = build_chains(Config().chains, make_engine(url))
    print(f"  synthetic store: {prs} PRs, {refs} references, {summary.total} chains")
    return url


def run_report(url: str, out: Path) -> tuple[float, float, float, str]:
    """(wall seconds, CPU seconds, peak RSS in MB, the command's last line).

    CPU time (user + system) is reported beside wall time: on a machine shared with other jobs
    the wall time mostly measures the waiting."""
    start = time.perf_counter()
    done = subprocess.run(
        [str(PRCHAIN), "report", str(out), "--db", url], capture_output=True, text=True
    )
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(done.stderr[-2000:])
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = usage.ru_utime + usage.ru_stime
    return seconds, cpu, usage.ru_maxrss / 1024, done.stdout.strip().splitlines()[-1]


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--db", help="A store with chains built (default: a synthetic one).")
    parser.add_argument("--prs", type=int, default=20_000)
    parser.add_argument("--refs", type=int, default=60_000)
    parser.add_argument("--out", type=Path, help="Write the site here and keep it.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        url = args.db or synthetic_store(Path(tmp), args.prs, args.refs)
        out = args.out or Path(tmp) / "site"
        seconds, cpu, peak_mb, line = run_report(url, out)  # the only child process
        load = os.getloadavg()[0]
        size_mb = sum(p.stat().st_size for p in out.rglob("*") if p.is_file()) / 1e6
        print(f"  {line}")
        print(
            f"  wall {seconds:.1f} s (start-up included) · CPU {cpu:.1f} s · peak RSS "
            f"{peak_mb:.0f} MB · load average {load:.1f} on {os.cpu_count()} CPUs"
        )
        print(f"  site {size_mb:.1f} MB in {sum(1 for _ in out.rglob('*.html'))} HTML files")
    verdict = "OK" if seconds < TARGET_SECONDS and size_mb < TARGET_MB else "OVER TARGET"
    print(
        f"prchain report: {seconds:.1f} s (target < {TARGET_SECONDS:.0f} s), "
        f"{size_mb:.1f} MB (target < {TARGET_MB:.0f} MB) {verdict}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
