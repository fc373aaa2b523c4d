"""A signal always ends in removed containers and a stopped process, wherever it lands: while the
main thread registers containers (the threads that remove them unregister them), and when a second
SIGTERM comes while the first one's handler is at work (`timeout` signals the whole group, and a
parent passes its own signal on). Before, the handler could wait for ever on threads that waited
on a lock the interrupted main thread held."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# The closers stand in for a sandbox's `close`: in a pool thread, they remove their container
# (here: write a line) and unregister it, as DockerEnvironment.close does.
SCRIPT = textwrap.dedent(
    """
    import os, signal, sys, threading
    from prchain.environments import cleanup

    closed = open(sys.argv[1], "a")
    second = sys.argv[2] == "second"

    def closer(cid):
        def close():
            if second:
                os.kill(os.getpid(), signal.SIGTERM)  # lands in the handler, in the main thread
            closed.write(cid + "\\n")
            closed.flush()
            cleanup.unregister(cid)
        return close

    for n in range(3):
        cleanup.register(f"kept-{n}", closer(f"kept-{n}"))
    threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGTERM)).start()
    n = 0
    while True:  # the main thread in register and unregister when the signal lands
        cleanup.register(f"busy-{n}", closer(f"busy-{n}"))
        cleanup.unregister(f"busy-{n}")
        n += 1
    """
)


@pytest.mark.parametrize("signals", ["one", "second"])
def test_a_sigterm_removes_every_container_and_stops(tmp_path: Path, signals: str) -> None:
    closed = tmp_path / "closed.txt"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, str(closed), signals],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,  # a deadlocked handler never returns; this ends the test instead of CI
    )
    assert done.returncode == 128 + 15, done.stderr
    removed = set(closed.read_text().split())
    assert {"kept-0", "kept-1", "kept-2"} <= removed
    assert "removing" in done.stderr and "then stopping" in done.stderr
