"""Work leases: `(kind, key)` → the one process doing that piece of work right now.

Any step whose work costs money or time claims a lease per unit before doing it, so two processes
(threads, commands, hosts) on one store never do the same unit twice: a rollout per chain
(kind "chain"), `queries build` per chain, `tests verify` per chain, P2T curation, `env setup`.

A claim is one statement only one writer can win: an INSERT that does nothing on conflict, else an
UPDATE whose WHERE accepts only our own row or a stale one (PostgreSQL re-checks the WHERE on the
row it locks; SQLite serialises writers). While the work runs a background thread refreshes the
heartbeat. A holder whose heartbeat is older than the timeout died; so did a holder that was a
process of this host that no longer exists (or is a zombie): the next claim takes either over. A
writer that must not write after losing its lease calls `Lease.check` inside its transaction.
"""

from __future__ import annotations

import os
import socket
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import timedelta
from pathlib import Path
from types import TracebackType
from typing import Literal, Self

from sqlalchemy import ColumnElement, Connection, Engine, and_, delete, select, update
from sqlalchemy.dialects import postgresql, sqlite

from prchain.core.errors import PrchainError
from prchain.store.models import WorkLease
from prchain.store.models.base import utcnow

# What is leased; a new step that needs leases adds its kind here.
LeaseKind = Literal["chain", "queries", "verify", "p2t", "env_setup"]

# Defaults for steps without their own settings (rollouts use agent.lease_*_seconds): a holder
# silent for two minutes is dead; heartbeats use the holder's clock, keep it above clock skew.
TIMEOUT_SECONDS = 120.0
HEARTBEAT_SECONDS = 10.0


class LeaseLost(PrchainError):
    hint = "another process took the work over after this one stopped refreshing its lease"


def new_owner_id() -> str:
    """host:pid:uuid.start — unique per holder, and says where a stuck lease comes from. `start` is
    the process's start time, so a pid the kernel has since given to another process is not taken
    for the holder (pids wrap within a minute or two on a busy host)."""
    pid = os.getpid()
    return f"{socket.gethostname()}:{pid}:{uuid.uuid4().hex[:12]}.{process_start(pid)}"


def _key(kind: LeaseKind, key: str) -> ColumnElement[bool]:
    return and_(WorkLease.kind == kind, WorkLease.key == key)


def try_claim(
    engine: Engine, kind: LeaseKind, key: str, owner: str, timeout_seconds: float
) -> bool:
    """Whether `owner` now holds the lease: new, already ours, or taken over because its heartbeat
    is stale or its holder was a process of this host that no longer exists."""
    now = utcnow()
    with engine.begin() as connection:
        if _insert_if_free(connection, kind, key, owner, now):
            return True
        stale = now - timedelta(seconds=timeout_seconds)
        takeover = (WorkLease.owner == owner) | (WorkLease.heartbeat_at < stale)
        holder = connection.scalar(select(WorkLease.owner).where(_key(kind, key)))
        if holder is not None and died_here(holder):
            takeover = takeover | (WorkLease.owner == holder)  # still conditional: one winner
        taken = connection.execute(
            update(WorkLease)
            .where(_key(kind, key), takeover)
            .values(owner=owner, heartbeat_at=now, acquired_at=now)
        )
        return taken.rowcount == 1


def _insert_if_free(
    connection: Connection, kind: LeaseKind, key: str, owner: str, now: object
) -> bool:
    insert = postgresql.insert if connection.dialect.name == "postgresql" else sqlite.insert
    row = {"kind": kind, "key": key, "owner": owner, "heartbeat_at": now, "acquired_at": now}
    result = connection.execute(
        insert(WorkLease).values(row).on_conflict_do_nothing(index_elements=["kind", "key"])
    )
    return result.rowcount == 1


def host_and_pid(owner: str) -> tuple[str, str]:
    """host:pid:uuid (see `new_owner_id`) → (host, pid); host names may hold colons."""
    host, _, pid = owner.rpartition(":")[0].rpartition(":")
    return host, pid


def died_here(owner: str) -> bool:
    """Whether `owner` names a process of this host that is gone: no such pid, a zombie, or a pid
    now held by a process that started at another time than the holder did."""
    host, pid = host_and_pid(owner)
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, and someone else's
        return False
    started = owner.rpartition(":")[2].partition(".")[2]  # '' in owners written before it was kept
    now = process_start(int(pid))
    return _zombie(int(pid)) or bool(started and now and started != now)


def process_start(pid: int) -> str:
    """When `pid` started (clock ticks since boot, /proc/<pid>/stat field 22); '' if unknown."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    fields = stat.rpartition(")")[2].split()  # after the command name, which may hold spaces
    return fields[19] if len(fields) > 19 else ""


def _zombie(pid: int) -> bool:
    """A killed process nobody has reaped yet still answers kill(0): a Ray worker whose node was
    removed, reparented to a PID 1 that does not reap, stays a zombie for good."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return any(
        line.split()[1:2] == ["Z"] for line in status.splitlines() if line.startswith("State:")
    )


