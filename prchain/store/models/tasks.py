"""Chains of PRs and their stages: the tasks an agent is rolled out on."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, String, Text, UniqueConstraint, false
from sqlalchemy.orm import Mapped, mapped_column

from prchain.store.models.base import Base, utcnow


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
    label: Mapped[str | None] = mapped_column(
        String(40)
    )  # revert_reland (see prchain/chains/building/build.py)
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
    # The PR (a pull_requests.id) of the later stage whose tests the stage borrowed because its
    # own PR changes none (prchain/chains/building/lent.py); None: the test patch is the PR's own.
    tests_from: Mapped[int | None] = mapped_column(default=None)
    # How the sandbox enters the stage: `revert` (the earlier gold patches reverted at B_t) or
    # `propagate` (the fallback; prchain/chains/evidence/propagation.py). Chosen by the build.
    entry: Mapped[str] = mapped_column(String(20), default="revert", server_default="revert")
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
    # {nodes, edges, references, lengths: {length: chains}}: the graph the build read, so that
    # the report shows it without building it again (NULL for builds before this was kept).
    graph: Mapped[dict[str, Any] | None]
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class ChainLink(Base):
    """Every candidate link the latest `chains build` judged, kept or dropped, with its evidence.

    A link is a pair of PRs a reference joins, oriented newer → older where their lifetimes allow.
    Rebuilt in full by each build (the link rules do not depend on the strategy)."""

    __tablename__ = "chain_links"
    __table_args__ = (UniqueConstraint("newer_pr_id", "older_pr_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    build_id: Mapped[int | None] = mapped_column(
        ForeignKey("chain_builds.id", ondelete="SET NULL"), index=True
    )
    repo_id: Mapped[int] = mapped_column(ForeignKey("repos.id", ondelete="CASCADE"), index=True)
    newer_pr_id: Mapped[int] = mapped_column(
        ForeignKey("pull_requests.id", ondelete="CASCADE"), index=True
    )
    older_pr_id: Mapped[int] = mapped_column(
        ForeignKey("pull_requests.id", ondelete="CASCADE"), index=True
    )
    kept: Mapped[bool] = mapped_column(default=False)
    rule: Mapped[str | None] = mapped_column(String(60), index=True)  # the rule that dropped it
    evidence_class: Mapped[str | None] = mapped_column(String(20))
    cue: Mapped[str | None] = mapped_column(Text)  # the words that decided the class
    strength: Mapped[int] = mapped_column(default=0)
    overlap: Mapped[float | None]  # file Jaccard
    gap_days: Mapped[float | None]  # older merge → newer opening
    lineage: Mapped[int] = mapped_column(default=0)  # lines of the older PR the newer rewrites
    lineage_via: Mapped[str | None] = mapped_column(String(20))  # blame | patch
    # Of `lineage`, the lines the newer PR only moves (it adds the same text elsewhere).
    lineage_moved: Mapped[int] = mapped_column(default=0, server_default="0")
    # Symbols the older PR introduced that the newer one uses; NULL where they were not measured
    # (they are only where they may change the decision).
    symbols: Mapped[int | None]
    # Why a dropped link was dropped: "link" (a link rule judged the pair not dependent) or
    # "stage" (an end is no usable stage: filtered, not mined, under the substance minimum).
    drop_kind: Mapped[str | None] = mapped_column(String(8), index=True)
    # A kept link the rules had dropped and the link vetter judged dependent: that rule.
    rescued_from: Mapped[str | None] = mapped_column(String(60))
    why: Mapped[str] = mapped_column(Text, default="")
    evidence: Mapped[list[Any]] = mapped_column(default=list)  # [{type, class, found_in, text}]


class LinkVerdict(Base):
    """What the link vetter (an LLM, `prchain chains vet`) said of one kept link: is the newer PR
    dependent on the older one? Kept across builds; a build drops the links it rejects."""

    __tablename__ = "link_verdicts"
    __table_args__ = (UniqueConstraint("newer_pr_id", "older_pr_id"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    repo_id: Mapped[int] = mapped_column(ForeignKey("repos.id", ondelete="CASCADE"), index=True)
    newer_pr_id: Mapped[int] = mapped_column(
        ForeignKey("pull_requests.id", ondelete="CASCADE"), index=True
    )
    older_pr_id: Mapped[int] = mapped_column(
        ForeignKey("pull_requests.id", ondelete="CASCADE"), index=True
    )
    verdict: Mapped[str] = mapped_column(String(20))  # dependent | borderline | independent
    reason: Mapped[str] = mapped_column(Text, default="")
    # Whether it called either PR too slight to teach as a stage (a build cuts chains there).
    older_thin: Mapped[bool] = mapped_column(default=False, server_default=false())
    newer_thin: Mapped[bool] = mapped_column(default=False, server_default=false())
    model: Mapped[str] = mapped_column(String(200))
    prompt_version: Mapped[str] = mapped_column(String(16))  # digest of the prompt template
    created_at: Mapped[datetime] = mapped_column(default=utcnow)


class PairEvidence(Base):
    """What git and the lexers said of one pair of PRs, kept so a rebuild asks them no more
    (`prchain.chains.evidence.kept`): the newer PR's rewrites of the older one's lines, the names it uses of
    it, whether its branch holds it, ... One row per (pair, kind); a kind of a single PR (its
    lexed substance) has `older_pr_id` equal to `newer_pr_id`. The answers depend on the two
    patches and the clone, never on the link rules or their settings; `version` names the
    code that computed them, and a row of another version is computed again."""

    __tablename__ = "pair_evidence"
    __table_args__ = (UniqueConstraint("newer_pr_id", "older_pr_id", "kind"),)

    id: Mapped[int] = mapped_column(primary_key=True)
    newer_pr_id: Mapped[int] = mapped_column(ForeignKey("pull_requests.id", ondelete="CASCADE"))
    older_pr_id: Mapped[int] = mapped_column(
        ForeignKey("pull_requests.id", ondelete="CASCADE"), index=True
    )
    kind: Mapped[str] = mapped_column(String(40))  # lineage | lineage_patch | symbols | ...
    version: Mapped[str] = mapped_column(String(20))
    value: Mapped[dict[str, Any]] = mapped_column(default=dict)
