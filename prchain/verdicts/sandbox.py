"""The test runs: applying a patch, running the test command, reading the report, and the part of
the agent's change that hidden tests may see.

Runs go through the Workspace protocol (`execute`, `write_file`, `read_file`): a sandbox for
`tests verify` (as the agent user, on a base no agent touched), a clean room for T(p̂).
"""

from __future__ import annotations

import re
import secrets
import shlex
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from chains.patches import (
    MIXED_CONFIG_FILES,
    changes_test_config,
    file_sections,
    is_test_config_path,
    is_test_path,
    section_path,
)
from environments.eras.python.report import FILES_PLACEHOLDER, Pytest
from environments.eras.reports import TestReport
from environments.protocol import Environment, Workspace

_BYTE_SECTION = re.compile(rb"^diff --git ", re.MULTILINE)

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


@dataclass
class SuiteRun:
    """One run of the test command: per-test outcomes and how the command ended."""

    outcomes: dict[str, str] = field(default_factory=dict)
    exit_code: int = 0
    timed_out: bool = False
    output_tail: str = ""


def patch_paths(patch: str) -> list[str]:
    return [path for path in map(section_path, file_sections(patch)) if path]


def collected_test_files(test_patch: str, report: TestReport | None = None) -> list[str]:
    """What the stage's test command runs (SWE-bench's scope): the test files the test patch
    leaves in place, as the ecosystem's runner names them (files, packages, or none)."""
    kept = []
    for section in file_sections(test_patch):
        deleted = "\ndeleted file mode" in section.split("\n@@", 1)[0]
        if not deleted:
            kept.append(section_path(section))
    return (report or Pytest()).targets([p for p in kept if p])


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
    result = env.execute(reader.script(command, report_path), timeout=timeout)
    try:
        written: str | None = env.read_file(report_path)
        env.execute(f"rm -f {shlex.quote(report_path)}")
    except (FileNotFoundError, IsADirectoryError, PermissionError):
        written = None
    return SuiteRun(
        reader.parse(written, result.output),
        result.exit_code,
        result.timed_out,
        result.output[-tail_chars:],
    )


# ---- what of the agent's change the hidden tests see ---------------------------------------------


@dataclass
class AgentChange:
    """The agent's cumulative change Δ_t without test files and test configuration."""

    patch: bytes  # what the clean room applies, byte for byte
    dropped: list[str] = field(default_factory=list)  # paths left out, for the record


def is_test_side(path: str) -> bool:
    """A path whose stage-base version, not the agent's, a hidden-test run uses."""
    return is_test_path(path) or is_test_config_path(path)


def agent_change(env: Environment) -> AgentChange:
    """Δ_t with every section that touches a test file or test configuration left out (a rename
    counts by both its names; setup.cfg/pyproject.toml only when their test sections change)."""
    change = AgentChange(b"")
    kept = []
    for section in byte_sections(env.cumulative_patch()):
        paths = section_paths(section.decode("utf-8", "replace"))
        if any(is_test_side(p) or _mixed_test_change(env, p, section) for p in paths):
            change.dropped += paths
        else:
            kept.append(section)
    change.patch = b"".join(kept)
    return change


def byte_sections(patch: bytes) -> list[bytes]:
    """A binary patch cut at each `diff --git` header, byte for byte."""
    starts = [m.start() for m in _BYTE_SECTION.finditer(patch)]
    return [patch[a:b] for a, b in zip(starts, [*starts[1:], len(patch)], strict=False)]


def section_paths(section: str) -> list[str]:
    """Every path a section names: its new path, and the old one of a rename or copy."""
    paths = [section_path(section)]
    header = section.split("\n@@", 1)[0].split("\nGIT binary patch", 1)[0]
    for line in header.splitlines():
        for prefix in ("rename from ", "copy from ", "--- a/"):
            if line.startswith(prefix):
                paths.append(line[len(prefix) :].strip('"'))
    return sorted({p for p in paths if p})


def _mixed_test_change(env: Environment, path: str, section: bytes) -> bool:
    if PurePosixPath(path).name not in MIXED_CONFIG_FILES:
        return False
    before = env.base_file(path)
    applied, after = _patched(path, before, section)
    if not applied:
        return True  # cannot tell what the change does to the file: leave it out
    text = before.decode("utf-8", "replace") if before is not None else None
    return changes_test_config(path, text, after)


def _patched(path: str, before: bytes | None, section: bytes) -> tuple[bool, str | None]:
    """(applied, the file after `section` is applied to `before`; None = deleted)."""
    parts = PurePosixPath(path).parts
    if not parts or ".." in parts or PurePosixPath(path).is_absolute():
        return False, None
    with tempfile.TemporaryDirectory(prefix="prchain-cfg-") as tmp:
        target = Path(tmp, *parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        if before is not None:
            target.write_bytes(before)
        done = subprocess.run(
            ["git", "apply", "--whitespace=nowarn", "-"],
            input=section,
            cwd=tmp,
            capture_output=True,
            env={
                "GIT_CONFIG_NOSYSTEM": "1",
                "GIT_CONFIG_GLOBAL": "/dev/null",
                "PATH": "/usr/bin:/bin",
            },
        )
        if done.returncode != 0:
            return False, None
        return True, target.read_text("utf-8", "replace") if target.exists() else None
