"""A sandbox that is a real checkout on the host: what verify_stage asks of one, run with bash."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from prchain.dev.repos import git
from prchain.environments.protocol import ExecResult

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
