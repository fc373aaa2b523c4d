"""The LLM judge: compares the agent's stage diff with the gold patch, returns a score and a comment.

Output is parsed strictly into `Verdict`; malformed output is re-asked, never guessed, and ends in
`JudgeOutputInvalid`. The comment goes back to the agent, so it may not quote the gold patch: a
comment repeating a long gold line is regenerated, and redacted if the judge keeps quoting.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt, ValidationError

from prchain.agent.config import LEAK_MIN_CHARS
from prchain.core.errors import JudgeInputTooLarge, JudgeOutputInvalid, LLMOutputInvalid
from prchain.llm.parsing import extract_json_object
from prchain.llm.prompts import render
from prchain.llm.protocol import ChatLLM, Completion, Message

PROMPTS = Path(__file__).with_name("prompts")
REDACTED = "[reference code withheld]"
CHARS_PER_TOKEN = 3  # a conservative estimate: code tokenises denser than prose


class Verdict(BaseModel):
    model_config = ConfigDict(extra="forbid")

    score: StrictFloat | StrictInt = Field(ge=0.0, le=1.0)
    comment: str = Field(min_length=1)


@dataclass(frozen=True)
class Judged:
    score: float
    comment: str
    attempts: int
    redacted: bool = False


# Lines made only of these words and punctuation say nothing about a solution (`}`, `return`,
# `else:`, `return None`); every other changed line with enough non-space characters is hidden.
GENERIC_WORDS = frozenset(
    [
        "return",
        "else",
        "elif",
        "end",
        "pass",
        "break",
        "continue",
        "try",
        "except",
        "finally",
        "do",
        "then",
        "fi",
        "done",
        "esac",
        "None",
        "null",
        "nil",
        "True",
        "False",
        "true",
        "false",
        "self",
        "this",
        "super",
        "default",
        "begin",
    ]
)
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+")


def is_worth_hiding(line: str, min_chars: int) -> bool:
    """At least `min_chars` non-space characters and one word that is not generic."""
    if sum(not c.isspace() for c in line) < min_chars:
        return False
    return any(word not in GENERIC_WORDS for word in _WORD.findall(line))


def gold_lines(patch: str, min_chars: int) -> list[str]:
    """Added and removed lines of a unified diff, stripped, that are worth hiding."""
    lines = []
    for line in patch.splitlines():
        if line.startswith(("+++", "---")) or not line.startswith(("+", "-")):
            continue
        body = line[1:].strip()
        if is_worth_hiding(body, min_chars):
            lines.append(body)
    return lines


def leaked_lines(text: str, patch: str, min_chars: int) -> list[str]:
    return [line for line in gold_lines(patch, min_chars) if line in text]


def parse_verdict(reply: str) -> Verdict:
    try:
        return Verdict.model_validate(extract_json_object(reply))
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'object'}: {e['msg']}" for e in exc.errors()
        )
        raise LLMOutputInvalid(f"judge verdict is malformed: {problems}") from None


def _parses_as_verdict(completion: Completion) -> None:
    parse_verdict(completion.content)


class Judge:
    def __init__(
        self,
        llm: ChatLLM,
        *,
        retries: int = 2,
        leak_min_chars: int = LEAK_MIN_CHARS,
        max_prompt_tokens: int | None = None,
    ) -> None:
        self.llm = llm
        self.retries = retries
        self.leak_min_chars = leak_min_chars
        self.max_prompt_tokens = max_prompt_tokens

    def judge(
        self, *, query: str, gold_patch: str, agent_patch: str, rollout_id: int | None = None
    ) -> Judged:
        messages: list[Message] = [
            {
                "role": "user",
                "content": render(
                    PROMPTS, "judge.j2", query=query, gold_patch=gold_patch, agent_patch=agent_patch
                ),
            }
        ]
        last_error = "no answer"
        verdict: Verdict | None = None
        for attempt in range(1, self.retries + 2):
            self._check_size(messages)
            reply = self.llm.complete(
                "judge", messages, rollout_id=rollout_id, check=_parses_as_verdict
            ).content
            try:
                verdict = parse_verdict(reply)
            except LLMOutputInvalid as exc:
                last_error = str(exc)
                messages = self._retry(messages, reply, f"Your answer could not be used: {exc}.")
                continue
            leaks = leaked_lines(verdict.comment, gold_patch, self.leak_min_chars)
            if not leaks:
                return Judged(float(verdict.score), verdict.comment, attempt)
            messages = self._retry(
                messages,
                reply,
                "Your comment copies code from the reference patch, which the engineer must not see. "
                "Describe the problems in your own words without quoting the reference.",
            )
        if verdict is not None:
            # The score is sound; only the wording leaks, so redact rather than fail the stage.
            return Judged(
                float(verdict.score),
                self._redact(verdict.comment, gold_patch),
                self.retries + 1,
                True,
            )
        raise JudgeOutputInvalid(
            f"the judge gave no valid verdict after {self.retries + 1} attempts: {last_error}"
        )

    def _check_size(self, messages: list[Message]) -> None:
        """Refuse a prompt past the cap before it is sent (and billed)."""
        if self.max_prompt_tokens is None:
            return
        tokens = sum(len(str(m.get("content") or "")) for m in messages) // CHARS_PER_TOKEN
        if tokens > self.max_prompt_tokens:
            raise JudgeInputTooLarge(
                f"the judge prompt is ~{tokens} tokens, over agent.max_judge_prompt_tokens "
                f"({self.max_prompt_tokens}); not sent"
            )

    def _redact(self, comment: str, gold_patch: str) -> str:
        for line in sorted(
            leaked_lines(comment, gold_patch, self.leak_min_chars), key=len, reverse=True
        ):
            comment = comment.replace(line, REDACTED)
        return comment

    @staticmethod
    def _retry(messages: list[Message], reply: str, problem: str) -> list[Message]:
        # The follow-up changes the request, so a response cache cannot hand back the same bad answer.
        follow_up: dict[str, Any] = {
            "role": "user",
            "content": render(PROMPTS, "judge_retry.j2", problem=problem),
        }
        return [*messages, {"role": "assistant", "content": reply}, follow_up]
