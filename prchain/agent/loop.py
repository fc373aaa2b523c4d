"""The ReAct loop: ask the policy for an action, run it in the environment, repeat until `submit`.

The conversation is kept as OpenAI messages (assistant `tool_calls`, `tool` results) whatever the
wire format; each message is stored the moment it exists. Format-only defects are repaired and
recorded (a tool call written as text, several action blocks); a reply with no usable action gets
a format error that grows firmer, at a higher temperature, each time in a row. A reasoning model's
reasoning is stored on its assistant message but never parsed and never sent back. Budgets and the context window end a
stage with a recorded reason; the step hook (PRM) may add messages every n steps.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from prchain.agent.config import AgentConfig
from prchain.agent.guard import (
    RepeatGuard,
    dropped_note,
    missing_arguments,
    no_call_error,
    placeholder_message,
    prompt_placeholder,
)
from prchain.agent.hooks import HookContext, StepHook, StepRecord
from prchain.agent.opening import stage_opening
from prchain.agent.tasks import ChainTask, StageTask
from prchain.agent.textformat import (
    FormatError,
    ignored_note,
    parse_action,
    to_wire,
    without_reasoning,
)
from prchain.agent.tools import TOOL_NAMES, TOOL_SCHEMAS, ToolBox, ToolResult
from prchain.core.errors import ContextOverflow, LLMOutputInvalid
from prchain.environments.protocol import Environment
from prchain.llm.prompts import render
from prchain.llm.protocol import ChatLLM, Completion, Message
from prchain.llm.repairs import RepairKind
from prchain.llm.toolcalls import calls_from_text

PROMPTS = Path(__file__).with_name("prompts")
CHARS_PER_TOKEN = 4  # only for the context estimate between two server-reported counts


class StepSink(Protocol):
    """Where each message goes as it happens (the store's Recorder in a rollout)."""

    def step(self, stage_idx: int, kind: str, message: Message, **extra: Any) -> int: ...


@dataclass(frozen=True)
class StageRun:
    """How one stretch of work (up to a submit) ended: submitted, or a budget/context/format reason."""

    submitted: bool
    reason: str | None = None


@dataclass(frozen=True)
class Parsed:
    """What one reply asks for: the calls and the reasoning text, or why it could not be used."""

    calls: list[dict[str, Any]] = field(default_factory=list)
    thought: str = ""
    error: str | None = None
    repairs: tuple[RepairKind, ...] = ()
    note: str = ""  # added to the first observation (e.g. which blocks were ignored)


@dataclass
class Counters:
    steps: int = 0  # assistant replies
    tool_calls: int = 0
    prompt_tokens: int = 0  # billed, over every policy call
    completion_tokens: int = 0
    context_tokens: int = 0  # size of the conversation at the last policy call

    @property
    def tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass
class StageLoop:
    """What every scaffold's loop holds: the policy's client, the sandbox, the limits, where steps
    are stored, the PRM hook, and one conversation with its counters across the chain's stages."""

    llm: ChatLLM
    env: Environment
    config: AgentConfig
    sink: StepSink | None = None
    hook: StepHook | None = None
    rollout_id: int | None = None
    messages: list[Message] = field(default_factory=list)
    chain: Counters = field(default_factory=Counters)
    stage: Counters = field(default_factory=Counters)
    history: list[StepRecord] = field(default_factory=list)
    task: str = ""
    stage_idx: int = 0

    def context_estimate(self) -> int:
        """The conversation's size in tokens, as the server counted it at the last call."""
        return self.chain.context_tokens

    def _tally(self, prompt: int, completion: int) -> None:
        """One reply's tokens, counted for the stage and the chain."""
        for counters in (self.chain, self.stage):
            counters.steps += 1
            counters.prompt_tokens += prompt
            counters.completion_tokens += completion
        self.chain.context_tokens = prompt + completion

    def _maybe_hook(self, tools: list[dict[str, Any]]) -> None:
        """The PRM's guidance after every `hook.every`-th step, on the last `hook.window` steps
        (`tools`: the schemas the policy acts with)."""
        if self.hook is None or self.chain.steps % self.hook.every != 0:
            return
        context = HookContext(
            self.rollout_id,
            self.stage_idx,
            self.chain.steps,
            self.task,
            self.history[-self.hook.window :],
            tools,
        )
        for message in self.hook(context):
            self.add("prm", message)

    def add(self, kind: str, message: Message, **extra: Any) -> None:
        raise NotImplementedError

    def _limit_reached(self) -> str | None:
        """The step and token budgets of the stage and the chain, and the context window."""
        c = self.config
        checks = [
            (
                self.stage.steps >= c.max_steps_per_stage,
                f"stage step budget spent ({c.max_steps_per_stage} steps)",
            ),
            (
                self.chain.steps >= c.max_steps_per_chain,
                f"chain step budget spent ({c.max_steps_per_chain} steps)",
            ),
            (
                self.stage.tokens >= c.max_tokens_per_stage,
                f"stage token budget spent ({c.max_tokens_per_stage} tokens)",
            ),
            (
                self.chain.tokens >= c.max_tokens_per_chain,
                f"chain token budget spent ({c.max_tokens_per_chain} tokens)",
            ),
            (
                self.context_estimate() > c.context_window,
                f"context window exceeded (~{self.context_estimate()} > {c.context_window} tokens)",
            ),
        ]
        return next((reason for hit, reason in checks if hit), None)


@dataclass
class AgentLoop(StageLoop):
    """The built-in loop: prchain's prompts and tools."""

    guard: RepeatGuard = field(init=False)

    def __post_init__(self) -> None:
        self.toolbox = ToolBox(
            self.env,
            command_timeout=self.config.command_timeout,
            max_chars=self.config.max_observation_chars,
        )
        self._chars_since_count = sum(len(json.dumps(m)) for m in self.messages)
        self.guard = RepeatGuard(self.config.max_repeated_failures)

    # -- the conversation ---------------------------------------------------------------------

    def add(self, kind: str, message: Message, **extra: Any) -> None:
        self.messages.append(message)
        self._chars_since_count += len(json.dumps(message))
        if self.sink is not None:
            self.sink.step(self.stage_idx, kind, message, **extra)

    def opening(self, task: ChainTask, stage: StageTask) -> list[tuple[str, Message]]:
        return stage_opening(task, stage, self.config.action_format)

    def feedback(self, comment: str) -> Message:
        return {"role": "user", "content": render(PROMPTS, "feedback.j2", comment=comment)}

    def begin_stage(self, stage_idx: int, task: str) -> None:
        self.stage_idx, self.task, self.stage = stage_idx, task, Counters()
        self.guard = RepeatGuard(self.config.max_repeated_failures)

    def run_stage(
        self, stage_idx: int, task: str, *, opening: list[tuple[str, Message]]
    ) -> StageRun:
        """Start a stage, add its opening messages, work to a submit."""
        self.begin_stage(stage_idx, task)
        for kind, message in opening:
            self.add(kind, message)
        return self.work()

    def work(self) -> StageRun:
        """Steps until the agent submits or a limit ends the stage."""
        format_errors = 0
        while True:
            if (reason := self._limit_reached()) is not None:
                return StageRun(False, reason)
            try:
                # After a format error the retry is a different request: warmer, firmer feedback.
                # A reply without a usable action is never cached, so a rerun asks again.
                completion = self.llm.complete(
                    "policy",
                    self._wire(),
                    tools=self._tools(),
                    rollout_id=self.rollout_id,
                    attempt=format_errors,
                    check=self._check,
                )
            except ContextOverflow as exc:
                return StageRun(
                    False, f"context window exceeded (the server refused the request: {exc})"
                )
            self._count(completion)
            parsed = self._actions(completion)
            if parsed.error is not None:
                format_errors += 1
                self._format_error(completion, parsed.error, format_errors)
                if format_errors >= self.config.max_format_errors:
                    replies = "reply" if format_errors == 1 else "consecutive replies"
                    return StageRun(False, f"{format_errors} {replies} without a usable action")
                continue
            format_errors = 0
            if self._act(completion, parsed):
                return StageRun(True)
            if (reason := self.guard.stuck()) is not None:
                return StageRun(False, reason)
            self._maybe_hook(TOOL_SCHEMAS)

    def _check(self, completion: Completion) -> None:
        """Refuses (for the cache) a reply the loop cannot act on."""
        parsed = self._actions(completion)
        if parsed.error is not None:
            raise LLMOutputInvalid(parsed.error)

    # -- one step -----------------------------------------------------------------------------

    def _act(self, completion: Completion, parsed: Parsed) -> bool:
        calls = parsed.calls
        assistant: Message = {
            "role": "assistant",
            "content": parsed.thought,  # a string, never null: see protocol.sendable
            "tool_calls": calls,
        }
        if completion.reasoning:
            assistant["reasoning_content"] = completion.reasoning
        self.add(
            "assistant",
            assistant,
            prompt_tokens=completion.prompt_tokens,
            completion_tokens=completion.completion_tokens,
            latency_ms=completion.latency_ms,
            repairs=parsed.repairs,
        )
        observations, submitted = [], False
        for n, call in enumerate(calls):
            name, arguments = call["function"]["name"], call["function"].get("arguments") or "{}"
            if (placeholder := prompt_placeholder(name, arguments)) is not None:
                result = ToolResult(placeholder_message(placeholder), failed=True)
            else:
                result = self.toolbox.run(name, arguments)
            submitted = submitted or result.submitted
            repeat = self.guard.record(name, arguments, failed=result.failed)
            observation = result.observation + (parsed.note if n == 0 else "") + repeat
            observations.append(observation)
            tool_msg: Message = {
                "role": "tool",
                "tool_call_id": call["id"],
                "name": call["function"]["name"],
                "content": observation,
            }
            self.add("tool", tool_msg, tool_call=call, observation=observation)
        for counters in (self.chain, self.stage):
            counters.tool_calls += len(calls)
        self.history.append(StepRecord(self.chain.steps, self.stage_idx, assistant, observations))
        return submitted

    def _actions(self, completion: Completion) -> Parsed:
        parsed = self._parsed(completion)
        if parsed.error is None and (missing := missing_arguments(parsed.calls)) is not None:
            return Parsed(error=missing)
        return parsed

    def _parsed(self, completion: Completion) -> Parsed:
        if self.config.action_format == "text":
            return self._text_action(completion.content)
        if completion.tool_calls:
            calls = [self._normalized(call, n) for n, call in enumerate(completion.tool_calls)]
            return Parsed(calls, completion.content)
        return self._calls_in_text(completion.content) or Parsed(
            error=no_call_error(completion.content)
        )

    def _text_action(self, content: str) -> Parsed:
        try:
            action = parse_action(content)
        except FormatError as exc:
            # A model trained on tool calling may write one even when asked for fenced blocks.
            return self._calls_in_text(content) or Parsed(error=no_call_error(content, str(exc)))
        call_id = f"call_{self.rollout_id or 0}_{len(self.messages)}"
        call = {
            "id": call_id,
            "type": "function",
            "function": {"name": action.name, "arguments": action.arguments},
        }
        if not action.ignored:
            return Parsed([call], action.thought)
        return Parsed(
            [call],
            action.thought,
            repairs=("extra_blocks_ignored",),
            note=ignored_note(action.ignored),
        )

    def _calls_in_text(self, content: str) -> Parsed | None:
        """A call the server left as text (its tool-call parser missed it), parsed as that call."""
        found = calls_from_text(content, TOOL_NAMES)
        if found is None:
            return None
        calls, prose = found
        first = self._normalized(calls[0], 0)
        if len(calls) == 1:
            return Parsed([first], prose, repairs=("tool_call_in_text",))
        # One action per reply, as in the text format: the first runs, the rest are dropped.
        return Parsed(
            [first],
            prose,
            repairs=("tool_call_in_text", "extra_calls_dropped"),
            note=dropped_note(len(calls) - 1),
        )

    def _normalized(self, call: dict[str, Any], n: int) -> dict[str, Any]:
        # Some servers omit ids; the export needs every tool result tied to its call.
        call_id = call.get("id") or f"call_{self.rollout_id or 0}_{len(self.messages)}_{n}"
        function = call.get("function", {})
        return {
            "id": call_id,
            "type": "function",
            "function": {
                "name": function.get("name", ""),
                "arguments": function.get("arguments") or "{}",
            },
        }

    def _format_error(self, completion: Completion, error: str, attempt: int) -> None:
        reply: Message = {"role": "assistant", "content": completion.content or ""}
        if completion.reasoning:
            reply["reasoning_content"] = completion.reasoning
        self.add(
            "format_error",
            reply,
            prompt_tokens=completion.prompt_tokens,
            completion_tokens=completion.completion_tokens,
            latency_ms=completion.latency_ms,
        )
        text = render(
            PROMPTS,
            "format_error.j2",
            error=error,
            action_format=self.config.action_format,
            attempt=attempt,
            echoed=attempt > 1 and self._echoes_feedback(completion.content),
        )
        self.add("format_error", {"role": "user", "content": text})

    def _echoes_feedback(self, content: str) -> bool:
        """Did the reply repeat our last format-error message instead of acting?"""
        last = next((m for m in reversed(self.messages) if m["role"] == "user"), {"content": ""})
        head = (last.get("content") or "").strip().split("\n", 1)[0]
        return bool(content.strip()) and bool(head) and head in content

    # -- accounting ---------------------------------------------------------------------------

    def _count(self, completion: Completion) -> None:
        self._tally(completion.prompt_tokens, completion.completion_tokens)
        self._chars_since_count = 0

    def context_estimate(self) -> int:
        if self.chain.context_tokens:
            return self.chain.context_tokens + self._chars_since_count // CHARS_PER_TOKEN
        return sum(len(json.dumps(m)) for m in self.messages) // CHARS_PER_TOKEN

    def _wire(self) -> list[Message]:
        if self.config.action_format == "text":
            return to_wire(self.messages)
        return without_reasoning(self.messages)

    def _tools(self) -> list[dict[str, Any]] | None:
        return TOOL_SCHEMAS if self.config.action_format == "tools" else None
