"""The response cache: an identical request (model, messages, tools, temperature) is answered once.

Entries live in the `llm_cache` table when the client has a store, else in memory for the
client's lifetime. Only replies that passed their role's check are replayed: a refused reply is
stored with the reason (for diagnosis) but a rerun asks the server again, so one bad answer
cannot fail every later run the same way (finding 4 of issue 16).
"""

from __future__ import annotations

import hashlib
import json
import threading
from typing import Any

from sqlalchemy import Engine

from prchain.core.text import storable
from prchain.llm.protocol import Completion
from prchain.store.db import session_scope, upsert
from prchain.store.models import LLMCacheEntry


def cache_key(request: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of the request: key order and whitespace never matter."""
    canonical = json.dumps(
        request, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


class ResponseCache:
    """Thread-safe get/put of stored replies by cache key."""

    def __init__(self, engine: Engine | None) -> None:
        self._engine = engine
        self._memory: dict[str, dict[str, Any]] = {}
        self._lock = threading.Lock()

    def get(self, key: str) -> dict[str, Any] | None:
        """The valid reply stored for `key`, if any (a refused one is never replayed)."""
        if self._engine is None:
            with self._lock:
                return self._memory.get(key)
        with session_scope(self._engine) as session:
            entry = session.get(LLMCacheEntry, key)
            return dict(entry.response) if entry is not None and entry.valid else None

    def put(
        self,
        key: str,
        role: str,
        model: str,
        response: dict[str, Any],
        *,
        error: str | None = None,
    ) -> int:
        """Store a reply (refused when `error` is given); returns how many characters were scrubbed."""
        clean, scrubbed = storable(response)
        if self._engine is None:
            if error is None:
                with self._lock:
                    self._memory[key] = clean
            return scrubbed
        row = {
            "cache_key": key,
            "role": role,
            "model": model,
            "response": clean,
            "valid": error is None,
            "error": storable(error)[0],
            "scrubbed_chars": scrubbed,
        }
        with session_scope(self._engine) as session:
            # A later reply to the same request replaces a refused one; two workers storing the same
            # valid reply at once write identical rows.
            upsert(session, LLMCacheEntry, [row], ["cache_key"])
        return scrubbed

    def delete(self, key: str) -> None:
        if self._engine is None:
            with self._lock:
                self._memory.pop(key, None)
            return
        with session_scope(self._engine) as session:
            entry = session.get(LLMCacheEntry, key)
            if entry is not None:
                session.delete(entry)


def to_cached(completion: Completion) -> dict[str, Any]:
    """What the cache keeps of a reply (not its cost or latency: a replay costs nothing)."""
    return {
        "content": completion.content,
        "reasoning": completion.reasoning,
        "tool_calls": completion.tool_calls,
        "model": completion.model,
        "prompt_tokens": completion.prompt_tokens,
        "completion_tokens": completion.completion_tokens,
        "finish_reason": completion.finish_reason,
    }


def from_cached(stored: dict[str, Any]) -> Completion:
    """A replayed reply: same content and token counts, but it cost nothing this time."""
    return Completion(**stored, latency_ms=0.0, cost_usd=0.0, cached=True)
