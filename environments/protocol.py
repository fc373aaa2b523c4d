"""The sandbox seam: the agent and curation talk to this, never to Docker directly."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol, Self


@dataclass(frozen=True)
class ExecResult:
    output: str  # stdout and stderr interleaved, truncated with a marker past the configured bound
    exit_code: int
    timed_out: bool = False
    truncated: bool = False


@dataclass(frozen=True)
class StageSpec:
    """What the environment needs to know of one chain stage."""

    idx: int  # 1-based t
    base_sha: str  # B_t
    gold_patch: str  # g_t, code and tests together, as merged into history after B_t


@dataclass
class Transition:
    """What entering a stage did; recorded by the caller."""

    stage_idx: int
    base_sha: str
    policy: str
    outcome: str  # clean | conflict_stopped | oracle_reset | partial
    reverted: list[int] = field(default_factory=list)
    applied: bool = False
    rejected_hunks: str = ""  # hunks of Δ_(t-1) that did not apply (policy partial), as .rej text
    seconds: float = 0.0
    # Additive detail: gold patches that did not revert cleanly (their leftover hunks), the size of
    # the carried patch, and the two commits the stage diff and cumulative diff are taken against.
    revert_failed: list[int] = field(default_factory=list)
    revert_rejected_hunks: str = ""
    carried_bytes: int = 0
    stage_base: str = ""
    stage_start: str = ""

    @property
    def stopped(self) -> bool:
        return self.outcome == "conflict_stopped"


class Environment(Protocol):
    """A stage-wise workspace for one chain. Use as a context manager so it is always closed."""

    def __enter__(self) -> Self: ...
    def __exit__(self, *exc: object) -> None: ...

    def enter_stage(self, t: int) -> Transition:
        """Check out B_t, revert g_1..g_(t-1), 3-way-apply the agent's cumulative patch Δ_(t-1)."""
        ...

    def execute(self, command: str, timeout: float | None = None) -> ExecResult: ...
    def read_file(self, path: str) -> str: ...
    def write_file(self, path: str, content: str) -> None: ...

    def diff(self) -> str:
        """The stage diff: this stage's work, from the stage's start state to now."""
        ...

    def cumulative_diff(self) -> str:
        """Δ_t: the agent's whole change over stages 1..t, what is carried into stage t+1."""
        ...

    def snapshot(self) -> str: ...
    def restore(self, snapshot: str) -> None: ...
    def run_tests(self) -> ExecResult | None: ...
    def close(self) -> None: ...
