"""Claiming a chain in the store, so that concurrent rollouts (threads, processes, hosts) on one
store never work the same chain twice.

A claim is one statement only one writer can win: an INSERT that does nothing on conflict, else an
UPDATE whose WHERE accepts only our own row or a stale one (PostgreSQL re-checks the WHERE on the
row it locks; SQLite serialises writers). While the chain runs a background thread refreshes the
heartbeat; every step write checks the owner in its own transaction (see `Recorder`), so a runner
whose lease was taken over stops instead of interleaving its steps with the new owner's.
"""

from __future__ import annotations

import os
import socket
import threading
import uuid
from datetime import timedelta
from pathlib import Path
from types import TracebackType

from sqlalchemy import Connection, Engine, delete, select, update
from sqlalchemy.dialects import postgresql, sqlite

from prchain.core.errors import PrchainError
from sql.db import session_scope
from sql.models import ChainLease
from sql.models.base import utcnow


class LeaseLost(PrchainError):
    hint = "another runner took the chain over after this one stopped refreshing its lease"


def new_owner_id() -> str:
    """host:pid:uuid — unique per runner, and says where a stuck lease comes from."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"


def try_claim(engine: Engine, chain_id: int, owner: str, timeout_seconds: float) -> bool:
    """Whether `owner` now holds the chain's lease: new, already ours, or taken over because its
    heartbeat is stale or its holder was a process of this host that no longer exists (a killed
    run is resumed at once, not after the timeout)."""
    now = utcnow()
    with engine.begin() as connection:
        if _insert_if_free(connection, chain_id, owner, now):
            return True
        stale = now - timedelta(seconds=timeout_seconds)
        takeover = (ChainLease.owner == owner) | (ChainLease.heartbeat_at < stale)
        holder = connection.scalar(select(ChainLease.owner).where(ChainLease.chain_id == chain_id))
        if holder is not None and _died_here(holder):
            takeover = takeover | (ChainLease.owner == holder)  # still conditional: one winner
        taken = connection.execute(
            update(ChainLease)
            .where(ChainLease.chain_id == chain_id, takeover)
            .values(owner=owner, heartbeat_at=now, acquired_at=now)
        )
        return taken.rowcount == 1


def _host_and_pid(owner: str) -> tuple[str, str]:
    """host:pid:uuid (see `new_owner_id`) → (host, pid); host names may hold colons."""
    host, _, pid = owner.rpartition(":")[0].rpartition(":")
    return host, pid


def _died_here(owner: str) -> bool:
    """Whether `owner` names a process of this host that is gone (a reused pid counts as alive)."""
    host, pid = _host_and_pid(owner)
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # alive, and someone else's
        return False
    return _zombie(int(pid))


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


def _insert_if_free(connection: Connection, chain_id: int, owner: str, now: object) -> bool:
    insert = postgresql.insert if connection.dialect.name == "postgresql" else sqlite.insert
    row = {"chain_id": chain_id, "owner": owner, "heartbeat_at": now, "acquired_at": now}
    result = connection.execute(
        insert(ChainLease).values(row).on_conflict_do_nothing(index_elements=["chain_id"])
    )
    return result.rowcount == 1


def refresh(connection: Connection, chain_id: int, owner: str) -> bool:
    """Renew the heartbeat inside the caller's transaction; False when the lease is no longer ours.

    On PostgreSQL the UPDATE keeps the row locked until the caller commits, so a takeover cannot
    slip between this check and the caller's write.
    """
    result = connection.execute(
        update(ChainLease)
        .where(ChainLease.chain_id == chain_id, ChainLease.owner == owner)
        .values(heartbeat_at=utcnow())
    )
    return result.rowcount == 1


def release(engine: Engine, chain_id: int, owner: str) -> None:
    with session_scope(engine) as session:
        session.execute(
            delete(ChainLease).where(ChainLease.chain_id == chain_id, ChainLease.owner == owner)
        )


def holder_of(engine: Engine, chain_id: int) -> str:
    with session_scope(engine) as session:
        lease = session.get(ChainLease, chain_id)
        return lease.owner if lease is not None else "nobody"


def held_here(engine: Engine, chain_id: int) -> bool:
    """Whether the chain's lease is held by a process of this host."""
    return _host_and_pid(holder_of(engine, chain_id))[0] == socket.gethostname()


def busy_chains(engine: Engine, timeout_seconds: float) -> set[int]:
    """Chains whose lease is live (fresh, and not held by a dead process of this host)."""
    stale = utcnow() - timedelta(seconds=timeout_seconds)
    with session_scope(engine) as session:
        rows = session.execute(
            select(ChainLease.chain_id, ChainLease.owner).where(ChainLease.heartbeat_at >= stale)
        )
        return {chain_id for chain_id, owner in rows if not _died_here(owner)}


class Lease:
    """A held chain lease with its heartbeat thread; use as a context manager (releases on exit)."""

    def __init__(self, engine: Engine, chain_id: int, owner: str, heartbeat_seconds: float) -> None:
        self.engine, self.chain_id, self.owner = engine, chain_id, owner
        self.lost = threading.Event()
        self._stop = threading.Event()
        self._interval = heartbeat_seconds
        self._thread = threading.Thread(target=self._beat, name=f"lease-{chain_id}", daemon=True)

    def __enter__(self) -> Lease:
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
        release(self.engine, self.chain_id, self.owner)

    def check(self, connection: Connection) -> None:
        """Raise LeaseLost unless the lease is still ours (called inside each write transaction)."""
        if not refresh(connection, self.chain_id, self.owner):
            self.lost.set()
            raise LeaseLost(f"chain {self.chain_id}: lease lost by {self.owner}")

    def _beat(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                with self.engine.begin() as connection:
                    if not refresh(connection, self.chain_id, self.owner):
                        self.lost.set()
                        return
            except Exception:  # a store hiccup: the next beat tries again, the timeout is generous
                continue
