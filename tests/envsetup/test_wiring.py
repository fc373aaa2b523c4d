"""When `env setup` calls the setup agent: only when it is on and an LLM server is configured."""

from __future__ import annotations

import pytest

from prchain.app.config import Config
from prchain.app.setup_agent import agent_from_config


def test_no_llm_server_means_no_agent_and_one_line_saying_so(
    monkeypatch: pytest.MonkeyPatch, sqlite_engine
) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    said: list[str] = []
    assert agent_from_config(Config(), sqlite_engine, said.append) is None
    assert len(said) == 1 and "setup agent off" in said[0] and "\n" not in said[0]


def test_the_agent_is_wired_when_a_server_is_configured_and_not_when_disabled(
    monkeypatch: pytest.MonkeyPatch, sqlite_engine
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    assert callable(agent_from_config(Config(), sqlite_engine, print))
    off = Config.model_validate({"env_setup": {"enabled": False}})
    said: list[str] = []
    assert agent_from_config(off, sqlite_engine, said.append) is None and said == []


def test_env_setup_says_the_agent_is_off_once_not_again_for_its_work(
    monkeypatch: pytest.MonkeyPatch, sqlite_url: str
) -> None:
    """A held-out `prchain run` printed "setup agent off" twice: `env setup` decided, then its
    work asked again. The work the driver made keeps the driver's decision; a work made without
    one (a Ray worker's) decides and says so itself."""
    from prchain.app.envsetup import SetupWork

    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    config = Config.model_validate({"store": {"url": sqlite_url}})
    said: list[str] = []
    driver = agent_from_config(config, None, said.append)  # type: ignore[arg-type]
    SetupWork(config, agent=driver, agent_decided=True, notify=said.append).setup()
    assert len(said) == 1
    SetupWork(config, notify=said.append).setup()
    assert len(said) == 2 and said[0] == said[1]
