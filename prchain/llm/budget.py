"""A hard spending limit for one run, checked before every LLM call and shared by all its workers.

The spend is read from the `llm_calls` table (calls recorded since the run started), so workers in
other processes (Ray tasks) writing to the same store count against the same limit. Calls still in
flight in this process are reserved at an estimate before they start, so concurrent workers cannot
all slip under the limit at once: a run stops within about one call of its limit.

A call of this process is released once its row is written, and the row's spend stays counted
until a read of the store has seen that row. Between full recounts only rows with newer ids are
read, and on PostgreSQL a row may commit after a row with a higher id was read: read by id alone,
such a call was counted nowhere until the next recount (a four-worker build stopped 844 tokens
past its limit, where its largest call was 646).
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy import Engine

from prchain.core.errors import BudgetExhausted
from prchain.llm.config import Price
from prchain.llm.pricing import cost_usd
from prchain.store.llm_calls import LLMCalls
from prchain.store.models.base import utcnow

CHARS_PER_TOKEN = 4
FIRST_COMPLETION_GUESS = 256  # completion tokens assumed before any call of the run has finished
# Between full recounts only rows with a newer id are summed (cheap on a big store); the recount
# catches rows another process committed late with an older id (PostgreSQL sequences).
FULL_RECOUNT_SECONDS = 30.0


@dataclass(frozen=True)
class Spend:
    calls: int = 0
    tokens: int = 0
    completion_tokens: int = 0
    usd: float = 0.0

    def __add__(self, other: Spend) -> Spend:
        return Spend(
            self.calls + other.calls,
            self.tokens + other.tokens,
            self.completion_tokens + other.completion_tokens,
            self.usd + other.usd,
        )

    def describe(self) -> str:
        return f"${self.usd:.4f} and {self.tokens:,} tokens over {self.calls} paid calls"


@dataclass
class Budget:
    """Limits (None = unlimited) on the paid calls made since `since`."""

    max_usd: float | None = None
    max_tokens: int | None = None
    engine: Engine | None = None
    prices: dict[str, Price] = field(default_factory=dict)
    since: datetime = field(default_factory=utcnow)
    _reserved: list[tuple[int, float]] = field(default_factory=list, repr=False)
    _local: Spend = field(default_factory=Spend, repr=False)
    _lock: threading.RLock = field(default_factory=threading.RLock, repr=False)
    _counted: Spend = field(default_factory=Spend, repr=False)  # store rows read so far
    _last_id: int = field(default=0, repr=False)
    _seen: set[int] = field(default_factory=set, repr=False)  # ids of the rows in _counted
    _landed: dict[int, Spend] = field(default_factory=dict, repr=False)  # ours, not yet read
    _recounted_at: float = field(default=0.0, repr=False)

    @property
    def limited(self) -> bool:
        return self.max_usd is not None or self.max_tokens is not None

    def spent(self) -> Spend:
        """What the run has paid so far (every process writing to the store included)."""
        if self.engine is None:
            return self._local
        with self._lock:
            return self._spent_in_store(self.engine)

    def _spent_in_store(self, engine: Engine) -> Spend:
        if time.monotonic() - self._recounted_at > FULL_RECOUNT_SECONDS:
            self._counted, self._last_id, self._seen = Spend(), 0, set()
            self._recounted_at = time.monotonic()
        # After the first count, newer ids alone say what is new (a primary-key range scan).
        rows = LLMCalls(engine).paid(since=self.since, after_id=self._last_id)
        counted = self._counted
        for row_id, tokens, completion, usd in rows:
            if row_id in self._seen:
                continue
            self._seen.add(row_id)
            self._landed.pop(row_id, None)
            counted = counted + Spend(1, tokens, completion, usd)
            self._last_id = max(self._last_id, row_id)
        self._counted = counted
        return sum(self._landed.values(), counted)

    def reserve(self, model: str, request: dict[str, Any]) -> tuple[int, float]:
        """Hold the estimated size of one call, or raise BudgetExhausted when it would not fit."""
        if not self.limited:
            return (0, 0.0)
        with self._lock:
            spent = self.spent()
            estimate = self._estimate(model, request, spent)
            tokens = spent.tokens + sum(t for t, _ in self._reserved) + estimate[0]
            usd = spent.usd + sum(u for _, u in self._reserved) + estimate[1]
            if (self.max_tokens is not None and tokens > self.max_tokens) or (
                self.max_usd is not None and usd > self.max_usd
            ):
                raise BudgetExhausted(f"budget reached: {self._limits()}; spent {spent.describe()}")
            self._reserved.append(estimate)
            return estimate

    def release(
        self,
        reservation: tuple[int, float],
        prompt: int = 0,
        completion: int = 0,
        usd: float = 0.0,
        call_id: int | None = None,
    ) -> None:
        """The call is over, and recorded in the store as row `call_id` when it was paid: drop its
        reservation, counting the row's spend until a read of the store has seen it."""
        if not self.limited:
            return
        with self._lock:
            if reservation in self._reserved:
                self._reserved.remove(reservation)
            call = Spend(1, prompt + completion, completion, usd)
            if self.engine is None:  # no store: this process's own calls are the whole spend
                self._local = self._local + call
            elif call_id is not None and call_id not in self._seen:
                self._landed[call_id] = call

    def _estimate(self, model: str, request: dict[str, Any], spent: Spend) -> tuple[int, float]:
        text = json.dumps(request.get("messages", [])) + json.dumps(request.get("tools") or [])
        prompt = len(text) // CHARS_PER_TOKEN
        completion = (
            spent.completion_tokens // spent.calls if spent.calls else FIRST_COMPLETION_GUESS
        )
        return prompt + completion, cost_usd(self.prices, model, prompt, completion)

    def _limits(self) -> str:
        parts = []
        if self.max_usd is not None:
            parts.append(f"${self.max_usd:g}")
        if self.max_tokens is not None:
            parts.append(f"{self.max_tokens:,} tokens")
        return "limit " + " / ".join(parts)
