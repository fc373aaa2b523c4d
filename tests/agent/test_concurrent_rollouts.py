"""Two `prchain rollout` processes on one PostgreSQL store, started together on the demo chains,
make exactly one rollout per chain, and every exported record validates (issue 16, finding 2).

Before chain leases both processes took the same chain (double LLM spend) and, sharing one
rollout row, interleaved their steps: the export held tool results without a matching call.
Real processes, real containers, the demo's scripted LLM server, a fresh PostgreSQL database.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import select
from sqlalchemy.orm import Session

from prchain.agent.export import validate_record
from prchain.cli import main
from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.dev.repos import make_chain_repo
from prchain.store.models import Chain, Rollout, Step, WorkLease
from prchain.store.opener import make_engine

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.postgres]
ROOT = Path(__file__).resolve().parents[2]
PRCHAIN = str(Path(sys.executable).parent / "prchain")
DEMO_CONFIG = str(ROOT / "examples" / "demo.yaml")


def _invoke(*args: str) -> None:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == 0, f"prchain {' '.join(args)}:\n{result.output}"


@pytest.fixture
def demo_llm(monkeypatch: pytest.MonkeyPatch) -> Any:
    with ScriptedLLMServer() as server:
        server.load_script(ROOT / "examples" / "demo-llm.yaml")
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "demo-key-not-secret")
        yield server


@pytest.mark.parametrize("db_url", ["postgres"], indirect=True)
def test_two_rollout_processes_share_the_chains(
    db_url: str, demo_llm: ScriptedLLMServer, docker_client: Any, tmp_path: Path
) -> None:
    common = ["--config", DEMO_CONFIG, "--db", db_url]
    for name in ("calc", "abacus"):  # two demo repositories: two chains to share out
        repo = make_chain_repo(tmp_path / name)
        _invoke("mine", "--source", "git", "--name", f"acme/{name}", str(repo.path), *common)
    _invoke("chains", "build", *common)
    _invoke("queries", "build", *common)

    runs = [
        subprocess.Popen(
            [PRCHAIN, "rollout", *common],
            cwd=tmp_path,
            env=dict(os.environ),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for _ in range(2)
    ]
    outputs = [run.communicate(timeout=1800)[0] for run in runs]
    for run, output in zip(runs, outputs, strict=True):
        # A process that found every chain taken by the other one says so and exits 1.
        assert run.returncode == 0 or "being rolled out by other runners" in output, output

    engine = make_engine(db_url)
    with Session(engine) as session:
        chains = list(session.scalars(select(Chain.id)))
        per_chain = Counter(session.scalars(select(Rollout.chain_id)))
        statuses = set(session.scalars(select(Rollout.status)))
        leases = list(session.scalars(select(WorkLease)))
        positions = [
            list(session.scalars(select(Step.idx).filter_by(rollout_id=r).order_by(Step.idx)))
            for r in session.scalars(select(Rollout.id))
        ]
    engine.dispose()
    assert len(chains) == 2 and per_chain == dict.fromkeys(chains, 1), (per_chain, outputs)
    assert statuses == {"kept"} and leases == []  # every lease released
    assert all(idx == list(range(len(idx))) for idx in positions)  # one gap-free sequence each

    out = tmp_path / "trajectories.jsonl"
    _invoke("export", str(out), *common)
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert sorted(r["metadata"]["chain_id"] for r in records) == sorted(chains)
    for record in records:
        validate_record(record)
