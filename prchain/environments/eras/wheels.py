"""A dependency whose era release does not build here: its cutoff lifted to its first wheel.

Old sdists with C code (zope.interface 4.4–4.7 of 2017–2020) do not compile on the interpreters the
Debian suites ship (bullseye's 3.9 is the oldest), and no older interpreter can be had. When a
build fails on one package, the plan is retried with that package alone allowed up to the upload of
its first wheel for this interpreter and platform (binary only), so the release picked is the
nearest to the era that installs. That is a deviation from the era; the plan's notes say so.
"""

from __future__ import annotations

import platform
import re
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

from prchain.environments.eras.ecosystems import Plan

# glibc of each suite: the newest manylinux_2_N wheels its python3 can install.
GLIBC = {"bullseye": 31, "bookworm": 36, "trixie": 41}
_LEGACY = {17: "manylinux2014", 12: "manylinux2010", 5: "manylinux1"}
JSON_TYPE = "application/vnd.pypi.simple.v1+json"
# uv: "Failed to build `zope-interface==4.4.3`" (the project itself is `name @ file://…`, no `==`).
_FAILED = re.compile(r"Failed to (?:download and )?build `([A-Za-z0-9][A-Za-z0-9._-]*)==([^`\s]+)`")
_NEVER_LIFTED = {"setuptools", "wheel"}  # the build tools have their own floor (python.py)


def failed_package(log: str) -> tuple[str, str] | None:
    """(name, version) of the dependency whose build failed, from uv's output."""
    found = _FAILED.search(log)
    if found is None or _normal(found.group(1)) in _NEVER_LIFTED:
        return None
    return found.group(1), found.group(2)


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def interpreter_tags(version: str, suite: str) -> set[Any]:
    """The wheel tags CPython `version` on `suite`'s glibc installs (x86_64/aarch64 as the host)."""
    from packaging import tags

    major, minor = (int(p) for p in version.split(".")[:2])
    arch = platform.machine()
    glibc = GLIBC.get(suite, 17)
    platforms = [f"manylinux_2_{n}_{arch}" for n in range(glibc, 4, -1)]
    platforms += [f"{name}_{arch}" for n, name in _LEGACY.items() if n <= glibc]
    interpreter = f"cp{major}{minor}"
    found = set(tags.cpython_tags((major, minor), [interpreter], platforms))
    return found | set(tags.compatible_tags((major, minor), interpreter, platforms))


def first_wheel(
    index_url: str, name: str, after: str, wanted: set[Any]
) -> tuple[str, datetime] | None:
    """(version, upload time) of the earliest wheel of `name` uploaded after `after` that installs
    with `wanted` tags, read from the index's JSON simple API (PEP 691, upload times of PEP 700)."""
    import requests
    from packaging.utils import InvalidWheelFilename, parse_wheel_filename

    url = f"{index_url.rstrip('/')}/{_normal(name)}/"
    try:
        response = requests.get(url, headers={"Accept": JSON_TYPE}, timeout=30)
        response.raise_for_status()
        files = response.json().get("files", [])
    except (requests.RequestException, ValueError):
        return None  # no revision then; the plan's failure stands
    start = _when(after)
    found: list[tuple[datetime, str]] = []
    for item in files:
        filename, uploaded = item.get("filename", ""), item.get("upload-time")
        if not filename.endswith(".whl") or not uploaded or item.get("yanked"):
            continue
        try:
            _, release, _, file_tags = parse_wheel_filename(filename)
        except InvalidWheelFilename:
            continue
        when = _when(uploaded)
        if when > start and file_tags & wanted:
            found.append((when, str(release)))
    if not found:
        return None
    first, version = min(found)
    return version, first


def _when(stamp: str) -> datetime:
    parsed = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def lifted(plan: Plan, log: str, index_url: str) -> Plan | None:
    """`plan` again with the package whose build failed taken as its first wheel for this
    interpreter after the plan's cutoff; None when the log names no such package, it is already
    lifted, or the index has no such wheel."""
    failed = failed_package(log)
    if failed is None:
        return None
    name, version = failed
    if any(f"--only-binary {name} " in c for c in plan.commands):
        return None  # lifted once already and it still failed: nothing more to try here
    wheel = first_wheel(
        index_url, name, plan.cutoff, interpreter_tags(plan.interpreter, plan.suite)
    )
    if wheel is None:
        return None
    release, uploaded = wheel
    # uv keeps files uploaded up to the given instant; the next whole second keeps this wheel.
    until = (uploaded.astimezone(UTC) + timedelta(seconds=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    flags = f"--exclude-newer-package {name}={until} --only-binary {name} "
    commands = [c.replace("uv pip install ", f"uv pip install {flags}") for c in plan.commands]
    note = (
        f"{name}=={version} (of the era) did not build on python {plan.interpreter}: lifted to "
        f"its first wheel for it, {release} of {uploaded.date().isoformat()} (deviates from the era)"
    )
    return replace(
        plan, commands=commands, notes=[*plan.notes, note], variant=f"{plan.variant}+{name}-wheel"
    )


# uv's resolver explains a failure as "Because <clause>, we can conclude …"; the clause's first
# package is the one the index cannot give (yanked, deleted, after the cutoff, refused).
_NAME = r"([A-Za-z0-9][A-Za-z0-9._-]*?)"
_WHO = re.compile(
    rf"Because (?:there (?:are no versions|is no version) of {_NAME}(?=[\s=<>!~,\[])"
    rf"|only {_NAME}[=<>!~]|{_NAME}(?:[=<>!~]=?\S+)? (?:was yanked|has (?:invalid|inconsistent) metadata|has a non-PEP 625|was not found)"
    rf"|all versions of {_NAME} have"
    rf"|you require {_NAME}[=<>!~\[\s])"
)


def resolver_failure(log: str) -> tuple[str, str] | None:
    """(package, cause) of uv's `No solution found`, the cause its first clause in one line."""
    at = log.find("No solution found when resolving dependencies")
    if at < 0:
        return None
    lines = []
    for line in log[at:].splitlines()[1:]:
        if not line.strip() or line.lstrip().startswith(("hint:", "+ ")):
            break
        lines.append(re.sub(r"^\s*(?:cause:|╰─▶)?\s*", "", line))
    text = " ".join(lines)
    found = _WHO.search(text)
    if found is None:
        return None
    name = next(g for g in found.groups() if g)
    clause = text[found.start() + len("Because ") :].split(", we can conclude")[0]
    return name, clause[:300]
