"""pytest fixtures for the LLM (loaded by tests/conftest.py as a plugin).

`fake_llm` is a ScriptedLLMServer started once per test session and reset for each test, with
OPENAI_BASE_URL / OPENAI_API_KEY pointing at it. `llm_config` names each role's model after the
role ("policy", "judge", "prm", "query_constructor", ...) so scripts can target a role by model.
"""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest

from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.llm.config import ROLES, LLMConfig, Price

FAKE_API_KEY = "sk-test-fake-llm-secret-0123456789"
# Cheap and round so tests can check the arithmetic: $1 per million prompt, $2 per million completion.
TEST_PRICE = Price(prompt_per_million=1.0, completion_per_million=2.0)


@pytest.fixture(scope="session")
def _fake_llm_server() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer() as server:
        yield server


def not_itself(server: ScriptedLLMServer) -> str | None:
    """None when the session's server still answers at its address as itself; else what answered.
    (Once, 8 tests of one CI worker got `HTTP 404: page not found`, a Go server's words, from the
    session server's address: it had stopped listening and something else took the port.)"""
    try:
        with urllib.request.urlopen(f"{server.base_url}/prchain-probe", timeout=10) as answer:
            return f"HTTP {answer.status} where the scripted server has no such route"
    except urllib.error.HTTPError as exc:
        body = exc.read().decode(errors="replace")
        return None if "fake LLM: no route" in body else f"HTTP {exc.code}: {body[:200]!r}"
    except OSError as exc:
        return f"no answer: {exc}"


@pytest.fixture
def fake_llm(
    _fake_llm_server: ScriptedLLMServer, monkeypatch: pytest.MonkeyPatch
) -> Iterator[ScriptedLLMServer]:
    said = not_itself(_fake_llm_server)
    if said is not None:  # say so here, not as an LLM error deep inside the test
        pytest.fail(
            f"the session's scripted LLM server at {_fake_llm_server.base_url} no longer answers "
            f"as itself ({said}); a test before this one on this worker stopped it",
            pytrace=False,
        )
    _fake_llm_server.reset()
    monkeypatch.setenv("OPENAI_BASE_URL", _fake_llm_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_API_KEY)
    yield _fake_llm_server
    _fake_llm_server.reset()


def make_test_llm_config(**overrides: object) -> LLMConfig:
    """Models named after roles, a price for each, and retries fast enough for tests."""
    fields: dict[str, object] = {
        "models": {role: role for role in ROLES},
        "prices": {role: TEST_PRICE for role in ROLES},
        "max_retries": 2,
        "retry_backoff_seconds": 0.01,
        "retry_backoff_max_seconds": 0.05,
        "timeout_seconds": 10.0,
        "workers": 4,
    }
    fields.update(overrides)
    return LLMConfig.model_validate(fields)


@pytest.fixture
def llm_config() -> LLMConfig:
    return make_test_llm_config()
