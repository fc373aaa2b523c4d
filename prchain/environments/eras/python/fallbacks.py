"""What today's index no longer serves of an era: the nearest installable release instead.

An era's resolution can fail on a package the index holds no usable release of before the cutoff:
every release yanked (`types-pkg_resources`), the pinned release deleted by its author, files
without upload times (uv's `--exclude-newer` never keeps those), a release whose metadata the
resolver refuses. The plan is then revised once per package, each deviation said in its notes:

- a type stub or a lint plugin is dropped (the tests never import it);
- otherwise the package is taken at its nearest installable release: the earliest one after the
  cutoff that the requirement allows, else, for a pinned release that is gone, the release nearest
  in version to the pin (a yanked one only when nothing else is left: an exact pin installs it),
  with its cutoff lifted. A range that no release on the index ever met stays as asked.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import Version

from prchain.environments.eras.ecosystems import Plan
from prchain.environments.eras.wheels import JSON_TYPE, interpreter_tags, resolver_failure

# Packages the tests never import: type stubs, linters and their plugins.
_NOT_IMPORTED = re.compile(
    r"^(types-.+|.+-stubs|mypy(-.+)?|flake8(-.+)?|pytest-(flake8|pylint|mypy|black|isort|pep8)"
    r"|pylint(-.+)?|pep8(-.+)?|pycodestyle|pyflakes|black|isort|ruff|pre-commit)$"
)


@dataclass(frozen=True)
class Release:
    version: Version
    uploaded: datetime | None  # None: the index gives no upload time for its files
    yanked: bool  # every file of it is yanked
    installable: bool = True  # a wheel or a PEP 625 sdist (uv refuses `Twisted-16.0.0.tar.bz2`)


def releases(index_url: str, name: str, tags: set[Any] | None = None) -> list[Release] | None:
    """Every release of `name` on the index (PEP 691 JSON), None when the index cannot say; a
    wheel makes a release installable only when it has one of `tags` (any tag when None)."""
    import requests

    url = f"{index_url.rstrip('/')}/{canonicalize_name(name)}/"
    try:
        response = requests.get(url, headers={"Accept": JSON_TYPE}, timeout=30)
        response.raise_for_status()
        files = response.json().get("files", [])
    except (requests.RequestException, ValueError):
        return None
    found: dict[Version, Release] = {}
    for item in files:
        version = _version(item.get("filename", ""))
        if version is None:
            continue
        stamp = item.get("upload-time")
        when = datetime.fromisoformat(stamp.replace("Z", "+00:00")) if stamp else None
        yanked = bool(item.get("yanked"))
        installable = _installable(item.get("filename", ""), tags)
        old = found.get(version)
        if old is not None:
            when = min((t for t in (old.uploaded, when) if t), default=None)
            yanked = yanked and old.yanked
            installable = installable or old.installable
        found[version] = Release(version, when, yanked, installable)
    return sorted(found.values(), key=lambda r: r.version)


def _installable(filename: str, tags: set[Any] | None) -> bool:
    """A PEP 625 sdist, or a wheel for this interpreter (Twisted 16.0.0's only other files are a
    `.tar.bz2` uv refuses and Windows wheels)."""
    if filename.endswith(".tar.gz"):
        return True
    try:
        return filename.endswith(".whl") and (
            tags is None or bool(parse_wheel_filename(filename)[3] & tags)
        )
    except InvalidWheelFilename:
        return False


def _version(filename: str) -> Version | None:
    try:
        if filename.endswith(".whl"):
            return parse_wheel_filename(filename)[1]
        return parse_sdist_filename(filename)[1]
    except (InvalidWheelFilename, InvalidSdistFilename):
        return None


def nearest(found: list[Release], wanted: Requirement | None, cutoff: datetime) -> Release | None:
    """The installable release nearest to the era: the earliest after the cutoff the requirement
    allows, else the one nearest in version to what it asks (the newest at or below it first)."""
    found = [r for r in found if r.installable]
    final = [r for r in found if not r.version.is_prerelease]
    found = final if final and not (wanted and wanted.specifier.prereleases) else found
    usable = [r for r in found if not r.yanked] or found  # yanked only: an exact pin installs it
    allowed = [r for r in usable if wanted is None or wanted.specifier.contains(r.version, True)]
    later = sorted(
        (r for r in allowed if r.uploaded is None or r.uploaded > cutoff),
        key=lambda r: (r.uploaded is None, r.uploaded or cutoff, r.version),
    )
    if later and not all(r.yanked for r in allowed):
        return later[0]
    if wanted is not None and not allowed and not _exact(wanted):
        return None  # a range nothing on the index ever met (`>=3` of a 2.x package): as asked
    asked = _asked(wanted)
    if asked is None:
        dated = [r for r in usable if r.uploaded is not None and r.uploaded <= cutoff]
        pool = dated or usable
        return pool[-1] if pool else None
    below = [r for r in usable if r.version <= asked]
    above = [r for r in usable if r.version > asked]
    return below[-1] if below else (above[0] if above else None)


def _exact(wanted: Requirement) -> bool:
    return any(s.operator in ("==", "===") for s in wanted.specifier)


def _asked(wanted: Requirement | None) -> Version | None:
    versions = []
    for spec in wanted.specifier if wanted is not None else ():
        try:
            versions.append(Version(spec.version.removesuffix(".*")))
        except ValueError:
            continue
    return max(versions) if versions else None


def unavailable(plan: Plan, log: str, index_url: str, requirements: str) -> Plan | None:
    """`plan` revised past a package the index serves nothing usable of (see the module); None
    when the log names none, the package was revised once already, or the index has nothing."""
    failure = resolver_failure(log)
    if failure is None:
        return None
    name, cause = failure
    key = str(canonicalize_name(name))
    if f"+{key}-" in plan.variant:
        return None  # revised once already: its failure stands
    written = _Written.of(plan, requirements)
    if _NOT_IMPORTED.match(key):
        return _dropped(plan, written, key, f"{name}: {cause}")
    return _substituted(plan, written, (name, cause), log, index_url)


@dataclass
class _Written:
    """The plan's reconciled requirements file: the command that writes it, and its lines."""

    commands: list[str]
    path: str
    where: int | None
    lines: list[str]

    @classmethod
    def of(cls, plan: Plan, path: str) -> _Written:
        from prchain.environments.eras.python import written_lines

        found = [written_lines(c, path) for c in plan.commands]
        where = next((i for i, x in enumerate(found) if x is not None), None)
        return cls(
            list(plan.commands), path, where, found[where] or [] if where is not None else []
        )

    def line(self, key: str) -> str | None:
        return next((x for x in self.lines if _name(x) == key), None)

    def rewritten(self, key: str, line: str | None) -> list[str]:
        """The commands with `key`'s line replaced by `line` (None: left out); a dependency of a
        dependency is named in a new file, which the project's install then reads."""
        from prchain.environments.eras.python import write_lines

        commands, where = list(self.commands), self.where
        if where is None:
            where = _after_venv(commands)
            commands = [_with_file(c, self.path) for c in commands]
            commands.insert(where, "")
        kept = [x for x in self.lines if _name(x) != key] + ([line] if line else [])
        commands[where] = write_lines(self.path, kept)
        return commands


