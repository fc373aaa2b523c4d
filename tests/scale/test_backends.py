"""The backend interface without a cluster: the local pool, names, the store check, CLI flags."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from prchain.app.config import load_config
from prchain.app.scale import check_store, portable, task_env
from prchain.cli import main
from prchain.core.errors import StoreNotShared, UnknownName
from prchain.scale.backends import BACKENDS, open_backend
from prchain.scale.config import ScaleConfig
from prchain.scale.local import LocalBackend
from prchain.scale.protocol import NO_NEEDS, Done, Needs


class Squares:
    """Work that records which threads ran it and whether it was closed."""

    def __init__(self) -> None:
        self.threads: set[str] = set()
        self.closed = 0

    def __call__(self, item: int) -> int:
        self.threads.add(threading.current_thread().name)
        if item < 0:
            raise ValueError(f"negative item {item}")
        return item * item

    def close(self) -> None:
        self.closed += 1


def test_local_backend_runs_every_item_on_threads_and_reports_the_node() -> None:
    work, seen = Squares(), []
    done = LocalBackend(workers=3).map(work, list(range(8)), on_done=seen.append)
    assert sorted(d.result for d in done if d.result is not None) == [i * i for i in range(8)]
    assert done == seen and {d.node for d in done} == {LocalBackend().node}
    assert work.closed == 1 and all(name.startswith("prchain") for name in work.threads)


def test_local_backend_raises_the_work_error_and_still_closes() -> None:
    work = Squares()
    with pytest.raises(ValueError, match="negative item -1"):
        LocalBackend(workers=2).map(work, [1, -1, 2])
    assert work.closed == 1


def test_backends_are_chosen_by_name() -> None:
    assert {"local", "ray"} <= set(BACKENDS.names())
    assert open_backend(ScaleConfig(), workers=2).name == "local"
    with pytest.raises(UnknownName, match="valid names: local, ray"):
        BACKENDS.get("kubernetes")


class ElsewhereBackend:
    """A backend whose workers are on other machines (what a real cluster reports)."""

    name = "ray"

    def map(
        self, work: Any, items: Sequence[Any], *, needs: Needs = NO_NEEDS, on_done: Any = None
    ) -> list[Done[Any, Any]]:
        return []

    def single_machine(self) -> bool:
        return False


def test_a_sqlite_store_is_refused_for_workers_on_other_machines(tmp_path: Path) -> None:
    told: list[str] = []
    with pytest.raises(StoreNotShared, match="cannot write to a SQLite file") as err:
        check_store(f"sqlite:///{tmp_path}/s.db", ElsewhereBackend(), told.append)  # type: ignore[arg-type]
    assert "postgresql" in err.value.hint
    check_store("postgresql+psycopg://u:p@db/prchain", ElsewhereBackend(), told.append)  # type: ignore[arg-type]
    local_cluster = ElsewhereBackend()
    local_cluster.single_machine = lambda: True  # type: ignore[method-assign]
    check_store(f"sqlite:///{tmp_path}/s.db", local_cluster, told.append)  # type: ignore[arg-type]
    assert told == [
        "store is a SQLite file: allowed because every ray node runs on this machine "
        "(a cluster across machines needs PostgreSQL)"
    ]


def test_tasks_get_absolute_sqlite_paths_and_the_llm_environment(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("EXTRA_VAR", "x")
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    config = load_config(
        None, ["store.url=sqlite:///data/p.db", "scale.forward_env=[EXTRA_VAR, MISSING_VAR]"]
    )
    assert portable(config).store.url == f"sqlite:///{tmp_path}/data/p.db"
    env = task_env(config)
    assert env["OPENAI_BASE_URL"] == "http://127.0.0.1:9/v1" and env["EXTRA_VAR"] == "x"
    assert "GITHUB_TOKEN" not in env and "MISSING_VAR" not in env


@pytest.mark.parametrize(
    "command", [["rollout"], ["queries", "build"], ["mine", "--repos-file", "repos.txt"]]
)
def test_backend_flags_reach_the_config(
    command: list[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """--backend/--ray-address land in scale.*; a bad name is refused by click before any work."""
    (tmp_path / "repos.txt").write_text("acme/calc\n")
    monkeypatch.chdir(tmp_path)
    seen: dict[str, Any] = {}

    def capture(config: Any, *args: Any, **kwargs: Any) -> Any:
        seen["scale"] = config.scale
        raise SystemExit(0)

    for module, name in (
        ("prchain.app.rollout", "rollout_from_config"),
        ("prchain.app.pipeline", "queries_from_config"),
        ("prchain.app.pipeline", "mine_from_config"),
    ):
        monkeypatch.setattr(f"{module}.{name}", capture)
    runner = CliRunner()
    result = runner.invoke(main, [*command, "--backend", "ray", "--ray-address", "auto"])
    assert result.exit_code == 0, result.output
    assert seen["scale"].backend == "ray" and seen["scale"].ray_address == "auto"
    bad = runner.invoke(main, [*command, "--backend", "slurm"])
    assert bad.exit_code == 2 and "'slurm' is not one of 'local', 'ray'" in bad.output


def test_a_ray_worker_process_keeps_the_first_copy_of_a_runs_work_warm() -> None:
    from prchain.scale import ray_backend

    ray_backend._close_warm()
    first, copy, later_run, third_run = Squares(), Squares(), Squares(), Squares()
    assert ray_backend._warm_work("run-a", first) is first
    assert ray_backend._warm_work("run-a", copy) is first  # the next task's copy is not used
    assert ray_backend._warm_work("run-b", later_run) is later_run and first.closed == 0
    ray_backend._warm_work("run-c", third_run)  # a third run pushes the oldest one out
    assert (first.closed, later_run.closed, third_run.closed) == (1, 0, 0)
    ray_backend._close_warm()
    assert (later_run.closed, third_run.closed, copy.closed) == (1, 1, 0)
