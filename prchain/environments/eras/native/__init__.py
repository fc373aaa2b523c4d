"""Native dependencies without an LLM, in every room: the Debian packages an era's build needs
besides its toolchain, installed in the era's own layer before its dependencies.

Two ways, both said in the plan's notes (stored with the recipe):
- **known** (`known.py`, `known.toml`): a dependency the lock file or manifest names that a table
  maps to Debian packages (Rust `-sys` crates and `links =` keys, Python sdists with C extensions,
  Node addons, Go cgo modules); applied to every plan before it is built;
- **from the failed build** (`missing.py`, `contents.py`): the header, pkg-config module, library
  or program the log says is missing, looked up in the era's suite's Contents index; the plan is
  revised with the package added and built again, at most `eras.native_rounds` times.
"""

from __future__ import annotations

import logging
import shlex
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from prchain.environments.eras.config import ErasConfig
from prchain.environments.eras.ecosystems import Plan
from prchain.environments.eras.manifests import Snapshot
from prchain.environments.eras.native import known
from prchain.environments.eras.native.contents import (
    ContentsIndex,
    ContentsUnavailable,
    Provider,
    architecture,
    default_cache,
)
from prchain.environments.eras.native.missing import Missing, missing

log = logging.getLogger("prchain.environments.eras.native")
MARK = "# prchain: native packages"  # ends the era layer's one install command of them
VARIANT = "+native"
Lookup = Callable[[str, Missing], list[Provider]]  # (suite, what is missing) → providers


def install_command(packages: list[str]) -> str:
    """Root shell of the era layer: each package the suite has, installed at once; one the suite
    lacks (a table's name for another suite) is said and left out."""
    names = " ".join(shlex.quote(p) for p in packages)
    return (
        f'apt-get update -q && want=""; for p in {names}; do '
        'if apt-cache show "$p" >/dev/null 2>&1; then want="$want $p"; '
        'else echo "prchain: no Debian package $p in this suite"; fi; done; '
        'echo "prchain: installing native packages$want"; '
        '[ -z "$want" ] || DEBIAN_FRONTEND=noninteractive '
        "apt-get install -y -q --no-install-recommends $want; "
        f"rm -rf /var/lib/apt/lists/*  {MARK}"
    )


def with_packages(plan: Plan, packages: list[str], notes: list[str]) -> Plan:
    """`plan` with `packages` added to its native packages (one install command, first of its
    commands, replacing the one it had)."""
    wanted = list(dict.fromkeys([*plan.native, *packages]))
    if wanted == list(plan.native):
        return plan
    commands = [c for c in plan.commands if not c.endswith(MARK)]
    return replace(
        plan,
        commands=[install_command(wanted), *commands],
        native=tuple(wanted),
        notes=[*plan.notes, *notes],
    )


def with_known(plan: Plan, snap: Snapshot, config: ErasConfig) -> Plan:
    """`plan` with the Debian packages of the known native dependencies its commit names."""
    found = known.needed(snap, known.table(config.native_packages))
    packages = [p for _, pkgs in found for p in pkgs]
    notes = [
        f"native: {' '.join(pkgs)} for {name} (known native dependencies)" for name, pkgs in found
    ]
    return with_packages(plan, packages, notes)


def carried(before: Plan, after: Plan) -> Plan:
    """A revision of `before` keeps the native packages it had (a room that plans anew, Rust's
    next toolchain, starts from no install command)."""
    if not before.native or set(before.native) <= set(after.native):
        return after
    kept = replace(after, native_rounds=max(after.native_rounds, before.native_rounds))
    return with_packages(kept, list(before.native), [])


def revise(
    plan: Plan, log_text: str, config: ErasConfig, lookup: Lookup | None = None
) -> Plan | None:
    """`plan` with what its failed build says is missing, found in the suite's Contents index;
    None when the log names nothing new a package of the suite provides, or the bound is reached."""
    if plan.native_rounds >= config.native_rounds:
        return None
    asked = missing(log_text)
    if not asked:
        return None
    lookup = lookup or contents_lookup(config)
    packages: list[str] = []
    notes = []
    for wanted in asked:
        try:
            found = lookup(plan.suite, wanted)
        except ContentsUnavailable as exc:
            log.warning("%s: %s", wanted, exc)
            return None
        best = found[0] if found else None
        if best is None or best.package in plan.native or best.package in packages:
            continue
        packages.append(best.package)
        notes.append(
            f"native: {best.package} (Debian {plan.suite}, /{best.path}) for the {wanted}, "
            f"asked by: {wanted.line}"
        )
    if not packages:
        return None
    revised = with_packages(plan, packages, notes)
    return replace(
        revised,
        native_rounds=plan.native_rounds + 1,
        variant=plan.variant if plan.variant.endswith(VARIANT) else plan.variant + VARIANT,
    )


def contents_lookup(config: ErasConfig) -> Lookup:
    """Lookups in the Contents index of each suite (`eras.debian_archive`, cached on disk)."""
    cache = Path(config.contents_cache) if config.contents_cache else default_cache()

    def lookup(suite: str, wanted: Missing) -> list[Provider]:
        return ContentsIndex(config.debian_archive, suite, architecture(), cache).providers(wanted)

    return lookup


__all__ = ["Missing", "Provider", "carried", "missing", "revise", "with_known", "with_packages"]
