from __future__ import annotations

import json
from typing import Any

from prchain.p2t.metrics import assistant_steps, coverage, redundant_view_fraction


def step(name: str, **args: Any) -> dict[str, Any]:
    call = {
        "id": "c",
        "type": "function",
        "function": {"name": name, "arguments": json.dumps(args)},
    }
    return {"role": "assistant", "content": "", "tool_calls": [call]}


def view(path: str, rng: list[int] | None = None) -> dict[str, Any]:
    args: dict[str, Any] = {"command": "view", "path": path}
    if rng:
        args["view_range"] = rng
    return step("str_replace_editor", **args)


def test_redundant_views_single_and_union() -> None:
    messages = [
        view("src/a.py", [1, 50]),
        view("src/a.py", [40, 90]),
        view("/work/repo/src/a.py", [10, 20]),  # covered by the first view
        view("src/a.py", [30, 80]),  # covered only by the union of the first two
        step("bash", command="sed -n '5,9p' src/a.py"),  # covered by the first view
        view("src/b.py"),
        step("bash", command="cat src/b.py"),  # whole file again
        step("bash", command="grep -n x src/b.py"),  # not a view
    ]
    assert assistant_steps(messages) == 8
    assert redundant_view_fraction(messages) == 3 / 7
    assert redundant_view_fraction(messages, union=True) == 4 / 7


def test_no_views_no_redundancy() -> None:
    assert redundant_view_fraction([step("bash", command="ls")]) == 0.0


def test_coverage() -> None:
    assert coverage({"a", "b", "zz"}, ["a", "b", "c", "d"]) == 0.5
