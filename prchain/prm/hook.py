"""The PRM as the agent loop's step hook: every n steps, judge the last k and inject guidance.

One invocation: serialize the window, render the variant's prompt, ask role "prm" (its own model
and endpoint come from config.llm), parse the verdict (re-asking a bounded number of times after a
malformed reply), store a `prm_calls` row and return the message(s) to inject. A PRM that keeps
answering badly, or whose server fails, never breaks the rollout: the hook then injects nothing.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from prchain.agent.hooks import HookContext
from prchain.core.errors import LLMError, PRMOutputInvalid
from prchain.llm.prompts import render
from prchain.llm.protocol import ChatLLM, Completion, Message
from prchain.prm.config import PRMConfig
from prchain.prm.guidance import guidance_messages
from prchain.prm.serialize import render_window, serialize_window
from prchain.prm.taxonomy import Taxonomy, load_taxonomy
from prchain.prm.variants import Variant, get_variant
from prchain.prm.verdict import Verdict, parse_verdict
from prchain.store.db import session_scope, upsert
from prchain.store.models import PRMCall

log = logging.getLogger(__name__)
PROMPTS = Path(__file__).with_name("prompts")
ROLE = "prm"


@dataclass
class PRMOutcome:
    """What one invocation produced, whether or not it could be stored."""

    status: str = "ok"  # ok | invalid_output | llm_error
    verdict: Verdict | None = None
    model: str = ""
    attempts: int = 0
    error: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    injected: list[Message] = field(default_factory=list)


def tool_names(tools: list[dict[str, Any]]) -> list[str]:
    return [str((t.get("function") or t).get("name", "")) for t in tools]


def build_request(
    variant: Variant,
    taxonomy: Taxonomy,
    task: str,
    window: list[dict[str, Any]],
    tools: list[dict[str, Any]],
) -> list[Message]:
    """The PRM's conversation: a fixed system message and the variant's prompt over task + window."""
    prompt = render(
        PROMPTS,
        variant.template,
        variant=variant,
        taxonomy=taxonomy,
        task=task,
        steps=render_window(window),
        tools=tools,
    )
    return [
        {"role": "system", "content": render(PROMPTS, "system.j2")},
        {"role": "user", "content": prompt},
    ]


def reask(
    messages: list[Message], reply: str, error: str, attempt: int, attempts: int
) -> list[Message]:
    """The request again, with the bad reply and what was wrong with it.

    Only the latest bad reply is shown back, so re-asks do not grow the prompt; the attempt number
    keeps each re-ask distinct, so the response cache cannot replay a bad reply.
    """
    correction = render(PROMPTS, "retry.j2", error=error, attempt=attempt, attempts=attempts)
    return [
        *messages,
        {"role": "assistant", "content": reply},
        {"role": "user", "content": correction},
    ]


class PRMHook:
    """Implements agent.hooks.StepHook."""

    def __init__(
        self,
        variant: Variant,
        config: PRMConfig,
        llm: ChatLLM,
        engine: Engine | None,
        rollout_id: int | None,
    ) -> None:
        self.variant, self.config, self.llm = variant, config, llm
        self.engine, self.rollout_id = engine, rollout_id
        self.every, self.window = config.every, config.window
        self.taxonomy = load_taxonomy()
        self.outcomes: list[PRMOutcome] = []  # this rollout's invocations, in order

    def __call__(self, context: HookContext) -> list[Message]:
        window = serialize_window(
            context.recent_steps, self.window, self.config.max_observation_chars
        )
        rollout_id = context.rollout_id if context.rollout_id is not None else self.rollout_id
        messages = build_request(self.variant, self.taxonomy, context.task, window, context.tools)
        outcome = self._ask(messages, tool_names(context.tools), rollout_id)
        if outcome.verdict is not None:
            outcome.injected = guidance_messages(
                self.variant,
                outcome.verdict,
                self.taxonomy,
                len(window),
                inject_when_on_track=self.config.inject_when_on_track,
            )
        self.outcomes.append(outcome)
        self._store(context, rollout_id, window, outcome)
        return outcome.injected

    def _ask(self, messages: list[Message], tools: list[str], rollout_id: int | None) -> PRMOutcome:
        outcome, conversation = PRMOutcome(), messages
        attempts = 1 + self.config.max_parse_retries
        for attempt in range(1, attempts + 1):
            try:
                completion = self.llm.complete(
                    ROLE,
                    conversation,
                    rollout_id=rollout_id,
                    check=lambda reply: parse_verdict(
                        reply.content, self.variant, self.taxonomy, tools
                    ),
                )
            except (
                LLMError
            ) as exc:  # not PRMOutputInvalid: the client only raises server-side failures here
                log.warning("PRM call failed, continuing without guidance: %s", exc)
                outcome.status, outcome.error = "llm_error", str(exc)
                return outcome
            self._account(outcome, completion)
            try:
                outcome.verdict = parse_verdict(
                    completion.content, self.variant, self.taxonomy, tools
                )
                outcome.status, outcome.error = "ok", None
                return outcome
            except PRMOutputInvalid as exc:
                outcome.status, outcome.error = "invalid_output", str(exc)
                conversation = reask(messages, completion.content, str(exc), attempt, attempts)
        log.warning(
            "PRM reply stayed malformed after %d attempts; no guidance injected", outcome.attempts
        )
        return outcome

    @staticmethod
    def _account(outcome: PRMOutcome, completion: Completion) -> None:
        outcome.attempts += 1
        outcome.model = completion.model or outcome.model
        outcome.prompt_tokens += completion.prompt_tokens
        outcome.completion_tokens += completion.completion_tokens
        outcome.cost_usd += completion.cost_usd

    def _store(
        self, context: HookContext, rollout_id: int | None, window: list[Any], outcome: PRMOutcome
    ) -> None:
        if self.engine is None or rollout_id is None:
            return
        row = {
            "rollout_id": rollout_id,
            "stage_idx": context.stage_idx,
            "step_idx": context.step_count,
            "variant": self.variant.name,
            "model": outcome.model,
            "window": window,
            "verdict": outcome.verdict.to_json() if outcome.verdict else None,
            "task_status": outcome.verdict.task_status.value
            if outcome.verdict and outcome.verdict.task_status
            else None,
            "status": outcome.status,
            "error": outcome.error,
            "attempts": outcome.attempts,
            "injected": bool(outcome.injected),
            "prompt_tokens": outcome.prompt_tokens,
            "completion_tokens": outcome.completion_tokens,
            "cost_usd": outcome.cost_usd,
        }
        with session_scope(self.engine) as session:
            upsert(session, PRMCall, [row], ["rollout_id", "step_idx"])


def build_prm_hook(
    config: PRMConfig, llm: ChatLLM, engine: Engine | None, rollout_id: int | None
) -> PRMHook | None:
    """The PRM hook for a rollout, or None when `config.variant` is unset (no supervision)."""
    if config.variant is None:
        return None
    return PRMHook(get_variant(config.variant), config, llm, engine, rollout_id)
