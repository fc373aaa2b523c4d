"""What every P2T command is made of: the LLM with P2T's temperatures, the stage's sandbox and the
stage's whole gold patch."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from sqlalchemy import Engine

from prchain.agent.tasks import ChainTask, StageTask
from prchain.app.config import Config
from prchain.app.rollout import environment_factory
from prchain.environments.protocol import Environment
from prchain.llm.protocol import ChatLLM
from prchain.store.db import session_scope


def p2t_llm_config(config: Config) -> Any:
    """The LLM config with P2T's per-role temperatures wherever llm.temperature sets none."""
    temperatures = {**config.p2t.temperatures, **config.llm.temperature}
    return config.llm.model_copy(update={"temperature": temperatures})


def make_llm(config: Config, engine: Engine) -> ChatLLM:
    from prchain.llm.client import LLMClient  # openai loads only when a command needs it

    return LLMClient(p2t_llm_config(config), engine)


@contextlib.contextmanager
def stage_env(config: Config, task: ChainTask, label: int) -> Iterator[Environment]:
    from prchain.app.verdicts import environment_config  # the repo's test install baked in

    # labelled with the store, so `prchain env gc` finds a killed curation's sandbox
    factory = environment_factory(
        environment_config(config), config.store.url, config.scale.registry, config.eras
    )
    with factory(task, label) as env:
        yield env


def full_gold(engine: Engine, stage: StageTask) -> str:
    """Code and test parts of the stage's gold patch (chains store them apart)."""
    from prchain.store.models import ChainStage

    with session_scope(engine) as session:
        row = session.get(ChainStage, stage.stage_id) if stage.stage_id else None
        tests = row.gold_test_patch if row is not None else ""
    code = stage.gold_patch
    return code if not tests else code.rstrip("\n") + "\n" + tests
