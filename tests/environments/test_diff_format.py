"""(unit) Every diff the crossing check reads, and every diff the sandbox applies, is made with
prchain's diff format, whatever the agent's repository says (issue 77, the git-config item).

With `diff.noprefix` or `diff.mnemonicPrefix` in the agent's config, git wrote `diff --git
lib/setup.cfg lib/setup.cfg` (or `c/…`, `i/…`): the crossing check read `lib/setup.cfg`, nested
data that crosses, while `git apply` strips one component and writes the root's `setup.cfg`."""

from __future__ import annotations

import subprocess
import tempfile
from pathlib import Path

import pytest

from prchain.dev.repos import git
from prchain.environments import carry
from prchain.verdicts.sandbox import byte_sections, section_paths
from tests.support.eras_repo import commit_files

AGENT_CONFIG = {
    "diff.noprefix": "true", "diff.mnemonicPrefix": "true", "diff.relative": "true",
    "diff.srcPrefix": "x/", "diff.dstPrefix": "y/", "core.quotePath": "false",
}  # fmt: skip


@pytest.fixture
def agent_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commit_files(repo, {"README.md": "x\n", "lib/a.py": "a = 1\n"}, "Start", "2024-01-01T00:00:00Z")
    for key, value in AGENT_CONFIG.items():
        git(repo, "config", key, value)
    (repo / "lib" / "setup.cfg").write_text("[tool:pytest]\naddopts = -p lib.plugin\n")
    (repo / "lib" / "a.py").write_text("a = 2\n")
    (repo / "lib" / "café.py").write_text("b = 1\n")
    git(repo, "add", "-A")
    return repo


def _written(patch: bytes) -> set[str]:
    """The files `git apply` (as the clean room runs it: no repository) writes from `patch`."""
    with tempfile.TemporaryDirectory() as empty:
        listed = subprocess.run(
            ["git", "apply", "--numstat", "-z", "-"], cwd=empty, input=patch, capture_output=True
        )
    return {entry.split("\t")[-1] for entry in listed.stdout.decode().split("\0") if entry}


def _read(patch: bytes) -> set[str]:
    """The paths the crossing check reads from `patch`."""
    return {p for s in byte_sections(patch) for p in section_paths(s.decode())}


def test_the_bookkeeping_diff_ignores_the_agents_diff_format(agent_repo: Path) -> None:
    script = f"{carry._AGENT_GIT}\ngit diff --cached --binary {carry.DIFF_OPTIONS} HEAD"
    patch = subprocess.run(["bash", "-c", script], cwd=agent_repo, capture_output=True).stdout
    assert patch.startswith(b"diff --git a/")
    assert _read(patch) == _written(patch) == {"lib/a.py", "lib/setup.cfg", "lib/café.py"}


def test_the_agents_own_format_would_part_the_two(agent_repo: Path) -> None:
    """Why the pin is there: git with the agent's config and no pin."""
    patch = subprocess.run(
        ["git", "diff", "--cached", "--binary", "HEAD"], cwd=agent_repo, capture_output=True
    ).stdout
    assert "setup.cfg" in _written(patch) and "lib/setup.cfg" in _read(patch)
