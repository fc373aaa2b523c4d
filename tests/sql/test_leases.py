"""Generic work leases: kinds and keys are independent, `holding` yields None to a second holder
while the first lives and the lease is free after, and the 0008 migration keeps chain holders."""

from __future__ import annotations

import socket
import subprocess
import threading

from sqlalchemy import Engine, text

from prchain.store import leases, migrate
from prchain.store.opener import make_engine
from tests.sql.test_migrations import _load_shape

TIMEOUT = 60.0


def test_kinds_and_keys_are_separate_leases(engine: Engine) -> None:
    a, b = leases.new_owner_id(), leases.new_owner_id()
    assert leases.try_claim(engine, "queries", "7", a, TIMEOUT)
    assert not leases.try_claim(engine, "queries", "7", b, TIMEOUT)
    assert leases.try_claim(engine, "verify", "7", b, TIMEOUT)  # same key, another kind
    assert leases.try_claim(engine, "queries", "8", b, TIMEOUT)  # same kind, another key
    assert leases.busy_keys(engine, "queries", TIMEOUT) == {"7", "8"}
    assert leases.holder_of(engine, "queries", "7") == a and leases.held_here(
        engine, "queries", "7"
    )


def test_holding_one_unit_at_a_time(engine: Engine) -> None:
    inside = threading.Event()
    leave = threading.Event()
    seen: list[object] = []

    def first() -> None:
        with leases.holding(
            engine, "p2t", "3:1", timeout_seconds=TIMEOUT, heartbeat_seconds=30
        ) as lease:
            seen.append(lease)
            inside.set()
            leave.wait(30)

    thread = threading.Thread(target=first)
    thread.start()
    assert inside.wait(30)
    with leases.holding(
        engine, "p2t", "3:1", timeout_seconds=TIMEOUT, heartbeat_seconds=30
    ) as second:
        assert second is None  # the first holder lives: the unit is someone else's
    leave.set()
    thread.join()
    assert isinstance(seen[0], leases.Lease)
    assert leases.holder_of(engine, "p2t", "3:1") == "nobody"  # released on exit
    with leases.holding(
        engine, "p2t", "3:1", timeout_seconds=TIMEOUT, heartbeat_seconds=30
    ) as third:
        assert third is not None


def test_upgrading_keeps_the_holder_of_a_chain_being_rolled_out(db_url: str) -> None:
    engine = _load_shape(db_url, "cef42d3")
    with engine.begin() as connection:
        connection.execute(
            text(
                "INSERT INTO chains (id, repo_id, strategy, signature, length, score, edges, "
                "created_at) SELECT 5, id, 'linear', 's', 2, 1.0, '[]', created_at FROM repos"
            )
        )
        connection.execute(
            text(
                "INSERT INTO chain_leases (chain_id, owner, heartbeat_at, acquired_at) VALUES "
                "(5, 'host:1:abc', '2026-11-01 10:00:00', '2026-11-01 10:00:00')"
            )
        )
    migrate.upgrade(engine, "s")
    checked = make_engine(db_url)
    assert leases.holder_of(checked, "chain", "5") == "host:1:abc"
    checked.dispose()
    engine.dispose()


def test_a_holder_whose_pid_now_names_another_process_is_taken_over(engine: Engine) -> None:
    """Pids wrap within minutes on a busy host: a killed holder's pid may belong to a new process
    by the time its work is resumed. The start time in the owner tells them apart."""
    other = subprocess.Popen(["sleep", "60"])
    try:
        host, started = socket.gethostname(), leases.process_start(other.pid)
        assert started
        alive = f"{host}:{other.pid}:feedc0ffee03.{started}"  # the process that holds it
        assert leases.try_claim(engine, "p2t", "9", alive, TIMEOUT)
        assert not leases.try_claim(engine, "p2t", "9", leases.new_owner_id(), TIMEOUT)
        reused = f"{host}:{other.pid}:feedc0ffee04.{int(started) - 1}"  # its pid, an earlier start
        leases.release(engine, "p2t", "9", alive)
        assert leases.try_claim(engine, "p2t", "9", reused, TIMEOUT)
        assert leases.busy_keys(engine, "p2t", TIMEOUT) == set()
        assert leases.try_claim(engine, "p2t", "9", leases.new_owner_id(), TIMEOUT)
    finally:
        other.kill()
        other.wait()
    assert not leases.died_here(leases.new_owner_id())  # this process, alive
