"""A budget stops a rollout before the call that would pass it; the rollout stays resumable."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from prchain.agent.pool import run_in_threads
from prchain.app.rollout import make_chain_runner
from prchain.core.errors import BudgetExhausted
from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.llm.client import LLMClient
from prchain.store.models import LLMCall, Rollout
from tests.agent.conftest import seed_chain
from tests.agent.conftest import test_config as config_for
from tests.agent.test_rollout import script_happy_chain
from tests.support.llm_fixtures import make_test_llm_config

pytestmark = pytest.mark.docker


def test_a_budget_stops_the_rollout_resumably_within_one_call(
    fake_llm: ScriptedLLMServer, sqlite_engine: Engine, tmp_path: Path
) -> None:
    url = sqlite_engine.url.render_as_string(hide_password=False)
    seeded = seed_chain(url, tmp_path)
    script_happy_chain(fake_llm)
    limit = 5_000
    tight = config_for(url, make_test_llm_config(budget_tokens=limit))
    runner = make_chain_runner(tight, sqlite_engine, LLMClient(tight.llm, sqlite_engine))
    with pytest.raises(BudgetExhausted, match="budget reached"):
        run_in_threads(runner.run, [seeded.chain_id], workers=2)
    with Session(sqlite_engine) as session:
        status = session.scalar(select(Rollout.status))
        sizes = [
            p + c
            for p, c in session.execute(select(LLMCall.prompt_tokens, LLMCall.completion_tokens))
        ]
    assert status == "running"  # not failed: the next run resumes it
    assert 0 < sum(sizes) <= limit + max(sizes)

    free = config_for(url, make_test_llm_config())
    resumed = make_chain_runner(free, sqlite_engine, LLMClient(free.llm, sqlite_engine))
    result = resumed.run(seeded.chain_id)
    assert (result.status, result.kept_stages) == ("kept", 2), result.reason
