"""The forward phase against the scripted server in a real container: a premature establishment is
blocked, an unseen entity fails the gate, rollback is exact, the shortest effective candidate is
committed, and the stage is admitted only when the tests pass."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.environments.protocol import Environment
from prchain.llm.client import LLMClient
from prchain.llm.config import LLMConfig
from prchain.p2t.config import P2TConfig
from prchain.p2t.forward import ForwardPhase
from prchain.p2t.graph import ISSUE_ACTION, Node, ProcessGraph, Unlocker

pytestmark = pytest.mark.docker

QUERY = "The calculator in calc/ops.py can only add. Give it a subtraction operation."
TREE_HASH = (
    "find . -path ./.git -prune -o -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum"
)
# What each node's statement needs to see in the transcript's tool output.
MARKERS = {
    "calc/ops.py defines add and no other operation": "return a + b",
    "tests/test_ops.py only tests add": "def test_add",
    "subtract is defined next to add": "return a - b",
}


def graph() -> ProcessGraph:
    def node(i: str, kind: str, statement: str, action: str) -> Node:
        return Node(i, kind, statement, Unlocker(action, ""), "static" if kind == "fact" else None)  # type: ignore[arg-type]

    s = list(MARKERS)
    nodes = (
        node("f0", "fact", "The task as stated.", ISSUE_ACTION),
        node("f1", "fact", s[0], "VIEW calc/ops.py"),
        node("f2", "fact", s[1], "VIEW tests/test_ops.py"),
        node("edit1", "code_edit", s[2], "STR_REPLACE calc/ops.py"),
    )
    return ProcessGraph(nodes, frozenset({("f0", "f1"), ("f1", "f2"), ("f1", "edit1")}))


def verifier(body: dict[str, Any]) -> dict[str, Any]:
    """Established when the target's marker shows in a tool OUTPUT of the transcript."""
    text = body["messages"][-1]["content"]
    statement = re.search(r"^Statement: (.*)$", text, re.MULTILINE).group(1)  # type: ignore[union-attr]
    transcript = text.split("## Transcript", 1)[1].split("## Target", 1)[0]
    outputs = "".join(re.findall(r"OUTPUT:\n(.*?)(?=\n\[\d+\]|\Z)", transcript, re.DOTALL))
    return {"content": json.dumps({"established": MARKERS.get(statement, "\0") in outputs})}


def bash(command: str) -> list[dict[str, Any]]:
    return [{"name": "bash", "arguments": {"command": command}}]


def editor(**args: Any) -> list[dict[str, Any]]:
    return [{"name": "str_replace_editor", "arguments": args}]


VIEW_TESTS = bash("cat tests/test_ops.py")  # shows f2 before f1: premature
JUNK = bash("echo junk > junk.txt && rm README.md")
ADD_SUBTRACT = editor(
    command="str_replace",
    path="calc/ops.py",
    old_str="    return a + b\n",
    new_str="    return a + b\n\n\ndef subtract(a, b):\n    return a - b\n",
)
SUBMIT = [{"name": "submit", "arguments": {"summary": "added subtract"}}]


class SubtractOracle:
    def passes(self, env: Environment) -> bool:
        probe = "python3 -c 'from calc.ops import subtract; assert subtract(5, 3) == 2'"
        return env.execute(probe).exit_code == 0


def opening() -> list[dict[str, Any]]:
    return [
        {"role": "system", "content": "You are a developer."},
        {"role": "user", "content": QUERY},
    ]


def curate(llm_config: LLMConfig, engine: Any, env: Any, **config: Any) -> Any:
    p2t = P2TConfig(window=3, commit=3, **config)
    phase = ForwardPhase(LLMClient(llm_config, engine), env, p2t, graph(), QUERY, SubtractOracle())
    return phase.run(opening(), {"f0"})


def tree(env: Any) -> str:
    return env.execute(TREE_HASH).output


