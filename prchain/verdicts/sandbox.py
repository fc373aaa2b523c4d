"""The test runs inside a sandbox: applying a patch, running the test command, reading the report.

Everything goes through the Environment protocol (`execute`, `write_file`, `read_file`), as the
agent user, so a verdict sees exactly what the agent's own `pytest` would see.
"""

from __future__ import annotations

import re
import secrets
import shlex
from dataclasses import dataclass, field

from chains.patches import file_sections, section_path
from environments.protocol import Environment
from prchain.verdicts.pytest_report import PYTEST_OPTIONS, parse_outcomes

FILES_PLACEHOLDER = "{files}"
_PYTEST_MODULE = re.compile(r"^(test_.*|.*_test)\.py$")

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


def collected_test_files(test_patch: str) -> list[str]:
    """The test modules among the files the test patch leaves in place (SWE-bench's scope).

    Only names pytest collects by default (test_*.py, *_test.py): a file named on the command line
    is collected whatever its name, and helpers such as a benchmark module under the test directory
    need plugins the repository does not run by default.
    """
    found = []
    for section in file_sections(test_patch):
        path = section_path(section)
        deleted = "\ndeleted file mode" in section.split("\n@@", 1)[0]
        if _PYTEST_MODULE.match(path.rsplit("/", 1)[-1]) and not deleted:
            found.append(path)
    return found


def fill_command(template: str, files: list[str]) -> str:
    """The test command with `{files}` replaced by the shell-quoted test files."""
    return template.replace(FILES_PLACEHOLDER, " ".join(shlex.quote(f) for f in files))


def apply_patch(env: Environment, patch: str, *, reset: bool) -> str | None:
    """Apply `patch` in the sandbox; None when it applied, else git's complaint."""
    if not patch.strip():
        return None
    target = f"/tmp/prchain-{secrets.token_hex(6)}.patch"
    env.write_file(target, patch if patch.endswith("\n") else patch + "\n")
    args = " ".join(shlex.quote(a) for a in (target, *patch_paths(patch)))
    result = env.execute(f"RESET={int(reset)} bash -c {shlex.quote(APPLY)} prchain {args}")
    return None if result.exit_code == 0 else result.output.strip()[-1500:] or "git apply failed"


def run_suite(
    env: Environment, command: str, *, timeout: float, report_path: str, tail_chars: int
) -> SuiteRun:
    """Run the test command once with pytest's report options added; parse what it reported."""
    options = PYTEST_OPTIONS.format(path=report_path)
    script = (
        f"rm -f {shlex.quote(report_path)}; export PYTEST_ADDOPTS={shlex.quote(options)}; {command}"
    )
    result = env.execute(script, timeout=timeout)
    try:
        report: str | None = env.read_file(report_path)
        env.execute(f"rm -f {shlex.quote(report_path)}")
    except (FileNotFoundError, IsADirectoryError, PermissionError):
        report = None
    return SuiteRun(
        parse_outcomes(report, result.output),
        result.exit_code,
        result.timed_out,
        result.output[-tail_chars:],
    )