def refresh(connection: Connection, kind: LeaseKind, key: str, owner: str) -> bool:
    """Renew the heartbeat inside the caller's transaction; False when the lease is no longer ours.

    On PostgreSQL the UPDATE keeps the row locked until the caller commits, so a takeover cannot
    slip between this check and the caller's write.
    """
    result = connection.execute(
        update(WorkLease)
        .where(_key(kind, key), WorkLease.owner == owner)
        .values(heartbeat_at=utcnow())
    )
    return result.rowcount == 1


def release(engine: Engine, kind: LeaseKind, key: str, owner: str) -> None:
    with engine.begin() as connection:
        connection.execute(delete(WorkLease).where(_key(kind, key), WorkLease.owner == owner))


def holder_of(engine: Engine, kind: LeaseKind, key: str) -> str:
    with engine.connect() as connection:
        owner = connection.scalar(select(WorkLease.owner).where(_key(kind, key)))
        return owner if owner is not None else "nobody"


def held_here(engine: Engine, kind: LeaseKind, key: str) -> bool:
    """Whether the lease is held by a process of this host."""
    return host_and_pid(holder_of(engine, kind, key))[0] == socket.gethostname()


def busy_keys(engine: Engine, kind: LeaseKind, timeout_seconds: float) -> set[str]:
    """Keys of `kind` whose lease is live (fresh, and not held by a dead process of this host)."""
    stale = utcnow() - timedelta(seconds=timeout_seconds)
    with engine.connect() as connection:
        rows = connection.execute(
            select(WorkLease.key, WorkLease.owner).where(
                WorkLease.kind == kind, WorkLease.heartbeat_at >= stale
            )
        )
        return {key for key, owner in rows if not died_here(owner)}


def claim_or_wait(
    engine: Engine,
    kind: LeaseKind,
    key: str,
    owner: str,
    *,
    timeout_seconds: float,
    wait_seconds: float,
) -> bool:
    """Claim the lease; a holder on this host gets up to `wait_seconds` to finish dying (its
    heartbeat stops with it, and a dead holder of this host is taken over at once). A holder on
    another host, or one of this host still alive after the wait, keeps it: False."""
    deadline = time.monotonic() + wait_seconds
    while not try_claim(engine, kind, key, owner, timeout_seconds):
        if time.monotonic() >= deadline or not held_here(engine, kind, key):
            return False
        time.sleep(0.5)
    return True


class Lease:
    """A held lease with its heartbeat thread; use as a context manager (releases on exit)."""

    def __init__(
        self, engine: Engine, kind: LeaseKind, key: str, owner: str, heartbeat_seconds: float
    ) -> None:
        self.engine, self.kind, self.key, self.owner = engine, kind, key, owner
        self.lost = threading.Event()
        self._stop = threading.Event()
        self._interval = heartbeat_seconds
        self._thread = threading.Thread(target=self._beat, name=f"lease-{kind}-{key}", daemon=True)

    def __enter__(self) -> Self:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join()
        release(self.engine, self.kind, self.key, self.owner)

    def check(self, connection: Connection) -> None:
        """Raise LeaseLost unless the lease is still ours (called inside each write transaction)."""
        if not refresh(connection, self.kind, self.key, self.owner):
            self.lost.set()
            raise LeaseLost(f"{self.kind} {self.key}: lease lost by {self.owner}")

    def _beat(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                with self.engine.begin() as connection:
                    if not refresh(connection, self.kind, self.key, self.owner):
                        self.lost.set()
                        return
            except Exception:  # a store hiccup: the next beat tries again, the timeout is generous
                continue


@contextmanager
def holding(
    engine: Engine,
    kind: LeaseKind,
    key: str,
    *,
    timeout_seconds: float = TIMEOUT_SECONDS,
    heartbeat_seconds: float = HEARTBEAT_SECONDS,
    wait_seconds: float = 0.0,
) -> Iterator[Lease | None]:
    """Hold the lease of one unit of work for the block; None when a live holder has it.

    with holding(engine, "queries", str(chain_id), timeout_seconds=120,
                 heartbeat_seconds=10) as lease:
        if lease is None:
            return "busy"
        ... do the work; before writing results, re-check what is already stored ...
    """
    owner = new_owner_id()
    if not claim_or_wait(
        engine, kind, key, owner, timeout_seconds=timeout_seconds, wait_seconds=wait_seconds
    ):
        yield None
        return
    with Lease(engine, kind, key, owner, heartbeat_seconds) as lease:
        yield lease
