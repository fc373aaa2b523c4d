"""The one thin layer over any OpenAI-compatible server, shared by every LLM role.

The only module that imports `openai`. It owns the retry policy (the SDK's own retries are off),
bounded concurrency, the response cache and the record of every call with its cost.
"""

from __future__ import annotations

import os
import random
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any, TypeVar

import openai
from sqlalchemy import Engine
from tenacity import RetryCallState, Retrying, retry_if_exception_type, stop_after_attempt

from prchain.core.errors import (
    ContextOverflow,
    LLMError,
    LLMNotConfigured,
    LLMOutputInvalid,
    LLMUnavailable,
)
from prchain.llm.budget import Budget
from prchain.llm.cache import ResponseCache, cache_key, from_cached, to_cached
from prchain.llm.calls import CallRecord, CallStatus, Usage, mark_refused, record_call, redact
from prchain.llm.config import LLMConfig
from prchain.llm.protocol import Completion, Message, sendable
from prchain.llm.reask import Check, correction, refusal
from prchain.llm.repairs import Repaired, RepairKind, record_repairs
from prchain.llm.replies import read_reply

T = TypeVar("T")

# Worth another try: the server was busy, broken for a moment, or unreachable.
RETRYABLE = (openai.RateLimitError, openai.InternalServerError, openai.APIConnectionError)
# Local servers (vLLM, llama.cpp, the fake) ignore the key; the SDK still insists on one.
PLACEHOLDER_KEY = "no-key-needed"


