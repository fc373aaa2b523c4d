"""Configuration of the test verdicts: how each repository installs and runs its tests."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class RepoTests(BaseModel):
    """How one repository's image gets its test dependencies and how its tests run."""

    model_config = ConfigDict(extra="forbid")

    install: list[str] = Field(
        default_factory=list,
        description="Shell commands run as root in /work/repo when the repo image is built (the only "
        "time the network is on); they are baked into the image.",
    )
    test: str = Field(
        description="Shell command that runs the tests in /work/repo as the agent. `{files}` is "
        "replaced by the stage's test files (SWE-bench's scope); without it the command runs as is."
    )
    image: str = Field(
        default="",
        description="Era image the stage's sandbox is built on (set from recipe memory by `env "
        "setup`; empty: the repository's default image).",
    )
    setup: str = Field(
        default="",
        description="Per-stage command run as the agent after entering the stage (from the recipe).",
    )
    excluded: dict[str, str] = Field(
        default_factory=dict,
        description="Units (packages, test modules, crates) the era left out of its verification, "
        "each with why (set from recipe memory by `env setup`): a stage whose tests all lie in them "
        "is unusable with that reason.",
    )
    ecosystem: str = Field(
        default="python",
        description="Whose test-report reader reads the runs (prchain/environments/eras/<name>/).",
    )


class VerdictsConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    repos: dict[str, RepoTests] = Field(
        default_factory=dict, description="Per repository (owner/name): install and test commands."
    )
    workers: int = Field(
        default=1,
        ge=1,
        description="Stages verified in parallel, each in its own sandbox, on the configured "
        "backend (scale.backend).",
    )
    gold_runs: int = Field(
        default=3,
        ge=1,
        description="Times the gold run is repeated; a test whose outcome varies is flaky and dropped.",
    )
    timeout: float = Field(
        default=900.0, gt=0, description="Seconds before one run of the test command is killed."
    )
    report_path: str = Field(
        default="/tmp/prchain-junit.xml",
        description="Where pytest writes its junit XML report inside the sandbox (outside the repo).",
    )
    output_tail_chars: int = Field(
        default=4000, ge=200, description="How much of the test output is kept with a verdict."
    )
