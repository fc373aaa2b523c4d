"""Blame reads a commit-graph of changed paths kept outside the clone: the same answers, the clone
untouched, the graph written again only when the branches move, and git as before where no graph
can be written."""

from __future__ import annotations

import hashlib
import logging
import os
import subprocess
from pathlib import Path

import pytest

from prchain.chains.config import ChainsConfig
from prchain.chains.evidence.lines import blamed_commits
from prchain.core.commit_graph import CommitGraphs
from prchain.store.models import ChainLink
from tests.chains.test_lineage import _history, _rows
from tests.support.history import History
from tests.support.links import mine_and_build

LINES = "".join(f"value_{i} = compute({i}, {i * 7})\n" for i in range(12))


def _clone(path: Path) -> History:
    """A history where lines are rewritten, a file renamed, and lines moved and copied between
    files: what blame's -M and -C follow."""
    repo = _history(path)
    repo.pr(6, "Values", {"src/values.py": LINES, "src/more.py": LINES[:200]})
    repo.pr(7, "Rename", {}, moves={"src/values.py": "src/numbers.py"})
    repo.pr(8, "Edit", {"src/numbers.py": LINES.replace("compute(3,", "compute(30,")})
    repo.pr(9, "Move half", {"src/numbers.py": LINES[:300], "src/rest.py": LINES[300:]})
    return repo


def _snapshot(path: Path) -> dict[str, str]:
    """Every file under `path` and a digest of its bytes."""
    return {
        str(f.relative_to(path)): hashlib.sha256(f.read_bytes()).hexdigest()
        for f in sorted(path.rglob("*"))
        if f.is_file()
    }


def _blames(clone: Path) -> list[tuple[list[str], str]]:
    """A blame of every file at every commit, whole and bounded (`rev ^since^@`), with and
    without copy detection."""
    commits = subprocess.run(
        ["git", "-C", str(clone), "rev-list", "--reverse", "HEAD"], capture_output=True, text=True
    ).stdout.split()
    jobs = []
    for at, rev in enumerate(commits):
        listed = subprocess.run(
            ["git", "-C", str(clone), "ls-tree", "-r", "--name-only", rev],
            capture_output=True,
            text=True,
        ).stdout.split()
        for path in listed:
            for revs in ([rev], [rev, f"^{commits[at // 2]}^@"]):
                jobs += [(["-M", "-C", *revs], path), (["-M", *revs], path)]
    return jobs


def _blame(clone: Path, args: list[str], path: str, env: dict[str, str] | None) -> bytes:
    done = subprocess.run(
        ["git", "-C", str(clone), "blame", "--porcelain", "-w", *args, "--", path],
        capture_output=True,
        env={**os.environ, **(env or {})},
    )
    return done.stdout + done.stderr


def test_blame_with_the_graph_answers_as_without_and_the_clone_is_untouched(
    tmp_path: Path,
) -> None:
    repo = _clone(tmp_path / "clone")
    clone = str(repo.path)
    before = _snapshot(repo.path)
    graphs = CommitGraphs(tmp_path / "cache")
    env = graphs.env(clone)
    assert env is not None and graphs.written == 1
    assert list((tmp_path / "cache").glob("*/objects/info/commit-graph"))
    jobs = _blames(repo.path)
    assert len(jobs) > 150
    for args, path in jobs:
        assert _blame(repo.path, args, path, env) == _blame(repo.path, args, path, None)
    # and as `blamed_commits` reads it
    head = subprocess.run(["git", "-C", clone, "rev-parse", "HEAD"], capture_output=True, text=True)
    for copies in (True, False):
        found = blamed_commits(
            clone, [head.stdout.strip()], "src/numbers.py", [(2, 4)], copies=copies
        )
        graphed = blamed_commits(
            clone, [head.stdout.strip()], "src/numbers.py", [(2, 4)], copies=copies, env=env
        )
        assert found == graphed and len(found or {}) == 4
    # git read the graph's changed paths (its trace counts the Bloom filters asked)
    trace = tmp_path / "trace.txt"
    _blame(repo.path, ["HEAD"], "src/rest.py", {**env, "GIT_TRACE2_PERF": str(trace)})
    assert "bloom/queries" in trace.read_text()
    assert _snapshot(repo.path) == before


