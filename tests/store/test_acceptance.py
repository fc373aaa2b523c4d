"""Issue 23 acceptance, on PostgreSQL with real containers and the scripted LLM server:

- a store made by main before migrations (cef42d3's schema, tests/data/stores) is refused in one
  line, upgraded with `prchain db upgrade`, and then the whole pipeline runs on it (mine, chains,
  queries, tests verify, rollout, export, report);
- two `queries build` at once make every LLM call once;
- during a rollout, two `tests verify` and a `chains build` that no longer selects the rolled-out
  chain run: no stage is verified twice, the chain is kept (superseded) and the rollout finishes.
"""

from __future__ import annotations

import json
import re
import subprocess
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from sqlalchemy import select
from sqlalchemy.orm import Session

from prchain.cli import main
from prchain.dev.fake_llm import ScriptedLLMServer, last_message_text
from prchain.dev.repos import make_tested_repo
from prchain.llm.config import LLMConfig
from prchain.store.models import Chain, Rollout, StageVerification
from prchain.store.opener import make_engine
from tests.agent.test_resume import PRCHAIN
from tests.sql.test_migrations import _load_shape

pytestmark = [pytest.mark.docker, pytest.mark.postgres, pytest.mark.slow]
GEO_REPO = "acme/geo"
GEO_TEST_COMMAND = "python3 -m pytest -p no:cacheprovider {files}"
VERIFIED = ("usable", "unusable")


def _invoke(*args: str, code: int = 0) -> str:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    assert result.exit_code == code, f"prchain {' '.join(args)}:\n{result.output}"
    return result.output


def _start(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [*PRCHAIN, *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


def _finish(proc: subprocess.Popen[str], timeout: float = 600) -> str:
    out, _ = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, out[-3000:]
    return out


def _script_queries(server: ScriptedLLMServer) -> None:
    def slow(content: str) -> Any:
        def reply(_body: dict[str, Any]) -> dict[str, Any]:
            time.sleep(0.3)  # long enough for the two builds to overlap
            return {"content": content}

        return reply

    server.push(model="query_constructor", times=None, responder=slow("Extend the shapes."))
    server.push(model="overview", times=None, responder=slow("Grow the geometry module."))


def test_an_old_store_upgrades_and_overlapping_commands_never_repeat_work(
    fake_llm: ScriptedLLMServer,
    llm_config: LLMConfig,
    db_url: str,
    tmp_path: Path,
    base_image: str,
) -> None:
    if not db_url.startswith("postgresql"):
        pytest.skip("the overlapping-commands acceptance runs on PostgreSQL")
    geo = make_tested_repo(tmp_path / "geo")
    config = tmp_path / "prchain.yaml"
    config.write_text(
        yaml.safe_dump(
            {
                "llm": llm_config.model_dump(mode="json"),
                "verdicts": {"repos": {GEO_REPO: {"test": GEO_TEST_COMMAND}}},
                "environment": {"log_dir": str(tmp_path / "logs")},
                "chains": {"min_chain_code_lines": 0},  # the made-up chain is a few lines per PR
            }
        )
    )
    common = ["--config", str(config), "--db", db_url]

    # 1. main's store before migrations: refused in one line, upgraded, then used.
    _load_shape(db_url, "cef42d3").dispose()
    refused = _invoke("stats", *common, code=1)
    assert "prchain db upgrade" in refused and "Traceback" not in refused
    assert "upgraded the store from 0007_llm_repairs" in _invoke("db", "upgrade", *common)
    _invoke("mine", "--source", "git", "--name", GEO_REPO, str(geo.path), *common)
    _invoke("chains", "build", *common)

    # 2. Two `queries build` at once: each prompt reaches the server once.
    _script_queries(fake_llm)
    builds = [_start("queries", "build", *common) for _ in range(2)]
    for build in builds:
        _finish(build)
    asked = Counter((b["model"], last_message_text(b)) for b in fake_llm.requests)
    assert len(asked) == 4 and set(asked.values()) == {1}, asked.most_common(2)
    fake_llm.reset()

    # 3. A rollout, held at its first policy request while two verifies and a rebuild run.
    holding, release = threading.Event(), threading.Event()

    def policy(body: dict[str, Any]) -> dict[str, Any]:
        if not holding.is_set():
            holding.set()
            release.wait(600)
        if body["messages"][-1]["role"] == "user":  # a stage's first turn: a real change (gates)
            command = "echo '# reviewed' >> geo/shapes.py"
            return {"tool_calls": [{"name": "bash", "arguments": {"command": command}}]}
        return {"tool_calls": [{"name": "submit", "arguments": {"summary": "done"}}]}

    fake_llm.push(model="policy", responder=policy, times=None)
    fake_llm.push(model="judge", content=json.dumps({"score": 0.9, "comment": "Fine."}), times=None)
    rollout = _start("rollout", *common)
    try:
        assert holding.wait(300), "the rollout never asked the policy"
        verifies = [_start("tests", "verify", *common) for _ in range(2)]
        outputs = [_finish(verify) for verify in verifies]
        rebuilt = _invoke("chains", "build", "--max-len", "2", *common)
    finally:
        release.set()
    _finish(rollout)

    engine = make_engine(db_url)
    with Session(engine) as session:
        verified = session.scalars(select(StageVerification.chain_stage_id)).all()
        chain = session.get_one(Chain, 1)
        rollouts = session.execute(select(Rollout.chain_id, Rollout.status)).all()
    engine.dispose()
    assert len(verified) == len(set(verified)) == 3
    summaries = [line for out in outputs for line in out.splitlines() if " stages: " in line]
    ran = sum(
        int(part.split()[0])
        for line in summaries
        for part in line.split(": ", 1)[1].split(";")[0].split(", ")
        if part.split()[1] in VERIFIED
    )
    assert ran == 3, summaries  # every stage's suites ran once, whichever process ran them
    assert re.search(r"chains in use kept, marked superseded\W+1\b", rebuilt), rebuilt
    assert chain.superseded_at is not None  # kept, not deleted, not rewritten
    assert rollouts == [(1, "kept")]

    # 4. The rest of the pipeline reads the upgraded store.
    out = tmp_path / "trajectories.jsonl"
    _invoke("export", str(out), *common)
    assert len(out.read_text().splitlines()) == 1
    assert "1 trajectory pages" in _invoke("report", str(tmp_path / "site"), *common)
