"""The test runs: applying a patch, running the test command, reading the report, and the part of
the agent's change that hidden tests may see.

Runs go through the Workspace protocol (`execute`, `write_file`, `read_file`): a sandbox for
`tests verify` (as the agent user, on a base no agent touched), a clean room for T(p̂).
"""

from __future__ import annotations

import functools
import re
import secrets
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Protocol, runtime_checkable

from prchain.chains.reading.patches import (
    file_sections,
    is_test_config_path,
    is_test_path,
    kept_paths,
    section_path,
)
from prchain.core.errors import ReportTooLarge
from prchain.environments.eras.python.report import Pytest
from prchain.environments.eras.reports import (
    FILES_PLACEHOLDER,
    OneTest,
    RunsEach,
    TestReport,
    record,
    reported_passes,
)
from prchain.environments.protocol import Environment, ExecResult, Workspace
from prchain.verdicts.crossing import crosses

_BYTE_SECTION = re.compile(rb"^diff --git ", re.MULTILINE)
# git's C-style escapes in a quoted path: an octal byte, or one of these characters.
_ESCAPE = re.compile(r"\\([0-7]{3}|[abtnvfr\"\\])")
_ESCAPES = dict(zip('abtnvfr"\\', '\a\b\t\n\v\f\r"\\', strict=True))

# Reset the files a patch touches to the stage's starting version (the agent may have edited them;
# SWE-bench resets them the same way), then apply the patch. $1 is the patch, the rest its paths.
APPLY = """
set -u
patch=$1; shift
base=$(git rev-parse -q --verify refs/prchain/stage-base || git rev-parse -q --verify HEAD)
if [ "$RESET" = 1 ] && [ -n "$base" ]; then
  for f in "$@"; do
    if git cat-file -e "$base:$f" 2>/dev/null; then git checkout -q "$base" -- "$f"; else rm -f -- "$f"; fi
  done
fi
git apply --whitespace=nowarn "$patch"; rc=$?
rm -f -- "$patch"
exit $rc
"""


@runtime_checkable
class SealedReports(Protocol):
    """A workspace whose runs write their report where the tested code cannot rewrite it."""

    def run_reported(
        self, script_for: Callable[[str], str], timeout: float
    ) -> tuple[ExecResult, str | None]: ...


@runtime_checkable
class SealedEach(Protocol):
    """A clean room that runs single tests as root's children and reads their exit status."""

    def run_reported(
        self, script_for: Callable[[str], str], timeout: float
    ) -> tuple[ExecResult, str | None]: ...

    def run_each(self, runs: list[OneTest], timeout: float) -> tuple[dict[str, str], str]: ...


@dataclass
class SuiteRun:
    """One run of the test command: per-test outcomes and how the command ended."""

    outcomes: dict[str, str] = field(default_factory=dict)
    exit_code: int = 0
    timed_out: bool = False
    output_tail: str = ""
    error: str | None = None  # the report could not be read (past its cap): no outcome counts
    # required tests a run of each one on its own left to the report (RunsEach.apart)
    apart: list[str] = field(default_factory=list)


def joined(*patches: str) -> str:
    """Patches as one, each ending with its newline (git apply reads them in turn)."""
    return "".join(p if p.endswith("\n") else p + "\n" for p in patches if p.strip())


def patch_paths(patch: str) -> list[str]:
    return [path for path in map(section_path, file_sections(patch)) if path]


def collected_test_files(test_patch: str, report: TestReport | None = None) -> list[str]:
    """What the stage's test command runs (SWE-bench's scope): the test files the test patch
    leaves in place, as the ecosystem's runner names them (files, packages, or none)."""
    return (report or Pytest()).targets(kept_paths(test_patch))


# How far above a changed data file its test modules are looked for, and how many at most.
DATA_LEVELS = 2
DATA_MODULES = 10


def data_test_files(
    test_patch: str,
    tracked: list[str],
    report: TestReport | None = None,
    read: Callable[[str], str] | None = None,
) -> list[str]:
    """The test modules that read what a test patch changes when it changes no test module
    itself: its data beside them (svg/svgo's `test/plugins/_index.js` runs every
    `test/plugins/*.svg` fixture; its PRs of 2014 add a fixture and no test code). For each changed
    file, the test modules `tracked` (the stage base's files) holds in its directory, else in the
    one above it. Past DATA_MODULES, those whose text (`read`: a module's text at the stage base)
    names a changed file's stem, else its directory (postcss/autoprefixer's `test/cases/*.css`, read
    by name by one of the 14 modules of `test/`); [] when still more would run (no narrow scope is
    known). Data with no test module within those levels runs the modules whose text names one of
    its directories by path (`_naming_paths`). A file the patch deletes is neither data nor a
    module to run: a test patch that only deletes test modules (marshmallow-code/apispec #323
    moves its framework plugins out) ran them by name, and pytest stopped at the first missing one
    with no outcome. Each module's text is read once."""
    reader = report or Pytest()
    read = functools.cache(read) if read is not None else None
    changed = kept_paths(test_patch)
    deleted = set(patch_paths(test_patch)) - set(changed)
    tracked = [path for path in tracked if path not in deleted]
    found: list[str] = []
    unplaced: list[str] = []
    for path in changed:
        parts = path.split("/")[:-1]
        for up in range(min(DATA_LEVELS, len(parts))):
            here = "/".join(parts[: len(parts) - up]) + "/"
            beside = [t for t in tracked if t.startswith(here) and "/" not in t[len(here) :]]
            modules = reader.targets(beside)
            if modules:
                found += [m for m in modules if m not in found]
                break
        else:
            unplaced.append(path)
    if unplaced and read is not None:
        found += [
            m for m in _naming_paths(reader.targets(tracked), unplaced, read) if m not in found
        ]
    if len(found) > DATA_MODULES and read is not None:
        found = _naming(found, changed, read)
    return found if len(found) <= DATA_MODULES else []


