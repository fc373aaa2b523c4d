"""A P2T curation killed with SIGKILL (a real `prchain p2t curate` process) resumes to the same
committed trajectory as an unkilled run: scripted server, real containers, real SQLite stores. Every
scripted reply is a function of its request, so the runs are asked the same questions and may be
compared message by message.

One store is killed three times over, each resume killed again: at a request of the first window
(nothing checkpointed: the stage starts over), at the first request of the last window (its
checkpoint holds the stage's edit, which the resume re-applies), and at a random request. The random
point comes from a seed the failure message prints; `PRCHAIN_RESUME_SEED=<seed>` replays it."""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from sqlalchemy import select

from prchain.app.rollout import store_label
from prchain.cli import main
from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.environments.cleanup import gc
from prchain.environments.docker_client import DockerClient
from prchain.llm.config import ROLES
from prchain.store.db import session_scope
from prchain.store.models import P2TStage, Rollout, Step
from prchain.store.opener import make_engine
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


def script(server: ScriptedLLMServer, hook: Callable[[int], None] = lambda _n: None) -> None:
    """Every role answers from its request; `hook(n)` runs when the n-th request of the run
    arrives (counted over every role), before it is answered."""
    seen = [0]

    def counted(answer: Any) -> Any:
        def respond(body: dict[str, Any]) -> dict[str, Any]:
            seen[0] += 1
            hook(seen[0])
            return answer(body)

        return respond

    server.push(model="p2t_seed", responder=counted(seed_policy), times=None)
    server.push(model="p2t_verifier", responder=counted(verifier), times=None)


def build_graph(server: ScriptedLLMServer, cfg: Path, chain_id: int) -> None:
    server.push(model="p2t_proposer", content=json.dumps({"nodes": NODES}))
    server.push(model="p2t_proposer", content=json.dumps({"nodes": []}))
    server.push(model="p2t_critic", content=json.dumps({"verdicts": [], "feedback": []}), times=2)
    built = CliRunner().invoke(main, ["p2t", "graph", f"{chain_id}:1", "--config", str(cfg)])
    assert built.exit_code == 0, built.output


def write_config(path: Path, url: str) -> Path:
    config = {
        "store": {"url": url},
        # No replay from the LLM cache: a resumed run must get its answers from the server.
        "llm": {"models": {r: r for r in ROLES}, "cache": False},
        "environment": {
            "test_command": {"acme/calc": "python3 -m pytest -q -p no:cacheprovider tests"}
        },
        "p2t": {"window": 2, "commit": 1, "seeds": 2, "mutate": False},
    }
    path.write_text(yaml.safe_dump(config))
    return path


def prepare(root: Path, server: ScriptedLLMServer) -> tuple[Path, Path, int]:
    """A store with the chain and its stage graph (built once), and a copy of it: (the store the
    unkilled run curates, the copy the killed runs curate, the chain)."""
    db, copy = root / "whole.db", root / "killed.db"
    seeded = seed_chain(f"sqlite:///{db}", root, prs=(1,))
    engine = make_engine(f"sqlite:///{db}")
    store_like_chain_build(engine, verified=False)
    engine.dispose()
    build_graph(server, write_config(root / "whole.yaml", f"sqlite:///{db}"), seeded.chain_id)
    # the backup API copies what is still in the WAL file too
    with (
        contextlib.closing(sqlite3.connect(db)) as src,
        contextlib.closing(sqlite3.connect(copy)) as dst,
    ):
        src.backup(dst)
    return db, copy, seeded.chain_id


def committed_windows(db: Path) -> int:
    """How many windows of the stage the store has checkpointed."""
    with contextlib.closing(sqlite3.connect(db, timeout=60)) as connection:
        row = connection.execute("SELECT windows FROM p2t_stages").fetchone()
    return len(json.loads(row[0])) if row and row[0] else 0


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


def kill_points(windows: list[int], rng: random.Random) -> list[int]:
    """Request numbers of the unkilled run to kill at, in order. `windows[n - 1]` is how many
    windows were checkpointed when request n arrived."""
    asked, last = len(windows), windows[-1]
    first_window = [n for n in range(2, asked + 1) if windows[n - 1] == 0]
    points = {
        rng.choice(first_window),  # no checkpoint yet: the stage starts over
        windows.index(last) + 1,  # the last window's first request: the edit is checkpointed
        rng.randint(2, asked - 2),  # anywhere
    }
    return sorted(points)


def kill_curation(
    server: ScriptedLLMServer, cfg: Path, chain_id: int, kill_at: int, replay: str
) -> None:
    """A real `prchain p2t curate` process, SIGKILLed when the server receives its request
    `kill_at`; then `env gc` of the sandbox it leaves, as a user would."""
    server.reset()
    victim: list[int] = []
    script(server, lambda n: os.kill(victim[0], signal.SIGKILL) if n == kill_at else None)
    command = [str(Path(sys.executable).with_name("prchain")), "p2t", "curate"]
    process = subprocess.Popen(
        [*command, "--chain", str(chain_id), "--config", str(cfg)],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    victim.append(process.pid)
    output, _ = process.communicate(timeout=600)
    assert process.returncode == -signal.SIGKILL, (replay, process.returncode, output.decode())


def test_a_curation_killed_again_and_again_resumes_to_the_unkilled_trajectory(
    fake_llm: ScriptedLLMServer, tmp_path: Path, base_image: Any
) -> None:
    seed = int(os.environ.get("PRCHAIN_RESUME_SEED") or random.randrange(2**32))
    db, copy, chain_id = prepare(tmp_path, fake_llm)
    fake_llm.reset()
    windows: list[int] = []
    script(fake_llm, lambda _n: windows.append(committed_windows(db)))
    cfg = tmp_path / "whole.yaml"
    whole = CliRunner().invoke(
        main, ["p2t", "curate", "--chain", str(chain_id), "--config", str(cfg)]
    )
    assert whole.exit_code == 0, whole.output
    reference = trajectory(f"sqlite:///{db}")
    assert reference["status"] == ("kept", 1) and len(reference["stage"][2]) == 5
    assert windows[0] == 0 and windows[-1] == 4, windows

    points = kill_points(windows, random.Random(seed))
    replay = f"PRCHAIN_RESUME_SEED={seed}: killed at requests {points} of {len(windows)} {windows}"
    print(replay)  # shown with a timeout's report too
    url = f"sqlite:///{copy}"
    cfg = write_config(tmp_path / "killed.yaml", url)
    docker = DockerClient()
    restart = 0  # the unkilled run's request a resumed run's first request stands for, minus one
    for point in points:
        kill_curation(fake_llm, cfg, chain_id, point - restart, f"{replay}; at {point}")
        # what the killed process leaves is its own sandbox, which `env gc` removes
        left = gc(docker, labels={"prchain.store": store_label(url)})
        assert len(left) == 1, (replay, point, left)
        engine = make_engine(url, create=False)
        with session_scope(engine) as session:
            assert session.scalars(select(Rollout)).one().status == "running", replay
        engine.dispose()
        restart = windows.index(windows[point - 1])  # the killed window runs again from its start

    fake_llm.reset()
    script(fake_llm)
    resumed = CliRunner().invoke(
        main, ["p2t", "curate", "--chain", str(chain_id), "--config", str(cfg)], terminal_width=200
    )
    assert resumed.exit_code == 0, (replay, resumed.output)
    assert "resumed" in resumed.output, (replay, resumed.output)
    assert trajectory(url) == reference, replay
    assert docker.containers({"prchain.store": store_label(url)}) == [], replay
