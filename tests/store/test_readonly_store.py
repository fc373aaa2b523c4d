"""Finding 6 of issue 23: a read-only store could not even be read (`stats`, `export`, `report`
failed with "attempt to write a readonly database"). Read-only commands now open an existing
SQLite store read-only; nothing in it or beside it changes."""

from __future__ import annotations

import gc
import hashlib
import os
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from prchain.cli import main
from tests.report.test_report_store import _mined_with_chains


def _set_immutable(paths: list[Path], on: bool) -> bool:
    flag = "+i" if on else "-i"
    done = subprocess.run(["chattr", flag, *map(str, paths)], capture_output=True, check=False)
    return done.returncode == 0


@pytest.fixture
def readonly_store(tmp_path: Path) -> Iterator[Path]:
    """A store whose file and folder nobody may change: immutable for root, modes for others."""
    folder = tmp_path / "store"
    folder.mkdir()
    db = folder / "prchain.db"
    _mined_with_chains(tmp_path, f"sqlite:///{db}")
    gc.collect()  # engines the builders left open close their pooled connections
    sqlite3.connect(db).close()  # the last connection out checkpoints and removes the WAL files
    assert sorted(p.name for p in folder.iterdir()) == ["prchain.db"]  # WAL files closed away
    if os.geteuid() == 0:
        if not _set_immutable([db, folder], True):
            pytest.skip("chattr +i is not permitted here (no CAP_LINUX_IMMUTABLE)")
        yield db
        _set_immutable([db, folder], False)
    else:
        db.chmod(0o444)
        folder.chmod(0o555)
        yield db
        folder.chmod(0o755)
        db.chmod(0o644)


def test_read_only_commands_read_a_read_only_store(readonly_store: Path, tmp_path: Path) -> None:
    url = f"sqlite:///{readonly_store}"
    before = hashlib.sha256(readonly_store.read_bytes()).hexdigest()
    out = tmp_path / "out"
    for command in (
        ["stats", "--json"],
        ["chains", "list"],
        ["chains", "show", "1"],
        ["tasks", "export", str(out / "tasks.jsonl")],
        ["export", str(out / "trajectories.jsonl")],
        ["report", str(out / "site")],
        ["db", "current"],
    ):
        result = CliRunner().invoke(main, [*command, "--db", url])
        assert result.exit_code == 0, (command, result.output)
        assert "readonly" not in result.output
    assert '"chains": 1' in CliRunner().invoke(main, ["stats", "--json", "--db", url]).output
    assert (out / "site" / "index.html").is_file() and (out / "tasks.jsonl").is_file()
    assert hashlib.sha256(readonly_store.read_bytes()).hexdigest() == before
    assert [p.name for p in readonly_store.parent.iterdir()] == ["prchain.db"]


def test_a_write_command_on_a_read_only_store_is_one_line(readonly_store: Path) -> None:
    result = CliRunner().invoke(main, ["chains", "build", "--db", f"sqlite:///{readonly_store}"])
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert result.exit_code != 0 and len(errors) == 1, result.output
    assert "Traceback" not in result.output
