"""Why an era did not verify, as one of a few reasons a user can act on, read from its root error.

One classifier for every count of losses (`env setup`'s summary, `prchain stats`, the funnel of
`prchain run`), so that the three agree. The rules are tried in order; the first that matches the
root error decides:

| reason | evidence in the root error | example |
|---|---|---|
| toolchain unavailable | an interpreter, compiler or edition the toolchain layer cannot give; or code that an older interpreter than any suite's ran (detail: code older than the interpreter) | `this version of Cargo is older than the `2021` edition`; `requires go >= 1.23`; `SyntaxError: Generator expression must be parenthesized` |
| native library missing | a header, pkg-config module, `-lfoo` or program the build looked for | `fatal error: ffi.h: No such file or directory`; `cannot find -lpq` |
| service needed | a database, the network, a display or a device (a sound card) the sandbox does not have | `dial tcp 127.0.0.1:5432: connect: connection refused`; `Error("snd_pcm_open", ENOENT)` |
| build error | the image or the tests did not build, for any other reason | `build failed: ERR_PNPM_FETCH_403 GET …`; `./x.go:3:2: undefined: Foo` |
| tests failing | the suite ran and too few of its tests passed | `1,111 of 1,165 tests passed (under eras.pass_share 0.8)` |

"Native library missing" names which one (`libselinux`'s `selinux/selinux.h`), read from the text
the build printed; the package that provides it is the environment's business, not this reader's.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal, get_args

from prchain.environments.eras.native.missing import missing

LossReason = Literal[
    "toolchain unavailable",
    "native library missing",
    "service needed",
    "build error",
    "tests failing",
]
LOSS_REASONS: tuple[str, ...] = get_args(LossReason)
# `_too_few`'s words in the ladder: the suite ran, too few passed
TOO_FEW = re.compile(r"^\d+ of \d+ tests passed \(under eras\.pass_share")

_TOOLCHAIN = re.compile(
    r"older than the `\d{4}` edition|feature `edition\d{4}` is required|"
    r"requires rustc [\d.]+ or newer|requires go\s*>=|go\.mod requires go >= |"
    r"\bno Python \d|declares Python [\d.]+ only|requires a different Python|"
    r"unsupported class file major version|invalid target release|"
    r"release version \d+ not supported|Unsupported engine|The engine \"node\" is incompatible|"
    r"toolchain (?:is )?(?:not available|unavailable)|no toolchain (?:for|of)",
    re.I,
)
# The code predates the era's interpreter: what a later Python removed or made an error (3.7's
# parenthesized generators, 3.10's `collections` ABCs, 3.11's getargspec, 3.12's imp and
# distutils). The suites give no older Python, so the toolchain the code needs is unavailable.
_TOO_NEW = re.compile(
    r"Generator expression must be parenthesized|"
    r"cannot import name '\w+' from 'collections' |"
    r"module 'collections' has no attribute '(?:Mapping|MutableMapping|Sequence|Iterable|Callable|"
    r"Set|MutableSet|Hashable|Iterator|Sized|Container)'|"
    r"module 'inspect' has no attribute 'getargspec'|"
    r"No module named '(?:imp|distutils|asynchat|asyncore|smtpd)'"
)
# (pattern, what it names: group 1), the most specific first
# What a build lacked that the native resolver does not look up (environments/eras/native/missing.py
# reads the rest): a library found another way, a shared object at run time, any tool's program.
_NATIVE_MORE: tuple[re.Pattern[str], ...] = (
    re.compile(r"Could not find (?:directory of )?(\w+)(?: via pkg-config| installation)", re.I),
    re.compile(r"Unable to find (libclang)"),
    re.compile(r"(lib[\w.+-]+\.so(?:\.\d+)*): cannot open shared object file"),
    re.compile(r"`?([\w.+-]+)`? (?:command|program|executable) (?:is )?not found", re.I),
    re.compile(r"gyp ERR! stack Error: not found: ([\w.+-]+)"),  # node-gyp's `which make`
)
SERVICES: tuple[tuple[str, re.Pattern[str]], ...] = (
    (
        "database",
        re.compile(
            r"could not connect to server|Can't connect to (?:local )?MySQL|"
            r"OperationalError: .*(?:connect|connection)|:(?:5432|3306|6379|27017|9042)\b.*refused|"
            r"(?:redis|postgres|mysql|mongo\w*|cassandra|elasticsearch)\S*.*(?:refused|unavailable)|"
            r"Cannot connect to the Docker daemon",
            re.I,
        ),
    ),
    (
        "network",
        re.compile(
            r"Temporary failure in name resolution|Name or service not known|no such host|"
            r"getaddrinfo (?:ENOTFOUND|EAI_AGAIN)|Network is unreachable|dial tcp .*: connect: |"
            r"Connection refused|ConnectionRefusedError|ECONNREFUSED|Could not resolve host",
            re.I,
        ),
    ),
    (
        "display",
        re.compile(
            r"cannot open display|no display name|\$DISPLAY|Could not connect to any X display|"
            r"_tkinter\.TclError: no display|xvfb",
            re.I,
        ),
    ),
    (
        # diwic/alsa-rs's tests open the default sound card: ALSA's open calls fail without /dev/snd
        "device",
        re.compile(
            r"\bsnd_(?:pcm|ctl|seq|rawmidi|mixer)_open\b|/dev/(?:snd|video\d)\b|cannot find card"
        ),
    ),
)


@dataclass(frozen=True)
class Loss:
    """Why an era did not verify: the reason, and what it names (a library, a service) if any."""

    reason: LossReason
    detail: str = ""

    @property
    def label(self) -> str:
        """`native library missing (selinux/selinux.h)`, or the bare reason."""
        return f"{self.reason} ({self.detail})" if self.detail else self.reason


def service_needed(text: str) -> str:
    """The kind of service (`database`, `network`, `display`, `device`) `text` shows was missing,
    or ""."""
    return next((kind for kind, pattern in SERVICES if pattern.search(text)), "")


def native_missing(text: str) -> str:
    """The header, pkg-config module, `-lfoo` or program `text` says could not be found (the
    first the resolver reads, else one named otherwise), or ""."""
    first = next(iter(missing(text, everything=True)), None)
    if first is not None:
        return f"-l{first.name}" if first.kind == "library" else first.name
    for pattern in _NATIVE_MORE:
        found = pattern.search(text)
        if found:
            return found.group(1)
    return ""


def era_loss(root_error: str) -> Loss:
    """The reason an unverified era's root error gives (table in the module docstring)."""
    text = root_error or ""
    if _TOOLCHAIN.search(text):
        return Loss("toolchain unavailable")
    if _TOO_NEW.search(text):
        return Loss("toolchain unavailable", "code older than the interpreter")
    missing = native_missing(text)
    if missing:
        return Loss("native library missing", missing)
    service = service_needed(text)
    if service:
        return Loss("service needed", service)
    if TOO_FEW.match(text):
        return Loss("tests failing")
    return Loss("build error")


def losses(root_errors: Iterable[str]) -> Counter[str]:
    """Unverified eras counted by `Loss.label`."""
    return Counter(era_loss(error).label for error in root_errors)


def unit_exclusion(text: str, first_error: str) -> str:
    """Why a unit (a package, a module, a crate) that never ran its tests is left out of its era's
    verification: the service it needs, else the build failure its own output shows."""
    service = service_needed(text)
    if service:
        return f"needs a service: {service}" + (f" ({first_error})" if first_error else "")
    return "build failed" + (f": {first_error}" if first_error else "")
