"""A project whose own build fails here: its dependencies from the manifests instead of itself.

The era's build installs the project only to bring its dependencies (the project is then removed and
imported from /work/repo). Some old trees cannot be built by any setuptools the era can have:
prettytable 2019's `python_requires=">=2.7, ... !=3.3.* !=3.4.*"` misses a comma, which every
setuptools refuses, while its CI ran the tests without installing it. When the build of the project
itself fails (not one of its dependencies'), the plan is revised once: the project's requirements
are read from its manifests (pyproject's `[project]`, setup.cfg's `[options]`, setup.py's literal
lists) with the extras the plan asked for, and installed without the project. The notes say so.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import replace

from prchain.environments.eras.ecosystems import Plan
from prchain.environments.eras.manifests import Snapshot
from prchain.environments.eras.wheels import failed_package

PROJECT_DEPS = "/opt/prchain/src/.prchain-project.txt"
VARIANT = "+without-project"
# uv: the backend's own failure (no dependency named), or "Failed to build `pkg @ file:///…`".
_OWN_BUILD = re.compile(r"build backend returned an error|Failed to build `[^`=]+ @ file://")
_PROJECT_ARG = re.compile(r"(?<= )(\.|'\.\[([^\]]*)\]')(?= |$)")


def without_project(snap: Snapshot, plan: Plan, log: str) -> Plan | None:
    """`plan` installing the project's requirements instead of the project, when the log says the
    project's own build failed; None otherwise, or when already revised so."""
    from prchain.environments.eras.python import PROJECT_SRC, write_lines

    said = _OWN_BUILD.search(log)
    if VARIANT in plan.variant or said is None or failed_package(log):
        return None
    at = next((i for i, c in enumerate(plan.commands) if c.startswith(f"cd {PROJECT_SRC} && ")), -1)
    found = _PROJECT_ARG.search(plan.commands[at]) if at >= 0 else None
    if found is None:
        return None
    chosen = [e for e in (found.group(2) or "").split(",") if e]
    wanted = requirements(snap, chosen)
    install = plan.commands[at]
    if wanted:
        install = install[: found.start()] + f"-r {PROJECT_DEPS}" + install[found.end() :]
    else:
        install = (install[: found.start()] + install[found.end() + 1 :]).rstrip()
    if not _installs_anything(install):
        install = ""  # the project was all it installed
    commands = [*plan.commands[:at], *([write_lines(PROJECT_DEPS, wanted)] if wanted else [])]
    commands += [*([install] if install else []), *plan.commands[at + 1 :]]
    # The backend's own words come last ("error in prettytable setup command: …").
    tail = log[said.start() :].splitlines()
    first = next((x.strip() for x in reversed(tail) if "error" in x.lower()), "")
    note = (
        f"the project's own build fails here ({first[:160]}): its {len(wanted)} requirements "
        "from the manifests are installed instead, never the project (imported from /work/repo)"
    )
    return replace(
        plan, commands=commands, notes=[*plan.notes, note], variant=plan.variant + VARIANT
    )


def requirements(snap: Snapshot, extras: list[str]) -> list[str]:
    """What the project requires at run time, with these extras, as its manifests say."""
    from prchain.environments.eras.python import _get, _ini, _toml

    project = _get(_toml(snap), "project")
    found = [r for r in project.get("dependencies") or [] if isinstance(r, str)]
    optional = _get(project, "optional-dependencies")
    found += [r for e in extras for r in optional.get(e) or [] if isinstance(r, str)]
    setup_cfg = _ini(snap.text("setup.cfg"))
    found += _lines(setup_cfg.get("options", "install_requires", fallback=""))
    found += [
        line
        for e in extras
        for line in _lines(setup_cfg.get("options.extras_require", e, fallback=""))
    ]
    setup_py = snap.text("setup.py")
    found += _literal(setup_py, r"install_requires")
    for extra in extras:  # `extras_require={"tests": [...]}` or `EXTRAS["tests"] = [...]`
        found += _literal(setup_py, rf"['\"]{re.escape(extra)}['\"]\]?\s*[:=]")
    return list(dict.fromkeys(found))


def _lines(text: str) -> list[str]:
    return [x.strip() for x in text.splitlines() if x.strip()]


def _literal(setup_py: str, key: str) -> list[str]:
    """The strings of the list literal after `key` (`install_requires=[...]`), or of the list a
    name it gives holds (`install_requires=REQUIRES` and `REQUIRES = [...]`)."""
    value = re.search(rf"{key}\s*=?\s*(\[[^\]]*\]|[A-Za-z_]\w*)", setup_py)
    if value and not value.group(1).startswith("["):
        value = re.search(rf"^{value.group(1)}\s*=\s*(\[[^\]]*\])", setup_py, re.M)
    return re.findall(r"['\"]([A-Za-z0-9][^'\"]*)['\"]", value.group(1)) if value else []


_VALUED = {"--exclude-newer", "--exclude-newer-package", "--only-binary"}


def _installs_anything(command: str) -> bool:
    """Whether `uv pip install` in `command` is left with a package or a file to install."""
    tokens = iter(shlex.split(command.split("uv pip install", 1)[-1]))
    for token in tokens:
        if token in _VALUED:
            next(tokens, None)
        elif not token.startswith("-") or token in ("-r", "--group"):
            return True
    return False
