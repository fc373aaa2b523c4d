"""A sandbox that is a real checkout on the host: what verify_stage asks of one, run with bash."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from prchain.dev.repos import git
from prchain.environments.protocol import ExecResult
from prchain.verdicts.verify import StageJob
from tests.support.eras_repo import commit_files

PYTEST = f"{sys.executable} -m pytest -p no:cacheprovider -q {{files}}"  # the host's pytest


class HostCheckout:
    """What verify_stage asks of a sandbox, on a real checkout on the host: bash there."""

    def __init__(self, where: Path) -> None:
        self.where = where

    def enter_stage(self, idx: int) -> None:
        git(self.where, "update-ref", "refs/prchain/stage-base", "HEAD")

    def execute(self, command: str, timeout: float | None = None) -> ExecResult:
        done = subprocess.run(
            ["bash", "-c", command], cwd=self.where, capture_output=True, text=True, timeout=120
        )
        return ExecResult(done.stdout + done.stderr, done.returncode)

    def write_file(self, path: str, content: str) -> None:
        target = Path(path) if path.startswith("/") else self.where / path
        target.write_text(content)

    def read_file(self, path: str) -> str:
        target = Path(path) if path.startswith("/") else self.where / path
        return target.read_text()


def one_pr_stage(
    repo: Path, start: dict[str, str], pr: dict[str, str], code: str, name: str
) -> StageJob:
    """A real one-PR history at `repo` (files at the start, then the PR's), left at the PR's base,
    and its stage: the gold code patch is the PR's change under `code`, the test patch the rest."""
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commit_files(repo, start, "start", "2024-01-01T12:00:00Z")
    base = git(repo, "rev-parse", "HEAD")
    commit_files(repo, pr, "The PR (#1)", "2024-01-02T12:00:00Z")
    gold = git(repo, "diff", base, "HEAD", "--", code)
    tests = git(repo, "diff", base, "HEAD", "--", ".", f":(exclude){code}")
    git(repo, "checkout", "-q", base)
    return StageJob(1, 1, 1, 1, name, str(repo), base, gold + "\n", tests + "\n")
