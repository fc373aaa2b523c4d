"""Where a Go stage base's manifests put a test library in the tree (`crossing.overridden_dirs`).

Standard library only: a Harbor verifier ships this module unchanged and runs it on the stage
image's `python3` (`prchain/verdicts/harbor_each.py`), so both judge by the same code.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Collection, Mapping

# A `replace` directive (or a line of a `replace ( … )` block) whose target is a local directory.
LOCAL_REPLACE = re.compile(
    r"^\s*(?:replace\s+)?(?P<module>[^\s()]+)(?:\s+v\S+)?\s+=>\s+(?P<dir>\.{1,2}/\S*|/\S*)\s*$"
)
MODULE = re.compile(r"^\s*module\s+\"?(?P<module>[^\s\"]+)", re.M)


def overridden_dirs(manifests: Mapping[str, str], libraries: Collection[str]) -> list[str]:
    """The directories of the tree that the stage base's go.mod and go.work files (path → text)
    put in place of a test library: a local `replace`'s target, read from its manifest's
    directory, and a module of the tree that declares a test library's path (a go.work `use`s
    it). A `replace` of the project's own modules is the project's code: it is not named."""

    def is_library(module: str) -> bool:
        return any(part in libraries for part in module.lower().split("/"))

    found = []
    for path, text in manifests.items():
        where = posixpath.dirname(path)
        declared = MODULE.search(text) if posixpath.basename(path) == "go.mod" else None
        if declared and is_library(declared.group("module")):
            found.append(where or ".")
        for line in text.splitlines():
            match = LOCAL_REPLACE.match(line.split("//", 1)[0])
            if match and is_library(match.group("module")):
                found.append(posixpath.normpath(posixpath.join(where, match.group("dir"))))
    return sorted({d for d in found if d not in (".", "..") and not d.startswith(("../", "/"))})
