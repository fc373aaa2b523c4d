"""The chain lease: one runner per chain, the "chain" kind of the store's work leases.

The claim, the heartbeat, the takeover of dead holders (stale heartbeat, or a process of this host
that is gone) and `Lease.check` inside each write live in `prchain.store.leases`; this module keeps the chain
runner's vocabulary (chain ids) on top of it. Every write of a `Recorder` calls `Lease.check`, so a
runner whose lease was taken over stops instead of interleaving its steps with the new owner's.
"""

from __future__ import annotations

from sqlalchemy import Connection, Engine

from prchain.store import leases
from prchain.store.leases import LeaseLost, new_owner_id

__all__ = [
    "Lease",
    "LeaseLost",
    "busy_chains",
    "held_here",
    "holder_of",
    "new_owner_id",
    "refresh",
    "release",
    "try_claim",
]

KIND: leases.LeaseKind = "chain"


def try_claim(engine: Engine, chain_id: int, owner: str, timeout_seconds: float) -> bool:
    """Whether `owner` now holds the chain's lease (new, ours, or taken over from a dead holder)."""
    return leases.try_claim(engine, KIND, str(chain_id), owner, timeout_seconds)


def refresh(connection: Connection, chain_id: int, owner: str) -> bool:
    return leases.refresh(connection, KIND, str(chain_id), owner)


def release(engine: Engine, chain_id: int, owner: str) -> None:
    leases.release(engine, KIND, str(chain_id), owner)


def holder_of(engine: Engine, chain_id: int) -> str:
    return leases.holder_of(engine, KIND, str(chain_id))


def held_here(engine: Engine, chain_id: int) -> bool:
    """Whether the chain's lease is held by a process of this host."""
    return leases.held_here(engine, KIND, str(chain_id))


def busy_chains(engine: Engine, timeout_seconds: float) -> set[int]:
    """Chains whose lease is live (fresh, and not held by a dead process of this host)."""
    return {int(key) for key in leases.busy_keys(engine, KIND, timeout_seconds)}


class Lease(leases.Lease):
    """A held chain lease with its heartbeat thread; use as a context manager (releases on exit)."""

    def __init__(self, engine: Engine, chain_id: int, owner: str, heartbeat_seconds: float) -> None:
        super().__init__(engine, KIND, str(chain_id), owner, heartbeat_seconds)
        self.chain_id = chain_id
