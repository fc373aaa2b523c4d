"""The export's leak scan: every message, every stage's gold lines, hidden test names; no false
positives on common lines or on lines the agent wrote itself."""

from __future__ import annotations

import json
from typing import Any

import pytest

from prchain.agent.leakscan import (
    GoldStage,
    Guard,
    chain_guard,
    guarded_lines,
    is_trivial,
)
from prchain.chains.reading.patches import split_patch

STAGE_1 = """diff --git a/calc/ops.py b/calc/ops.py
--- a/calc/ops.py
+++ b/calc/ops.py
@@ -1,3 +1,8 @@
 import os
 def add(a, b):
     return a + b
+
+import functools
+def subtract(minuend, subtrahend):
+    return minuend - subtrahend
+}
"""
STAGE_2 = """diff --git a/calc/ops.py b/calc/ops.py
--- a/calc/ops.py
+++ b/calc/ops.py
@@ -4,3 +4,6 @@
 def subtract(minuend, subtrahend):
-    return minuend - subtrahend
+    return minuend + (-subtrahend)
+    @property
diff --git a/tests/test_ops.py b/tests/test_ops.py
--- a/tests/test_ops.py
+++ b/tests/test_ops.py
@@ -1,1 +1,3 @@
+def test_subtract_negative_numbers():
+    assert subtract(-1, -2) == 1
"""


def tool(text: str) -> dict[str, Any]:
    return {"role": "tool", "content": text, "tool_call_id": "c1", "name": "bash"}


def agent(command: str) -> dict[str, Any]:
    arguments = json.dumps({"command": command})
    call = {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": arguments}}
    return {"role": "assistant", "content": "", "tool_calls": [call]}


def guard() -> Guard:
    split = split_patch(STAGE_2)
    code, test = split.code, split.test
    f2p = ("tests/test_ops.py::test_subtract_negative_numbers",)
    return chain_guard([GoldStage(STAGE_1), GoldStage(code, test, f2p)], 6)


def at(stage: int, messages: list[dict[str, Any]]) -> list[int]:
    return [stage] * len(messages)


@pytest.mark.parametrize(
    "line",
    ["}", "import os", "from typing import Any", "@property", "return None", "else:", "x = 1"],
)
def test_common_lines_are_trivial(line: str) -> None:
    assert is_trivial(line, 6)


def test_guarded_lines_are_the_added_lines_of_every_stage() -> None:
    lines = guarded_lines([STAGE_1, STAGE_2], 6)
    assert "def subtract(minuend, subtrahend):" in lines  # added by stage 1, context in stage 2
    assert "return minuend + (-subtrahend)" in lines
    assert "assert subtract(-1, -2) == 1" in lines
    assert not {"import functools", "}", "@property", "def add(a, b):"} & set(lines)


def test_a_tool_output_showing_an_earlier_or_later_gold_line_is_a_leak() -> None:
    g = guard()
    for shown in ("+    return minuend + (-subtrahend)", "    return minuend - subtrahend"):
        messages = [{"role": "system", "content": "work"}, agent("git log -p"), tool(shown)]
        assert g.first_leak(messages, at(1, messages)) == "a tool message shows a gold-patch line"
        assert g.first_leak(messages, at(2, messages)) is not None  # code lines: every stage


def test_a_hidden_test_name_in_any_message_is_a_leak() -> None:
    assert guard().names == {1: (), 2: ("test_subtract_negative_numbers",)}
    messages = [agent("ls /tmp"), tool("collected test_subtract_negative_numbers[1]")]
    assert (
        guard().first_leak(messages, at(2, messages)) == "a tool message shows a hidden test name"
    )
    assert guard().first_leak(messages, at(1, messages)) is not None  # a later stage's test
    other = [agent("ls"), tool("test_subtract_negative_numbers_x")]
    assert guard().first_leak(other, at(2, other)) is None


def test_an_earlier_stages_tests_are_in_the_repository_later() -> None:
    """Only code patches are reverted at a stage entry: stage 2's tests are visible in stage 3."""
    split = split_patch(STAGE_2)
    code, test = split.code, split.test
    g = chain_guard([GoldStage(STAGE_1), GoldStage(code, test), GoldStage("")], 6)
    messages = [agent("cat tests/test_ops.py"), tool("    assert subtract(-1, -2) == 1")]
    assert g.first_leak(messages, at(2, messages)) == "a tool message shows a gold-patch line"
    assert g.first_leak(messages, at(3, messages)) is None


def test_what_the_agent_wrote_first_is_not_a_leak_but_order_matters() -> None:
    g = guard()
    write = agent("printf 'def subtract(minuend, subtrahend):\\n' >> calc/ops.py")
    shown = tool("def subtract(minuend, subtrahend):")
    ok, bad = [write, agent("cat calc/ops.py"), shown], [agent("cat x"), shown, write]
    assert g.first_leak(ok, at(1, ok)) is None
    assert g.first_leak(bad, at(1, bad)) is not None
    common = [agent("cat calc/ops.py"), tool("import os\ndef add(a, b):\n    return a + b\n}")]
    assert g.first_leak(common, at(1, common)) is None