# Operators that only set a floor (or skip a release): a later wheel still satisfies them.
_FLOORS = {">=", ">", "!="}


def unpinned(plan: Plan, name: str, version: str, files: tuple[str, ...]) -> Plan:
    """A package lifted to its first wheel (`wheels.lifted`) whose own line pins the era's release
    (msgpack 2018's `Cython==0.27.3`, whose sdist does not build on 3.9): the pin would refuse the
    wheel, so the line asks for that release as a floor instead (`Cython>=0.27.3`), said in the
    notes. Lines that only set a floor are left as they are."""
    key = str(canonicalize_name(name))
    for path in files:
        written = _Written.of(plan, path)
        own = written.line(key)
        if own is None:
            continue
        wanted = Requirement(own)
        if all(s.operator in _FLOORS for s in wanted.specifier):
            continue
        extras = f"[{','.join(sorted(wanted.extras))}]" if wanted.extras else ""
        marker = f"; {wanted.marker}" if wanted.marker else ""
        line = f"{wanted.name}{extras}>={version}{marker}"
        note = f"{own} gives way to the lift: {line}"
        plan = replace(plan, commands=written.rewritten(key, line), notes=[*plan.notes, note])
    return plan


def _dropped(plan: Plan, written: _Written, key: str, why: str) -> Plan | None:
    if written.line(key) is None:
        return None  # not named here: nothing to leave out
    note = f"{why}; dropped (a type stub or lint tool: the tests never import it)"
    commands = written.rewritten(key, None)
    return replace(plan, commands=commands, notes=[*plan.notes, note], variant=_v(plan, key))


