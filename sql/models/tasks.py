"""Chains of PRs and their stages: the tasks an agent is rolled out on."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from sql.models.base import Base, utcnow


class Chain(Base):
    __tablename__ = "chains"
    __table_args__ = (UniqueConstraint("strategy", "signature"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    repo_id: Mapped[int] = mapped_column(ForeignKey("repos.id", ondelete="CASCADE"), index=True)
    strategy: Mapped[str] = mapped_column(String(40))
    signature: Mapped[str] = mapped_column(String(400))  # PR ids in stage order, "12-40-77"
    length: Mapped[int]
    score: Mapped[float] = mapped_column(default=0.0)
    edges: Mapped[list[Any]] = mapped_column(
        default=list
    )  # [{src, dst, types, strength, overlap, evidence}]
    overview: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
    # Set when a later `chains build` no longer selects the chain but work was done on it
    # (queries, verifications, rollouts, graphs): it is kept unchanged and stays usable.
    superseded_at: Mapped[datetime | None] = mapped_column(default=None)


class ChainStage(Base):
    __tablename__ = "chain_stages"
    __table_args__ = (UniqueConstraint("chain_id", "idx"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    chain_id: Mapped[int] = mapped_column(ForeignKey("chains.id", ondelete="CASCADE"), index=True)
    idx: Mapped[int]  # 1-based stage index t
    pr_id: Mapped[int] = mapped_column(ForeignKey("pull_requests.id", ondelete="CASCADE"))
    base_sha: Mapped[str | None] = mapped_column(String(64))  # B_t
    end_sha: Mapped[str | None] = mapped_column(String(64))  # the commit that merged the PR
    gold_patch: Mapped[str] = mapped_column(Text, default="")
    gold_test_patch: Mapped[str] = mapped_column(Text, default="")
    query: Mapped[str | None] = mapped_column(Text)
    query_attempts: Mapped[int] = mapped_column(default=0)
    query_leaks: Mapped[list[Any]] = mapped_column(
        default=list
    )  # identifiers the final query still names


class ChainBuild(Base):
    """One `chains build` run: what each rule dropped, for `prchain stats` and later comparison."""

    __tablename__ = "chain_builds"

    id: Mapped[int] = mapped_column(primary_key=True)
    strategy: Mapped[str] = mapped_column(String(40), index=True)
    chains: Mapped[int] = mapped_column(default=0)
    # [{rule, level (pr | link | chain), prs, links, chains}] in pipeline order
    rules: Mapped[list[Any]] = mapped_column(default=list)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
