"""The demo's scripted model (examples/demo-llm.yaml) sends the reply shapes a small model behind a
real server sent (issue 21): the pipeline stays green in tools mode, then in text mode (`rollout
--redo`), against the strict scripted server, and what is exported holds none of the debris."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from sqlalchemy import select
from sqlalchemy.orm import Session

from prchain.agent.export import validate_record
from prchain.cli import main
from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.dev.repos import make_chain_repo
from prchain.store.models import LLMRepair, Rollout, Step
from prchain.store.opener import make_engine

pytestmark = [pytest.mark.docker, pytest.mark.slow]
EXAMPLES = Path(__file__).parents[2] / "examples"


def _invoke(*args: str) -> str:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, f"prchain {' '.join(args)} failed:\n{result.output}"
    return result.output


def test_the_demo_script_runs_green_in_both_formats(
    fake_llm: ScriptedLLMServer, sqlite_url: str, tmp_path: Path
) -> None:
    assert fake_llm.strict
    fake_llm.load_script(EXAMPLES / "demo-llm.yaml")
    repo = make_chain_repo(tmp_path / "calc")
    config = yaml.safe_load((EXAMPLES / "demo.yaml").read_text())
    (tmp_path / "demo.yaml").write_text(yaml.safe_dump(config))
    common = ["--config", str(tmp_path / "demo.yaml"), "--db", sqlite_url]
    _invoke("mine", "--source", "git", "--name", "acme/calc", str(repo.path), *common)
    _invoke("chains", "build", *common)
    _invoke("queries", "build", *common)
    _invoke("rollout", *common)
    engine = make_engine(sqlite_url)
    with Session(engine) as session:
        chains = sorted(set(session.scalars(select(Rollout.chain_id))))
    redo = [arg for chain in chains for arg in ("--redo", str(chain))]
    _invoke("rollout", *redo, "--set", "agent.action_format=text", *common)

    assert fake_llm.refused == []  # the strict server accepted every conversation
    with Session(engine) as session:
        rollouts = list(session.scalars(select(Rollout).order_by(Rollout.id)))
        steps = list(session.scalars(select(Step).where(Step.kind == "assistant")))
        repairs = list(session.scalars(select(LLMRepair.kind)))
    assert [r.status for r in rollouts] == ["kept"] * 2 * len(chains)
    assert all(r.kept_stages >= 2 for r in rollouts)
    # No call text, stray brace or dropped second call stayed behind as a message's content.
    contents = [s.message["content"] for s in steps]
    assert not [c for c in contents if "{" in c or "}" in c or "<tool_call>" in c]
    assert {"tool_call_in_text", "extra_calls_dropped"} <= set(repairs)
    stats = json.loads(_invoke("stats", "--json", *common))
    assert stats["llm_refused_by_role"]["policy"]["format_error"] >= 2 * len(chains)

    out = tmp_path / "trajectories.jsonl"
    _invoke("export", str(out), *common)
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(records) == 2 * len(chains)
    for record in records:
        validate_record(record)