class LLMClient:
    """Answers chat requests per role; safe to share between the threads of a pool."""

    def __init__(
        self, config: LLMConfig, engine: Engine | None = None, budget: Budget | None = None
    ) -> None:
        self.config = config
        self.engine = engine
        self.cache = ResponseCache(engine)
        self.usage = Usage()
        # One budget per client: every worker thread sharing the client shares the limit.
        self.budget = budget or Budget(
            config.budget_usd, config.budget_tokens, engine, prices=config.prices
        )
        self._slots = threading.BoundedSemaphore(config.workers)
        self._clients: dict[tuple[str | None, str], openai.OpenAI] = {}
        self._lock = threading.Lock()

    def complete(
        self,
        role: str,
        messages: list[Message],
        *,
        tools: list[dict[str, Any]] | None = None,
        rollout_id: int | None = None,
        sample: int = 0,
        check: Check | None = None,
        attempt: int = 0,
    ) -> Completion:
        """The reply to `messages`. `sample` > 0 asks for another draw of the same request, cached
        apart from the first. With `check`, a reply it refuses is returned all the same (the
        caller re-asks) but kept out of the replay cache."""
        return self._complete(
            role, messages, tools, rollout_id, attempt=attempt, sample=sample, check=check
        )

    def record_repairs(
        self, role: str, kinds: tuple[RepairKind, ...], rollout_id: int | None = None
    ) -> None:
        record_repairs(self.engine, role, kinds, rollout_id=rollout_id)

    def complete_parsed(
        self,
        role: str,
        messages: list[Message],
        parse: Callable[[str], T],
        *,
        attempts: int | None = None,
        tools: list[dict[str, Any]] | None = None,
        rollout_id: int | None = None,
        first_attempt: int = 0,
    ) -> tuple[T, Completion]:
        """A reply `parse` accepts; after an LLMOutputInvalid the model is told what was wrong and asked again.

        Only replies `parse` accepts are cached, so a rerun asks the server again instead of
        replaying a malformed reply; each attempt has its own cache key.
        A retry is a different request (a higher temperature, the attempt named in the feedback),
        so the same bad reply is not bought twice. `first_attempt` > 0 continues a caller's own
        retries (e.g. after a leaking reply) at the temperature they have reached.
        """
        attempts = attempts or self.config.max_retries + 1
        conversation = list(messages)
        error: LLMOutputInvalid | None = None
        for attempt in range(attempts):
            completion = self._complete(
                role,
                conversation,
                tools,
                rollout_id,
                attempt=first_attempt + attempt,
                check=lambda reply: parse(reply.content),
            )
            try:
                return parse(completion.content), completion
            except LLMOutputInvalid as exc:
                error = exc
                feedback = {
                    "role": "user",
                    "content": correction(exc, completion, attempt, attempts),
                }
                conversation = [*messages, completion.as_message(), feedback]
        assert error is not None
        raise type(error)(
            f"{role}: reply still invalid after {attempts} attempts: {error}"
        ) from error

    def complete_repaired(
        self,
        role: str,
        messages: list[Message],
        parse: Callable[[str], Repaired[T]],
        *,
        rollout_id: int | None = None,
        first_attempt: int = 0,
    ) -> tuple[T, Completion]:
        """complete_parsed for a parser that repairs format-only defects; each repair is recorded."""
        parsed, completion = self.complete_parsed(
            role, messages, parse, rollout_id=rollout_id, first_attempt=first_attempt
        )
        self.record_repairs(role, parsed.kinds, rollout_id)
        return parsed.value, completion

    # -- one request -------------------------------------------------------------------------

    def _complete(
        self,
        role: str,
        messages: list[Message],
        tools: list[dict[str, Any]] | None,
        rollout_id: int | None,
        *,
        attempt: int,
        sample: int = 0,
        check: Check | None = None,
    ) -> Completion:
        request = self._request(role, messages, tools, attempt)
        draw = {"attempt": attempt} if attempt else {}
        if sample:
            draw["sample"] = sample
        key = cache_key({**request, **draw})
        if self.config.cache and (hit := self.cache.get(key)) is not None:
            completion = from_cached(hit)
            call_id = self._record(role, key, completion, rollout_id)
            return replace(completion, cache_key=key, call_id=call_id)
        return self._ask(role, request, key, rollout_id, check)

    def _ask(
        self,
        role: str,
        request: dict[str, Any],
        key: str,
        rollout_id: int | None,
        check: Check | None,
    ) -> Completion:
        """The server's reply within the budget, recorded, and cached unless `check` refuses it."""
        reservation = self.budget.reserve(request["model"], request)  # BudgetExhausted stops here
        answer: Completion | None = None
        call_id: int | None = None
        try:
            answer = self._call_server(role, request, key, rollout_id)
            # Only a reply its role's check accepts is replayed: a rerun asks again instead.
            refused = refusal(check, answer)
            call_id = self._record(
                role,
                key,
                answer,
                rollout_id,
                status="format_error" if refused else "ok",
                error=refused,
            )
        finally:
            # Released once the call's row is in the store: released before, the call was for
            # a moment counted nowhere, and other workers' calls slipped under the limit.
            done = answer or Completion(content="")
            self.budget.release(
                reservation,
                done.prompt_tokens,
                done.completion_tokens,
                done.cost_usd,
                call_id=None if done.cached else call_id,
            )
        if self.config.cache:
            self.cache.put(key, role, answer.model, to_cached(answer), error=refused)
        return replace(answer, cache_key=key, call_id=call_id)

    def refuse(self, role: str, completion: Completion, status: CallStatus, why: str) -> None:
        """A reply refused after its call (a leaking query, a judge comment quoting the reference):
        its call row says so and the cache never replays it."""
        mark_refused(self.engine, completion.call_id, status, why)
        if self.config.cache and completion.cache_key:
            self.cache.put(
                completion.cache_key, role, completion.model, to_cached(completion), error=why
            )

    def _request(
        self,
        role: str,
        messages: list[Message],
        tools: list[dict[str, Any]] | None,
        attempt: int = 0,
    ) -> dict[str, Any]:
        request: dict[str, Any] = {
            "model": self.config.model_for(role),
            "messages": sendable(messages),
            "tools": tools or None,
            "temperature": self.config.temperature_for(role, attempt),
        }
        # Only when set, so requests without a cap keep the cache keys they always had.
        if (max_tokens := self.config.max_tokens.get(role)) is not None:
            request["max_tokens"] = max_tokens
        return request

    def _call_server(
        self, role: str, request: dict[str, Any], key: str, rollout_id: int | None
    ) -> Completion:
        client, secret = self._client_for(role)
        arguments = {name: value for name, value in request.items() if value is not None}
        started = time.perf_counter()
        try:
            with self._slots:
                response = self._retrying()(client.chat.completions.create, **arguments)
        except openai.OpenAIError as exc:
            error = _typed_error(role, request["model"], exc, secret)
            self._record(role, key, None, rollout_id, model=request["model"], error=str(error))
            raise error from None
        latency_ms = (time.perf_counter() - started) * 1000
        completion, scrubbed = read_reply(
            response, request["model"], latency_ms, self.config.prices
        )
        self.usage.add_scrubbed(scrubbed)
        return completion

    # -- plumbing ----------------------------------------------------------------------------

    def _client_for(self, role: str) -> tuple[openai.OpenAI, str]:
        """The SDK client for the role's endpoint, read from the environment at call time."""
        base_url = (
            self.config.endpoints.get(role) or os.environ.get(self.config.base_url_env) or None
        )
        api_key = os.environ.get(self.config.api_key_env, "")
        if not api_key and base_url is None:
            raise LLMNotConfigured(
                f"neither {self.config.base_url_env} nor {self.config.api_key_env} is set"
            )
        api_key = api_key or PLACEHOLDER_KEY
        with self._lock:
            client = self._clients.get((base_url, api_key))
            if client is None:
                client = openai.OpenAI(
                    base_url=base_url,
                    api_key=api_key,
                    max_retries=0,
                    timeout=self.config.timeout_seconds,
                )
                self._clients[(base_url, api_key)] = client
        return client, api_key

    def _retrying(self) -> Retrying:
        return Retrying(
            stop=stop_after_attempt(self.config.max_retries + 1),
            wait=self._backoff,
            retry=retry_if_exception_type(RETRYABLE),
            reraise=True,
        )

    def _backoff(self, state: RetryCallState) -> float:
        """Exponential with jitter; a 429's Retry-After is honoured up to the configured cap."""
        cap = self.config.retry_backoff_max_seconds
        wait = min(cap, self.config.retry_backoff_seconds * 2 ** (state.attempt_number - 1))
        wait *= 0.5 + random.random() / 2
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, openai.RateLimitError):
            wait = max(wait, min(cap, _retry_after(exc)))
        return wait

    def _record(
        self,
        role: str,
        key: str,
        completion: Completion | None,
        rollout_id: int | None,
        *,
        model: str = "",
        status: CallStatus | None = None,
        error: str | None = None,
    ) -> int | None:
        done = completion or Completion(content="", model=model)
        record = CallRecord(
            role=role,
            model=done.model,
            cache_key=key,
            prompt_tokens=done.prompt_tokens,
            completion_tokens=done.completion_tokens,
            latency_ms=done.latency_ms,
            cost_usd=done.cost_usd,
            cached=done.cached,
            status=status or ("error" if error else "ok"),
            error=error,
            rollout_id=rollout_id,
        )
        self.usage.add(record)
        return record_call(self.engine, record)


