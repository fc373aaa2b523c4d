"""What a JavaScript runner loads beside the hidden tests, as the stage base names it (issue 77).

jest's `setupFiles`, `setupFilesAfterEnv`, `globalSetup`, `testEnvironment`, `moduleNameMapper`
(in package.json's `jest` key or a `jest.config.*`), vitest's `setupFiles`, mocha's `require` (in
`.mocharc*`, package.json's `mocha` key or `--require` in a script) name files of the project's
that run in the test process before the hidden tests, and can replace `expect` for them. The
configuration itself never crosses (crossing's named config); the files it names are sealed the
same way: the clean room keeps the stage base's copy, plus what the gold test patch writes there.
So the hidden tests run with the test configuration of their own commit, never with Δ's.

A dependency the stage base installs from the project's own tree (`"chai": "file:./x/chai"`,
`link:`, `portal:`, a workspace package) is a link from the image's node_modules into each stage's
checkout (`packages.RELOCATE`): when its name is a test library's, the directory it links to is
sealed too. The names are read from the image's links, so npm, yarn and pnpm workspaces alike.
"""

from __future__ import annotations

import json
import re
import shlex

# The runners' configuration files the clean room reads before the agent's change arrives.
FILES = (
    "package.json",
    *(f"{stem}.{ext}" for stem in ("jest.config", "vitest.config", "vite.config")
      for ext in ("js", "cjs", "mjs", "ts", "cts", "mts", "json")),
    *(f".mocharc.{ext}" for ext in ("js", "cjs", "json", "jsonc", "yml", "yaml")),
    "test/mocha.opts", "ava.config.js", "ava.config.cjs", "ava.config.mjs",
)  # fmt: skip
# The listing of the image's node_modules links into the checkout, read beside FILES.
LINKS = "node_modules links"
# Configuration keys whose values name code a runner loads into the test process.
LOADING_KEYS = (
    "setupFiles", "setupFilesAfterEnv", "globalSetup", "globalTeardown", "testEnvironment",
    "resolver", "transform", "snapshotResolver", "testRunner", "runner",
    "testSequencer", "prettierPath", "preset", "require", "file", "loader", "import",
    "environment", "setup", "reporters",
)  # fmt: skip
# Keys whose value maps module names to files: only a test library's mapping is the runner's
# (`'^chai$': './shim/chai'`); the project's own (`zustand: './src/index.ts'`) is its code.
MAPPING_KEYS = ("moduleNameMapper", "alias")
# Command-line options (scripts, mocha.opts) whose value is a module to load before the tests.
LOADING_FLAGS = frozenset(
    {"--require", "-r", "--file", "--import", "--loader", "--experimental-loader",
     "--setupFiles", "--setupFilesAfterEnv", "--globalSetup", "--testEnvironment", "--env",
     "--config", "-c"}
)  # fmt: skip
# A script that runs a test runner (its loading options are the runner's or node's).
_RUNS_TESTS = re.compile(r"(^|[\s/])(jest|vitest|mocha|ava|tap|node)(\s|$)")
DEPENDENCY_KEYS = ("dependencies", "devDependencies", "optionalDependencies", "peerDependencies")
LOCAL_PROTOCOLS = ("file:", "link:", "portal:")
_SOURCE = (".js", ".cjs", ".mjs", ".ts", ".cts", ".mts", ".jsx", ".tsx", ".json")
_STRING = re.compile(r"""(["'`])((?:(?!\1)[^\\\n]|\\.)*)\1""")
_MAPPING = re.compile(r"""(?:^|[\s{,])["']?(""" + "|".join(MAPPING_KEYS) + r""")["']?\s*[:=]""")
# `'^chai$': './x'`, `chai: './x'`, or vite's `{ find: /^chai$/, replacement: './x' }`.
_PAIR = re.compile(
    r"""(?:(["'`])(?P<q>(?:(?!\1).)*)\1|(?P<bare>[\w$-]+))\s*:\s*(["'`])(?P<v>(?:(?!\4).)*)\4"""
    r"""|find\s*:\s*(?P<find>\S+?)\s*,\s*replacement\s*:\s*(["'`])(?P<r>(?:(?!\7).)*)\7"""
)
_KEY = re.compile(r"""(?:^|[\s{,])["']?(""" + "|".join(LOADING_KEYS) + r""")["']?\s*[:=]""")


def links_command(deps: str) -> str:
    """Prints `<package path in node_modules>\t<target>` for each link of the image's
    node_modules (below `deps`) that leads into the checkout."""
    return (
        f"find {shlex.quote(deps)} -maxdepth 4 -type l -lname '/work/repo/*' "
        "-printf '%P\\t%l\\n' 2>/dev/null || true"
    )


def sealed(texts: dict[str, str], libraries: frozenset[str]) -> list[str]:
    """The paths (files, or directories of a linked test library) the stage base's runner
    configuration `texts` (FILES and LINKS, name → text) names; relative to the root."""
    found: set[str] = set()
    for name, text in texts.items():
        if name == LINKS:
            found |= _linked_libraries(text, libraries)
        elif name == "package.json":
            found |= _from_package(text, libraries)
        elif name.endswith(("mocha.opts",)):
            found |= _paths(_flag_values(text), libraries)
        elif name.endswith((".yml", ".yaml")):
            found |= _paths(_yaml_values(text), libraries)
        else:
            found |= _paths(_loaded_strings(text, libraries), libraries)
    return sorted(p for p in found if p and not p.startswith("../"))


