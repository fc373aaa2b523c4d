"""Which test runner a JavaScript/TypeScript project uses, and the command the agent runs.

The `test` script of package.json decides (followed through `npm run x` / `yarn x` / `pnpm x`),
else the devDependencies: jest, vitest, mocha or Node's own `node --test`. The command calls the
runner from node_modules/.bin with the script's own options and environment assignments, without
wrappers (cross-env, npx, nyc, c8), coverage, watch mode or vitest's UI, so it can be narrowed to test
files and its report read; lint or build steps chained before the runner in the script are left out.
Node's options before the runner (`node --experimental-vm-modules $(yarn bin jest)`) become
NODE_OPTIONS.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

from prchain.environments.eras.node.configs import FILES as CONFIGS
from prchain.environments.eras.node.report import BIN, RUNNERS, shell_word

_SPLIT = re.compile(r"\s*(?:&&|\|\||;|\|)\s*")
_NESTED = re.compile(r"^(?:npm|pnpm|yarn)\s+(?:run(?:-script)?\s+)?([\w:.-]+)")
# Watch and coverage modes, colours, and vitest's browser UI (`--ui` opens one: `spawn xdg-open`).
_DROPPED = {"--watch", "--watchAll", "--coverage", "--color", "--colors", "--ui", "--open"}
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
# A runner reached through its package manager's bin directory: `$(yarn bin jest)`,
# `$(npm bin)/jest`, `` `yarn bin jest` ``.
_BIN_LOOKUP = re.compile(
    r"(?:\$\(|`)\s*(?:npm|yarn|pnpm)\s+bin(?:\s+([\w@/.-]+))?\s*(?:\)|`)(?:/([\w.-]+))?"
)
# Node's own options given before the runner's script (`node --experimental-vm-modules
# node_modules/.bin/jest`: ts-jest's ESM preset needs it); the command passes them as NODE_OPTIONS.
_NODE_DEBUGGING = ("--inspect", "--inspect-brk", "--prof", "--cpu-prof")


def scripts(manifest: dict[str, object]) -> dict[str, str]:
    found = manifest.get("scripts")
    return {str(k): str(v) for k, v in found.items()} if isinstance(found, dict) else {}


def _words(segment: str) -> list[str]:
    segment = _BIN_LOOKUP.sub(lambda m: BIN + (m.group(1) or m.group(2) or ""), segment)
    try:
        return shlex.split(segment)
    except ValueError:
        return segment.split()


def runner_segment(
    manifest: dict[str, object], name: str = "test", depth: int = 0
) -> tuple[str, list[str]]:
    """(runner, the words of the script segment that runs it) from script `name`, or ("", [])."""
    if depth > 3:
        return "", []
    for segment in _SPLIT.split(scripts(manifest).get(name, "")):
        words = _words(segment)
        runner = _runner_in(words)
        if runner:
            return runner, words
        nested = _NESTED.match(segment)
        if nested and nested.group(1) not in ("install", "ci", "exec", "x", "dlx"):
            target = "test" if nested.group(1) in ("test", "t") and depth == 0 else nested.group(1)
            found = runner_segment(manifest, target, depth + 1) if target != name else ("", [])
            if found[0]:
                return found
    return "", []


def _runner_in(words: list[str]) -> str:
    for i, word in enumerate(words):
        base = word.rsplit("/", 1)[-1]
        if base in RUNNERS:
            return base
        if base == "node" and "--test" in words[i + 1 :]:
            return "node"
    return ""


def detect(manifest: dict[str, object], paths: Sequence[str] = ()) -> tuple[str, list[str]]:
    """(runner, script words): the test script's runner, else a runner among the dependencies
    (`paths`, the tracked files, say where mocha's tests are then)."""
    runner, words = runner_segment(manifest)
    if runner:
        return runner, words
    declared: set[str] = set()
    for key in ("devDependencies", "dependencies"):
        found = manifest.get(key)
        declared |= set(found) if isinstance(found, dict) else set()
    runner = next((r for r in ("vitest", "jest", "mocha") if r in declared), "")
    if runner != "mocha" or "mocha" in manifest:
        return runner, []
    return runner, _mocha_elsewhere(paths)


def _mocha_elsewhere(paths: Sequence[str]) -> list[str]:
    """mocha given no files runs ./test; a project with no test/ whose tests are in spec/, run by
    a task runner (node-pcap/node_pcap's `"test": "grunt"`, its Gruntfile's `spec/**/*.js`), gets
    them named, at any depth, unless a mocha config names its own."""
    mocha_configs = [c for c in CONFIGS if "mocha" in c]
    if any(p.startswith("test/") or p in mocha_configs for p in paths):
        return []
    return ["mocha", "--recursive", "spec"] if any(p.startswith("spec/") for p in paths) else []


# What compiles or bundles a project's sources: a test that loads the output (yargs' tests of 2020
# load ./build/lib, which its `pretest` compiles with tsc) fails on a checkout that did not run it.
_BUILDS = re.compile(
    r"^(tsc|babel|rollup|webpack|esbuild|swc|tsup|microbundle|vite|parcel|ncc|unbuild|gulp|grunt)$"
)
_BUILD_NAME = re.compile(r"^(build|compile|bundle|tsc|dist|prepare|prebuild|build:\w+)$")


def build_step(manifest: dict[str, object]) -> str:
    """The project's build that its tests need, as the stage's setup runs it (`npm run X`): the
    `pretest` script (npm runs it before `test`), else the segments of the test script chained
    before its runner; each only when it compiles (a compiler or bundler, or a script named
    `build`/`compile`, followed through `npm run`), never a linter. "" when there is none."""
    named = scripts(manifest)
    if "pretest" in named and _builds(manifest, "pretest"):
        return "npm run pretest"
    steps = []
    for segment in _SPLIT.split(named.get("test", "")):
        if _runner_in(_words(segment)):
            break
        nested = _NESTED.match(segment)
        if nested and nested.group(1) in named and _builds(manifest, nested.group(1)):
            steps.append(f"npm run {nested.group(1)}")
        elif not nested and _compiles(segment):  # `tsc && mocha`: the project's own tsc
            steps.append(f'PATH="$PWD/node_modules/.bin:$PATH" {segment}')
    return " && ".join(steps)


def _compiles(segment: str) -> bool:
    words = _words(segment)
    return any(_BUILDS.match(w.rsplit("/", 1)[-1]) for w in words[:2])


def _builds(manifest: dict[str, object], name: str, depth: int = 0) -> bool:
    """Whether script `name` compiles or bundles: by its name, or by what it runs."""
    if _BUILD_NAME.match(name):
        return True
    for segment in _SPLIT.split(scripts(manifest).get(name, "")):
        if _compiles(segment):
            return True
        nested = _NESTED.match(segment)
        inner = nested.group(1) if nested else name
        if inner != name and depth < 3 and _builds(manifest, inner, depth + 1):
            return True
    return False


def test_command(runner: str, words: list[str]) -> str:
    """The agent's command for `runner`, from the script's words when there are some."""
    if not runner:
        return "npm test"
    at = next((i for i, w in enumerate(words) if _is_runner(w, runner)), -1)
    prefix = [w for w in words[:at] if _ASSIGNMENT.match(w)] if at >= 0 else []
    if at >= 0 and runner != "node" and "node" in words[:at]:
        options = [
            w
            for w in words[words.index("node") + 1 : at]
            if w.startswith("--") and not w.startswith(_NODE_DEBUGGING)
        ]
        if options:
            prefix.append("NODE_OPTIONS=" + " ".join(options))
    args = [w for w in words[at + 1 :] if w not in _DROPPED] if at >= 0 else []
    if runner == "node":
        args = args if "--test" in args else ["--test", *args]
        return " ".join(map(shell_word, [*prefix, "node", *args]))
    if runner == "mocha":
        args = [w for w in args if w != "-w"]
    if runner == "vitest":
        args = ["run", *(args[1:] if args[:1] in (["run"], ["watch"], ["dev"]) else args)]
    return " ".join(map(shell_word, [*prefix, f"{BIN}{runner}", *args]))


def _is_runner(word: str, runner: str) -> bool:
    return word.rsplit("/", 1)[-1] == runner
