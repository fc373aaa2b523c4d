"""The LLM judge: compares the agent's stage diff with the gold patch, returns a score and a comment.

Nothing the agent wrote can steer the verdict:
- the query and both patches are fenced between markers named by a digest of their own text, so no
  content can contain its closing marker, and the prompt says the fenced text is untrusted data;
- the verdict is the judge's final answer: the last JSON object of the reply, never the first
  fenced block (which may be a quote from the patch);
- a passing score whose comment says the patch fails ("does not achieve the same effect") is
  re-asked, and a judge that keeps contradicting itself does not pass the stage.

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
from prchain.chains.reading.patches import file_sections, section_path
from prchain.chains.reading.paths import is_lockfile
from prchain.core.errors import JudgeInputTooLarge, JudgeOutputInvalid, LLMOutputInvalid
from prchain.llm.parsing import fence_token, json_objects
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
    contradicted: bool = False  # the score passes but the comment's own words say it fails


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
    """The judge's own final answer: the LAST JSON object of the reply.

    A reply may quote the agent's patch, and the patch may hold a fenced `{"score": 1.0}`; what
    the judge concludes comes after what it quotes, so the first object is never trusted."""
    objects = json_objects(reply)
    if not objects:
        raise LLMOutputInvalid(f"expected a JSON object in the reply, got: {reply[:200]!r}")
    try:
        return Verdict.model_validate(objects[-1])
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'object'}: {e['msg']}" for e in exc.errors()
        )
        raise LLMOutputInvalid(f"judge verdict is malformed: {problems}") from None


# Phrases by which a comment says the patch fails. Only the dangerous direction is checked: a
# passing score under a failing verdict (finding 1 of issue 20: "does not achieve the same
# effect" scored 1.0). A low score with kind words fails the stage anyway.
_FAILING_VERDICT = re.compile(
    r"\b(?:does(?: not|n't)|did(?: not|n't)|fails? to|failed to)\s+"
    r"(?:\w+\s+){0,2}?(?:achieve|implement|solve|address|meet|satisfy|match|do|make|change|add|fix)\b"
    r"|\bnot\s+(?:acceptable|correct|equivalent|the same effect|implemented)\b"
    r"|\b(?:unacceptable|incorrect)\b"
    r"|\b(?:changed|changes) nothing\b|\bno (?:code )?changes?\b|\bempty (?:patch|diff|change)\b"
    r"|\bpatch is empty\b",
    re.IGNORECASE,
)


def says_it_fails(comment: str) -> bool:
    """Does the comment's own wording give a failing verdict?"""
    return _FAILING_VERDICT.search(comment) is not None


def _parses_as_verdict(completion: Completion) -> None:
    parse_verdict(completion.content)


def judge_prompt(query: str, gold_patch: str, agent_patch: str) -> str:
    """The judge's prompt, each untrusted text fenced by markers derived from all three; both
    patches as the judge reads them (`judged_view`)."""
    gold_patch, agent_patch = judged_view(gold_patch), judged_view(agent_patch)
    token = fence_token(query, gold_patch, agent_patch)
    return render(
        PROMPTS,
        "judge.j2",
        query=query,
        gold_patch=gold_patch,
        agent_patch=agent_patch,
        token=token,
    )


def judged_view(patch: str) -> str:
    """A patch as the judge reads it: a lock file's section cut to its header and a count of
    its lines, every other section whole. A lock file is generated, and no one judges it line by
    line: strawberry #2569's poetry.lock was 164 KB of its 178 KB gold patch, which carried, in
    the agent's patch too, the judge's prompt past `agent.max_judge_prompt_tokens` (the stage
    ended unjudged and its chain with it)."""
    sections = file_sections(patch)
    shown = [patch[: len(patch) - sum(map(len, sections))]]  # any text before the first header
    for section in sections:
        if not is_lockfile(section_path(section)):
            shown.append(section)
            continue
        header, _, body = section.partition("\n@@")
        lines = ("@@" + body).splitlines() if body else []
        added = sum(1 for line in lines if line.startswith("+"))
        removed = sum(1 for line in lines if line.startswith("-"))
        shown.append(
            f"{header}\n[a lock file: {added} lines added, {removed} removed; not shown]\n"
        )
    return "".join(shown)


LEAK_PROBLEM = (
    "Your comment copies code from the reference patch, which the engineer must not see. "
    "Describe the problems in your own words without quoting the reference."
)
CONTRADICTION_PROBLEM = (
    "Your score passes the patch but your comment says it does not do what the task asks. "
    "Decide: give the score your comment supports."
)


class Judge:
    def __init__(
        self,
        llm: ChatLLM,
        *,
        retries: int = 2,
        leak_min_chars: int = LEAK_MIN_CHARS,
        max_prompt_tokens: int | None = None,
        threshold: float = 0.8,
    ) -> None:
        self.llm = llm
        self.retries = retries
        self.leak_min_chars = leak_min_chars
        self.max_prompt_tokens = max_prompt_tokens
        self.threshold = threshold  # the passing score, for telling contradictions apart

    def prompt(self, *, query: str, gold_patch: str, agent_patch: str) -> str:
        return judge_prompt(query, gold_patch, agent_patch)

    def judge(
        self, *, query: str, gold_patch: str, agent_patch: str, rollout_id: int | None = None
    ) -> Judged:
        content = self.prompt(query=query, gold_patch=gold_patch, agent_patch=agent_patch)
        messages: list[Message] = [{"role": "user", "content": content}]
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
            problem = self._problem(verdict, gold_patch)
            if problem is None:
                return Judged(float(verdict.score), verdict.comment, attempt)
            messages = self._retry(messages, reply, problem)
        if verdict is not None:
            return self._last_resort(verdict, gold_patch)
        raise JudgeOutputInvalid(
            f"the judge gave no valid verdict after {self.retries + 1} attempts: {last_error}"
        )

    def _contradicts(self, verdict: Verdict) -> bool:
        return verdict.score >= self.threshold and says_it_fails(verdict.comment)

    def _problem(self, verdict: Verdict, gold_patch: str) -> str | None:
        if self._contradicts(verdict):
            return CONTRADICTION_PROBLEM
        if leaked_lines(verdict.comment, gold_patch, self.leak_min_chars):
            return LEAK_PROBLEM
        return None

    def _last_resort(self, verdict: Verdict, gold_patch: str) -> Judged:
        """The retries ran out on a well-formed verdict: a leaking comment is redacted (the score
        is sound); a self-contradicting one is kept as said but cannot pass the stage."""
        comment = verdict.comment
        redacted = bool(leaked_lines(comment, gold_patch, self.leak_min_chars))
        if redacted:
            comment = self._redact(comment, gold_patch)
        attempts = self.retries + 1
        return Judged(float(verdict.score), comment, attempts, redacted, self._contradicts(verdict))

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