def _from_package(text: str, libraries: frozenset[str]) -> set[str]:
    try:
        manifest = json.loads(text)
    except json.JSONDecodeError:
        return set()
    if not isinstance(manifest, dict):
        return set()
    found = set()
    for key in ("jest", "mocha", "ava", "vitest"):
        if isinstance(manifest.get(key), dict | list):
            found |= _paths(_loaded_strings(json.dumps(manifest[key]), libraries), libraries)
    scripts = manifest.get("scripts")
    for script in scripts.values() if isinstance(scripts, dict) else ():
        if _RUNS_TESTS.search(str(script)):
            found |= _paths(_flag_values(str(script)), libraries)
    for key in DEPENDENCY_KEYS:
        deps = manifest.get(key)
        for name, spec in deps.items() if isinstance(deps, dict) else ():
            if str(spec).startswith(LOCAL_PROTOCOLS) and _is_library(name, libraries):
                found.add(_normal(str(spec).split(":", 1)[1]))
    return found


def _linked_libraries(listing: str, libraries: frozenset[str]) -> set[str]:
    found = set()
    for line in listing.splitlines():
        link, _, target = line.partition("\t")
        name = link.rsplit("node_modules/", 1)[-1]
        if target.startswith("/work/repo/") and _is_library(name, libraries):
            found.add(_normal(target.removeprefix("/work/repo/")))
    return found


def _is_library(name: str, libraries: frozenset[str]) -> bool:
    """`chai`, `@jest/globals`, `@testing-library/jest-dom`: a component is a test library's."""
    return bool(libraries & {part.lstrip("@") for part in name.lower().split("/")})


def _loaded_strings(text: str, libraries: frozenset[str]) -> list[str]:
    """The string literals in the value of each loading key of a JS or JSON configuration, and
    the files a mapping key maps a test library to."""
    found = []
    for match in _KEY.finditer(text):
        found += [m.group(2) for m in _STRING.finditer(_value(text, match.end()))]
    for match in _MAPPING.finditer(text):
        for pair in _PAIR.finditer(_value(text, match.end())):
            name = pair.group("q") or pair.group("bare") or pair.group("find") or ""
            words = re.split(r"[^\w@/-]+", name)
            if any(_is_library(word, libraries) for word in words if word):
                found.append(pair.group("v") or pair.group("r") or "")
    return found


def _value(text: str, start: int) -> str:
    """The text of the value that starts at `start`: up to its closing bracket, or to the end of
    the first string or line."""
    rest = text[start:].lstrip()
    if not rest or rest[0] not in "[{(":
        string = _STRING.match(rest)
        return string.group(0) if string else rest.split("\n", 1)[0]
    depth = 0
    for i, char in enumerate(rest):
        depth += 1 if char in "[{(" else -1 if char in "]})" else 0
        if depth == 0:
            return rest[: i + 1]
    return rest


def _flag_values(text: str) -> list[str]:
    try:
        words = shlex.split(text, comments=True)
    except ValueError:
        words = text.split()
    found = []
    for i, word in enumerate(words):
        flag, eq, value = word.partition("=")
        if flag in LOADING_FLAGS:
            found += [value] if eq else words[i + 1 : i + 2]
    return found


def _yaml_values(text: str) -> list[str]:
    """`.mocharc.yml`: the values of a loading key, inline or as a `- item` list below it."""
    found, inside = [], False
    for line in text.splitlines():
        key = re.match(r"^([\w-]+)\s*:\s*(.*)$", line)
        if key:
            inside = key.group(1) in LOADING_KEYS
            if inside and key.group(2):
                found += [v.strip(" '\"") for v in key.group(2).strip("[]").split(",")]
        elif inside and line.strip().startswith("- "):
            found.append(line.strip()[2:].strip(" '\""))
    return found


def _paths(values: list[str], libraries: frozenset[str] = frozenset()) -> set[str]:
    """The project files each value may name: a relative path as written, with jest's
    `<rootDir>`; one without a suffix as each source suffix (`./test/env` → `test/env.js`), and
    as a directory only when it is named like a test library (`./x/chai`: a directory named
    like the project's source, vite's `'@': './src'`, stays the project's). Package names
    (`ts-node/register`, `jsdom`) and patterns name no path."""
    found = set()
    for value in values:
        value = value.strip().replace("<rootDir>/", "./")
        if not value or any(c in value for c in "*$()[]{}|^\\") or value.startswith(("@", "/")):
            continue
        if not value.startswith("./") and not value.endswith(_SOURCE):
            continue
        path = _normal(value)
        if path.endswith(_SOURCE):
            found.add(path)
            continue
        found |= {path + suffix for suffix in _SOURCE}
        if _is_library(path.rsplit("/", 1)[-1], libraries):
            found.add(path)
    return found


def _normal(path: str) -> str:
    parts: list[str] = []
    for part in path.strip().split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                return "../"
            parts.pop()
        else:
            parts.append(part)
    return "/".join(parts)
