"""Configuration of chain selection and query construction."""

from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

StrategyName = Literal["semantic", "temporal", "single"]
"""The chain strategies `chains/strategies.py` registers (a test keeps the two equal)."""
STRATEGY_NAMES: tuple[str, ...] = get_args(StrategyName)

# How strongly each reference type says "this PR builds on that one" (higher is stronger).
DEFAULT_TYPE_STRENGTH = {
    "fixes": 3,
    "follow_up": 3,
    "reverts": 3,
    "cross_reference": 2,
    "closing_issue": 2,
    "issue_mediated": 1,  # two PRs about one issue are often parallel fixes; needs file overlap
    "mention": 1,
}


class ChainFilters(BaseModel):
    model_config = ConfigDict(extra="forbid")

    skip_bots: bool = Field(
        True, description="Drop PRs authored by bots (dependabot, renovate, *[bot])."
    )
    skip_docs_only: bool = Field(True, description="Drop PRs touching only documentation.")
    skip_lockfile_only: bool = Field(True, description="Drop PRs touching only lock files.")
    skip_reverted: bool = Field(True, description="Drop PRs that a later PR reverted.")
    max_patch_lines: int = Field(
        2000,
        ge=1,
        description="Drop PRs whose code patch (test files and fixtures not counted) changes more lines.",
    )


class ChainsConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    strategy: StrategyName = Field(
        "semantic", description="Chain strategy: semantic, temporal or single."
    )
    min_len: int = Field(2, ge=1, description="Shortest chain kept.")
    max_len: int = Field(5, ge=1, description="Longest chain kept (the paper uses 5).")
    filters: ChainFilters = Field(default_factory=ChainFilters)
    type_strength: dict[str, int] = Field(
        default_factory=lambda: dict(DEFAULT_TYPE_STRENGTH),
        description="Strength of each reference type; an edge takes the strongest of its references. "
        "Types missing here count as 1.",
    )
    cued_mention_strength: int = Field(
        2,
        ge=0,
        description="Strength of a plain mention whose wording says the newer PR builds on the older "
        "('introduced in #X', 'while working on #X'); a mention worded as parallel work ('similar to #X') gets 0.",
    )
    flipped_penalty: int = Field(
        1,
        ge=0,
        description="Strength taken off a reference written in the older PR's own title, body or "
        "commits about the newer one (it was still open then; the link is vaguer).",
    )
    min_overlap_by_strength: dict[int, float] = Field(
        default_factory=lambda: {1: 0.2, 2: 0.05, 3: 0.01},
        description="File overlap (Jaccard) an edge of each strength needs; strength 0 edges are never kept, "
        "strengths not listed need none. Even explicit links need a shared file: '#N' sometimes names an "
        "issue of a sibling repository that happens to share a number with one of ours.",
    )
    overlap_weight: float = Field(
        2.0, ge=0, description="Weight of file overlap beside strength in an edge's score."
    )
    max_issue_fanout: int = Field(
        4,
        ge=2,
        description="An issue that mediates links among more PRs than this is an umbrella issue; "
        "its issue_mediated links are ignored.",
    )
    check_ancestry: bool = Field(
        True,
        description="Where the repo's clone is at hand, require pr_(i-1)'s merge commit to be an "
        "ancestor of pr_i's base commit.",
    )
    ancestry_fallback_limit: int = Field(
        2000,
        ge=0,
        description="Edges off the first-parent history checked one by one with git merge-base; "
        "beyond this they are kept unchecked.",
    )
    max_branching: int = Field(
        8, ge=1, description="Successors explored per PR in the path search, strongest first."
    )
    max_paths_per_start: int = Field(
        50, ge=1, description="Candidate paths emitted per starting PR (bounds dense graphs)."
    )
    temporal_window: int = Field(
        10,
        ge=1,
        description="temporal strategy: how many later merges to look through for the next PR "
        "touching an overlapping file.",
    )
    prune_stale: bool = Field(
        True,
        description="After a build, delete this strategy's chains the build no longer selects "
        "(chains that already have rollouts are kept).",
    )
    query_patch_tokens: int = Field(
        3000, ge=100, description="Token budget of the patch shown to the query writer."
    )
    query_max_attempts: int = Field(
        4, ge=1, description="Regenerations of a query that leaks an identifier."
    )
