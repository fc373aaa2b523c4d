"""Rollouts of the agent over chains: every step as it happens, stage results and judgements."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, LargeBinary, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from prchain.store.models.base import Base, utcnow


class Rollout(Base):
    __tablename__ = "rollouts"

    id: Mapped[int] = mapped_column(primary_key=True)
    chain_id: Mapped[int] = mapped_column(ForeignKey("chains.id", ondelete="CASCADE"), index=True)
    status: Mapped[str] = mapped_column(
        String(20), default="running"
    )  # running | kept | rejected | failed
    reason: Mapped[str | None] = mapped_column(Text)
    # agent: a plain rollout; p2t: a trajectory curated against process graphs
    source: Mapped[str] = mapped_column(String(10), default="agent", server_default="agent")
    conflict_policy: Mapped[str] = mapped_column(String(20))
    keep_policy: Mapped[str] = mapped_column(String(20), default="all")
    prm_variant: Mapped[str | None] = mapped_column(String(10))
    kept_stages: Mapped[int] = mapped_column(default=0)
    models: Mapped[dict[str, Any]] = mapped_column(default=dict)
    config: Mapped[dict[str, Any]] = mapped_column(default=dict)
    action_format: Mapped[str] = mapped_column(String(10), default="tools")
    # Provenance: sha256 of the prompt templates and of the tool schemas the rollout was made with.
    prompt_hash: Mapped[str] = mapped_column(String(64), default="")
    tool_schema_hash: Mapped[str] = mapped_column(String(64), default="")
    prompt_tokens: Mapped[int] = mapped_column(default=0)  # billed over every policy call
    completion_tokens: Mapped[int] = mapped_column(default=0)
    trajectory_tokens: Mapped[int] = mapped_column(default=0)  # length of the final conversation
    agent_steps: Mapped[int] = mapped_column(default=0)
    tool_calls: Mapped[int] = mapped_column(default=0)
    cost_usd: Mapped[float] = mapped_column(
        default=0.0
    )  # every LLM call of the rollout (policy, judge, PRM)
    started_at: Mapped[datetime] = mapped_column(default=utcnow)
    finished_at: Mapped[datetime | None]


class RolloutStage(Base):
    __tablename__ = "rollout_stages"
    __table_args__ = (UniqueConstraint("rollout_id", "stage_idx"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    rollout_id: Mapped[int] = mapped_column(
        ForeignKey("rollouts.id", ondelete="CASCADE"), index=True
    )
    stage_idx: Mapped[int]
    status: Mapped[str] = mapped_column(
        String(20), default="running"
    )  # running | passed | failed | stopped
    reason: Mapped[str | None] = mapped_column(Text)
    score: Mapped[float | None]
    rounds: Mapped[int] = mapped_column(default=0)
    stage_diff: Mapped[str] = mapped_column(Text, default="")
    cumulative_diff: Mapped[str] = mapped_column(Text, default="")
    # Δ_t byte for byte (`git diff --binary`), unredacted: what a resume re-applies, so the rebuilt
    # tree is the one the agent left. NULL when it held a known secret value (those never rest in
    # the store; the resume then says which files differ) and on rows from before revision 0011.
    # Never shown nor exported: `cumulative_diff` (redacted text) is.
    carried_patch: Mapped[bytes | None] = mapped_column(LargeBinary, default=None)
    test_result: Mapped[dict[str, Any] | None]
    # T(p̂): every FAIL_TO_PASS and PASS_TO_PASS test passes (None: the stage has no verified tests).
    tests_passed: Mapped[bool | None]
    agent_steps: Mapped[int] = mapped_column(default=0)
    started_at: Mapped[datetime] = mapped_column(default=utcnow)
    finished_at: Mapped[datetime | None]


class Step(Base):
    """One message of a trajectory, stored as it happens."""

    __tablename__ = "steps"
    __table_args__ = (UniqueConstraint("rollout_id", "idx"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    rollout_id: Mapped[int] = mapped_column(
        ForeignKey("rollouts.id", ondelete="CASCADE"), index=True
    )
    stage_idx: Mapped[int]
    idx: Mapped[int]  # position in the rollout's message list
    kind: Mapped[str] = mapped_column(
        String(20)
    )  # system | query | assistant | tool | feedback | prm | format_error
    message: Mapped[dict[str, Any]]  # the OpenAI-format message exactly as sent
    tool_call: Mapped[dict[str, Any] | None]
    observation: Mapped[str | None] = mapped_column(Text)
    prompt_tokens: Mapped[int] = mapped_column(default=0)
    completion_tokens: Mapped[int] = mapped_column(default=0)
    latency_ms: Mapped[float] = mapped_column(default=0.0)
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class Judgement(Base):
    __tablename__ = "judgements"
    __table_args__ = (UniqueConstraint("rollout_id", "stage_idx", "round"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    rollout_id: Mapped[int] = mapped_column(
        ForeignKey("rollouts.id", ondelete="CASCADE"), index=True
    )
    stage_idx: Mapped[int]
    round: Mapped[int]  # 0 = first submission, 1..3 = refinements
    score: Mapped[float]
    comment: Mapped[str] = mapped_column(Text, default="")
    passed: Mapped[bool]
    attempts: Mapped[int] = mapped_column(
        default=1
    )  # judge calls needed (malformed or leaking output re-asked)
    redacted: Mapped[bool] = mapped_column(
        default=False
    )  # comment still quoted the gold patch and was redacted
    created_at: Mapped[datetime] = mapped_column(default=utcnow)
