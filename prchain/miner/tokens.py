"""GitHub tokens: read from the environment, rotated when one runs out of quota.

Tokens are secrets: they are only ever named by position ("token #2"), never printed, logged or stored.
Each token has one quota per resource (core REST, graphql, search); the pool remembers what the last
response of each said, so a spent token is skipped *before* it costs a refused request.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

from prchain.core.errors import MissingCredentials


@dataclass
class Quota:
    remaining: int | None = None  # None: not seen yet, assumed available
    reset_at: float = 0.0  # epoch seconds when the quota refills


class TokenPool:
    """Comma-separated tokens; the current one is used until its quota for a resource is spent."""

    def __init__(self, tokens: list[str]) -> None:
        if not tokens:
            raise MissingCredentials("no GitHub token given")
        self.tokens = tokens
        self.current = 0
        self._quotas: dict[tuple[int, str], Quota] = {}

    @classmethod
    def from_env(cls, var: str) -> TokenPool:
        tokens = [t.strip() for t in os.environ.get(var, "").split(",") if t.strip()]
        if not tokens:
            raise MissingCredentials(
                f"no GitHub token: export {var}=<token> (several may be given, comma-separated)",
                hint=f"export {var}=<token>[,<token>...] or mine a local clone with --source git",
            )
        return cls(tokens)

    def __len__(self) -> int:
        return len(self.tokens)

    @staticmethod
    def label(index: int) -> str:
        return f"token #{index + 1}"

    def quota(self, index: int, resource: str) -> Quota:
        return self._quotas.setdefault((index, resource), Quota())

    def usable(self, index: int, resource: str, now: float, need: int = 1) -> bool:
        q = self.quota(index, resource)
        return q.remaining is None or q.remaining >= need or now >= q.reset_at

    def pick(
        self, resource: str, now: float | None = None, need: int = 1
    ) -> tuple[int | None, float]:
        """(index of a token that can pay `need` (requests, or GraphQL points), 0), the current one
        first; else (None, seconds until the earliest reset)."""
        now = time.time() if now is None else now
        order = [(self.current + k) % len(self.tokens) for k in range(len(self.tokens))]
        for index in order:
            if self.usable(index, resource, now, need):
                self.current = index
                return index, 0.0
        earliest = min(self.quota(i, resource).reset_at for i in order)
        return None, max(earliest - now, 0.0)

    def observe(self, index: int, resource: str, headers: dict[str, str]) -> None:
        """Remember the quota a response reported (x-ratelimit-remaining / -reset)."""
        remaining, reset = headers.get("x-ratelimit-remaining"), headers.get("x-ratelimit-reset")
        q = self.quota(index, resource)
        if remaining is not None:
            q.remaining = int(float(remaining))
        if reset is not None:
            q.reset_at = float(reset)

    def exhaust(self, index: int, resource: str, reset_at: float) -> None:
        q = self.quota(index, resource)
        q.remaining, q.reset_at = 0, reset_at
