"""Wiring of the LLM setup agent into `prchain env setup` (the last rung of the ladder)."""

from __future__ import annotations

import os
from collections.abc import Callable

from sqlalchemy import Engine

from prchain.app.config import Config
from prchain.setup.ladder import AgentRepair


def agent_from_config(
    config: Config, engine: Engine, notify: Callable[[str], None] = print
) -> AgentRepair | None:
    """The agent rung, or None when it is off or no LLM server is configured (then the eras the
    planner cannot make stay unverified, each with its root error)."""
    if not config.env_setup.enabled:
        return None
    llm = config.llm
    if not (os.environ.get(llm.base_url_env) or os.environ.get(llm.api_key_env)):
        notify(
            f"setup agent off: no LLM server configured ({llm.base_url_env} / {llm.api_key_env}); "
            "eras the planner cannot make stay unverified"
        )
        return None
    from prchain.llm.client import LLMClient
    from prchain.setup.repair import agent_repair  # docker and openai load only here

    return agent_repair(LLMClient(llm, engine), config.environment, config.eras, config.env_setup)