def test_the_graph_is_written_again_only_when_the_branches_move(tmp_path: Path) -> None:
    repo = _clone(tmp_path / "clone")
    cache = tmp_path / "cache"
    first = CommitGraphs(cache)
    env = first.env(str(repo.path))
    again = CommitGraphs(cache)
    assert again.env(str(repo.path)) == env and again.written == 0
    repo.pr(10, "More", {"src/rest.py": LINES})
    grown = CommitGraphs(cache)
    assert grown.env(str(repo.path)) == env and grown.written == 1
    # a graph whose clone is gone is removed when another is written
    other = _clone(tmp_path / "other")
    CommitGraphs(cache).env(str(other.path))
    assert len(list(cache.iterdir())) == 2
    subprocess.run(["rm", "-rf", str(other.path)], check=True)
    repo.pr(11, "More again", {"src/rest.py": LINES[:100]})
    CommitGraphs(cache).env(str(repo.path))
    assert len(list(cache.iterdir())) == 1


def test_where_no_graph_can_be_written_git_runs_as_before(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A cache that cannot be written (here a file where its directory should be), or a git
    older than changed-path filters: no graph, counted and logged once, and the build decides as
    it does without graphs."""
    repo = _clone(tmp_path / "clone")
    (tmp_path / "cache").write_text("not a directory")
    graphs = CommitGraphs(tmp_path / "cache")
    with caplog.at_level(logging.WARNING, logger="prchain.core.commit_graph"):
        assert graphs.env(str(repo.path)) is None
        assert graphs.env(str(repo.path)) is None
    assert graphs.failed == 1 and len(caplog.records) == 1
    # git that refuses `commit-graph write` as git before 2.27 refuses `--changed-paths`
    shims = tmp_path / "bin"
    shims.mkdir()
    real = subprocess.run(["which", "git"], capture_output=True, text=True).stdout.strip()
    (shims / "git").write_text(
        '#!/bin/sh\nfor a in "$@"; do [ "$a" = commit-graph ] && '
        '{ echo "error: unknown option \\`changed-paths\'" >&2; exit 129; }; done\n'
        f'exec {real} "$@"\n'
    )
    (shims / "git").chmod(0o755)
    old = CommitGraphs(tmp_path / "cache-old")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PATH", f"{shims}:{os.environ['PATH']}")
        assert old.env(str(repo.path)) is None and old.failed == 1
    rows = []
    for graphs_on in (False, True):
        config = ChainsConfig(
            min_chain_code_lines=0,
            commit_graphs=graphs_on,
            commit_graph_dir=str(tmp_path / "cache"),  # the file: no graph can be written
        )
        engine = mine_and_build(
            repo.path, tmp_path / f"store{graphs_on}.db", "acme/lineage", config
        )
        rows.append(_rows(engine))
    assert rows[0] == rows[1]


def test_a_build_with_graphs_decides_as_one_without(tmp_path: Path) -> None:
    repo = _clone(tmp_path / "clone")
    before = _snapshot(repo.path)
    rows = []
    for graphs_on in (False, True):
        config = ChainsConfig(
            min_chain_code_lines=0,
            commit_graphs=graphs_on,
            commit_graph_dir=str(tmp_path / "cache"),
        )
        engine = mine_and_build(
            repo.path, tmp_path / f"store{graphs_on}.db", "acme/lineage", config
        )
        rows.append(_rows(engine))
    assert rows[0] == rows[1]
    via = [c.name for c in ChainLink.__table__.columns if c.name not in ("id", "build_id")]
    assert any(row[via.index("lineage_via")] == "blame" for row in rows[1])
    assert list((tmp_path / "cache").glob("*/objects/info/commit-graph"))
    assert _snapshot(repo.path) == before
