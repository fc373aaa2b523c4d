"""`prchain trajectories list|show`, `prchain export` and `prchain stats` on a rolled-out chain."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import Engine

from prchain.agent.runner import ChainRunner
from prchain.cli import main
from prchain.dev.fake_llm import ScriptedLLMServer
from tests.agent.test_rollout import COMMENT_1, run_happy_chain

pytestmark = pytest.mark.docker


def test_list_show_export_and_stats(
    fake_llm: ScriptedLLMServer,
    sqlite_engine: Engine,
    tmp_path: Path,
    make_runner: Callable[..., ChainRunner],
) -> None:
    url = str(sqlite_engine.url)
    rollout_id = run_happy_chain(fake_llm, url, tmp_path, make_runner, sqlite_engine)
    cli = CliRunner()

    listed = cli.invoke(main, ["trajectories", "list", "--db", url])
    assert listed.exit_code == 0, listed.output
    assert "kept" in listed.output

    shown = cli.invoke(
        main, ["trajectories", "show", str(rollout_id), "--db", url], terminal_width=200
    )
    assert shown.exit_code == 0, shown.output
    for expected in (
        "stage 1 · passed",
        "stage 2 · passed",
        "judge round 0: score 0.50",
        "judge round 1: score 0.90",
        "→ submit",
        "feedback",
    ):
        assert expected in shown.output, expected
    assert COMMENT_1[:40] in shown.output

    missing = cli.invoke(main, ["trajectories", "show", "999", "--db", url])
    assert missing.exit_code == 1 and "does not exist" in missing.output

    out = tmp_path / "export" / "t.jsonl"
    exported = cli.invoke(main, ["export", str(out), "--db", url, "--min-score", "0.8"])
    assert exported.exit_code == 0, exported.output
    assert len(out.read_text().splitlines()) == 1 and (out.parent / "t.config.json").exists()

    stats = cli.invoke(main, ["stats", "--json", "--db", url])
    data = json.loads(stats.output)
    assert (data["trajectories_kept"], data["trajectories_rejected"]) == (1, 0)
    assert (
        data["kept_mean_tool_calls"] == 8
        and data["stage_scores_0.8_1.0"] == 2
        and data["cost_usd_per_kept_trajectory"] > 0
    )
