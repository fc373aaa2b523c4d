"""The judge through the real openai client: strict parsing, retries, the gold-leak guard."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine

from prchain.agent.judge import REDACTED, Judge, gold_lines, leaked_lines, parse_verdict
from prchain.core.errors import JudgeOutputInvalid, LLMOutputInvalid
from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.llm.client import LLMClient
from prchain.llm.config import LLMConfig
from tests.agent.conftest import verdict

GOLD = """diff --git a/calc/ops.py b/calc/ops.py
--- a/calc/ops.py
+++ b/calc/ops.py
@@ -1,2 +1,5 @@
 def add(a, b):
     return a + b
+
+def subtract(minuend, subtrahend):
+    return minuend - subtrahend
"""
LEAKY = "The reference does `return minuend - subtrahend` while yours adds."


def judge(llm_config: LLMConfig, engine: Engine) -> Judge:
    return Judge(LLMClient(llm_config, engine), retries=2, leak_min_chars=20)


def ask(j: Judge) -> object:
    return j.judge(
        query="Add subtraction.", gold_patch=GOLD, agent_patch="+def subtract(x, y): return x + y"
    )


@pytest.mark.parametrize(
    "reply",
    [
        "The patch looks fine to me.",
        '{"score": "0.9", "comment": "ok"}',
        '{"score": 1.4, "comment": "ok"}',
        '{"score": 0.9}',
        '{"score": 0.9, "comment": "ok", "confidence": 1}',
        '{"score": true, "comment": "ok"}',
        '{"score": 0.9, "comment": ""}',
    ],
)
def test_malformed_verdicts_are_refused_not_guessed(reply: str) -> None:
    with pytest.raises(LLMOutputInvalid):
        parse_verdict(reply)


def test_a_fenced_or_bare_verdict_parses() -> None:
    assert parse_verdict('```json\n{"score": 1, "comment": "fine"}\n```').score == 1
    assert (
        parse_verdict('{"score": 0.25, "comment": "missing the error case"}').comment
        == "missing the error case"
    )


def test_malformed_output_is_retried_with_the_problem_named(
    fake_llm: ScriptedLLMServer, llm_config: LLMConfig, sqlite_engine: Engine
) -> None:
    fake_llm.push(model="judge", content="I would say it is mostly right.")
    fake_llm.push(model="judge", content=verdict(0.4, "subtract adds instead of subtracting."))
    judged = ask(judge(llm_config, sqlite_engine))
    assert (judged.score, judged.attempts, judged.redacted) == (0.4, 2, False)  # type: ignore[attr-defined]
    retry = fake_llm.requests_for("judge")[1]["messages"]
    assert retry[-2] == {"role": "assistant", "content": "I would say it is mostly right."}
    assert "could not be used" in retry[-1]["content"]


def test_output_that_stays_malformed_raises_judge_output_invalid(
    fake_llm: ScriptedLLMServer, llm_config: LLMConfig, sqlite_engine: Engine
) -> None:
    fake_llm.push(model="judge", content='{"score": "high"}', times=3)
    with pytest.raises(JudgeOutputInvalid, match="after 3 attempts"):
        ask(judge(llm_config, sqlite_engine))
    assert len(fake_llm.requests_for("judge")) == 3


def test_a_comment_quoting_the_gold_patch_is_regenerated(
    fake_llm: ScriptedLLMServer, llm_config: LLMConfig, sqlite_engine: Engine
) -> None:
    fake_llm.push(model="judge", content=verdict(0.3, LEAKY))
    fake_llm.push(
        model="judge",
        content=verdict(0.3, "subtract adds its arguments; it should take the second away."),
    )
    judged = ask(judge(llm_config, sqlite_engine))
    assert "minuend - subtrahend" not in judged.comment and judged.attempts == 2  # type: ignore[attr-defined]
    assert (
        "copies code from the reference"
        in fake_llm.requests_for("judge")[1]["messages"][-1]["content"]
    )


def test_a_judge_that_keeps_quoting_is_redacted(
    fake_llm: ScriptedLLMServer, llm_config: LLMConfig, sqlite_engine: Engine
) -> None:
    fake_llm.push(model="judge", content=verdict(0.3, LEAKY), times=3)
    judged = ask(judge(llm_config, sqlite_engine))
    assert judged.redacted and REDACTED in judged.comment and judged.score == 0.3  # type: ignore[attr-defined]
    assert not leaked_lines(judged.comment, GOLD, 20)  # type: ignore[attr-defined]


def test_gold_lines_are_the_long_added_and_removed_lines() -> None:
    assert gold_lines(GOLD, 20) == [
        "def subtract(minuend, subtrahend):",
        "return minuend - subtrahend",
    ]
