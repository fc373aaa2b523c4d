"""The reverse phase against the scripted server in a real container: every hard check prunes,
the critic's verdicts apply, observations are the sandbox's own, and the loop stops at a fixed point."""

from __future__ import annotations

import json
from typing import Any

import pytest

from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.llm.client import LLMClient
from prchain.llm.config import LLMConfig
from prchain.p2t.config import P2TConfig
from prchain.p2t.reverse import ReversePhase

pytestmark = pytest.mark.docker

QUERY = "The calculator in calc/ops.py can only add. Give it a subtraction operation."
ADD = "def add(a, b):\n    return a + b\n"
SUBTRACT = ADD + "\n\ndef subtract(a, b):\n    return a - b\n"


def fact(node_id: str, statement: str, action: str, **extra: Any) -> dict[str, Any]:
    return {
        "id": node_id,
        "node_type": "fact",
        "fact_kind": "static",
        "statement": statement,
        "action": action,
        **extra,
    }


def edit(node_id: str, old: str, new: str, path: str = "calc/ops.py") -> dict[str, Any]:
    return {
        "id": node_id,
        "node_type": "code_edit",
        "statement": "add subtract beside add",
        "action": f"STR_REPLACE {path}",
        "old_str": old,
        "new_str": new,
    }


ROUND_1 = [
    fact("f1", "calc/ops.py defines add and nothing else", "VIEW calc/ops.py"),
    fact("f_leak", "The change adds `def subtract(a, b):` to the module", "VIEW calc/ops.py"),
    fact("f_unrep", "the first lines of calc/ops.py define add", "VIEW calc/ops.py:1-..."),
    fact("f_unver", "the clock reads a particular nanosecond", "BASH date +%s%N"),
    fact(
        "f_compound",
        "ops.py has add and no subtract, and the tests only cover add",
        "BASH grep -rn def calc tests",
    ),
    edit("edit1", ADD, SUBTRACT),  # right, but there is no plan yet
    edit("edit_bad", "def add(a,b):", "def add(a, b):"),  # old text does not match byte for byte
    {
        **edit("edit_readme", "# calc\n", "# calc (subtract too)\n", "README.md")
    },  # not part of the fix
]
ROUND_2 = [
    {
        "id": "analysis",
        "node_type": "issue_analysis",
        "statement": "only add exists",
        "action": "THINK calc/ops.py has a single operation, add.",
    },
    {
        "id": "plan",
        "node_type": "fix_plan",
        "statement": "add a sibling function",
        "action": "THINK define subtract next to add, same shape.",
    },
    edit("edit1", ADD, SUBTRACT),
    {
        "id": "val1",
        "node_type": "validation",
        "statement": "subtract(5, 3) is 2",
        "action": "BASH python3 -c 'from calc.ops import subtract; print(subtract(5, 3))'",
    },
]


def nodes(items: list[dict[str, Any]]) -> str:
    return json.dumps({"nodes": items})


def script(server: ScriptedLLMServer) -> None:
    server.push(
        model="p2t_proposer",
        tool_calls=[{"name": "bash", "arguments": {"command": "cat calc/ops.py"}}],
    )
    server.push(model="p2t_proposer", content=nodes(ROUND_1))
    server.push(model="p2t_proposer", content=nodes(ROUND_2))
    server.push(model="p2t_proposer", content=nodes([]))
    review = {
        "verdicts": [
            {"id": "f_compound", "verdict": "prune", "check": "compound", "reason": "two claims"}
        ],
        "feedback": ["Add a fact about how add is tested."],
    }
    server.push(model="p2t_critic", content=json.dumps(review))
    server.push(
        model="p2t_critic", content=json.dumps({"verdicts": [], "feedback": []}), times=None
    )


def test_reverse_phase_prunes_each_hard_check_and_stops_at_a_fixed_point(
    fake_llm: ScriptedLLMServer,
    llm_config: LLMConfig,
    make_env: Any,
    calc_chain: Any,
    sqlite_engine: Any,
) -> None:
    script(fake_llm)
    env = make_env()
    env.enter_stage(1)
    start_tree = env.execute("git status --porcelain && cat calc/ops.py").output
    phase = ReversePhase(
        LLMClient(llm_config, sqlite_engine),
        env,
        P2TConfig(),
        QUERY,
        calc_chain.stages[0].gold_patch,
    )
    result = phase.run()

    pruned = {p.node.id: p.check for p in result.pruned}
    assert pruned == {
        "f_leak": "patch_leakage",
        "f_unrep": "unreplayable",
        "f_unver": "unverified",
        "f_compound": "compound",
        "edit1": "premature",
        "edit_bad": "edit_drift",
        "edit_readme": "edit_drift",
    }
    assert [n.id for n in result.graph.nodes] == ["f0", "f1", "analysis", "plan", "edit1", "val1"]
    assert result.stop_reason == "unchanged" and result.rounds == 3
    assert result.missing_artifacts == ["reproduce_script"]
    graph = result.graph
    assert "def add" in graph.node("f1").unlocker.observation
    assert "subtract" not in graph.node("f1").unlocker.observation  # the pre-fix code
    assert graph.node("val1").unlocker.observation.strip() == "2"  # run with the edits applied
    assert graph.node("f0").unlocker.observation == QUERY
    assert {("analysis", "plan"), ("plan", "edit1"), ("edit1", "val1")} <= graph.edges
    # Round 2's proposer heard why round 1 lost its nodes, one sentence per gap.
    second = fake_llm.requests_for("p2t_proposer")[2]["messages"][-1]["content"]
    assert "premature" in second and "how add is tested" in second
    assert env.execute("git status --porcelain && cat calc/ops.py").output == start_tree
    assert not fake_llm.pending()[:-1]


def test_reverse_phase_stops_after_max_rounds(
    fake_llm: ScriptedLLMServer,
    llm_config: LLMConfig,
    make_env: Any,
    calc_chain: Any,
    sqlite_engine: Any,
) -> None:
    for n in range(3):
        fake_llm.push(
            model="p2t_proposer",
            content=nodes(
                [fact(f"g{n}", f"ops.py line {n + 1}", f"VIEW calc/ops.py:{n + 1}-{n + 1}")]
            ),
        )
    fake_llm.push(
        model="p2t_critic", content=json.dumps({"verdicts": [], "feedback": []}), times=None
    )
    env = make_env()
    env.enter_stage(1)
    result = ReversePhase(
        LLMClient(llm_config, sqlite_engine),
        env,
        P2TConfig(max_rounds=2),
        QUERY,
        calc_chain.stages[0].gold_patch,
    ).run()
    assert result.stop_reason == "max_rounds" and result.rounds == 2
    assert [n.id for n in result.graph.nodes] == ["f0", "g0", "g1"]
