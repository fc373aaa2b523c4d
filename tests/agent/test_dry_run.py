"""`prchain rollout --dry-run` prices the pending chains without calling any model."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from prchain.cli import main
from prchain.dev.fake_llm import ScriptedLLMServer
from tests.agent.conftest import seed_chain


def test_rollout_dry_run_prints_policy_and_judge_estimates(
    fake_llm: ScriptedLLMServer, sqlite_url: str, tmp_path: Path
) -> None:
    seed_chain(sqlite_url, tmp_path)  # one chain of two stages, no history in the store
    args = ["rollout", "--db", sqlite_url, "--dry-run"]
    args += ["--set", "llm.prices={'*': {prompt_per_million: 1, completion_per_million: 2}}"]
    result = CliRunner().invoke(main, args, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    rows = {
        cells[0]: cells[1:]
        for line in result.output.splitlines()
        if len(cells := [c.strip() for c in line.strip("│ ").split("│")]) == 7
    }
    # Half the stage step budget (60 / 2) for each of two stages, one judge call per stage.
    assert rows["policy"][1:3] == ["60", "480,000"] and rows["judge"][1] == "2"
    assert rows["policy"][-1] == "no history: assumed sizes"
    assert fake_llm.requests == []
