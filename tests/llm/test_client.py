"""The real openai client against the local scripted server: retries, cache, cost, records."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import pytest
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from prchain.core.errors import LLMError, LLMOutputInvalid, LLMUnavailable
from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.llm.client import LLMClient
from prchain.llm.config import LLMConfig
from prchain.llm.parsing import extract_json_object
from prchain.store.models import LLMCacheEntry, LLMCall
from tests.support.llm_fixtures import FAKE_API_KEY, make_test_llm_config

ASK = [{"role": "user", "content": "Say hello."}]


def _calls(engine: Engine) -> list[LLMCall]:
    with Session(engine) as session:
        return list(session.scalars(select(LLMCall).order_by(LLMCall.id)))


def test_reply_is_recorded_with_tokens_and_cost(
    fake_llm: ScriptedLLMServer, llm_config: LLMConfig, engine: Engine
) -> None:
    fake_llm.push(model="judge", content="hello there")
    client = LLMClient(llm_config, engine)
    completion = client.complete("judge", ASK, rollout_id=7)
    assert completion.content == "hello there"
    assert completion.model == "judge" and not completion.cached
    assert completion.prompt_tokens > 0 and completion.completion_tokens == 3  # 11 chars ≈ 3 tokens
    expected = (completion.prompt_tokens * 1.0 + completion.completion_tokens * 2.0) / 1e6
    assert completion.cost_usd == pytest.approx(expected)
    [call] = _calls(engine)
    assert (call.role, call.model, call.status, call.rollout_id, call.cached) == (
        "judge",
        "judge",
        "ok",
        7,
        False,
    )
    assert call.cost_usd == pytest.approx(expected)
    assert call.prompt_tokens == completion.prompt_tokens and call.latency_ms > 0
    assert fake_llm.requests[0]["model"] == "judge" and fake_llm.requests[0]["messages"] == ASK


def test_429_then_success(fake_llm: ScriptedLLMServer, llm_config: LLMConfig) -> None:
    fake_llm.push(model="policy", status=429).push(model="policy", content="done")
    assert LLMClient(llm_config).complete("policy", ASK).content == "done"
    assert len(fake_llm.requests) == 2


def test_500_then_success(fake_llm: ScriptedLLMServer, llm_config: LLMConfig) -> None:
    fake_llm.push(model="prm", status=500).push(model="prm", status=503).push(
        model="prm", content="ok"
    )
    assert LLMClient(llm_config).complete("prm", ASK).content == "ok"
    assert len(fake_llm.requests) == 3


def test_exhausted_retries_raise_a_typed_error_and_are_recorded(
    fake_llm: ScriptedLLMServer, llm_config: LLMConfig, engine: Engine
) -> None:
    fake_llm.push(model="judge", status=429, times=10)
    with pytest.raises(LLMUnavailable, match="HTTP 429: fake LLM: rate limited"):
        LLMClient(llm_config, engine).complete("judge", ASK)
    assert len(fake_llm.requests) == llm_config.max_retries + 1
    [call] = _calls(engine)
    assert call.status == "error" and "rate limited" in (call.error or "")


def test_client_errors_are_not_retried(fake_llm: ScriptedLLMServer, llm_config: LLMConfig) -> None:
    fake_llm.push(model="judge", status=400)
    with pytest.raises(LLMError) as caught:
        LLMClient(llm_config).complete("judge", ASK)
    assert not isinstance(caught.value, LLMUnavailable)
    assert len(fake_llm.requests) == 1


def test_unscripted_request_fails_loudly_naming_the_model(
    fake_llm: ScriptedLLMServer, llm_config: LLMConfig
) -> None:
    with pytest.raises(LLMUnavailable, match="no scripted reply left for model 'overview'"):
        LLMClient(llm_config).complete("overview", ASK)


def test_unreachable_server_is_a_typed_error(
    monkeypatch: pytest.MonkeyPatch, llm_config: LLMConfig
) -> None:
    with ScriptedLLMServer() as server:
        url = server.base_url
    monkeypatch.setenv("OPENAI_BASE_URL", url)  # nobody listens there any more
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_API_KEY)
    with pytest.raises(LLMUnavailable, match="could not connect to the server"):
        LLMClient(llm_config).complete("judge", ASK)


def test_cache_hit_on_rerun_makes_no_request(
    fake_llm: ScriptedLLMServer, llm_config: LLMConfig, engine: Engine
) -> None:
    fake_llm.push(model="overview", content="the big picture")
    LLMClient(llm_config, engine).complete("overview", ASK)
    rerun = LLMClient(
        llm_config, engine
    )  # a new process would build a new client on the same store
    again = rerun.complete("overview", ASK)
    assert again.content == "the big picture" and again.cached and again.cost_usd == 0.0
    assert len(fake_llm.requests) == 1
    first, second = _calls(engine)
    assert second.cached and second.cost_usd == 0.0 and second.cache_key == first.cache_key
    assert rerun.usage.paid_calls == 0 and rerun.usage.cached_calls == 1


def test_cache_key_depends_on_messages_tools_and_model(
    fake_llm: ScriptedLLMServer, engine: Engine
) -> None:
    fake_llm.push(content="a", times=None)
    config = make_test_llm_config()
    client = LLMClient(config, engine)
    client.complete("judge", ASK)
    client.complete("judge", [{"role": "user", "content": "Say goodbye."}])
    client.complete(
        "judge", ASK, tools=[{"type": "function", "function": {"name": "bash", "parameters": {}}}]
    )
    client.complete("prm", ASK)
    LLMClient(make_test_llm_config(temperature={"judge": 0.7}), engine).complete("judge", ASK)
    assert len(fake_llm.requests) == 5
    assert fake_llm.requests[-1]["temperature"] == 0.7


def test_cache_can_be_turned_off(fake_llm: ScriptedLLMServer, engine: Engine) -> None:
    fake_llm.push(model="judge", content="x", times=2)
    client = LLMClient(make_test_llm_config(cache=False), engine)
    client.complete("judge", ASK)
    client.complete("judge", ASK)
    assert len(fake_llm.requests) == 2
    with Session(engine) as session:
        assert session.scalars(select(LLMCacheEntry)).first() is None


def test_tool_calls_come_back_in_openai_shape(
    fake_llm: ScriptedLLMServer, llm_config: LLMConfig
) -> None:
    fake_llm.push(model="policy", tool_calls=[{"name": "bash", "arguments": {"command": "ls"}}])
    tools = [{"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}]
    completion = LLMClient(llm_config).complete("policy", ASK, tools=tools)
    [call] = completion.tool_calls
    assert call["type"] == "function" and call["id"].startswith("call_")
    assert call["function"]["name"] == "bash" and json.loads(call["function"]["arguments"]) == {
        "command": "ls"
    }
    assert completion.finish_reason == "tool_calls"
    assert completion.as_message()["tool_calls"] == completion.tool_calls
    assert fake_llm.requests[0]["tools"] == tools


def test_malformed_output_is_retried_then_parsed(
    fake_llm: ScriptedLLMServer, llm_config: LLMConfig, engine: Engine
) -> None:
    fake_llm.push(model="judge", content="I think it is fine").push(
        model="judge", content='{"score": 0.9}'
    )
    value, completion = LLMClient(llm_config, engine).complete_parsed(
        "judge", ASK, extract_json_object
    )
    assert value == {"score": 0.9} and completion.content == '{"score": 0.9}'
    retry = fake_llm.requests[1]["messages"]
    assert retry[:1] == ASK and retry[1] == {"role": "assistant", "content": "I think it is fine"}
    assert "could not be used" in retry[2]["content"]
    # A rerun never replays the refused first reply: it asks again (and is answered well).
    fake_llm.push(model="judge", content='{"score": 0.8}')
    rerun, _ = LLMClient(llm_config, engine).complete_parsed("judge", ASK, extract_json_object)
    assert rerun == {"score": 0.8} and len(fake_llm.requests) == 3
    assert fake_llm.requests[2]["messages"] == ASK


def test_malformed_output_every_time_is_a_typed_error(
    fake_llm: ScriptedLLMServer, llm_config: LLMConfig
) -> None:
    fake_llm.push(model="judge", content="not json", times=None)
    with pytest.raises(LLMOutputInvalid, match="still invalid after 3 attempts"):
        LLMClient(llm_config).complete_parsed("judge", ASK, extract_json_object, attempts=3)
    assert (
        len(fake_llm.requests) == 3
    )  # each attempt had its own cache key: no replay of the bad reply


def test_api_key_never_reaches_the_store(
    fake_llm: ScriptedLLMServer, llm_config: LLMConfig, engine: Engine
) -> None:
    fake_llm.push(model="judge", content="fine").push(model="judge", status=401)
    client = LLMClient(llm_config.model_copy(update={"cache": False}), engine)
    client.complete("judge", ASK)
    with pytest.raises(LLMError):
        client.complete("judge", ASK)
    with Session(engine) as session:
        rows = [json.dumps(call.__dict__, default=str) for call in session.scalars(select(LLMCall))]
        rows += [json.dumps(entry.response) for entry in session.scalars(select(LLMCacheEntry))]
    assert len(rows) >= 2 and not any(FAKE_API_KEY in row for row in rows)


def test_per_role_endpoint_overrides_the_environment(
    fake_llm: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    with ScriptedLLMServer() as prm_server:
        prm_server.push(model="prm", content="from the prm server")
        config = make_test_llm_config(endpoints={"prm": prm_server.base_url})
        assert LLMClient(config).complete("prm", ASK).content == "from the prm server"
    assert fake_llm.requests == []


def test_missing_credentials_is_a_typed_error(
    monkeypatch: pytest.MonkeyPatch, llm_config: LLMConfig
) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(LLMError, match="OPENAI_BASE_URL"):
        LLMClient(llm_config).complete("judge", ASK)


def test_concurrent_use_from_a_thread_pool(
    fake_llm: ScriptedLLMServer, llm_config: LLMConfig, engine: Engine
) -> None:
    fake_llm.push(
        model="query_constructor",
        responder=lambda body: {"content": body["messages"][-1]["content"].upper()},
        times=None,
    )
    client = LLMClient(llm_config, engine)
    asks = [[{"role": "user", "content": f"item {i}"}] for i in range(24)]
    with ThreadPoolExecutor(8) as pool:
        replies = list(pool.map(lambda m: client.complete("query_constructor", m).content, asks))
    assert replies == [f"ITEM {i}" for i in range(24)]
    assert len(_calls(engine)) == 24 and client.usage.calls == 24
