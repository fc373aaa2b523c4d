"""The demo store (scripts/demo.sh: real repo, scripted LLM server, real containers) and its report."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from prchain.cli import main
from tests.support.browser import RecordingPage

REPO_ROOT = Path(__file__).resolve().parents[2]


@dataclass
class DemoReport:
    store: Path
    out: Path

    @property
    def db(self) -> str:
        return f"sqlite:///{self.store / 'prchain.db'}"


def prchain(*args: str) -> str:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture(scope="session")
def demo_report(
    tmp_path_factory: pytest.TempPathFactory, docker_client: Any, base_image: str
) -> DemoReport:
    """The README's demo run end to end, plus temporal chains of two beside it, and its report."""
    store = tmp_path_factory.mktemp("demo")
    env = {
        **os.environ,
        "DEMO_DIR": str(store),
        "PRCHAIN": str(Path(sys.executable).parent / "prchain"),
    }
    run = subprocess.run(
        ["bash", "scripts/demo.sh"], cwd=REPO_ROOT, env=env, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    report = DemoReport(store, store / "report")
    config = str(REPO_ROOT / "examples/demo.yaml")
    # A second strategy, so the index lists chains of several lengths and outcomes to filter.
    prchain(
        "chains",
        "build",
        "--strategy",
        "temporal",
        "--max-len",
        "2",
        "--config",
        config,
        "--db",
        report.db,
    )
    prchain("report", str(report.out), "--config", config, "--db", report.db)
    return report


@pytest.fixture
def browser_page(chromium: Any, demo_report: DemoReport) -> Iterator[RecordingPage]:
    page = RecordingPage(chromium, demo_report.out)
    yield page
    assert page.outside() == [], "requests left the report folder"
    assert page.errors == [], "the page raised script errors"
    page.close()
