"""Attacks on the graders and the sandbox, each run by a scripted agent through a real rollout.

The scripted LLM server (prchain/dev/fake_llm.py) plays the policy: `Attacker` answers each policy
request with the next action of the current stage. Helpers here find what must never leak (every
stage's gold lines, hidden test names) and look for it in stored steps and exported records.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from prchain.chains.reading.patches import split_patch
from prchain.dev.repos import ChainRepo, make_tested_repo
from prchain.store.models import Step
from tests.agent.conftest import make_runner  # noqa: F401  (a fixture, re-exported here)

Action = list[dict[str, Any]]
GEO = "acme/geo"


@pytest.fixture(scope="module")
def geo(tmp_path_factory: pytest.TempPathFactory) -> ChainRepo:
    return make_tested_repo(tmp_path_factory.mktemp("geo") / "geo")


@pytest.fixture
def stage_one(docker_client: Any, base_image: str, geo: ChainRepo) -> Iterator[Any]:
    """The geo chain's stage 1 in a sandbox, as the agent starts it."""
    from prchain.environments.config import EnvironmentConfig
    from prchain.environments.docker_env import DockerEnvironment
    from prchain.environments.protocol import StageSpec

    stages = [StageSpec(1, geo.prs[1].base_sha, split_patch(geo.prs[1].gold_patch).code)]
    with DockerEnvironment(
        EnvironmentConfig(),
        repo=GEO,
        clone_path=str(geo.path),
        stages=stages,
        labels={"prchain.test": "sandbox-attacks"},
        client=docker_client,
    ) as env:
        env.enter_stage(1)
        yield env


def stage_and_turn(body: dict[str, Any]) -> tuple[int, int]:
    """(stage number, assistant turns since the last user message) of a policy request."""
    turns = 0
    for message in reversed(body["messages"]):
        if message["role"] == "user":
            break
        turns += message["role"] == "assistant"
    stage = sum(
        1 for m in body["messages"] if m["role"] == "user" and "Task " in str(m.get("content"))
    )
    return stage, turns


@dataclass
class Attacker:
    """A policy that plays `plan(stage)` one action per turn; after the plan it keeps submitting."""

    plan: Callable[[int], Sequence[Action]]
    seen: list[str] = field(default_factory=list)  # every message text the policy was shown

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        self.seen.extend(json.dumps(m) for m in body["messages"])
        stage, turn = stage_and_turn(body)
        actions = list(self.plan(stage))
        return {"tool_calls": actions[min(turn, len(actions) - 1)]}


def added_lines(patches: Sequence[str], visible: str, min_len: int = 8) -> list[str]:
    """Lines the patches add that appear nowhere in `visible` (the files at B_1)."""
    lines = set()
    for patch in patches:
        for line in patch.splitlines():
            body = line[1:].strip()
            if line.startswith("+") and not line.startswith("+++") and len(body) >= min_len:
                lines.add(body)
    return sorted(line for line in lines if line not in visible)


def stored_texts(engine: Engine, rollout_id: int) -> list[str]:
    with Session(engine) as session:
        steps = list(session.scalars(select(Step).filter_by(rollout_id=rollout_id)))
    return [json.dumps(s.message) + json.dumps(s.observation) for s in steps]


def shown(texts: Sequence[str], secrets: Sequence[str]) -> list[str]:
    """The secrets any text shows (JSON-escaped forms included)."""
    escaped = [(s, json.dumps(s)[1:-1]) for s in secrets]
    return sorted({s for s, e in escaped for t in texts if s in t or e in t})
