"""The sandbox seam: the agent and curation talk to this, never to Docker directly."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Protocol, Self

_CAPPED = (
    "[prchain: the diff is {size} bytes, over the {cap}-byte cap; a summary stands in for it]\n"
)
_CAPPED_RE = re.compile(r"\A\[prchain: the diff is (\d+) bytes, over the (\d+)-byte cap;")


def capped_diff(size: int, cap: int, summary: str) -> str:
    """What diff() returns for a diff past the environment's cap: a marker line, then a diffstat."""
    return _CAPPED.format(size=size, cap=cap) + summary


def diff_cap_hit(diff: str) -> tuple[int, int] | None:
    """(size, cap) when `diff` is a capped diff's summary, else None."""
    found = _CAPPED_RE.match(diff)
    return (int(found.group(1)), int(found.group(2))) if found else None


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
    # The era's sandbox image tag ("" = the repository's default image); a stage whose image differs
    # from the running container's moves to a new container of that image at entry.
    image: str = ""
    # The command `run_tests` runs ("" = config.test_command[repo]).
    test_command: str = ""
    # Run as the agent, offline, right after entering the stage (e.g. `pip install --no-deps -e .`);
    # what it writes never shows in the stage's diffs. "" = nothing.
    setup_command: str = ""
    # How the stage is entered (stage_entry.ENTRIES): the earlier gold patches reverted at B_t, or
    # B_t with the files they touch as the previous stage base has them (`propagate`), or only
    # the hunks of them reverted that revert, the others kept as B_t has them (`hunks`), or B_t
    # itself with the agent's deviation from history carried (`replay`). The build chose it
    # (chain_stages.entry); rollouts, `tasks eval` and clean rooms all follow it.
    entry: str = "revert"
    # The image of its clean rooms when its hidden side adds requirements to its era's: the era
    # image with them installed (eras/hidden.py), under the sandbox layer. "" = the stage's image.
    room_image: str = ""


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
    revert_errors: str = ""  # what git said when a gold patch would not revert (e.g. binary files)
    carried_bytes: int = 0
    stage_base: str = ""  # C_t: the stage base's tree as a commit without parents
    stage_start: str = ""
    image: str = ""  # the image the stage runs in (a new container when it changed)
    entry: str = "revert"  # how the stage base was made (StageSpec.entry)
    setup_error: str = ""  # the stage's setup command failed or touched tracked files

    @property
    def stopped(self) -> bool:
        return self.outcome == "conflict_stopped"

    def stop_reason(self) -> str:
        """Why the stage could not start: a gold patch that would not revert, or the carried patch."""
        if self.revert_failed and self.policy == "strict":
            stages = ", ".join(map(str, self.revert_failed))
            said = "; ".join(_git_errors(self.revert_errors)[:3])
            return (
                f"stage {self.stage_idx}: the gold patch of stage {stages} could not be reverted "
                f"on B_{self.stage_idx} {self.base_sha[:12]}" + (f" (git: {said})" if said else "")
            )
        return (
            f"stage {self.stage_idx}: the carried patch conflicts with the new base "
            f"({self.policy} policy)"
        )


def _git_errors(text: str) -> list[str]:
    """git's own `error:` lines, once each; never the hunk text it quotes after "while searching"."""
    seen: list[str] = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("error:") and "while searching" not in line and line not in seen:
            seen.append(line)
    return seen


class Workspace(Protocol):
    """Somewhere commands run and files are read and written: a sandbox, or a clean room."""

    def execute(self, command: str, timeout: float | None = None) -> ExecResult: ...
    def read_file(self, path: str) -> str: ...
    def write_file(self, path: str, content: str) -> None: ...


class CleanRoom(Workspace, Protocol):
    """Where hidden tests run: a fresh place of the stage's image, as a user that is not the agent,
    holding the stage base; nothing done there is visible to the agent afterwards."""

    def apply(self, patch: bytes) -> str | None:
        """Apply a binary-exact patch (the agent's change), then the stage's setup command;
        None when both succeeded, else why not."""
        ...

    def seal_tests(self, paths: list[str], ecosystem: str | None = None) -> None:
        """After the gold test patch: `paths` and the test configuration become unchangeable for
        whatever runs the tests (the agent's code among it); in `ecosystem`'s room the hidden
        tests are first made immune to what the agent's code declares (Rust's macros)."""
        ...


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

    def cumulative_patch(self) -> bytes:
        """Δ_t byte for byte (`git diff --binary`, never a summary): what a resume re-applies."""
        ...

    def snapshot(self) -> str: ...
    def restore(self, snapshot: str) -> None: ...
    def run_tests(self) -> ExecResult | None: ...
    def end_agent_processes(self) -> None:
        """End every process of the agent's user (before anything it must not influence runs)."""

    def base_file(self, path: str) -> bytes | None:
        """A file of the current stage base as published (not as the agent's repo may show it)."""
        ...

    def clean_room(
        self, base_files: Sequence[str] = (), test_side: Callable[[str], bool] | None = None
    ) -> AbstractContextManager[CleanRoom]:
        """A clean room on the current stage's base C_t, with `base_files` and every `test_side`
        path an earlier gold patch touched taken from B_t (the test side as the PR saw it)."""
        ...

    def close(self) -> None: ...
