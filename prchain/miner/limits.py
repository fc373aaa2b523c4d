"""What a GitHub response means for the caller: go on, wait for a reset, back off, retry or give up.

Pure functions over (status, headers, body), so the one request loop in `prchain.miner.github` stays short
and every rule below is documented by GitHub:
- primary limit: 403/429 with `x-ratelimit-remaining: 0` (REST), or HTTP 200 with a RATE_LIMITED
  error (GraphQL) → wait until `x-ratelimit-reset`, after trying another token;
- secondary limit: 403/429 with `Retry-After`, or a "secondary rate limit"/abuse message (JSON or
  an HTML page) → wait Retry-After, else back off exponentially;
- 5xx, GraphQL "something went wrong"/timeouts, dropped connections → bounded retries.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

log = logging.getLogger("prchain.miner.github")

OK, PRIMARY, SECONDARY, SERVER, BAD_CREDENTIALS, NOT_FOUND, TOO_LARGE, FAILED, UNREACHABLE = (
    "ok",
    "primary",
    "secondary",
    "server",
    "bad_credentials",
    "not_found",
    "too_large",
    "failed",
    "unreachable",
)
SECONDARY_WORDS = (
    "secondary rate limit",
    "abuse detection",
    "abuse-rate-limits",
    "please wait a few minutes",
)
TRANSIENT_GRAPHQL_WORDS = ("something went wrong", "timeout", "timed out", "try again")


@dataclass
class Verdict:
    kind: str
    message: str = ""
    retry_after: float | None = None  # seconds the server asked us to wait (secondary limits)
    reset_at: float | None = None  # epoch seconds when the primary quota refills


def message_of(body: Any) -> str:
    """The human message of an error body: JSON `message`, the first GraphQL error, or raw text."""
    if isinstance(body, dict):
        if isinstance(body.get("message"), str):
            return body["message"]
        errors = body.get("errors")
        if isinstance(errors, list) and errors and isinstance(errors[0], dict):
            return str(errors[0].get("message", ""))
        if isinstance(body.get("data"), str):  # PyGithub wraps a non-JSON body as {"data": text}
            return body["data"][:500]
    return str(body or "")[:500]


def _number(headers: Mapping[str, str], name: str) -> float | None:
    try:
        return float(headers[name])
    except (KeyError, TypeError, ValueError):
        return None


def classify(status: int, headers: Mapping[str, str], body: Any) -> Verdict:
    """The verdict on one HTTP response (headers with lower-case names)."""
    message = message_of(body)
    if status < 300:
        return (
            graphql_verdict(headers, body)
            if isinstance(body, dict) and body.get("errors")
            else Verdict(OK)
        )
    if status == 401:
        return Verdict(BAD_CREDENTIALS, message)
    if status in (403, 429):
        return _limit_verdict(status, headers, message)
    if status == 404:
        return Verdict(NOT_FOUND, message)
    if status in (406, 422) and "diff" in message.lower():
        return Verdict(TOO_LARGE, message)
    if status >= 500:
        return Verdict(SERVER, f"HTTP {status}: {message[:200]}")
    return Verdict(FAILED, f"HTTP {status}: {message[:200]}")


def _limit_verdict(status: int, headers: Mapping[str, str], message: str) -> Verdict:
    retry_after = _number(headers, "retry-after")
    if retry_after is not None:
        return Verdict(SECONDARY, message, retry_after=retry_after)
    if _number(headers, "x-ratelimit-remaining") == 0:
        return Verdict(PRIMARY, message, reset_at=_number(headers, "x-ratelimit-reset"))
    if status == 429 or any(word in message.lower() for word in SECONDARY_WORDS):
        return Verdict(SECONDARY, message)
    return Verdict(FAILED, f"HTTP {status}: {message[:200]}")


def graphql_verdict(headers: Mapping[str, str], body: dict[str, Any]) -> Verdict:
    """GraphQL answers 200 even when it refuses: look at the first error's type and wording."""
    error = body["errors"][0] if isinstance(body["errors"][0], dict) else {}
    kind, message = str(error.get("type", "")), str(error.get("message", ""))
    if kind == "RATE_LIMITED":
        return Verdict(PRIMARY, message, reset_at=_number(headers, "x-ratelimit-reset"))
    if kind == "NOT_FOUND":
        return Verdict(NOT_FOUND, message)
    if body.get("data") is None and any(
        word in message.lower() for word in TRANSIENT_GRAPHQL_WORDS
    ):
        return Verdict(SERVER, f"GraphQL: {message[:200]}")
    return Verdict(FAILED, f"GraphQL: {message[:300]}")


def backoff(first: float, attempt: int, cap: float = 300.0) -> float:
    """first, 2·first, 4·first, ... capped: the wait before retry number `attempt` (0-based)."""
    return float(min(first * (2**attempt), cap))


def wait_visibly(seconds: float, reason: str) -> None:
    """Sleep, saying why first: a long silent pause looks like a hang."""
    if seconds <= 0:
        return
    log.warning("GitHub: %s; waiting %.1f s", reason, seconds)
    time.sleep(seconds)
