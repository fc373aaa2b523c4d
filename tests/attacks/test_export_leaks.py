"""Issue 20, finding 4 (the export's half): a tool output that showed an earlier stage's gold patch
was exported, because only system and user turns were scanned. Here a scripted agent makes a tool
print a gold line of another stage, or a hidden test name, without ever typing it (base64); the
rollout is kept, and the export drops it with the reason."""

from __future__ import annotations

import base64
from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import Engine, select

from prchain.agent.export import export_trajectories
from prchain.agent.runner import ChainRunner
from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.store.db import session_scope
from prchain.store.models import ChainStage, StageVerification
from tests.agent.conftest import bash, seed_chain, submit, verdict

pytestmark = pytest.mark.docker

LEAKS = {
    "later gold line": ("return a * b", "a tool message shows a gold-patch line"),
    "hidden test name": ("collected test_subtract", "a tool message shows a hidden test name"),
}


@pytest.mark.parametrize("what", sorted(LEAKS))
def test_a_tool_output_showing_oracle_text_drops_the_trajectory(
    what: str,
    fake_llm: ScriptedLLMServer,
    sqlite_engine: Engine,
    tmp_path: Path,
    make_runner: Callable[..., ChainRunner],
) -> None:
    seeded = seed_chain(str(sqlite_engine.url), tmp_path, (1,))
    with session_scope(sqlite_engine) as session:  # names only: "unusable" keeps T(p̂) out of it
        stage = session.scalars(select(ChainStage)).one()
        session.add(
            StageVerification(
                chain_stage_id=stage.id,
                recipe="attack",
                status="unusable",
                fail_to_pass=["tests/test_ops.py::test_subtract"],
            )
        )
        stage.gold_patch += seeded.repo.prs[2].gold_patch  # a "later" line to guard: return a * b
    text, reason = LEAKS[what]
    encoded = base64.b64encode(text.encode()).decode()
    fake_llm.push(model="policy", tool_calls=bash(f"echo {encoded} | base64 -d"))
    fake_llm.push(
        model="policy",
        tool_calls=bash("printf '\\ndef minus(x, y):\\n    return x - y\\n' >> calc/ops.py"),
    )
    fake_llm.push(model="policy", tool_calls=submit("done"))
    fake_llm.push(model="judge", content=verdict(0.9, "Acceptable."))
    result = make_runner(sqlite_engine).run(seeded.chain_id)
    assert result.status == "kept", result.reason

    summary = export_trajectories(sqlite_engine, tmp_path / "out.jsonl")
    assert summary.written == 0 and summary.skipped == {reason: 1}


# Issue 52: the same line, shown only encoded in the tool output (the agent typed neither form).
ENCODED = {
    "gzip-base64": "import base64,gzip; print(base64.b64encode(gzip.compress(TEXT)).decode())",
    "hex": "print(TEXT.hex())",
    "base64-wrapped": "import base64; print(base64.encodebytes(b'# ' * 20 + TEXT).decode())",
}


@pytest.mark.parametrize("encoding", sorted(ENCODED))
def test_an_encoded_gold_line_in_a_tool_output_drops_the_trajectory(
    encoding: str,
    fake_llm: ScriptedLLMServer,
    sqlite_engine: Engine,
    tmp_path: Path,
    make_runner: Callable[..., ChainRunner],
) -> None:
    seeded = seed_chain(str(sqlite_engine.url), tmp_path, (1,))
    with session_scope(sqlite_engine) as session:
        stage = session.scalars(select(ChainStage)).one()
        stage.gold_patch += seeded.repo.prs[2].gold_patch  # a "later" line to guard: return a * b
    reverse = "return a * b"[::-1]  # typed reversed, so the agent never types the line itself
    text = f"{reverse!r}[::-1].encode()"
    script = ENCODED[encoding].replace("TEXT", f"({text})")
    fake_llm.push(model="policy", tool_calls=bash(f'python3 -c "{script}"'))
    fake_llm.push(
        model="policy",
        tool_calls=bash("printf '\\ndef minus(x, y):\\n    return x - y\\n' >> calc/ops.py"),
    )
    fake_llm.push(model="policy", tool_calls=submit("done"))
    fake_llm.push(model="judge", content=verdict(0.9, "Acceptable."))
    result = make_runner(sqlite_engine).run(seeded.chain_id)
    assert result.status == "kept", result.reason

    summary = export_trajectories(sqlite_engine, tmp_path / "out.jsonl")
    assert summary.written == 0
    assert summary.skipped == {"a tool message shows a gold-patch line": 1}
