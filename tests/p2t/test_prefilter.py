"""The verifier prefilter: a step is checked against each pending node's unlocker (E1, action
match) before the verifier is asked; only the step's own action counts, never its output."""

from __future__ import annotations

import json
from typing import Any

from prchain.p2t.graph import Node, Unlocker
from prchain.p2t.prefilter import Prefilter, program
from prchain.p2t.roles_forward import StepRec


def node(node_id: str, action: str, kind: str = "fact") -> Node:
    return Node(node_id, kind, f"claim {node_id}", Unlocker(action, ""), "static")  # type: ignore[arg-type]


def step(*calls: tuple[str, dict[str, Any]], content: str = "", output: str = "") -> StepRec:
    assistant = {
        "role": "assistant",
        "content": content,
        "tool_calls": [
            {"id": f"c{i}", "function": {"name": name, "arguments": json.dumps(args)}}
            for i, (name, args) in enumerate(calls)
        ],
    }
    return StepRec(assistant, [{"role": "tool", "content": output}], 10, False, "")


NODES = [
    node("ops", "VIEW calc/ops.py:1-20"),
    node("grep", "BASH grep -rn 'def add' calc"),
    node("probe", "BASH python3 -c 'import calc.ops as m; print(dir(m))'"),
    node("edit", "STR_REPLACE calc/ops.py", "code_edit"),
    node("plan", "THINK add a sibling function", "fix_plan"),
]


def asked(prefilter: Prefilter, s: StepRec, forced: frozenset[str] = frozenset()) -> list[str]:
    return [n.id for n in prefilter.select(NODES, s, forced)]


def test_each_unlocker_kind_needs_a_matching_action() -> None:
    p = Prefilter()
    view = step(("str_replace_editor", {"command": "view", "path": "/work/repo/calc/ops.py"}))
    assert asked(p, view) == ["ops"]
    cat = step(("bash", {"command": "cat calc/ops.py"}))
    assert asked(p, cat) == ["ops", "edit"]  # a shell command may edit the file it names
    search = step(("bash", {"command": "grep -rn add calc"}))
    assert asked(p, search) == ["ops", "grep", "edit"]  # a recursive search covers calc/ops.py
    run = step(("bash", {"command": "python -c 'import calc.ops; print(calc.ops.add(1, 2))'"}))
    assert asked(p, run) == ["probe"]  # names no file path: cannot be the edit
    write = step(("str_replace_editor", {"command": "str_replace", "path": "calc/ops.py"}))
    assert asked(p, write) == ["ops", "edit"]
    assert asked(p, step(content="Both operations belong side by side.")) == ["plan"]


def test_the_output_alone_never_counts_and_forced_nodes_are_always_asked() -> None:
    p = Prefilter()
    listing = step(("bash", {"command": "ls tests"}), output="calc/ops.py def add grep -rn")
    assert asked(p, listing) == []
    assert asked(p, listing, frozenset({"plan", "probe"})) == ["probe", "plan"]
    assert (p.asked, p.skipped) == (2, 8)
    everything = Prefilter(enabled=False)
    assert asked(everything, listing) == [n.id for n in NODES]


def test_program_names_the_tool_not_the_interpreter() -> None:
    assert program("python3 -m pytest -q tests") == "pytest"
    assert program("PYTHONPATH=. python3 -c 'pass'") == "python"
    assert program("/usr/bin/grep -n x f.py") == "grep"


def test_a_stages_first_step_rechecks_what_earlier_actions_could_have_shown() -> None:
    earlier = [
        {"role": "user", "content": "Task 1"},
        step(("bash", {"command": "cat calc/ops.py"})).assistant,
        {"role": "tool", "content": "def add(a, b): ..."},
    ]
    assert Prefilter().seen_before(NODES, earlier) == {"ops", "edit"}
    assert Prefilter(enabled=False).seen_before(NODES, earlier) == {n.id for n in NODES}
