"""Configuration of chain selection and query construction."""

from pydantic import BaseModel, ConfigDict, Field


class ChainFilters(BaseModel):
    model_config = ConfigDict(extra="forbid")

    skip_bots: bool = Field(True, description="Drop PRs authored by bots (dependabot, renovate, *[bot]).")
    skip_docs_only: bool = Field(True, description="Drop PRs touching only documentation.")
    skip_lockfile_only: bool = Field(True, description="Drop PRs touching only lock files.")
    skip_reverted: bool = Field(True, description="Drop PRs that a later PR reverted.")
    max_patch_lines: int = Field(2000, ge=1, description="Drop PRs whose patch is longer than this.")


class ChainsConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    strategy: str = Field("semantic", description="Chain strategy: semantic, temporal or single.")
    min_len: int = Field(2, ge=1, description="Shortest chain kept.")
    max_len: int = Field(5, ge=1, description="Longest chain kept (the paper uses 5).")
    filters: ChainFilters = Field(default_factory=ChainFilters)
    query_patch_tokens: int = Field(3000, ge=100, description="Token budget of the patch shown to the query writer.")
    query_max_attempts: int = Field(4, ge=1, description="Regenerations of a query that leaks an identifier.")