def _substituted(
    plan: Plan, written: _Written, failure: tuple[str, str], log: str, index_url: str
) -> Plan | None:
    name, cause = failure
    key = str(canonicalize_name(name))
    own = written.line(key)
    wanted = Requirement(own) if own is not None else _depended(log, name)
    cutoff = datetime.fromisoformat(plan.cutoff.replace("Z", "+00:00"))
    found = releases(index_url, name, interpreter_tags(plan.interpreter, plan.suite))
    chosen = nearest(found, wanted, cutoff) if found else None
    if chosen is None:
        return None
    commands = written.rewritten(key, _pinned(name, chosen, wanted))
    lift = _lift(key, chosen.uploaded, cutoff)
    commands = [c.replace("uv pip install ", f"uv pip install {lift}") for c in commands]
    when = chosen.uploaded.date().isoformat() if chosen.uploaded else "no upload time"
    note = (
        f"{name}: {cause}; taken at its nearest installable release, {chosen.version} "
        f"({when}{', yanked' if chosen.yanked else ''}; deviates from the era)"
    )
    return replace(plan, commands=commands, notes=[*plan.notes, note], variant=_v(plan, key))


def _depended(log: str, name: str) -> Requirement | None:
    """What a dependant asks of `name` in uv's explanation (`twisted==21.2.0 depends on
    attrs>=19.2.0`), for a package no manifest names."""
    found = re.search(rf"depends on\s+{re.escape(name)}([<>=!~][^\s,]*)", log)
    try:
        return Requirement(name + found.group(1)) if found else None
    except InvalidRequirement:
        return None


def _name(line: str) -> str:
    try:
        return str(canonicalize_name(Requirement(line).name))
    except InvalidRequirement:
        return ""


def _pinned(name: str, chosen: Release, wanted: Requirement | None) -> str:
    marker = f"; {wanted.marker}" if wanted is not None and wanted.marker else ""
    extras = f"[{','.join(sorted(wanted.extras))}]" if wanted is not None and wanted.extras else ""
    return f"{name}{extras}=={chosen.version}{marker}"


def _lift(key: str, uploaded: datetime | None, cutoff: datetime) -> str:
    """uv's flag keeping the chosen release: files after the cutoff up to its upload (the next
    whole second), or no cutoff at all for files without an upload time."""
    if uploaded is None:
        return f"--exclude-newer-package {key}=false "
    if uploaded <= cutoff:
        return ""
    until = (uploaded.astimezone(UTC) + timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    return f"--exclude-newer-package {key}={until} "


def _with_file(command: str, requirements: str) -> str:
    """The project's install (run in its tree) with the requirements file added."""
    if command.startswith("cd ") and "uv pip install " in command:
        return f"{command} -r {requirements}"
    return command


def _after_venv(commands: list[str]) -> int:
    return next((i + 1 for i, c in enumerate(commands) if c.startswith("uv venv")), 0)


def _v(plan: Plan, key: str) -> str:
    return f"{plan.variant}+{key}-nearest"
