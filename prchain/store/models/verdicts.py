"""Test verdicts of chain stages: FAIL_TO_PASS / PASS_TO_PASS found by `prchain tests verify`."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from prchain.store.models.base import Base, utcnow


class StageVerification(Base):
    """One stage's tests, checked in its repository's image; one row per chain stage."""

    __tablename__ = "stage_verifications"

    id: Mapped[int] = mapped_column(primary_key=True)
    chain_stage_id: Mapped[int] = mapped_column(
        ForeignKey("chain_stages.id", ondelete="CASCADE"), unique=True
    )
    # Hash of what decides the result (base, patches, command, gold runs): equal recipes share it.
    recipe: Mapped[str] = mapped_column(String(64), index=True)
    status: Mapped[str] = mapped_column(String(20))  # usable | unusable
    reason: Mapped[str | None] = mapped_column(Text)  # why unusable
    test_command: Mapped[str] = mapped_column(Text, default="")  # as run, {files} filled in
    test_files: Mapped[list[Any]] = mapped_column(default=list)
    fail_to_pass: Mapped[list[Any]] = mapped_column(default=list)
    pass_to_pass: Mapped[list[Any]] = mapped_column(default=list)
    flaky: Mapped[list[Any]] = mapped_column(default=list)  # outcome varied over the gold runs
    gold_failing: Mapped[list[Any]] = mapped_column(default=list)  # fail on every gold run
    # Per run: {"start": {id: outcome}, "tests": {...}, "gold": [{...}, ...]}.
    runs: Mapped[dict[str, Any]] = mapped_column(default=dict)
    output_tail: Mapped[str] = mapped_column(Text, default="")  # of the last gold run
    seconds: Mapped[float] = mapped_column(default=0.0)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
