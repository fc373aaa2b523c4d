"""Where a Rust stage base's manifests put a test library in the tree (`crossing.overridden_dirs`).

Standard library only: a Harbor verifier ships this module unchanged and runs it on the stage
image's `python3` (`prchain/verdicts/harbor_each.py`), so both judge by the same code. An image
whose Python has no `tomllib` (before 3.11) cannot read a manifest that may hold an override:
ValueError, and that run is not judged.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Collection, Mapping


def overridden_dirs(manifests: Mapping[str, str], libraries: Collection[str]) -> list[str]:
    """The paths of the tree that a root Cargo.toml or .cargo/config* (path → text) gives a test
    library by `[patch.*]`, `[replace]` or a dev-dependency, every `paths` override and every local
    `[source]` directory, inside the tree."""
    names = {name.replace("-", "_") for name in libraries}
    found = [posixpath.normpath(d) for t in manifests.values() for d in cargo_overrides(t, names)]
    return sorted({d for d in found if d != "." and not d.startswith(("../", "/"))})


def cargo_overrides(text: str, libraries: Collection[str]) -> list[str]:
    """From a Cargo.toml or a .cargo/config: the path of each `[patch.*]`, `[replace]` or
    dev-dependency entry that names a test library; every `paths` override and every local
    `[source]` (a directory or local registry holds any crate)."""
    try:
        import tomllib
    except ImportError:  # the image's Python is older than 3.11
        if re.search(r"\bpath\s*=|^\s*paths\s*=|^\s*\[(patch|replace|source)", text, re.M):
            raise ValueError("a Cargo override cannot be read without tomllib") from None
        return []
    try:
        tree = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return []
    tables = [*_tables(tree.get("patch")), _table(tree.get("replace"))]
    tables += [_table(tree.get(k)) for k in ("dev-dependencies", "dev_dependencies")]
    for target in _tables(tree.get("target")):
        tables += [_table(target.get(k)) for k in ("dev-dependencies", "dev_dependencies")]
    found = [
        str(spec["path"])
        for table in tables
        for name, spec in table.items()
        if isinstance(spec, dict)
        and "path" in spec
        and str(spec.get("package", name)).replace("-", "_").split(":")[0] in libraries
    ]
    found += [str(p) for p in tree.get("paths", []) if isinstance(p, str)]
    for source in _tables(tree.get("source")):
        found += [str(source[k]) for k in ("directory", "local-registry") if k in source]
    return found


def _table(value: object) -> dict[str, object]:
    return value if isinstance(value, dict) else {}


def _tables(value: object) -> list[dict[str, object]]:
    return [t for t in _table(value).values() if isinstance(t, dict)]
