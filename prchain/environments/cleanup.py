"""No container outlives its owner: exit, Ctrl-C and SIGTERM remove them; `prchain env gc` after SIGKILL.

Every container carries its owner's pid, the pid's start time (pids are reused) and the host name,
so a later `gc` can tell a crashed owner from a live one, and an exiting owner finds by them what it
started but had not registered yet.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import FrameType
from typing import Any

from prchain.core.errors import ProcessStopping
from prchain.environments.docker_client import MANAGED_LABEL, DockerClient

# Both dicts are changed by single operations (set, pop, popitem, setdefault), each atomic under the
# GIL, and never under a lock: the signal handler runs in the main thread wherever it was stopped,
# and the threads it waits on to remove containers unregister them. Had the main thread held a lock
# they needed, the handler would wait on them for ever (a second SIGTERM landing in the handler did).
_live: dict[str, Callable[[], None]] = {}  # container id → its closer
_engines: dict[str, DockerClient] = {}  # the engines this process starts containers on, by address
_lock = threading.Lock()  # the handlers are installed once; held only there, never while signalled
_at_exit = False  # close_all is registered with atexit
_on_signals = False  # SIGTERM and SIGINT run close_all (set from the main thread only)
_stopping = ""  # the signal this process is stopping on, once its handler removed its containers
_handling = False  # a signal's handler is removing the containers (a second signal waits for it)


def process_start(pid: int) -> str:
    """The kernel's start time of a process (field 22 of /proc/<pid>/stat), '' if unknown."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return ""


def owner_labels() -> dict[str, str]:
    pid = os.getpid()
    return {
        MANAGED_LABEL: "1",
        "prchain.owner_pid": str(pid),
        "prchain.owner_start": process_start(pid),
        "prchain.owner_host": socket.gethostname(),
    }


def owner_alive(labels: dict[str, str]) -> bool:
    """Whether the process that started a container is still running (True when it cannot tell)."""
    if labels.get("prchain.owner_host", socket.gethostname()) != socket.gethostname():
        return True  # another machine's container, e.g. a shared engine: not ours to judge
    try:
        pid = int(labels.get("prchain.owner_pid", ""))
    except ValueError:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    started = labels.get("prchain.owner_start", "")
    return not started or process_start(pid) == started


def watch(client: DockerClient) -> None:
    """Called before a container is started on `client`: at exit, whatever this process started
    there is removed even if it was never registered (a SIGTERM between the engine starting it and
    `register`: `env setup` killed while it opened a verification sandbox left one running).
    Refused once a signal stopped the process: a worker whose sandbox the handler removed must not
    start another and run its command again there."""
    install_handlers()
    if _stopping:
        raise ProcessStopping(f"not starting a container: this process is stopping ({_stopping})")
    # One client an engine: a rollout opens a client per sandbox, thousands in a long run.
    _engines.setdefault(str(client.api.base_url), client)


def register(container_id: str, closer: Callable[[], None]) -> None:
    install_handlers()
    _live[container_id] = closer


def unregister(container_id: str) -> None:
    _live.pop(container_id, None)


def close_all() -> None:
    closers = []
    with contextlib.suppress(KeyError):  # taken one at a time: another thread may add or remove
        while True:
            closers.append(_live.popitem()[1])
    # At once, not one after another: the engine takes seconds to remove a build container
    # (its writable layer holds a vendored dependency tree), during which Ctrl-C looks ignored.
    if closers:
        with ThreadPoolExecutor(max_workers=min(8, len(closers))) as pool:
            list(pool.map(_close, closers))
    mine = {k: v for k, v in owner_labels().items() if k != MANAGED_LABEL}
    for engine in list(_engines.values()):
        with contextlib.suppress(Exception):
            gc(engine, everything=True, labels=mine)


def _close(closer: Callable[[], None]) -> None:
    with contextlib.suppress(Exception):  # cleanup at exit must try every container
        closer()


def discard(path: Path) -> None:
    """Remove a scratch directory; once a signal is stopping this process, by a detached `rm`
    so the process ends now (an era build's exported tree took 15 s to delete under load)."""
    if not _stopping:
        shutil.rmtree(path, ignore_errors=True)
        return
    with contextlib.suppress(OSError):
        subprocess.Popen(
            ["rm", "-rf", "--", str(path)],
            start_new_session=True,  # not hit by the terminal's next Ctrl-C
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )


def install_handlers() -> None:
    """atexit + SIGTERM/SIGINT cleanup; called on first use, and early from the main thread by a
    caller whose workers open sandboxes in threads (signal handlers can only be set from the main
    thread). A first use in a worker thread gets atexit alone, and a later call from the main
    thread still sets the signal handlers: `tests verify` opened its first sandbox in a worker, so
    SIGTERM killed it at once, leaving that sandbox running."""
    global _at_exit, _on_signals
    if _at_exit and (_on_signals or threading.current_thread() is not threading.main_thread()):
        return  # installed: every later call (each register and watch) takes no lock
    with _lock:
        if not _at_exit:
            atexit.register(close_all)
            _at_exit = True
        if _on_signals or threading.current_thread() is not threading.main_thread():
            return
        _on_signals = True
    for signum in (signal.SIGTERM, signal.SIGINT):
        previous = signal.getsignal(signum)
        signal.signal(signum, _handler(signum, previous))


def _handler(signum: int, previous: Any) -> Callable[[int, FrameType | None], None]:
    def handle(num: int, frame: FrameType | None) -> None:
        global _stopping, _handling
        if previous == signal.SIG_IGN:
            return  # the process goes on, and so do its containers
        if _handling:
            return  # a second signal while the first one's handler removes the containers
        _handling = True
        _stopping = signal.Signals(num).name
        try:
            count = len(_live)
            if count:  # said before the wait, so the user knows the signal was heard
                print(
                    f"prchain: {_stopping}: removing {count} container(s) this process started, "
                    "then stopping",
                    file=sys.stderr,
                    flush=True,
                )
            close_all()
        finally:
            _handling = False
        if callable(previous):
            previous(num, frame)  # e.g. Python's default SIGINT handler raises KeyboardInterrupt
        else:
            raise SystemExit(128 + signum)

    return handle


# Every kind of container prchain starts, each labelled with its owner (owner_labels): agent
# sandboxes, clean rooms for hidden tests, era builds and the setup agent's build boxes.
OWNED_KINDS = ("sandbox", "clean-room", "era-build", "buildbox")


def gc(
    client: DockerClient, *, everything: bool = False, labels: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    """Remove managed containers whose owner is gone (all managed containers with everything=True);
    `labels` narrows it to one run's containers (e.g. {"prchain.store": tag})."""
    removed = []
    # Only the kinds prchain starts with an owner: a container also inherits the managed label
    # from its image, so an image build's intermediate containers carry it too, with no owner.
    for kind in OWNED_KINDS:
        for container in client.containers(
            {**(labels or {}), MANAGED_LABEL: "1", "prchain.kind": kind}
        ):
            orphan = everything or not owner_alive(container["labels"])
            if orphan and client.remove_container(container["id"]):
                removed.append(container)
    return removed
