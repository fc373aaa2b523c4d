"""What a stage's hidden side asks to have installed that its era does not hold.

A stage's hidden side is its gold test patch and the build part of its gold code patch (its
manifests: `prchain.verdicts.sandbox.build_part`). When a PR adds a test dependency and the tests
that use it in one go (strawberry #1655 adds `pytest-snapshot` to poetry's dev group; #2569 adds
`typer` there), its era, planned from B_t's manifests, lacks the package: every hidden test module
fails to import and the stage can never be judged. The agent must not see the package either (its
sandbox is built from commits up to B_t only), so the package belongs to the grader alone: a layer
on the era image that only the rooms running hidden tests use (prchain/environments/eras/hidden.py).

The requirements are read as the era's planner reads them (constraint_set, the project's own
dependencies and the extras the era installs), once on B_t and once on B_t with the build part
applied; what the second names and the first does not is the stage's hidden need.
"""

from __future__ import annotations

from prchain.environments.eras.manifests import Snapshot
from prchain.environments.eras.python import (
    _get,
    _package,
    _poetry_requirements,
    _toml,
    ci_extras,
    constraint_set,
    extras,
)


def added_requirements(base: Snapshot, gold: Snapshot, interpreter: str) -> list[str]:
    """The requirements `gold`'s manifests name for a test run that `base`'s do not, one per
    package, as PEP 508 lines (version bounds kept: the layer resolves them beside the era's
    packages)."""
    before = {_package(r) for r in wanted(base, interpreter)}
    found: dict[str, str] = {}
    for requirement in wanted(gold, interpreter):
        name = _package(requirement)
        if name not in before and name not in found:
            found[name] = requirement
    return list(found.values())


def wanted(snap: Snapshot, interpreter: str) -> list[str]:
    """Every requirement an era planned from `snap` installs for its tests: the constraint set's,
    the project's own dependencies (PEP 621 or poetry's) and those of the extras it installs."""
    chosen = constraint_set(snap, interpreter, False)
    names = [*extras(snap), *ci_extras(snap), *chosen.extras]
    found = list(chosen.requirements)
    pyproject = _toml(snap)
    project = _get(pyproject, "project")
    if isinstance(project, dict):
        found += [str(r) for r in project.get("dependencies") or [] if isinstance(r, str)]
        optional = project.get("optional-dependencies") or {}
        for name in names:
            found += [str(r) for r in optional.get(name, []) if isinstance(r, str)]
    poetry = _get(pyproject, "tool", "poetry")
    table = _get(poetry, "dependencies")
    in_extras = {
        dependency
        for name in names
        for dependency in (_get(poetry, "extras").get(name) or [])
        if isinstance(dependency, str)
    }
    for name, spec in table.items() if isinstance(table, dict) else ():
        optional = isinstance(spec, dict) and spec.get("optional")
        if name != "python" and (not optional or name in in_extras):
            found += _poetry_requirements(name, spec)
    return found