def _naming_paths(modules: list[str], changed: list[str], read: Callable[[str], str]) -> list[str]:
    """Of `modules`, those whose text names a directory holding a changed file by its whole path
    from the root, two components at least (`test/fixtures` inside `test/fixtures/cli` is not
    named): data with no test module near it, read from a fixture tree by path (sqlfluff's
    `test/fixtures/parser/<dialect>/*.sql`, which `test/dialects/dialects_test.py` walks; its PRs
    add fixtures and no test code)."""
    paths = {
        "/".join(parts[:end])
        for path in changed
        for parts in [path.split("/")[:-1]]
        for end in range(2, len(parts) + 1)
    }
    if not paths:
        return []
    named = re.compile("(?:" + "|".join(re.escape(p) for p in sorted(paths)) + r")(?![\w-]|/\w)")
    return [m for m in modules if named.search(read(m))]


def _naming(modules: list[str], changed: list[str], read: Callable[[str], str]) -> list[str]:
    """Of `modules`, those whose text names a changed file's stem (`grid-template` of
    `test/cases/grid-template.out.css`), else those naming its directory (`cases`)."""
    texts = {module: read(module) for module in modules}
    for names in (
        {PurePosixPath(path).name.split(".")[0] for path in changed},
        {PurePosixPath(path).parent.name for path in changed},
    ):
        named = [m for m in modules if any(n and n in texts[m] for n in names)]
        if named:
            return named
    return modules


def fill_command(template: str, files: list[str]) -> str:
    """The test command with `{files}` replaced by the shell-quoted test files."""
    return template.replace(FILES_PLACEHOLDER, " ".join(shlex.quote(f) for f in files))


def apply_patch(env: Workspace, patch: str, *, reset: bool) -> str | None:
    """Apply `patch` in the sandbox; None when it applied, else git's complaint."""
    if not patch.strip():
        return None
    target = f"/tmp/prchain-{secrets.token_hex(6)}.patch"
    env.write_file(target, patch if patch.endswith("\n") else patch + "\n")
    args = " ".join(shlex.quote(a) for a in (target, *patch_paths(patch)))
    result = env.execute(f"RESET={int(reset)} bash -c {shlex.quote(APPLY)} prchain {args}")
    return None if result.exit_code == 0 else result.output.strip()[-1500:] or "git apply failed"


def run_suite(
    env: Workspace,
    command: str,
    *,
    timeout: float,
    report_path: str,
    tail_chars: int,
    report: TestReport | None = None,
) -> SuiteRun:
    """Run the test command once so that its ecosystem's reader (pytest's by default) gets a
    machine-readable report; parse what it reported."""
    reader = report or Pytest()
    sealed = isinstance(env, SealedReports)
    if isinstance(env, SealedReports):  # a clean room: the report comes through root's pipe
        try:
            result, written = env.run_reported(lambda path: reader.script(command, path), timeout)
        except ReportTooLarge as exc:
            return SuiteRun(exit_code=1, output_tail=str(exc), error=str(exc))
    else:
        result, written = _run_and_read(
            env, reader.script(command, report_path), report_path, timeout
        )
    outcomes = reader.parse(written, result.output)
    if sealed:
        outcomes = reported_passes(outcomes, reader.parse(written, "") if written else {})
    return SuiteRun(
        outcomes,
        result.exit_code,
        result.timed_out,
        result.output[-tail_chars:],
    )


def run_each_sealed(
    room: SealedEach, reader: RunsEach, command: str, required: list[str], timeout: float
) -> SuiteRun | None:
    """The required tests of a console-only runner (reports.RunsEach), each run on its own by
    root and judged by its exit status; None when `command` cannot be built so. A target that did
    not compile is its unit, "error", as the console run reads it."""
    if reader.build_script(command, "-") is None:
        return None
    try:
        built, listing = room.run_reported(
            lambda path: reader.build_script(command, path) or "", timeout
        )
    except ReportTooLarge as exc:
        return SuiteRun(exit_code=1, output_tail=str(exc), error=str(exc))
    broken = reader.parse(None, built.output).items()
    outcomes = {test: outcome for test, outcome in broken if outcome == "error"}
    results, log = room.run_each(reader.each(listing or "", required), timeout)
    for test, outcome in results.items():
        record(outcomes, test, outcome)
    apart = reader.apart(listing or "", required)
    return SuiteRun(outcomes, built.exit_code, built.timed_out, built.output + log, apart=apart)


