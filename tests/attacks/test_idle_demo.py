"""Acceptance 3 of issue 20: the demo with an agent that submits without changing anything, at every
stage, against a judge that would accept anything: nothing is kept, and each stage says why."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import select
from sqlalchemy.orm import Session

from prchain.cli import main
from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.dev.repos import make_chain_repo
from prchain.store.models import Rollout, RolloutStage
from prchain.store.opener import make_engine

pytestmark = pytest.mark.docker

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _invoke(*args: str) -> str:
    result = CliRunner(env={"COLUMNS": "250"}).invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, f"prchain {' '.join(args)} failed:\n{result.output}"
    return result.output


def test_the_idle_demo_keeps_nothing_and_says_why(
    fake_llm: ScriptedLLMServer, sqlite_url: str, tmp_path: Path
) -> None:
    fake_llm.load_script(EXAMPLES / "demo-llm-idle.yaml")
    repo = make_chain_repo(tmp_path / "calc")
    common = ["--config", str(EXAMPLES / "demo.yaml"), "--db", sqlite_url]
    _invoke("mine", "--source", "git", "--name", "acme/calc", str(repo.path), *common)
    _invoke("chains", "build", *common)
    _invoke("queries", "build", *common)
    rolled = _invoke("rollout", *common)
    out = tmp_path / "export" / "trajectories.jsonl"
    exported = _invoke("export", str(out), *common)

    assert "the agent changed nothing" in rolled
    assert re.search(r"trajectories written\s*│\s*0\s*│", exported), exported
    assert "skipped: below min score (all)" in exported
    assert out.read_text() == ""
    assert fake_llm.requests_for("judge") == []  # no stage reached the judge
    with Session(make_engine(sqlite_url)) as session:
        rollouts = list(session.scalars(select(Rollout)))
        stages = list(session.scalars(select(RolloutStage)))
    assert rollouts and all(r.status == "rejected" and r.kept_stages == 0 for r in rollouts)
    assert stages and all(
        s.status == "failed" and s.score is None and "changed nothing" in str(s.reason)
        for s in stages
    )
