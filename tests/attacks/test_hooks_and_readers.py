"""A scripted agent attacks its sandbox through a whole rollout; no gold line reaches any observation,
stored step or exported record. The caps end a stage with their reason instead of storing or
judging unbounded work."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from prchain.agent.export import export_trajectories, validate_record
from prchain.agent.runner import ChainRunner
from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.dev.repos import git
from prchain.store.models import RolloutStage, Step
from tests.agent.conftest import bash, seed_chain, submit, verdict

pytestmark = [pytest.mark.docker, pytest.mark.slow]

ROOT_DIR, MIRROR = "/var/lib/prchain/root", "/opt/prchain/origin.git"
HOOK = (
    f"#!/bin/sh\\nid -u >> /work/repo/.hook-ran\\n"
    f"git --git-dir={MIRROR} log --all -p >> /work/repo/.loot 2>&1\\n"
    f"cat {ROOT_DIR}/gold-*.patch >> /work/repo/.loot 2>&1\\n"
)
PLANT = (
    "for h in reference-transaction post-checkout post-commit pre-commit post-merge; do "
    f"printf '{HOOK}' > .git/hooks/$h; chmod +x .git/hooks/$h; done; "
    "git config core.fsmonitor .git/hooks/post-checkout; "
    "git config --global core.fsmonitor /work/repo/.git/hooks/post-checkout; echo planted"
)
READER = (  # waits until the reader runs in its own session (see tests/environments/test_escape.py)
    "setsid nohup bash -c 'echo $$ > /tmp/reader.pid; while true; do "
    f"cat {ROOT_DIR}/gold-*.patch >> /tmp/loot 2>/dev/null; "
    'find / -xdev -type f -readable -name "*.patch" -exec cat {} + >> /tmp/loot 2>/dev/null; '
    "sleep 0.05; done' >/dev/null 2>&1 < /dev/null & "
    "for i in $(seq 100); do [ -s /tmp/reader.pid ] && break; sleep 0.1; done; echo started"
)
PROBE = (
    f"ls -la {ROOT_DIR} 2>&1; cat {ROOT_DIR}/gold-*.patch 2>&1; "
    f"git --git-dir={MIRROR} log --all -p 2>&1 | head -50; "
    "cat .hook-ran .loot 2>&1 | head -c 4000; head -c 4000 /tmp/loot 2>&1; "
    "find / -xdev -name 'gold-*' 2>/dev/null; echo probed"
)


def _stage_and_turn(body: dict[str, Any]) -> tuple[int, int]:
    turns = 0
    for message in reversed(body["messages"]):
        if message["role"] == "user":
            break
        turns += message["role"] == "assistant"
    stage = sum(
        1 for m in body["messages"] if m["role"] == "user" and "Task " in str(m.get("content"))
    )
    return stage, turns


def attacker(body: dict[str, Any]) -> dict[str, Any]:
    """Each stage: plant hooks, start a reader, probe every privileged place, add an op, submit."""
    stage, turn = _stage_and_turn(body)
    work = f"printf '\\n\\ndef op_{stage}(x, y):\\n    return (x, y)\\n' >> calc/ops.py"
    actions = [bash(PLANT), bash(READER), bash(PROBE), bash(work), submit(f"stage {stage}")]
    return {"tool_calls": actions[min(turn, len(actions) - 1)]}


def gold_lines(repo: Any, numbers: tuple[int, ...]) -> list[str]:
    """Lines the chain's gold patches add that exist nowhere at B_1."""
    base = repo.prs[numbers[0]].base_sha
    files = git(repo.path, "ls-tree", "-r", "--name-only", base).split()
    at_base = "\n".join(git(repo.path, "show", f"{base}:{f}") for f in files)
    lines = set()
    for number in numbers:
        for line in repo.prs[number].gold_patch.splitlines():
            body = line[1:].strip()
            if line.startswith("+") and not line.startswith("+++") and len(body) >= 8:
                lines.add(body)
    return sorted(line for line in lines if line not in at_base)


def test_hooks_readers_and_probes_leak_no_gold_line_anywhere(
    fake_llm: ScriptedLLMServer,
    sqlite_engine: Engine,
    tmp_path: Path,
    make_runner: Callable[..., ChainRunner],
) -> None:
    prs = (1, 2, 3)
    seeded = seed_chain(str(sqlite_engine.url), tmp_path, prs)
    fake_llm.push(model="policy", responder=attacker, times=None)
    fake_llm.push(model="judge", content=verdict(0.9, "Acceptable."), times=None)
    result = make_runner(sqlite_engine).run(seeded.chain_id)
    assert (result.status, result.kept_stages) == ("kept", 3), result.reason

    out = tmp_path / "trajectories.jsonl"
    assert export_trajectories(sqlite_engine, out, min_score=0.8, keep="all").written == 1
    (record,) = [json.loads(line) for line in out.read_text().splitlines()]
    validate_record(record)
    with Session(sqlite_engine) as session:
        steps = list(session.scalars(select(Step).filter_by(rollout_id=result.rollout_id)))
    stored = [json.dumps(s.message) + json.dumps(s.observation) for s in steps]
    exported = [json.dumps(m) for m in record["messages"]]
    assert any("probed" in text for text in exported)  # the probes ran and were recorded
    golds = gold_lines(seeded.repo, prs)
    assert golds, "the chain has no gold line to look for"
    for text in stored + exported + [json.dumps(record["metadata"])]:
        assert [line for line in golds if line in text] == []
    assert not any('"0\\n' in text for text in exported if ".hook-ran" in text)


def test_a_hundred_megabyte_file_ends_the_stage_with_a_bounded_stored_diff(
    fake_llm: ScriptedLLMServer,
    sqlite_engine: Engine,
    tmp_path: Path,
    make_runner: Callable[..., ChainRunner],
) -> None:
    seeded = seed_chain(str(sqlite_engine.url), tmp_path)
    fake_llm.push(model="policy", tool_calls=bash("head -c 100000000 /dev/urandom > data.bin"))
    fake_llm.push(model="policy", tool_calls=submit("added data"))
    result = make_runner(sqlite_engine).run(seeded.chain_id)
    assert result.status == "rejected" and "environment.max_diff_bytes" in str(result.reason)
    assert fake_llm.requests_for("judge") == []  # never sent to the judge
    with Session(sqlite_engine) as session:
        stage = session.scalars(select(RolloutStage).filter_by(rollout_id=result.rollout_id)).one()
    assert stage.status == "failed" and "max_diff_bytes" in (stage.reason or "")
    for diff in (stage.stage_diff, stage.cumulative_diff):
        assert "data.bin" in diff and len(diff) < 10_000


def test_a_judge_prompt_past_its_cap_is_not_sent(
    fake_llm: ScriptedLLMServer,
    sqlite_engine: Engine,
    tmp_path: Path,
    make_runner: Callable[..., ChainRunner],
) -> None:
    seeded = seed_chain(str(sqlite_engine.url), tmp_path)
    fake_llm.push(model="policy", tool_calls=bash("seq 1 20000 > numbers.txt"))
    fake_llm.push(model="policy", tool_calls=submit("numbers"))
    result = make_runner(sqlite_engine, max_judge_prompt_tokens=5000).run(seeded.chain_id)
    assert "agent.max_judge_prompt_tokens" in str(result.reason)
    assert fake_llm.requests_for("judge") == []
    with Session(sqlite_engine) as session:
        stage = session.scalars(select(RolloutStage).filter_by(rollout_id=result.rollout_id)).one()
    assert stage.status == "failed" and "max_judge_prompt_tokens" in (stage.reason or "")
