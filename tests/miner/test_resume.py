"""SIGKILL `prchain mine` at several points, rerun it, and get exactly the uninterrupted database."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from prchain.dev.repos import git, make_chain_repo
from prchain.store.opener import make_engine
from tests.support.miner_dump import canonical_dump

PRCHAIN = str(Path(sys.executable).parent / "prchain")
EXTRA_PRS = 36


def _busy_history(path: Path) -> Path:
    """The chain repo plus dozens of squash PRs that reference each other, a revert and a merge."""
    repo = make_chain_repo(path).path
    for n in range(5, 5 + EXTRA_PRS):
        (repo / "calc" / f"m{n}.py").write_text(f"VALUE = {n}\n" * (n % 7 + 1))
        body = (
            f"Follow-up to #{n - 1}. Fixes #{n + 100}."
            if n % 3
            else f"See #{n - 2} and acme/other#{n}."
        )
        git(repo, "add", "-A")
        git(
            repo,
            "commit",
            "-q",
            "-m",
            f"Add module {n} (#{n})\n\n{body}",
            date=f"2024-02-{n % 28 + 1:02d}T10:00:00",
        )
    sha = git(repo, "rev-parse", "HEAD~3")
    git(repo, "revert", "--no-edit", "HEAD~3")
    git(
        repo,
        "commit",
        "-q",
        "--amend",
        "-m",
        f'Revert "Add module 37 (#37)" (#90)\n\nThis reverts commit {sha}.',
    )
    return repo


def _mine(repo: Path, db: str) -> subprocess.Popen[bytes]:
    cmd = [PRCHAIN, "mine", "--source", "git", str(repo), "--db", db, "--set", "miner.batch_size=2"]
    return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=repo.parent)


def _prs_written(db_file: Path) -> int:
    try:
        with sqlite3.connect(f"file:{db_file}?mode=ro", uri=True, timeout=0.05) as conn:
            return int(conn.execute("SELECT count(*) FROM pull_requests").fetchone()[0])
    except sqlite3.Error:
        return 0


def _kill_when(proc: subprocess.Popen[bytes], db_file: Path, prs_at_least: int) -> None:
    """SIGKILL as soon as that many PRs are committed (or when the run ends by itself first)."""
    while proc.poll() is None and _prs_written(db_file) < prs_at_least:
        time.sleep(0.002)
    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGKILL)
    proc.wait()


def _complete(repo: Path, db: str) -> None:
    proc = _mine(repo, db)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err.decode()


@pytest.fixture(scope="module")
def history(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, dict[str, list[tuple[object, ...]]]]:
    root = tmp_path_factory.mktemp("resume")
    repo = _busy_history(root / "calc")
    db = root / "reference.db"
    _complete(repo, f"sqlite:///{db}")
    return repo, canonical_dump(make_engine(f"sqlite:///{db}"))


@pytest.mark.slow
@pytest.mark.parametrize(
    "kill_points",
    [(0,), (1,), (9,), (24,), (41,), (4, 17), (2, 30, 40)],
    ids=lambda points: "kill-at-" + "-".join(map(str, points)),
)
def test_killed_and_rerun_equals_uninterrupted(
    history: tuple[Path, dict[str, list[tuple[object, ...]]]],
    tmp_path: Path,
    kill_points: tuple[int, ...],
) -> None:
    repo, expected = history
    assert (
        len(expected["pull_requests"]) == 5 + EXTRA_PRS
    )  # 4 of the chain repo, the extra ones, the revert
    db_file = tmp_path / "killed.db"
    for point in kill_points:
        _kill_when(_mine(repo, f"sqlite:///{db_file}"), db_file, point)
    _complete(repo, f"sqlite:///{db_file}")
    assert canonical_dump(make_engine(f"sqlite:///{db_file}")) == expected


def test_reference_run_has_the_links(
    history: tuple[Path, dict[str, list[tuple[object, ...]]]],
) -> None:
    _, expected = history
    refs = [dict(row) for row in expected["pr_references"]]
    kinds = {(r["type"], r["target_kind"]) for r in refs}
    assert {
        ("follow_up", "pr"),
        ("fixes", "unknown"),
        ("mention", "external"),
        ("reverts", "pr"),
    } <= kinds
