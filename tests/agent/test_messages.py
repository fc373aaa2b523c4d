"""Issue 21, finding 7: the messages a new user reads say what is true, in whole sentences, with
counts that agree with their nouns."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner
from sqlalchemy import update

from prchain.agent.loop import PROMPTS
from prchain.agent.tasks import load_chain
from prchain.cli import main
from prchain.llm.prompts import render
from prchain.store.db import session_scope
from prchain.store.models import Chain
from prchain.store.opener import make_engine
from tests.agent.conftest import seed_chain


def test_rollout_help_says_each_sentence_once() -> None:
    result = CliRunner(env={"COLUMNS": "200"}).invoke(main, ["rollout", "--help"])
    assert result.exit_code == 0
    description = result.output.split("Example:")[0]
    sentences = [s.strip() for s in re.split(r"(?<=[.;])\s+", " ".join(description.split()))]
    repeated = {s for s in sentences if s and sentences.count(s) > 1}
    assert not repeated, repeated
    assert "--redo" in result.output


def test_one_pr_chains_read_in_the_singular(sqlite_url: str, tmp_path: Path) -> None:
    one = render(PROMPTS, "first_task.j2", n_stages=1, overview="O", query="Q")
    assert "one task" in one and "1 consecutive tasks" not in one
    three = render(PROMPTS, "first_task.j2", n_stages=3, overview="O", query="Q")
    assert "3 consecutive tasks" in three
    seeded = seed_chain(sqlite_url, tmp_path, prs=(1,))
    engine = make_engine(sqlite_url)
    with session_scope(engine) as session:
        session.execute(update(Chain).values(overview=None))
    overview = load_chain(engine, seeded.chain_id).overview
    assert overview == "One change to acme/calc." and "1 related changes" not in overview
