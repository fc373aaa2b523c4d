"""Recognise secrets in text so that none reaches the database, logs or exported data."""

from __future__ import annotations

import os
import re
from typing import Any

REDACTED = "[REDACTED]"
# Shapes of credentials worth catching even when we never held them ourselves.
SECRET_PATTERNS = [
    re.compile(p)
    for p in (
        r"gh[pousr]_[A-Za-z0-9]{20,}",
        r"github_pat_[A-Za-z0-9_]{20,}",
        r"\bsk-[A-Za-z0-9_-]{16,}",
        r"(?i)bearer\s+[A-Za-z0-9._~+/=-]{16,}",
        r"\bAKIA[0-9A-Z]{16}\b",
        r"xox[abprs]-[A-Za-z0-9-]{10,}",
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----",
    )
]
# The password of any URL (postgresql://user:PASSWORD@host/db, https://user:PASSWORD@host): only
# the password is replaced, so the URL still says where it points.
URL_PASSWORD = re.compile(r"(?<=://)([^/\s:@]*):([^@\s/]+)@")
MASKS = ("***", REDACTED)  # passwords already masked (SQLAlchemy's hide_password writes ***)
# Environment variables whose values are secrets wherever they appear.
SECRET_ENV = ("OPENAI_API_KEY", "GITHUB_TOKEN", "GH_TOKEN", "HF_TOKEN", "ANTHROPIC_API_KEY")


def known_secrets(extra: tuple[str, ...] = ()) -> list[str]:
    """Secret values held in this process's environment (long enough to be unambiguous), plus `extra`.

    GITHUB_TOKEN may hold several comma-separated tokens; each is a secret of its own.
    """
    values = [part for name in SECRET_ENV for part in os.environ.get(name, "").split(",")]
    return [v.strip() for v in (*values, *extra) if len(v.strip()) >= 8]


class Redactor:
    """Replaces known secret values and credential-shaped strings; counts what it replaced."""

    def __init__(
        self,
        extra: tuple[str, ...] = (),
        patterns: list[re.Pattern[str]] | None = None,
        replacement: str = REDACTED,
    ) -> None:
        self.count = 0
        self.known = known_secrets(extra)
        self.patterns = SECRET_PATTERNS if patterns is None else patterns
        self.replacement = replacement

    def __call__(self, text: str) -> str:
        for value in self.known:
            if value in text:
                self.count += text.count(value)
                text = text.replace(value, self.replacement)
        for pattern in self.patterns:
            text, n = pattern.subn(self.replacement, text)
            self.count += n
        return URL_PASSWORD.sub(self._mask_password, text)

    def _mask_password(self, match: re.Match[str]) -> str:
        if match.group(2) in (*MASKS, self.replacement):
            return match.group()
        self.count += 1
        return f"{match.group(1)}:{self.replacement}@"

    def value(self, value: Any) -> Any:
        """Every string inside a JSON-shaped value redacted (a stored message, a tool call)."""
        if isinstance(value, str):
            return self(value)
        if isinstance(value, dict):
            return {key: self.value(item) for key, item in value.items()}
        if isinstance(value, list | tuple):
            return [self.value(item) for item in value]
        return value
