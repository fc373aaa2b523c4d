"""`prchain chains build|list|show` and `prchain tasks export` as a user runs them, on a real mined git repo."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from miner.config import MinerConfig
from prchain.cli import main
from prchain.dev.repos import make_chain_repo
from sql.db import make_engine

# The demo repository's chain changes a few lines per PR, below the substance threshold for real
# histories; these tests are about the commands, not that threshold.
TINY = ("--set", "chains.min_chain_code_lines=0")


def _mined(tmp_path: Path) -> str:
    from miner.mine import mine

    repo = make_chain_repo(tmp_path / "calc")
    url = f"sqlite:///{tmp_path / 'store.db'}"
    mine(MinerConfig(), make_engine(url), [str(repo.path)], source="git", name="acme/calc")
    return url


def test_mined_chain_repo_gives_the_three_pr_chain(tmp_path: Path) -> None:
    url = _mined(tmp_path)
    runner = CliRunner(env={"COLUMNS": "250"})
    built = runner.invoke(main, ["chains", "build", "--db", url, *TINY])
    assert built.exit_code == 0, built.output
    assert "│ 3      │ 1" in built.output  # one chain of length 3: #1 ← #2 ← #3

    listed = runner.invoke(main, ["chains", "list", "--db", url])
    assert listed.exit_code == 0 and "#1 ← #2 ← #3" in listed.output

    shown = runner.invoke(main, ["chains", "show", "1", "--db", url])
    assert shown.exit_code == 0, shown.output
    assert "Add subtract operation" in shown.output and "Follow-up to #1" in shown.output
    assert "(none yet)" in shown.output

    out = tmp_path / "tasks.jsonl"
    exported = runner.invoke(main, ["tasks", "export", str(out), "--db", url])
    assert exported.exit_code == 0 and "wrote 1 chains" in exported.output
    task = json.loads(out.read_text())
    assert [s["instance_id"] for s in task["stages"]] == [
        "acme__calc-1",
        "acme__calc-2",
        "acme__calc-3",
    ]
    assert "def divide" in task["stages"][2]["patch"]

    stats = runner.invoke(main, ["stats", "--json", "--db", url])
    assert stats.exit_code == 0
    data = json.loads(stats.output)
    assert (
        data["chains"] == 1
        and data["chains_by_length"] == {"3": 1}
        and data["queries"] == 0
        and data["stages"] == 3
    )


def test_show_of_an_unknown_chain_is_one_clear_line(tmp_path: Path) -> None:
    url = _mined(tmp_path)
    runner = CliRunner(env={"COLUMNS": "250"})
    assert runner.invoke(main, ["chains", "build", "--db", url, *TINY]).exit_code == 0
    result = runner.invoke(main, ["chains", "show", "99", "--db", url])
    assert result.exit_code == 1 and "no chain with id 99" in result.output
    result = runner.invoke(main, ["chains", "build", "--strategy", "nope", "--db", url, *TINY])
    assert result.exit_code == 2 and "semantic" in result.output


def test_show_prints_bracketed_pr_text_verbatim(tmp_path: Path) -> None:
    """Real titles start with tags like "[ty]"; rich must not swallow them as markup."""
    from sqlalchemy import update
    from sqlalchemy.orm import Session

    from sql.models import PullRequest

    url = _mined(tmp_path)
    with Session(make_engine(url)) as session, session.begin():
        session.execute(
            update(PullRequest)
            .where(PullRequest.number == 1)
            .values(title="[red-knot] Add subtract")
        )
    runner = CliRunner(env={"COLUMNS": "250"})
    assert runner.invoke(main, ["chains", "build", "--db", url, *TINY]).exit_code == 0
    shown = runner.invoke(main, ["chains", "show", "1", "--db", url])
    assert shown.exit_code == 0, shown.output
    assert "[red-knot] Add subtract" in shown.output
