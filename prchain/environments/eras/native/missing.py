"""What a failed build says it lacks: a header, a pkg-config module, a library or a program.

One pattern per message, as compilers, linkers, pkg-config, shells and the crates that drive them
print it (the table below); each match is a `Missing` that names the file to look up in Debian's
Contents index (`contents.py`) and keeps the line that asked for it, which the recipe records.

| kind | message (real text) | file looked up |
|---|---|---|
| header | `x.c:1:10: fatal error: selinux/selinux.h: No such file or directory` (gcc) | `selinux/selinux.h` under an include dir |
| header | `fatal error: 'alsa/asoundlib.h' file not found` (clang) | `alsa/asoundlib.h` |
| header | `Failed to find 'selinux/selinux.h'. Please make sure …` (selinux-sys) | `selinux/selinux.h` |
| pkg-config | `Package 'alsa' was not found in the pkg-config search path` (pkgconf) | `alsa.pc` |
| pkg-config | `Package alsa was not found in the pkg-config search path` (pkg-config 0.29) | `alsa.pc` |
| pkg-config | `The system library `alsa` required by crate `alsa-sys` was not found` (Rust's pkg-config crate) | `alsa.pc` |
| pkg-config | `The file `alsa.pc` needs to be installed` (the same crate) | `alsa.pc` |
| pkg-config | `No package 'alsa' found`, `Package 'x', required by 'y', not found` | `alsa.pc`, `x.pc` |
| pkg-config | `Dependency "alsa" not found` (meson) | `alsa.pc` |
| library | `/usr/bin/ld: cannot find -lpq` | `libpq.so` (else `libpq.a`) under a lib dir |
| program | `sh: 1: clang: not found`, `bash: protoc: command not found` | `clang` under a bin dir |
| program | `is `cmake` not installed?` (Rust's cmake crate), `Could not find `protoc`` (prost-build) | `cmake`, `protoc` |
| program | `FileNotFoundError: [Errno 2] No such file or directory: 'curl-config'` (pycurl's setup.py) | `curl-config` |
| program | `pkg-config: exec: "pkg-config": executable file not found in $PATH` (cgo) | `pkg-config` |
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Kind = Literal["header", "pkgconfig", "library", "program"]

_NAME = r"[A-Za-z0-9_][A-Za-z0-9_.+/-]*"
_PC = r"[A-Za-z0-9_][A-Za-z0-9_.+-]*"
_PATTERNS: tuple[tuple[Kind, re.Pattern[str]], ...] = (
    ("header", re.compile(rf"fatal error: ({_NAME}\.h(?:h|pp|xx)?): No such file or directory")),
    ("header", re.compile(rf"fatal error: '({_NAME}\.h(?:h|pp|xx)?)' file not found")),
    ("header", re.compile(rf"Failed to find '({_NAME}\.h(?:h|pp|xx)?)'")),
    (
        "pkgconfig",
        re.compile(rf"Package '?({_PC})'?,? (?:required by '[^']*', )?(?:was )?not found"),
    ),
    (
        "pkgconfig",
        re.compile(rf"The system library `({_PC})` required by crate `[^`]+` was not found"),
    ),
    ("pkgconfig", re.compile(rf"The file `({_PC})\.pc` needs to be installed")),
    ("pkgconfig", re.compile(rf"No package '({_PC})' found")),
    ("pkgconfig", re.compile(rf"Dependency \"({_PC})\" not found")),
    ("library", re.compile(r"cannot find -l([A-Za-z0-9_][A-Za-z0-9_.+-]*)")),
    (
        "program",
        re.compile(
            r"(?:^|\s)(?:/bin/)?(?:sh|bash|dash): (?:\d+: )?(?:line \d+: )?"
            r"([A-Za-z0-9_][A-Za-z0-9_.+-]*): (?:command )?not found"
        ),
    ),  # fmt: skip
    ("program", re.compile(r"is `([A-Za-z0-9_][A-Za-z0-9_.+-]*)` not installed\?")),
    ("program", re.compile(r"Could not find `([A-Za-z0-9_][A-Za-z0-9_.+-]*)`")),
    ("program", re.compile(r'exec: "([A-Za-z0-9_][A-Za-z0-9_.+-]*)": executable file not found')),
    # a build script's subprocess: a bare name (no directory) was looked up on the PATH
    (
        "program",
        re.compile(r"\[Errno 2\] No such file or directory: '([A-Za-z0-9_][A-Za-z0-9_.+-]*)'"),
    ),
)
_WORDS = ("not found", "No such file", "find", "No package", "installed")  # in every pattern
# Names a lookup can never improve: the toolchain's own compiler drivers are there or the plan is
# wrong, and installing a second gcc would hide that.
# pkg-config is no driver: the Go toolchain layer has none, and cgo's `#cgo pkg-config:` runs it
# (google/gousb: `exec: "pkg-config": executable file not found in $PATH`).
_NEVER = {"program": {"gcc", "cc", "g++", "c++", "ld", "make", "python", "python3"}}


@dataclass(frozen=True)
class Missing:
    kind: Kind
    name: str  # as the message says it: `selinux/selinux.h`, `alsa`, `pq`, `clang`
    line: str  # the line that asked for it, trimmed

    @property
    def file(self) -> str:
        """The file whose package provides it: `alsa.pc`, `libpq.so`, `clang`, the header."""
        if self.kind == "pkgconfig":
            return f"{self.name}.pc"
        if self.kind == "library":
            return f"lib{self.name}.so"
        return self.name

    def __str__(self) -> str:
        return {"header": "header", "pkgconfig": "pkg-config module", "library": "library"}.get(
            self.kind, "program"
        ) + f" `{self.name}`"


def missing(log: str, *, everything: bool = False) -> list[Missing]:
    """Every distinct thing the log says is missing, in the order it first says so; with
    `everything`, also what no lookup can improve (a compiler driver, make: `_NEVER`), which a
    loss still names."""
    found: dict[tuple[str, str], Missing] = {}
    for line in log.splitlines():
        if not any(word in line for word in _WORDS):
            continue
        for kind, pattern in _PATTERNS:
            for match in pattern.finditer(line):
                name = match.group(1).rstrip(".")
                never = () if everything else _NEVER.get(kind, ())
                if name and name not in never and (kind, name) not in found:
                    found[(kind, name)] = Missing(kind, name, line.strip()[:300])
    return list(found.values())
