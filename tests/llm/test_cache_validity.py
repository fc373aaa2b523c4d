"""Only replies that passed their role's check are replayed; unstorable characters are handled
(issue 16, finding 4). Real client, scripted server over HTTP, SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from prchain.agent.judge import Judge
from prchain.agent.persist import Recorder, new_rollout
from prchain.core.errors import JudgeOutputInvalid
from prchain.core.text import REPLACEMENT, storable
from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.llm.client import LLMClient
from prchain.llm.config import LLMConfig
from prchain.llm.parsing import extract_json_object
from prchain.store.models import LLMCacheEntry, Step
from tests.agent.conftest import seed_chain, verdict

GOLD = "--- a/x.py\n+++ b/x.py\n@@ -1 +1 @@\n-old\n+def shiny_new_thing(): pass\n"


def _ask(client: LLMClient) -> object:
    return Judge(client, retries=1).judge(query="q", gold_patch=GOLD, agent_patch="+x")


def _entries(engine: Engine) -> list[LLMCacheEntry]:
    with Session(engine) as session:
        return list(session.scalars(select(LLMCacheEntry)))


def test_a_garbage_judge_is_not_replayed_on_rerun(
    fake_llm: ScriptedLLMServer, llm_config: LLMConfig, engine: Engine
) -> None:
    fake_llm.push(model="judge", content="<html>502 Bad Gateway</html>", times=2)
    with pytest.raises(JudgeOutputInvalid):
        _ask(LLMClient(llm_config, engine))
    assert len(fake_llm.requests) == 2
    # Kept for diagnosis, marked refused, with the parser's reason.
    refused = _entries(engine)
    assert len(refused) == 2 and not any(e.valid for e in refused)
    assert all("502 Bad Gateway" in e.response["content"] and e.error for e in refused)
    # The server is healthy again: the rerun asks it (before the fix it replayed the garbage and
    # failed without a request), and the good reply replaces the refused entry.
    fake_llm.push(model="judge", content=verdict(0.9, "Fine work."))
    judged = _ask(LLMClient(llm_config, engine))
    assert judged.score == 0.9 and len(fake_llm.requests) == 3  # type: ignore[attr-defined]
    assert sum(e.valid for e in _entries(engine)) == 1
    # ... and that good reply is replayed from then on.
    assert _ask(LLMClient(llm_config, engine)).score == 0.9  # type: ignore[attr-defined]
    assert len(fake_llm.requests) == 3


def test_a_nul_in_a_reply_is_scrubbed_counted_and_stored(
    fake_llm: ScriptedLLMServer, llm_config: LLMConfig, engine: Engine
) -> None:
    fake_llm.push(model="judge", content='{"score": 0.5, "note": "a\\u0000b\x00c"}')
    client = LLMClient(llm_config, engine)
    value, completion = client.complete_parsed(
        "judge", [{"role": "user", "content": "hi"}], extract_json_object
    )
    assert "\x00" not in completion.content and completion.content.count(REPLACEMENT) == 1
    assert value["note"] == "a\x00b" + REPLACEMENT + "c"  # a JSON escape is data, not a NUL byte
    assert client.usage.scrubbed_chars == 1
    [entry] = _entries(engine)
    assert entry.valid and entry.scrubbed_chars == 0  # scrubbed before it reached the cache
    # Every rerun replays it from the store instead of failing the same way each time.
    again, cached = LLMClient(llm_config, engine).complete_parsed(
        "judge", [{"role": "user", "content": "hi"}], extract_json_object
    )
    assert cached.cached and again == value and len(fake_llm.requests) == 1


def test_steps_with_nul_and_surrogates_are_stored(engine: Engine, tmp_path) -> None:
    url = engine.url.render_as_string(hide_password=False)
    chain = seed_chain(url, tmp_path)
    recorder = Recorder(engine, new_rollout(engine, chain.chain_id, conflict_policy="strict"))
    output = "binary\x00output \ud800 end"
    recorder.step(
        1, "tool", {"role": "tool", "content": output, "tool_call_id": "c1"}, observation=output
    )
    assert recorder.scrubbed == 4
    with Session(engine) as session:
        step = session.scalars(select(Step)).one()
        assert step.observation == f"binary{REPLACEMENT}output {REPLACEMENT} end"
        assert step.message["content"] == step.observation


def test_storable_walks_json_values() -> None:
    value, count = storable({"a\x00": ["x\x00", 1, None, {"k": "\udfff"}]})
    assert value == {f"a{REPLACEMENT}": [f"x{REPLACEMENT}", 1, None, {"k": REPLACEMENT}]}
    assert count == 3
