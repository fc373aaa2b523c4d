"""`prchain rollout --dry-run` prices the pending chains without calling any model, in 80 columns."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from sqlalchemy import update

from prchain.cli import main
from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.store.db import session_scope
from prchain.store.models import ChainStage
from prchain.store.opener import make_engine
from tests.agent.conftest import seed_chain

PRICES = "llm.prices={'*': {prompt_per_million: 1, completion_per_million: 2}}"


def _dry_run(url: str) -> tuple[dict[str, list[str]], list[str]]:
    result = CliRunner().invoke(
        main, ["rollout", "--db", url, "--dry-run", "--set", PRICES], env={"COLUMNS": "80"}
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert all(len(line) <= 80 for line in lines), result.output
    rows = {cells[0]: cells[1:] for line in lines if len(cells := line.split()) == 6}
    return rows, lines


def test_rollout_dry_run_prints_policy_and_judge_estimates(
    fake_llm: ScriptedLLMServer, sqlite_url: str, tmp_path: Path
) -> None:
    seed_chain(sqlite_url, tmp_path)  # one chain of two stages, no history in the store
    rows, lines = _dry_run(sqlite_url)
    # Half the stage step budget (60 / 2) for each of two stages, one judge call per stage.
    assert rows["policy"][1:3] == ["60", "480,000"] and rows["judge"][1] == "2"
    text = " ".join(line.strip() for line in lines)
    assert (
        "basis: policy: no history: assumed sizes; judge: no history: assumed sizes, prompts measured"
        in text
    )
    assert fake_llm.requests == []


def test_the_judge_estimate_grows_with_the_real_gold_patch(sqlite_url: str, tmp_path: Path) -> None:
    seed_chain(sqlite_url, tmp_path, prs=(1,))
    small = int(_dry_run(sqlite_url)[0]["judge"][2].replace(",", ""))
    # An 809-line gold patch (the one the finding was about): the judge reads it twice over, as
    # the reference and, at the same size, the agent's patch.
    patch = "".join(f"+line {n} of a long change to the calculator module\n" for n in range(809))
    with session_scope(make_engine(sqlite_url)) as session:
        session.execute(update(ChainStage).values(gold_patch=patch))
    big = int(_dry_run(sqlite_url)[0]["judge"][2].replace(",", ""))
    assert big >= 2 * len(patch) // 4 > 3_000 > small
