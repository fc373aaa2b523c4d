"""B_t's tree for an era build: a clone missing objects (a partial mirror: ultrajson's vendored
test data) fails that era in one line, instead of stopping `env setup` with a traceback."""

from __future__ import annotations

from pathlib import Path

import pytest

from prchain.core.errors import GitError, PrchainError
from prchain.dev.repos import git
from prchain.environments.eras.build import _export_tree


def test_a_tree_with_a_missing_blob_is_a_git_error(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "kept.txt").write_text("kept\n")
    (repo / "lost.txt").write_text("this blob goes missing\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "start")
    sha = git(repo, "rev-parse", "HEAD")
    _export_tree(repo, sha, tmp_path / "whole")
    assert (tmp_path / "whole/lost.txt").read_text() == "this blob goes missing\n"
    blob = git(repo, "rev-parse", "HEAD:lost.txt")
    (repo / ".git/objects" / blob[:2] / blob[2:]).unlink()
    with pytest.raises(GitError, match=f"cannot export {sha[:12]}") as failed:
        _export_tree(repo, sha, tmp_path / "partial")
    assert isinstance(failed.value, PrchainError) and "\n" not in str(failed.value)