def _retry_after(exc: openai.APIStatusError) -> float:
    try:
        return float(exc.response.headers.get("retry-after", 0))
    except ValueError:  # an HTTP date instead of seconds: fall back to our own backoff
        return 0.0


def _typed_error(role: str, model: str, exc: openai.OpenAIError, secret: str) -> LLMError:
    message = redact(f"{role} ({model}): {server_said(exc)}", (secret,))
    if isinstance(exc, RETRYABLE):
        return LLMUnavailable(f"{message} (gave up after the retry budget)")
    if isinstance(exc, openai.AuthenticationError):
        return LLMNotConfigured(
            message, hint="the server refused the API key; check OPENAI_API_KEY"
        )
    if isinstance(exc, openai.BadRequestError) and _is_context_overflow(exc):
        return ContextOverflow(message)
    return LLMError(message)


SAID_CHARS = 300  # of the server's own message in a stored reason


def server_said(exc: openai.OpenAIError) -> str:
    """One line for a failed request: the HTTP status and the first line of the server's message.

    The SDK's str() is the whole decoded error object (`Error code: 500 - {'error': {...}}`) and
    some servers put a stack trace in the message; neither belongs in a stored reason.
    """
    if isinstance(exc, openai.APIStatusError):
        return f"HTTP {exc.status_code}: {_first_line(_error_message(exc.body) or exc.message)}"
    if isinstance(exc, openai.APITimeoutError):
        return "the request timed out"
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__
        return "could not connect to the server" + (
            f" ({_first_line(str(cause))})" if cause is not None else ""
        )
    return f"{type(exc).__name__}: {_first_line(str(exc))}"


def _error_message(body: object) -> str:
    """The message inside an error body: {"error": {"message": …}}, {"error": "…"}, {"message": …}."""
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            return str(inner.get("message") or inner.get("detail") or "")
        return str(inner or "")
    return str(body or "")


def _first_line(text: str) -> str:
    line = next((part.strip() for part in text.splitlines() if part.strip()), "")
    return line if len(line) <= SAID_CHARS else line[: SAID_CHARS - 1] + "…"


# Servers word it differently: OpenAI sends the code `context_length_exceeded`; vLLM, SGLang and
# llama.cpp only say it in the message.
_OVERFLOW_CODES = ("context_length_exceeded", "exceed_context_size_error")
_OVERFLOW_WORDS = (
    "context length",
    "context_length",
    "maximum context",
    "too many tokens",
    "context window",
    "context size",
)


def _is_context_overflow(exc: openai.BadRequestError) -> bool:
    if getattr(exc, "code", None) in _OVERFLOW_CODES:
        return True
    text = str(exc).lower()
    return any(word in text for word in _OVERFLOW_WORDS)
