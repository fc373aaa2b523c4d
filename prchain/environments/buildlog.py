"""What went wrong in an image build, read from its log, and the hint that fits it.

A failed `docker build` used to surface as "is the Docker engine running?", which is the wrong
advice for nearly every real failure: the engine answered, and a package could not be resolved,
the interpreter was too new for the code, a C extension did not compile, or the network was cut.
The classes below are tried in order (the most specific first); the first pattern that matches a
line of the log names the kind and that line becomes the root error shown to the user.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

BuildFailureKind = Literal[
    "resolution",  # no set of package versions satisfies the requirements
    "interpreter",  # the package or the code needs another Python
    "network",  # an index or host could not be reached
    "compile",  # a native extension or a wheel failed to build
    "disk",  # no space left
    "base_image",  # the FROM image is missing and could not be pulled
    "command",  # any other install command exited non-zero
]

HINTS: dict[BuildFailureKind, str] = {
    "resolution": "no set of package versions satisfies the requirements: relax or pin the "
    "conflicting requirement in the recipe (environment.install_commands), or let `prchain env "
    "setup` pick versions as of the commit's date",
    "interpreter": "the package needs another Python version: choose an older or newer Debian "
    "suite for this era (bullseye 3.9, bookworm 3.11, trixie 3.13)",
    "network": "the build could not reach a package index: check the proxy and CA settings "
    "(environment.build_ca_bundle) and that the index is reachable from containers",
    "compile": "a native extension failed to build: install its system headers (apt-get install "
    "…-dev, build-essential) in the recipe, or pin a version that ships a wheel",
    "disk": "the Docker engine ran out of disk: free space (`prchain env prune` removes images "
    "no recipe needs) and rerun",
    "base_image": "the base image is missing: build it with `prchain env base`",
    "command": "an install command failed: read the log above the error and fix the command",
}

# (kind, pattern); the order matters: a resolution failure often also prints "exit code 1".
_PATTERNS: list[tuple[BuildFailureKind, re.Pattern[str]]] = [
    (
        "disk",
        re.compile(r"No space left on device|ENOSPC|not enough free space", re.I),
    ),
    (
        "network",
        re.compile(
            r"Temporary failure in name resolution|Name or service not known|"
            r"Network is unreachable|Connection refused|Failed to establish a new connection|"
            r"Could not fetch URL|ConnectTimeout|Read timed out|ENOTFOUND|ECONNREFUSED|"
            r"certificate verify failed|Could not resolve host|error sending request for url",
            re.I,
        ),
    ),
    (
        "interpreter",
        re.compile(
            r"requires a different Python|Requires-Python|python_requires|"
            r"the current Python version \([0-9.]+\) does not satisfy|"
            r"only versions? .* (are|is) available for Python|"
            r"SyntaxError: invalid syntax|No module named 'distutils'|"
            r"Python [0-9.]+ is not supported|is not compatible with Python",
            re.I,
        ),
    ),
    (
        "resolution",
        re.compile(
            r"ResolutionImpossible|No matching distribution found|"
            r"Could not find a version that satisfies|No solution found when resolving|"
            r"conflicting dependencies|Cannot install .* because these package versions have "
            r"conflicting|was not found in the package registry|is not available in the "
            r"package registry|ERESOLVE|No matching version found|"
            r"Because .* depends on .* we can conclude",
            re.I,
        ),
    ),
    (
        "compile",
        re.compile(
            r"Failed building wheel|Failed to build .*wheel|error: command '[^']*(gcc|cc|g\+\+|"
            r"clang)[^']*' failed|fatal error: [^ ]+\.h: No such file|legacy-install-failure|"
            r"metadata-generation-failed|Microsoft Visual C\+\+|gyp ERR!|"
            r"Failed to build `?[\w.-]+",
            re.I,
        ),
    ),
    (
        "base_image",
        re.compile(
            r"pull access denied|manifest (for .* )?unknown|repository does not exist|"
            r"No such image",
            re.I,
        ),
    ),
]
# The builder echoes each command ("Step 3/9 : RUN …", "The command '…' returned …"): a command
# that merely mentions an error string must not be read as its output.
_ECHO = re.compile(r"^(Step \d+/\d+ :|The command '|#\d+ \[)")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")  # the classic builder colours a step's stderr
_NONZERO = re.compile(r"returned a non-zero code|exit code: ?[1-9]|exited with", re.I)
_ERRORISH = re.compile(r"\b(error|failed|fatal|exception|traceback)\b", re.I)
ROOT_CHARS = 300


@dataclass(frozen=True)
class BuildDiagnosis:
    kind: BuildFailureKind
    root: str  # the log line that names the cause, trimmed
    hint: str


def diagnose(log: str) -> BuildDiagnosis:
    """The kind of a failed build, its root error line and a hint, from the build's log text."""
    lines = [line.strip() for line in _ANSI.sub("", log).splitlines() if line.strip()]
    output = [line for line in lines if not _ECHO.match(line)]
    for kind, pattern in _PATTERNS:
        for line in output:
            if pattern.search(line):
                return BuildDiagnosis(kind, _trim(line), HINTS[kind])
    return BuildDiagnosis("command", _trim(_last_error(lines)), HINTS["command"])


def _last_error(lines: list[str]) -> str:
    """The last error-looking line before the builder's "returned a non-zero code" line."""
    stop = next((i for i, line in enumerate(lines) if _NONZERO.search(line)), len(lines))
    for line in reversed(lines[:stop]):
        if _ERRORISH.search(line) and not _ECHO.match(line):
            return line
    if stop < len(lines):
        return lines[stop]
    return lines[-1] if lines else "the build failed with an empty log"


def _trim(line: str) -> str:
    return line if len(line) <= ROOT_CHARS else line[: ROOT_CHARS - 1] + "…"
