"""Finding 3 of issue 23: two `queries build` on one store at once both did all the work (every
stage paid twice). Each chain is now written under its "queries" lease, and re-read once held."""

from __future__ import annotations

import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from prchain.app.config import Config
from prchain.chains.writers.queries import QuerySummary, build_queries
from prchain.dev.fake_llm import ScriptedLLMServer, last_message_text
from prchain.llm.client import LLMClient
from prchain.store.models import ChainStage
from prchain.store.opener import make_engine
from tests.chains.test_queries import CLEAN, OVERVIEW, insert_chain
from tests.support.llm_fixtures import make_test_llm_config

TITLES = {"Add subtract operation": 1, "Add multiply operation": 2, "Add divide operation": 3}


def _slow_clean_replies(server: ScriptedLLMServer) -> None:
    """Every query and overview answered cleanly, slowly enough that two builds overlap."""

    def query(body: dict[str, Any]) -> dict[str, Any]:
        time.sleep(0.2)
        text = last_message_text(body)
        number = next(n for title, n in TITLES.items() if f"Pull request title: {title}" in text)
        return {"content": CLEAN[number]}

    def overview(body: dict[str, Any]) -> dict[str, Any]:
        time.sleep(0.2)
        return {"content": OVERVIEW}

    server.push(model="query_constructor", times=None, responder=query)
    server.push(model="overview", times=None, responder=overview)


def test_two_builds_at_once_never_pay_for_a_stage_twice(
    fake_llm: ScriptedLLMServer, db_url: str, tmp_path: Path
) -> None:
    engine = make_engine(db_url)
    insert_chain(engine, tmp_path / "calc")  # PRs 1-3
    insert_chain(engine, tmp_path / "calc2", numbers=(1, 2), strategy="linear")  # its own prompts
    _slow_clean_replies(fake_llm)
    config = Config(llm=make_test_llm_config())
    start = threading.Barrier(2)
    summaries: list[QuerySummary] = []

    def build() -> None:
        own = make_engine(db_url)  # a second command has its own engine and client
        client = LLMClient(config.llm, own)
        start.wait()
        summaries.append(build_queries(config.chains, own, client, workers=1))
        own.dispose()

    threads = [threading.Thread(target=build) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()

    asked = Counter((body["model"], last_message_text(body)[:2000]) for body in fake_llm.requests)
    assert asked and max(asked.values()) == 1, [k[0] for k, n in asked.items() if n > 1]
    assert len(fake_llm.requests) == 4 + 3  # each chain's queries and overview, once each
    assert sum(s.llm_calls for s in summaries) == 7
    assert sum(s.chains for s in summaries) == 2  # each chain written by one of the builds
    with Session(engine) as session:
        written = session.scalars(select(ChainStage.query).order_by(ChainStage.id)).all()
    assert written == [CLEAN[1], CLEAN[2], CLEAN[3], CLEAN[1], CLEAN[2]]
    engine.dispose()
