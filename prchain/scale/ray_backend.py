"""Ray: one task per item, placed by Ray on any node with room; retried elsewhere if its node dies.

Ray runs a job's tasks in a few long-lived worker processes. The first task of a run in a process
keeps its copy of the work (and so the engine, LLM client and runner it builds) for every later task
of the same run in that process: a worker stays warm instead of rebuilding per task. Only the
sandbox is per task. A task that needs a sandbox takes one unit of the node's slot resource, so a
node never runs more sandboxes than it declared. Nothing here touches the store: resuming a rerun
task is the work's own business (a rollout restarts from its last passed stage).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import socket
import threading
import uuid
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any, Self, TypeVar

from prchain.core.errors import BackendUnavailable, ConfigError
from prchain.scale.config import ScaleConfig
from prchain.scale.protocol import NO_NEEDS, Done, Needs, Work

Item = TypeVar("Item")
Result = TypeVar("Result")
POLL_SECONDS = 1.0  # how often the driver wakes from waiting, so Ctrl-C is seen at once
CANCEL_GRACE_SECONDS = 60.0  # how long cancelled tasks get to remove their sandboxes
# Ray gives a new node a fixed 30 s to register; a busy machine can miss that, so start again.
START_ATTEMPTS = 3


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ConfigError(
            "the ray backend needs Ray, which is not installed",
            hint="pip install 'prchain[ray]' (make install does), or use --backend local",
        ) from None
    return ray


def node_label(node_id: str) -> str:
    """How a node is shown: its host name and the start of its Ray id (one host may run several)."""
    return f"{socket.gethostname()}:{node_id[:6]}"


# The works this worker process keeps warm, by run (one `map` call); the oldest is closed when a
# process serves more runs than this (a long-lived driver calling `map` again and again).
WARM_RUNS = 2
_warm: dict[str, Work[Any, Any]] = {}
_warm_lock = threading.Lock()


def _warm_work(run: str, work: Work[Any, Any]) -> Work[Any, Any]:
    """This process's copy of the run's work: the first one it received, kept with what it built."""
    with _warm_lock:
        if run not in _warm:
            if not _warm:
                atexit.register(_close_warm)
            while len(_warm) >= WARM_RUNS:
                _close_quietly(_warm.pop(next(iter(_warm))))
            _warm[run] = work
        return _warm[run]


def _close_warm() -> None:
    with _warm_lock:
        while _warm:
            _close_quietly(_warm.pop(next(iter(_warm))))


def _close_quietly(work: Work[Any, Any]) -> None:
    with contextlib.suppress(Exception):  # its store may be gone (a test database dropped)
        work.close()


def _execute(run: str, work: Work[Any, Any], item: Any, env: dict[str, str]) -> tuple[Any, str]:
    """Runs inside a Ray worker: the driver's environment for this work, then one call on the warm
    copy of the run's work. Its engine, clients and runner outlive the task; the process's exit (or
    a later run pushing it out) closes them."""
    import ray

    os.environ.update(env)
    warm = _warm_work(run, work)
    return warm(item), node_label(ray.get_runtime_context().get_node_id())


class RayBackend:
    name = "ray"

    def __init__(self, config: ScaleConfig, *, workers: int = 1, env: dict[str, str]) -> None:
        self.config, self.env = config, env
        self.ray = _import_ray()
        self.started_here = False
        if not self.ray.is_initialized():
            self._connect(workers)

    def _connect(self, workers: int) -> None:
        kwargs: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False}
        if self.config.ray_address:
            kwargs["address"] = self.config.ray_address
        else:  # a Ray instance of our own on this machine, with as many sandboxes as workers:
            # "local" starts one even when another runs here (a bare init would join the newest
            # instance `ray start` or a test cluster left, and refuse our resources).
            kwargs["address"] = "local"
            kwargs["resources"] = {self.config.slot_resource: self.config.local_slots or workers}
        for attempt in range(1, START_ATTEMPTS + 1):
            try:
                self.ray.init(**kwargs)
                break
            except ConnectionError as exc:
                raise ConfigError(
                    f"cannot reach the Ray cluster at {self.config.ray_address}: {exc}",
                    hint="start it with `ray start --head` and pass its address with --ray-address",
                ) from None
            except Exception as exc:  # Ray raises a bare Exception when its node is slow to start
                self.ray.shutdown()
                if attempt == START_ATTEMPTS or "timed out during startup" not in str(exc):
                    raise BackendUnavailable(f"Ray did not start on this machine: {exc}") from None
        self.started_here = True

    # ---- the Backend interface ---------------------------------------------------------------

    def map(
        self,
        work: Work[Item, Result],
        items: Sequence[Item],
        *,
        needs: Needs = NO_NEEDS,
        on_done: Callable[[Done[Item, Result]], None] | None = None,
    ) -> list[Done[Item, Result]]:
        self._check_room(needs)
        task = self.ray.remote(_execute).options(**self._options(needs))
        shared = self.ray.put(work)  # serialised once; a process keeps the first copy it unpickles
        run = uuid.uuid4().hex
        pending = {task.remote(run, shared, item, self.env): item for item in items}
        done: list[Done[Item, Result]] = []
        try:
            while pending:
                ready, _ = self.ray.wait(list(pending), num_returns=1, timeout=POLL_SECONDS)
                for ref in ready:
                    done.append(self._collect(ref, pending.pop(ref)))
                    if on_done is not None:
                        on_done(done[-1])
        except BaseException:
            self._cancel(list(pending))
            raise
        return done

    def single_machine(self) -> bool:
        here = self.ray.util.get_node_ip_address()
        return all(
            node["NodeManagerAddress"] == here for node in self.ray.nodes() if node.get("Alive")
        )

    def close(self) -> None:
        if self.started_here and self.ray.is_initialized():
            self.ray.shutdown()
            self.started_here = False

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.close()

    # ---- helpers -----------------------------------------------------------------------------

    def _options(self, needs: Needs) -> dict[str, Any]:
        options: dict[str, Any] = {
            "num_cpus": self.config.task_cpus,
            "max_retries": self.config.max_retries,
            "retry_exceptions": False,  # only lost workers and nodes are retried, not our errors
        }
        if needs.sandboxes:
            options["resources"] = {self.config.slot_resource: needs.sandboxes}
        return options

    def _check_room(self, needs: Needs) -> None:
        slots = self.ray.cluster_resources().get(self.config.slot_resource, 0)
        if needs.sandboxes and slots < needs.sandboxes:
            raise ConfigError(
                f"no Ray node offers the {self.config.slot_resource!r} resource, so no sandbox "
                "task could ever start",
                hint=f"start each node with `ray start ... --resources "
                f"'{{\"{self.config.slot_resource}\": 4}}'` (the sandboxes it may run at once)",
            )

    def _collect(self, ref: Any, item: Item) -> Done[Item, Result]:
        exceptions = self.ray.exceptions
        try:
            result, node = self.ray.get(ref)
        except exceptions.RayTaskError as exc:  # the work itself raised: same as in a thread
            cause = getattr(exc, "cause", None)
            if isinstance(cause, Exception):
                raise cause from None  # e.g. a PrchainError, shown by the CLI with its hint
            raise
        except exceptions.RayError as exc:  # worker or node lost more often than max_retries
            return Done(item, "?", None, lost=_first_line(exc))
        return Done(item, node, result)

    def _cancel(self, refs: list[Any]) -> None:
        """Ctrl-C or an error: stop what still runs and give each task time to remove its sandbox."""
        for ref in refs:
            with contextlib.suppress(Exception):  # already finished or lost: nothing to stop
                self.ray.cancel(ref)
        if refs:
            self.ray.wait(refs, num_returns=len(refs), timeout=CANCEL_GRACE_SECONDS)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:300]
