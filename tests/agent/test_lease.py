"""Chain leases on SQLite and PostgreSQL: one winner per chain, stale leases taken over, and a
runner that lost its lease cannot write another step (issue 16, finding 2)."""

from __future__ import annotations

import socket
import subprocess
import threading
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import Engine, select, update
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from prchain.agent.lease import (
    Lease,
    LeaseLost,
    busy_chains,
    holder_of,
    new_owner_id,
    release,
    try_claim,
)
from prchain.agent.persist import Recorder, new_rollout
from prchain.store.models import LLMCall, Rollout, Step, WorkLease
from prchain.store.models.base import utcnow
from tests.agent.conftest import seed_chain

TIMEOUT = 60.0


@pytest.fixture
def chain_id(engine: Engine, tmp_path: Path) -> int:
    return seed_chain(engine.url.render_as_string(hide_password=False), tmp_path).chain_id


def _age(engine: Engine, chain_id: int, seconds: float) -> None:
    with Session(engine) as session, session.begin():
        session.execute(
            update(WorkLease)
            .where(WorkLease.kind == "chain", WorkLease.key == str(chain_id))
            .values(heartbeat_at=utcnow() - timedelta(seconds=seconds))
        )


def test_many_claimers_at_once_one_winner(engine: Engine, chain_id: int) -> None:
    owners = [new_owner_id() for _ in range(8)]
    won: list[str] = []
    start = threading.Barrier(len(owners))

    def claim(owner: str) -> None:
        start.wait()
        if try_claim(engine, chain_id, owner, TIMEOUT):
            won.append(owner)

    threads = [threading.Thread(target=claim, args=(owner,)) for owner in owners]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(won) == 1 and holder_of(engine, chain_id) == won[0]
    assert busy_chains(engine, TIMEOUT) == {chain_id}
    # A live lease is refused to everyone else, however often they ask; the holder may re-claim.
    assert not any(try_claim(engine, chain_id, o, TIMEOUT) for o in owners if o != won[0])
    assert try_claim(engine, chain_id, won[0], TIMEOUT)


def test_a_stale_lease_is_taken_over_once(engine: Engine, chain_id: int) -> None:
    dead, first, second = new_owner_id(), new_owner_id(), new_owner_id()
    assert try_claim(engine, chain_id, dead, TIMEOUT)
    _age(engine, chain_id, TIMEOUT + 5)
    assert busy_chains(engine, TIMEOUT) == set()
    assert try_claim(engine, chain_id, first, TIMEOUT)
    assert not try_claim(engine, chain_id, second, TIMEOUT)  # fresh again after the takeover
    release(engine, chain_id, dead)  # a late release by the dead owner frees nothing
    assert holder_of(engine, chain_id) == first
    release(engine, chain_id, first)
    assert holder_of(engine, chain_id) == "nobody"


def test_a_runner_whose_lease_was_taken_writes_nothing_more(engine: Engine, chain_id: int) -> None:
    owner = new_owner_id()
    assert try_claim(engine, chain_id, owner, TIMEOUT)
    rollout_id = new_rollout(engine, chain_id, conflict_policy="strict")
    with Lease(engine, chain_id, owner, heartbeat_seconds=30) as lease:
        recorder = Recorder(engine, rollout_id, lease=lease)
        recorder.step(1, "system", {"role": "system", "content": "go"})
        _age(engine, chain_id, TIMEOUT + 5)  # the runner looked dead (e.g. suspended) ...
        thief = new_owner_id()
        assert try_claim(engine, chain_id, thief, TIMEOUT)  # ... and another took the chain over
        with pytest.raises(LeaseLost):
            recorder.step(1, "query", {"role": "user", "content": "late"})
        assert lease.lost.is_set()
    assert holder_of(engine, chain_id) == thief  # leaving the block does not free the thief's lease
    with Session(engine) as session:
        assert [s.idx for s in session.scalars(select(Step))] == [0]


def test_the_heartbeat_keeps_a_lease_fresh(engine: Engine, chain_id: int) -> None:
    owner = new_owner_id()
    assert try_claim(engine, chain_id, owner, TIMEOUT)
    _age(engine, chain_id, TIMEOUT - 1)
    with Lease(engine, chain_id, owner, heartbeat_seconds=0.05) as lease:
        while True:  # wait for a beat (no timing assertion: the loop ends when it happened)
            with Session(engine) as session:
                beat = session.get(WorkLease, ("chain", str(chain_id)))
                assert beat is not None
                if beat.heartbeat_at > utcnow() - timedelta(seconds=TIMEOUT / 2):
                    break
            lease.lost.wait(0.05)
        assert not lease.lost.is_set()
    assert holder_of(engine, chain_id) == "nobody"  # released on exit


def test_two_writers_cannot_share_a_step_position(engine: Engine, chain_id: int) -> None:
    rollout_id = new_rollout(engine, chain_id, conflict_policy="strict")
    Recorder(engine, rollout_id).step(1, "system", {"role": "system", "content": "a"})
    with pytest.raises(IntegrityError):
        Recorder(engine, rollout_id).step(1, "system", {"role": "system", "content": "b"})


def test_a_lease_of_a_killed_local_process_is_taken_over_at_once(
    engine: Engine, chain_id: int
) -> None:
    dead = f"{socket.gethostname()}:{_gone_pid()}:feedc0ffee00"  # a pid that existed, now gone
    assert try_claim(engine, chain_id, dead, TIMEOUT)  # fresh heartbeat, but its process is gone
    assert busy_chains(engine, TIMEOUT) == set()
    assert try_claim(engine, chain_id, new_owner_id(), TIMEOUT)
    elsewhere = f"other-host:{_gone_pid()}:feedc0ffee01"  # another host: only the timeout counts
    release(engine, chain_id, holder_of(engine, chain_id))
    assert try_claim(engine, chain_id, elsewhere, TIMEOUT)
    assert not try_claim(engine, chain_id, new_owner_id(), TIMEOUT)


def _gone_pid() -> int:
    child = subprocess.Popen(["true"])
    child.wait()
    return child.pid


def test_a_rollouts_cost_does_not_depend_on_the_order_of_its_calls(
    engine: Engine, chain_id: int
) -> None:
    """A chain resumed on another worker stores its LLM calls in another order; summed one by one,
    0.1 + 0.2 + 0.3 and 0.3 + 0.2 + 0.1 are two different floats."""
    totals = []
    for costs in ((0.1, 0.2, 0.3), (0.3, 0.2, 0.1)):
        rollout_id = new_rollout(engine, chain_id, conflict_policy="strict")
        with Session(engine) as session, session.begin():
            session.add_all(
                LLMCall(
                    role="agent", model="m", cache_key=f"k{i}", cost_usd=c, rollout_id=rollout_id
                )
                for i, c in enumerate(costs)
            )
        Recorder(engine, rollout_id).finish("kept", None)
        with Session(engine) as session:
            totals.append(session.get(Rollout, rollout_id).cost_usd)
    assert totals == [0.6, 0.6]