def test_window_blocks_premature_and_ungrounded_and_commits_the_effective_seed(
    fake_llm: ScriptedLLMServer, llm_config: LLMConfig, make_env: Any, sqlite_engine: Any
) -> None:
    fake_llm.push(model="p2t_verifier", responder=verifier, times=None)
    for calls in (VIEW_TESTS, JUNK, bash("ls")):  # seed 0: no progress, f2 too early
        fake_llm.push(model="p2t_seed", tool_calls=calls)
    rewrite = {
        "content": "Let me first read `calc/advanced_ops.py`.",
        "tool_call": {
            "name": "str_replace_editor",
            "arguments": {"command": "view", "path": "calc/advanced_ops.py"},
        },
    }
    fake_llm.push(model="p2t_curator", content=json.dumps(rewrite))
    for calls in (editor(command="view", path="calc/ops.py"), VIEW_TESTS, ADD_SUBTRACT):  # seed 1
        fake_llm.push(model="p2t_seed", tool_calls=calls)
    fake_llm.push(model="p2t_seed", tool_calls=SUBMIT, times=2)  # window 2: both seeds submit
    env = make_env()
    env.enter_stage(1)

    result = curate(llm_config, sqlite_engine, env)

    first = result.windows[0]
    cands = {c["name"]: c for c in first.candidates}
    assert cands["seed0"]["eff"] == 0 and cands["seed0"]["early"] == ["f2"]
    assert not cands["mut0"]["grounded"] and "calc/advanced_ops.py" in cands["mut0"]["gate"]
    assert cands["seed1"]["eff"] == 2.5  # 1/1 + 1/2 + 1/1
    assert first.frontier == ["f1"] and first.chosen == "seed1" and first.committed == 3
    assert first.credited == ["edit1", "f1", "f2"]
    assert result.submitted and result.admitted and result.steps == 4
    assert result.established == {"f0", "f1", "f2", "edit1"}
    assert "junk.txt" not in env.execute("ls").output  # seed 0's work was rolled back
    assert "def subtract" in env.diff() and "README" not in env.diff()
    assert not fake_llm.requests_for("p2t_claim_judge")  # the entity check refused first
    for request in fake_llm.requests_for("p2t_seed") + fake_llm.requests_for("p2t_curator"):
        text = json.dumps(request["messages"])
        assert "subtract is defined next to add" not in text  # no graph text reaches the blind side
    assert [r for r in fake_llm.pending() if r.model != "p2t_verifier"] == []


def test_grounded_mutation_wins_and_rollback_is_exact(
    fake_llm: ScriptedLLMServer, llm_config: LLMConfig, make_env: Any, sqlite_engine: Any
) -> None:
    fake_llm.push(model="p2t_verifier", responder=verifier, times=None)
    for calls in (JUNK, bash("ls"), bash("pwd")):  # the only seed: no progress
        fake_llm.push(model="p2t_seed", tool_calls=calls)
    rewrite = {
        "content": "Before anything else, read calc/ops.py as the task says.",
        "tool_call": {
            "name": "str_replace_editor",
            "arguments": {"command": "view", "path": "calc/ops.py"},
        },
    }
    fake_llm.push(model="p2t_curator", content=json.dumps(rewrite))
    fake_llm.push(model="p2t_claim_judge", content=json.dumps({"valid": True, "reasons": []}))
    for calls in (VIEW_TESTS, ADD_SUBTRACT, SUBMIT):  # re-rolled after the mutated first step
        fake_llm.push(model="p2t_seed", tool_calls=calls)
    env = make_env()
    env.enter_stage(1)
    start = tree(env)

    result = curate(llm_config, sqlite_engine, env, seeds=1)

    window = result.windows[0]
    assert window.chosen == "mut0" and window.committed == 3
    assert [c["name"] for c in window.candidates] == ["seed0", "mut0"]
    assert result.admitted and result.established == {"f0", "f1", "f2", "edit1"}
    assert result.messages[0]["content"].startswith("Before anything else")
    assert "junk.txt" not in env.execute("ls").output
    # Restoring the window's start snapshot brings back the exact tree of before the window.
    snap = env.snapshot()
    env.execute("echo more > junk2.txt && rm -r calc")
    env.restore(snap)
    assert tree(env) != start  # the curated edit is there ...
    env.execute("git checkout -q -- calc/ops.py && git status --porcelain")
    assert tree(env) == start  # ... and nothing else


def test_no_groundedness_gate_ablation_commits_the_unseen_step(
    fake_llm: ScriptedLLMServer, llm_config: LLMConfig, make_env: Any, sqlite_engine: Any
) -> None:
    fake_llm.push(model="p2t_verifier", responder=verifier, times=None)
    for calls in (JUNK, bash("ls"), bash("pwd")):
        fake_llm.push(model="p2t_seed", tool_calls=calls)
    rewrite = {
        "content": "The bug must be in `calc/ops.py`; read it.",
        "tool_call": {"name": "bash", "arguments": {"command": "cat calc/ops.py"}},
    }
    fake_llm.push(model="p2t_curator", content=json.dumps(rewrite))
    for calls in (ADD_SUBTRACT, SUBMIT):
        fake_llm.push(model="p2t_seed", tool_calls=calls)
    env = make_env()
    env.enter_stage(1)
    result = curate(llm_config, sqlite_engine, env, seeds=1, groundedness_gate=False)
    assert result.windows[0].chosen == "mut0" and result.admitted
    assert not fake_llm.requests_for("p2t_claim_judge")
