"""Era environments: one recipe per (repository, era key), and which era each chain stage is in."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from prchain.store.models.base import Base, utcnow


class EnvRecipe(Base):
    """How an era's image is built and its tests run, with the evidence that it works."""

    __tablename__ = "env_recipes"
    __table_args__ = (UniqueConstraint("repo_id", "era_key"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    repo_id: Mapped[int] = mapped_column(ForeignKey("repos.id", ondelete="CASCADE"), index=True)
    era_key: Mapped[str] = mapped_column(String(64))
    ecosystem: Mapped[str] = mapped_column(String(20))
    era_date: Mapped[str] = mapped_column(String(32))  # B_t's date of the stage it was planned on
    base_sha: Mapped[str] = mapped_column(String(64))  # where the tests were run to verify it
    status: Mapped[str] = mapped_column(String(20))  # verified | unverified
    method: Mapped[str] = mapped_column(String(20))  # memory | planner | agent
    variant: Mapped[str] = mapped_column(Text, default="")  # which plan; from build logs, unbounded
    suite: Mapped[str] = mapped_column(String(20), default="")
    interpreter: Mapped[str] = mapped_column(String(20), default="")
    cutoff: Mapped[str] = mapped_column(String(32), default="")  # no package uploaded after it
    commands: Mapped[list[Any]] = mapped_column(default=list)
    test_command: Mapped[str] = mapped_column(Text, default="")
    setup_command: Mapped[str] = mapped_column(Text, default="")
    image: Mapped[str] = mapped_column(Text, default="")  # the era image tag ("" if none built)
    image_bytes: Mapped[int] = mapped_column(default=0)
    # passed, failed, errors, skipped, collection_errors, share; first_error; per attempt too
    verification: Mapped[dict[str, Any]] = mapped_column(default=dict)
    root_error: Mapped[str] = mapped_column(Text, default="")  # first line that says why not
    notes: Mapped[list[Any]] = mapped_column(default=list)
    cost: Mapped[float] = mapped_column(default=0.0)  # LLM dollars (agent recipes)
    build_seconds: Mapped[float] = mapped_column(default=0.0)
    verify_seconds: Mapped[float] = mapped_column(default=0.0)
    log: Mapped[str] = mapped_column(Text, default="")  # build and test output, tails kept
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(default=utcnow, onupdate=utcnow)


class StageEra(Base):
    """The era of a chain stage's base commit (what `env setup` found; rollouts look it up)."""

    __tablename__ = "stage_eras"

    chain_stage_id: Mapped[int] = mapped_column(
        ForeignKey("chain_stages.id", ondelete="CASCADE"), primary_key=True
    )
    repo_id: Mapped[int] = mapped_column(ForeignKey("repos.id", ondelete="CASCADE"), index=True)
    era_key: Mapped[str] = mapped_column(String(64), index=True)
    base_sha: Mapped[str] = mapped_column(String(64))
