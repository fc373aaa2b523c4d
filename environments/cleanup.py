"""No container outlives its owner: exit, Ctrl-C and SIGTERM remove them; `prchain env gc` after SIGKILL.

Every container carries its owner's pid, the pid's start time (pids are reused) and the host name,
so a later `gc` can tell a crashed owner from a live one, and an exiting owner finds by them what it
started but had not registered yet.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import socket
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

from environments.docker_client import MANAGED_LABEL, DockerClient

_live: dict[str, Callable[[], None]] = {}  # container id → its closer
_engines: dict[str, DockerClient] = {}  # the engines this process starts containers on, by address
_lock = threading.Lock()
_installed = False


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
    `register`: `env setup` killed while it opened a verification sandbox left one running)."""
    install_handlers()
    with _lock:
        # One client an engine: a rollout opens a client per sandbox, thousands in a long run.
        _engines.setdefault(str(client.api.base_url), client)


def register(container_id: str, closer: Callable[[], None]) -> None:
    install_handlers()
    with _lock:
        _live[container_id] = closer


def unregister(container_id: str) -> None:
    with _lock:
        _live.pop(container_id, None)


def close_all() -> None:
    with _lock:
        closers = list(_live.values())
        _live.clear()
    for closer in closers:
        with contextlib.suppress(Exception):  # cleanup at exit must try every container
            closer()
    mine = {k: v for k, v in owner_labels().items() if k != MANAGED_LABEL}
    for engine in list(_engines.values()):
        with contextlib.suppress(Exception):
            gc(engine, everything=True, labels=mine)


def install_handlers() -> None:
    """atexit + SIGTERM/SIGINT cleanup; called on first use, or early from the main thread by a caller
    that opens sandboxes from worker threads (signal handlers can only be set from the main thread)."""
    global _installed
    if _installed:
        return
    _installed = True
    atexit.register(close_all)
    if threading.current_thread() is not threading.main_thread():
        return  # signal handlers can only be set from the main thread; atexit still covers us
    for signum in (signal.SIGTERM, signal.SIGINT):
        previous = signal.getsignal(signum)
        signal.signal(signum, _handler(signum, previous))


def _handler(signum: int, previous: Any) -> Callable[[int, FrameType | None], None]:
    def handle(num: int, frame: FrameType | None) -> None:
        close_all()
        if callable(previous):
            previous(num, frame)  # e.g. Python's default SIGINT handler raises KeyboardInterrupt
        elif previous == signal.SIG_IGN:
            return
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