def _run_and_read(
    env: Workspace, script: str, report_path: str, timeout: float
) -> tuple[ExecResult, str | None]:
    result = env.execute(script, timeout=timeout)
    try:
        written: str | None = env.read_file(report_path)
        env.execute(f"rm -f {shlex.quote(report_path)}")
    except (FileNotFoundError, IsADirectoryError, PermissionError):
        written = None
    return result, written


# ---- what of the agent's change the hidden tests see ---------------------------------------------


@dataclass
class AgentChange:
    """The part of the agent's cumulative change Δ_t that crosses into the clean room."""

    patch: bytes  # what the clean room applies, byte for byte
    dropped: list[str] = field(default_factory=list)  # paths left out, for the record
    held: bytes = b""  # the sections left out, byte for byte


def is_test_side(path: str) -> bool:
    """A path whose stage-base version, not the agent's, a hidden-test run uses."""
    return is_test_path(path) or is_test_config_path(path)


def agent_change(env: Environment, room: str | None = None) -> AgentChange:
    """Δ_t with every section left out that names, by either name of a rename, a path outside the
    allow-list of `room`'s clean room (`prchain.verdicts.crossing`; None: every room's): test
    files and configuration, manifests, metadata, the places the hidden tests' libraries resolve
    from."""
    return crossing_part(env.cumulative_patch(), room)


def crossing_part(patch: bytes, room: str | None) -> AgentChange:
    """The sections of `patch` that reach `room`'s clean room (each path they name crosses), and
    the others: what a hidden-test run sees of an agent's change; of a gold code patch, the part
    an agent must write, the rest (`held`: build files, manifests) being the stage's hidden side
    (`build_part`)."""
    change = AgentChange(b"")
    kept, held = [], []
    for section in byte_sections(patch):
        paths = section_paths(section.decode("utf-8", "replace"))
        if paths and all(crosses(p, is_test_side, room) for p in paths):
            kept.append(section)
        else:
            change.dropped += paths
            held.append(section)
    change.patch, change.held = b"".join(kept), b"".join(held)
    return change


def hidden_side(room: str | None) -> Callable[[str], bool]:
    """Whether a path is on the hidden side of `room`'s clean room: a test-side path, or one no
    change crosses with (a build file). An earlier stage's gold patch that touched one was
    reverted in C_t and the agent's own copy never crosses, so the clean room takes it from
    B_t, which holds every earlier PR's build: a chain whose first PR registers a source file in
    CMakeLists.txt builds in its second stage's room."""
    return lambda path: not crosses(path, is_test_side, room)


def build_part(gold_patch: str, room: str | None) -> str:
    """The sections of a stage's gold code patch that no change crosses with (its build files,
    manifests, a linker's symbol list: what the PR's build needs beside its code). They are the
    stage's hidden side with its test patch: root applies them in every clean room, after the
    agent's change and before the tests, so a PR that registers a test in CMakeLists.txt or adds
    a dependency to Cargo.toml is judged with its own build, and the agent's edits of those files
    count for nothing either way."""
    return crossing_part(gold_patch.encode(), room).held.decode()


def without_dirs(change: AgentChange, dirs: list[str]) -> AgentChange:
    """`change` with every section left out that names a path below one of `dirs`."""
    if not dirs:
        return change
    kept, dropped = [], list(change.dropped)
    for section in byte_sections(change.patch):
        paths = section_paths(section.decode("utf-8", "replace"))
        if any(p == d or p.startswith(f"{d}/") for p in paths for d in dirs):
            dropped += paths
        else:
            kept.append(section)
    return AgentChange(b"".join(kept), dropped)


def byte_sections(patch: bytes) -> list[bytes]:
    """A binary patch cut at each `diff --git` header, byte for byte."""
    starts = [m.start() for m in _BYTE_SECTION.finditer(patch)]
    return [patch[a:b] for a, b in zip(starts, [*starts[1:], len(patch)], strict=False)]


def section_paths(section: str) -> list[str]:
    """Every path a section names, as `git apply` writes it: its new path, and the old one of a
    rename or copy."""
    paths = [section_path(section)]
    header = section.split("\n@@", 1)[0].split("\nGIT binary patch", 1)[0]
    for line in header.splitlines():
        for prefix in ("rename from ", "copy from ", "--- a/", '--- "a/'):
            if line.startswith(prefix):
                paths.append(line[len(prefix) :].strip('"'))
    return sorted({unquoted(p) for p in paths if p})


def unquoted(path: str) -> str:
    """A path git quoted C-style (a name with non-ASCII bytes, a quote or a backslash), as the
    file is named. git quotes every name holding a backslash, so one here is always an escape."""
    if "\\" not in path or not path.isascii():  # quoted names are ASCII: escapes for the rest
        return path
    raw = _ESCAPE.sub(lambda m: _escaped(m.group(1)), path)
    return raw.encode("latin-1").decode("utf-8", "replace")


def _escaped(code: str) -> str:
    return chr(int(code, 8)) if code.isdigit() else _ESCAPES[code]
