"""`make bench`: run every bench/bench_*.py script in turn and print what each measured.

A SIGTERM or Ctrl-C is passed on to the bench that is running, which removes what it made, and
no later bench starts: killed alone, this runner left its child building images on its own."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path
from types import FrameType

HERE = Path(__file__).parent


def _run(script: Path) -> int:
    child = subprocess.Popen([sys.executable, str(script)], cwd=HERE.parent)

    def pass_on(signum: int, _frame: FrameType | None) -> None:
        child.send_signal(signum)
        child.wait()
        raise SystemExit(128 + signum)

    previous = {s: signal.signal(s, pass_on) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        return child.wait()
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def main() -> int:
    failed = []
    for script in sorted(HERE.glob("bench_*.py")):
        print(f"\n=== {script.stem} ===", flush=True)
        if _run(script) != 0:
            failed.append(script.stem)
    if failed:
        print(f"\nfailed benchmarks: {', '.join(failed)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
