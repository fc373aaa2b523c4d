"""A P2T curation killed with SIGKILL (a real `prchain p2t curate` process) at a random point of a
random window resumes to the same committed trajectory as an unkilled run: scripted server, real
containers, real SQLite stores. Every scripted reply is a function of its request, so the two runs
are asked the same questions and may be compared message by message."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from sqlalchemy import select

from environments.cleanup import gc
from environments.docker_client import DockerClient
from prchain.app.rollout import store_label
from prchain.cli import main
from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.llm.config import ROLES
from sql.db import make_engine, session_scope
from sql.models import P2TStage, Rollout, Step
from tests.agent.conftest import seed_chain
from tests.p2t.test_cli_curate import NODES, store_like_chain_build
from tests.p2t.test_forward import ADD_SUBTRACT, SUBMIT, bash, editor, verifier

pytestmark = pytest.mark.docker

# The blind agent's k-th step of the stage, whatever the window: five windows of one committed step.
PLAN = [
    bash("ls calc tests"),
    editor(command="view", path="calc/ops.py"),
    bash("grep -n 'def ' calc/ops.py"),
    ADD_SUBTRACT,
    SUBMIT,
]


def seed_policy(body: dict[str, Any]) -> dict[str, Any]:
    messages = body["messages"]
    last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
    k = sum(1 for m in messages[last_user:] if m["role"] == "assistant")
    calls = PLAN[min(k, len(PLAN) - 1)]
    return {"tool_calls": [{**c, "id": f"call_{k}_{i}"} for i, c in enumerate(calls)]}


def script(server: ScriptedLLMServer, kill_at: int | None = None) -> list[int]:
    """Every role answers from its request; with `kill_at`, the curating process is SIGKILLed
    when the server receives that request (counted over the whole run)."""
    victim: list[int] = []
    seen = [0]

    def counted(answer: Any) -> Any:
        def respond(body: dict[str, Any]) -> dict[str, Any]:
            seen[0] += 1
            if kill_at is not None and seen[0] == kill_at and victim:
                os.kill(victim[0], signal.SIGKILL)
            return answer(body)

        return respond

    server.push(model="p2t_seed", responder=counted(seed_policy), times=None)
    server.push(model="p2t_verifier", responder=counted(verifier), times=None)
    return victim


def build_graph(server: ScriptedLLMServer, cfg: Path, chain_id: int) -> None:
    server.push(model="p2t_proposer", content=json.dumps({"nodes": NODES}))
    server.push(model="p2t_proposer", content=json.dumps({"nodes": []}))
    server.push(model="p2t_critic", content=json.dumps({"verdicts": [], "feedback": []}), times=2)
    built = CliRunner().invoke(main, ["p2t", "graph", f"{chain_id}:1", "--config", str(cfg)])
    assert built.exit_code == 0, built.output


def prepare(root: Path, server: ScriptedLLMServer) -> tuple[str, Path, int]:
    root.mkdir()
    url = f"sqlite:///{root / 'store.db'}"
    seeded = seed_chain(url, root, prs=(1,))
    engine = make_engine(url)
    store_like_chain_build(engine, verified=False)
    engine.dispose()
    config = {
        "store": {"url": url},
        # No replay from the LLM cache: the resumed run must get its answers from the server.
        "llm": {"models": {r: r for r in ROLES}, "cache": False},
        "environment": {
            "test_command": {"acme/calc": "python3 -m pytest -q -p no:cacheprovider tests"}
        },
        "p2t": {"window": 2, "commit": 1, "seeds": 2, "mutate": False},
    }
    cfg = root / "prchain.yaml"
    cfg.write_text(yaml.safe_dump(config))
    build_graph(server, cfg, seeded.chain_id)
    return url, cfg, seeded.chain_id


def trajectory(url: str) -> dict[str, Any]:
    """The committed trajectory: every step message and the stage record, without timings."""
    engine = make_engine(url, create=False)
    with session_scope(engine) as session:
        rollouts = list(session.scalars(select(Rollout).filter_by(source="p2t")))
        assert len(rollouts) == 1, [r.id for r in rollouts]
        steps = session.scalars(
            select(Step).filter_by(rollout_id=rollouts[0].id).order_by(Step.idx)
        )
        stage = session.scalars(select(P2TStage)).one()
        shot = {
            "status": (rollouts[0].status, rollouts[0].kept_stages),
            "steps": [(s.idx, s.kind, s.message, s.completion_tokens) for s in steps],
            "stage": (stage.admitted, stage.established, stage.windows, stage.steps),
        }
    engine.dispose()
    return shot


def test_a_curation_killed_at_a_random_window_resumes_to_the_unkilled_trajectory(
    fake_llm: ScriptedLLMServer, tmp_path: Path, base_image: Any
) -> None:
    url, cfg, chain_id = prepare(tmp_path / "whole", fake_llm)
    script(fake_llm)
    before = len(fake_llm.requests)
    whole = CliRunner().invoke(
        main, ["p2t", "curate", "--chain", str(chain_id), "--config", str(cfg)]
    )
    assert whole.exit_code == 0, whole.output
    asked = len(fake_llm.requests) - before
    reference = trajectory(url)
    assert reference["status"] == ("kept", 1) and len(reference["stage"][2]) == 5

    fake_llm.reset()
    url, cfg, chain_id = prepare(tmp_path / "killed", fake_llm)
    kill_at = random.randint(2, asked - 2)  # a random request of a random window
    victim = script(fake_llm, kill_at)
    command = [str(Path(sys.executable).with_name("prchain")), "p2t", "curate"]
    command += ["--chain", str(chain_id)]
    process = subprocess.Popen(
        [*command, "--config", str(cfg)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT
    )
    victim.append(process.pid)
    output, _ = process.communicate(timeout=600)
    assert process.returncode == -signal.SIGKILL, (kill_at, output.decode()[-2000:])
    # what the killed process leaves is its own sandbox, which `env gc` removes
    gc(DockerClient(), labels={"prchain.store": store_label(url)})
    engine = make_engine(url, create=False)
    with session_scope(engine) as session:
        assert session.scalars(select(Rollout)).one().status == "running"
    engine.dispose()

    fake_llm.reset()
    script(fake_llm)
    resumed = CliRunner().invoke(
        main, ["p2t", "curate", "--chain", str(chain_id), "--config", str(cfg)], terminal_width=200
    )
    assert resumed.exit_code == 0, resumed.output
    assert "resumed" in resumed.output, resumed.output
    assert trajectory(url) == reference, f"killed at request {kill_at} of {asked}"
