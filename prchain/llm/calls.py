"""Recording every LLM call (never its credentials) and summing what calls cost."""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from typing import Literal

from sqlalchemy import Engine

from prchain.core.secrets import SECRET_PATTERNS, Redactor
from prchain.core.text import storable
from prchain.store.llm_calls import LLMCalls

# Servers echo a refused key in their error text ("Incorrect API key provided: sk-..."); never store one.
_KEY_PATTERN = re.compile(r"\b(sk|key|token)-[A-Za-z0-9_\-*.]{6,}", re.IGNORECASE)


def redact(text: str, secrets: tuple[str, ...] = ()) -> str:
    """`text` with the given secrets, the process's known secrets and key-shaped strings replaced by ***.

    Error text is terse, so the looser key pattern is safe here (unlike in trajectories).
    """
    return Redactor(secrets, [*SECRET_PATTERNS, _KEY_PATTERN], replacement="***")(text)


CallStatus = Literal["ok", "error", "format_error", "leaked", "rejected"]
"""ok: a usable reply; error: the server failed; format_error: the role's parser refused the reply;
leaked: it named what it must not (a query naming the gold patch's identifiers); rejected: another
check of its content refused it. Every refused reply is kept out of the replay cache."""
REFUSED: tuple[CallStatus, ...] = ("format_error", "leaked", "rejected")


@dataclass(frozen=True)
class CallRecord:
    role: str
    model: str
    cache_key: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_ms: float = 0.0
    cost_usd: float = 0.0
    cached: bool = False
    status: CallStatus = "ok"
    error: str | None = None
    rollout_id: int | None = None


COUNTS = ("calls", "cached_calls", "failed_calls", "prompt_tokens", "completion_tokens")


@dataclass
class Usage:
    """Running totals of one client, for the summaries commands print."""

    calls: int = 0
    cached_calls: int = 0
    failed_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    scrubbed_chars: int = (
        0  # NUL and lone surrogates replaced in replies so the store can hold them
    )
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False, compare=False)

    def add(self, record: CallRecord) -> None:
        with self._lock:
            self.calls += 1
            self.cached_calls += record.cached
            self.failed_calls += record.status == "error"
            self.prompt_tokens += record.prompt_tokens
            self.completion_tokens += record.completion_tokens
            self.cost_usd += record.cost_usd

    def merge(self, other: Usage) -> None:
        """Add another client's totals (e.g. one returned by a task on another machine)."""
        with self._lock:
            for name in (*COUNTS, "cost_usd", "scrubbed_chars"):
                setattr(self, name, getattr(self, name) + getattr(other, name))

    def __getstate__(self) -> dict[str, object]:
        # Totals travel between processes (a Ray task's summary); the lock stays behind.
        return {k: v for k, v in self.__dict__.items() if k != "_lock"}

    def __setstate__(self, state: dict[str, object]) -> None:
        self.__dict__.update(state, _lock=threading.Lock())

    def add_scrubbed(self, count: int) -> None:
        if count:
            with self._lock:
                self.scrubbed_chars += count

    @property
    def paid_calls(self) -> int:
        """Calls that reached the server (cache hits excluded)."""
        return self.calls - self.cached_calls


def record_call(engine: Engine | None, record: CallRecord) -> int | None:
    """Store the call; its row id (None without a store)."""
    if engine is None:
        return None
    return LLMCalls(engine).add({**record.__dict__, "error": storable(record.error)[0]})


def mark_refused(engine: Engine | None, call_id: int | None, status: CallStatus, why: str) -> None:
    """A reply refused after it was recorded (e.g. a query found leaking) says so in its row."""
    if engine is None or call_id is None:
        return
    LLMCalls(engine).mark(call_id, status, storable(why)[0])
