"""Configuration of the PR miner."""

from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

SourceName = Literal["github", "git"]
"""The PR sources; each is registered by the module `SOURCE_MODULES` names (a test keeps them equal)."""
SOURCE_NAMES: tuple[str, ...] = get_args(SourceName)
SOURCE_MODULES: dict[str, str] = {
    "git": "prchain.miner.gitsource",
    "github": "prchain.miner.github",
}


class GithubConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    api_url: str = Field(
        "https://api.github.com", description="REST base URL (GraphQL is <api_url>/graphql)."
    )
    token_env: str = Field(
        "GITHUB_TOKEN",
        description="Environment variable holding one or more comma-separated tokens.",
    )
    page_size: int = Field(50, ge=1, le=100, description="PRs per GraphQL page.")
    max_retries: int = Field(
        5, ge=0, description="Retries of one request on 5xx or a secondary rate limit."
    )
    backoff_seconds: float = Field(
        2.0, ge=0, description="First backoff delay; doubles on each retry."
    )
    max_wait_seconds: float = Field(
        3700.0, ge=0, description="Longest wait for a primary rate-limit reset."
    )
    timeout_seconds: float = Field(30.0, gt=0, description="HTTP timeout of one request.")
    secondary_wait_seconds: float = Field(
        60.0,
        ge=0,
        description="First wait after a secondary rate limit that gave no Retry-After (GitHub asks >= 60 s); doubles.",
    )
    request_interval_seconds: float = Field(
        0.0,
        ge=0,
        description="Least pause between two requests (GitHub asks for serial requests, which we always make).",
    )
    clone_url_template: str = Field(
        "https://github.com/{full_name}.git",
        description="Where the bare clone for patches is fetched from; {full_name} is owner/name. Never holds a token.",
    )
    use_clone: bool = Field(
        True,
        description="Take patches from a local bare clone (False: from the API, one request per PR).",
    )
    api_patch_fallback: bool = Field(
        True, description="Ask the API for a PR's diff when the clone lacks its commits."
    )


class MinerConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    source: SourceName = Field(
        "github", description="PR source: github (API) or git (a local clone's history)."
    )
    clone_dir: str = Field("data/clones", description="Where bare clones are kept for patches.")
    max_patch_bytes: int = Field(
        2_000_000, ge=0, description="Patches larger than this are stored as too_large."
    )
    batch_size: int = Field(
        500, ge=1, description="PRs written per transaction; the cursor advances once per batch."
    )
    git_workers: int = Field(
        2, ge=1, description="Parallel `git diff-tree` processes making patches (git source)."
    )
    github: GithubConfig = Field(default_factory=GithubConfig)
