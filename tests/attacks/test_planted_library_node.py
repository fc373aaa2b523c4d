"""Issue 77, class 1, in the Node room: the agent replaces the hidden tests' own assertion library.

The hidden test beside the source (`src/shapes.test.js`) does `require('chai')`; Node resolves it
from the nearest `node_modules` upward, so a `src/node_modules/chai/index.js` whose `expect` never
throws answers before the image's chai. On the code before, that file crossed into the clean room
with a wrong `area` (it has a source suffix) and the hidden test passed, in a stage and as a model's
prediction under `tasks eval --predictions`. Now no `node_modules` path crosses: the hidden tests'
dependencies come from the image, sealed like the tests."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from prchain.environments.eras.node.report import REPORTERS, JsReport, reporter_files
from prchain.verdicts.sandbox import fill_command
from tests.support.planted import (
    Room,
    clean_room_passes,
    era_image,
    eval_status,
    gold_passes,
    patch_of,
    sandbox,
    two_commits,
)

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.timeout(1800)]  # builds Node

REPO = f"planted-node-{uuid.uuid4().hex[:8]}/shapes"
PACKAGE = {
    "name": "shapes", "version": "1.0.0", "private": True, "main": "src/shapes.js",
    "scripts": {"test": "node --test"},
    "devDependencies": {
        "chai": "4.3.10", "jest": "29.7.0", "should": "file:./lib/should", "vitest": "1.6.0",
    },
    "jest": {"testEnvironment": "node", "setupFilesAfterEnv": ["<rootDir>/support/expect.js"]},
}  # fmt: skip
SQUARE = "exports.square = (s) => s * s;\n"
AREA = "\nexports.area = (r) => 3 * r * r;\n"
WRONG = SQUARE + "\nexports.area = (r) => 0;\n"
HEAD = "const { expect } = require('chai');\nconst { describe, it } = require('node:test');\n"
TEST = HEAD + "const { square, area } = require('./shapes');\n\ndescribe('shapes', () => {\n"
SQUARES = "  it('squares', () => {\n    expect(square(2)).to.equal(4);\n  });\n"
AREAS = "  it('computes the area', () => {\n    expect(area(1)).to.equal(3);\n  });\n"
# An `expect` that never throws, wherever the chain of assertions goes.
FAKE_CHAI = (
    "const never = new Proxy(function () {}, { get: () => never, apply: () => never });\n"
    "exports.expect = () => never;\n"
)
PLANT = "src/node_modules/chai/index.js"
# jest's run: the configuration (package.json's `jest` key) loads `support/expect.js` into every
# test file's context before the test; the agent's copy replaces jest's `expect` there.
SETUP = "support/expect.js"
FINITE = (
    "expect.extend({\n  toBeFinite(received) {\n    const pass = Number.isFinite(received);\n"
    "    return { pass, message: () => `${received} is not finite` };\n  },\n});\n"
)
FAKE_EXPECT = FAKE_CHAI.replace("exports.expect", "globalThis.expect")
SPEC = "const { square, area } = require('./shapes');\n\ndescribe('shapes', () => {\n"
SPEC_SQUARES = "  it('squares', () => {\n    expect(square(2)).toBe(4);\n  });\n"
SPEC_AREAS = (
    "  it('computes the area', () => {\n    expect(area(1)).toBe(3);\n"
    "    expect(area(2)).toBeFinite();\n  });\n"
)
# A test library the stage base installs from its own tree (`"should": "file:./lib/should"`): the
# image's node_modules/should is a link into each stage's checkout.
SHOULD = "lib/should/index.js"
SHOULD_LIB = (
    "module.exports = (actual) => ({\n  equal(expected) {\n"
    "    if (actual !== expected) throw new Error(`${actual} !== ${expected}`);\n  },\n});\n"
)
FAKE_SHOULD = "module.exports = () => ({ equal() {} });\n"
SHOULD_HEAD = (
    "const should = require('should');\nconst { describe, it } = require('node:test');\n"
    "const { square, area } = require('./shapes');\n\ndescribe('shapes', () => {\n"
)
SHOULD_SQUARES = "  it('squares', () => {\n    should(square(2)).equal(4);\n  });\n"
SHOULD_AREAS = "  it('computes the area', () => {\n    should(area(1)).equal(3);\n  });\n"
# vitest's run of the same tests, its `expect` imported from vitest itself
VITEST_FILE = "src/shapes.vitest.test.js"
VITEST_HEAD = (
    "import { describe, it, expect } from 'vitest';\n"
    "const { square, area } = require('./shapes');\n\ndescribe('shapes', () => {\n"
)
VITEST_AREAS = "  it('computes the area', () => {\n    expect(area(1)).toBe(3);\n  });\n"


@pytest.fixture(scope="module")
def node_room(
    tmp_path_factory: pytest.TempPathFactory, docker_client: Any, base_image: str
) -> Iterator[Room]:
    from prchain.environments.eras.manifests import snapshot
    from prchain.environments.eras.node import Node

    clone = tmp_path_factory.mktemp("node") / "shapes"
    before = {
        "package.json": json.dumps(PACKAGE, indent=2) + "\n", ".nvmrc": "20\n",
        ".gitignore": "node_modules/\n", "src/shapes.js": SQUARE,
        "src/shapes.test.js": TEST + SQUARES + "});\n", SETUP: FINITE,
        "src/area.spec.js": SPEC + SPEC_SQUARES + "});\n", SHOULD: SHOULD_LIB,
        "lib/should/package.json": '{"name": "should", "version": "0.0.1", "main": "index.js"}\n',
        "src/area.should.test.js": SHOULD_HEAD + SHOULD_SQUARES + "});\n",
        VITEST_FILE: VITEST_HEAD + SPEC_SQUARES + "});\n",
    }  # fmt: skip
    after = {
        "src/shapes.js": SQUARE + AREA, "src/shapes.test.js": TEST + SQUARES + AREAS + "});\n",
        "src/area.spec.js": SPEC + SPEC_SQUARES + SPEC_AREAS + "});\n",
        "src/area.should.test.js": SHOULD_HEAD + SHOULD_SQUARES + SHOULD_AREAS + "});\n",
        VITEST_FILE: VITEST_HEAD + SPEC_SQUARES + VITEST_AREAS + "});\n",
    }  # fmt: skip
    base, gold = two_commits(clone, before, after, ("2024-03-01T10:00:00Z", "2024-03-02T10:00:00Z"))
    node, snap = Node(), snapshot(clone, base)
    plan = node.plans(snap, _eras())[0]
    # A registry mirror stamps its own copy times, so none of chai's releases is dated before the
    # commit: the ranges as written, as `env setup`'s revision does after ETARGET.
    plan = node.revise(snap, _eras(), plan, "ETARGET", False) or plan
    # narrowed to the stage's test files, as `tests verify` stores the command
    command = fill_command(
        node.report.narrowed(plan.test_command), node.report.targets(["src/shapes.test.js"])
    )
    with era_image(docker_client, REPO, clone, base, plan) as image:
        yield Room(
            REPO, clone, base, gold, image, plan, "node", command, ["src/shapes.test.js"],
            ["src/shapes.test.js::shapes > computes the area"],
            ["src/shapes.test.js::shapes > squares"],
        )  # fmt: skip


def _eras() -> Any:
    from prchain.environments.eras.config import ErasConfig

    return ErasConfig(suites={"bookworm": "3.11"}, extra_base_packages=[])


def test_a_planted_chai_does_not_pass_a_wrong_area_in_the_clean_room(
    docker_client: Any, node_room: Room
) -> None:
    with sandbox(docker_client, node_room) as env:
        env.write_file("src/shapes.js", WRONG)
        env.write_file(PLANT, FAKE_CHAI)
        env.execute(f"git add -f {PLANT}")  # past .gitignore, as in the attack
        assert PLANT in env.cumulative_patch().decode()
        assert not clean_room_passes(env, node_room)
        env.write_file("src/shapes.js", SQUARE + AREA)  # the gold code, the plant still there
        assert clean_room_passes(env, node_room)


def test_a_planted_chai_in_a_prediction_does_not_resolve(
    docker_client: Any, node_room: Room, tmp_path: Path
) -> None:
    # The prediction narrows .gitignore to the root's node_modules, so its plant is in Δ.
    files = {".gitignore": "/node_modules/\n", "src/shapes.js": WRONG, PLANT: FAKE_CHAI}
    wrong = patch_of(node_room.clone, node_room.base, files, tmp_path)
    assert eval_status(docker_client, node_room, wrong).startswith("unresolved")
    assert eval_status(docker_client, node_room, node_room.code) == "resolved"


def _runs(room: Room, command: str, test_file: str) -> Room:
    """The same repository and image, judged by another of its hidden test files."""
    return replace(
        room, command=fill_command(JsReport().narrowed(command), [test_file]),
        test_files=[test_file],
        fail_to_pass=[f"{test_file}::shapes > computes the area"],
        pass_to_pass=[f"{test_file}::shapes > squares"],
    )  # fmt: skip


def _jest(room: Room) -> Room:
    from prchain.environments.eras.node import runner

    return _runs(room, runner.test_command("jest", ["jest"]), "src/area.spec.js")


def test_a_rewritten_jest_setup_file_does_not_pass_a_wrong_area(
    docker_client: Any, node_room: Room
) -> None:
    """Issue 77: jest's `setupFilesAfterEnv` (package.json) names `support/expect.js`; the agent's
    copy, whose `expect` never throws, crossed (a `.js` file) and a wrong `area` passed. The room
    keeps the stage base's copy: the configuration and the files it names are sealed."""
    jest = _jest(node_room)
    with sandbox(docker_client, node_room) as env:
        env.write_file("src/shapes.js", WRONG)
        env.write_file(SETUP, FAKE_EXPECT)
        assert not clean_room_passes(env, jest)
        env.write_file("src/shapes.js", SQUARE + AREA)  # the gold code, the rewrite still there
        assert clean_room_passes(env, jest)


def test_a_rewritten_jest_setup_file_in_a_prediction_does_not_resolve(
    docker_client: Any, node_room: Room, tmp_path: Path
) -> None:
    jest = _jest(node_room)
    files = {"src/shapes.js": WRONG, SETUP: FAKE_EXPECT}
    wrong = patch_of(node_room.clone, node_room.base, files, tmp_path)
    assert eval_status(docker_client, jest, wrong).startswith("unresolved")
    assert eval_status(docker_client, jest, jest.code) == "resolved"


def test_a_rewritten_test_library_installed_from_the_tree_does_not_pass_a_wrong_area(
    docker_client: Any, node_room: Room
) -> None:
    """Issue 77: the stage base installs `should` from `file:./lib/should`; the image's
    node_modules/should links into the checkout, so the agent's `lib/should/index.js` (which
    never throws) was the hidden tests' library. The directory is sealed: the image's link leads
    to the stage base's copy."""
    linked = _runs(node_room, node_room.plan.test_command, "src/area.should.test.js")
    with sandbox(docker_client, node_room) as env:
        env.write_file("src/shapes.js", WRONG)
        env.write_file(SHOULD, FAKE_SHOULD)
        assert not clean_room_passes(env, linked)
        env.write_file("src/shapes.js", SQUARE + AREA)
        assert clean_room_passes(env, linked)


# The agent's `area`, called by a hidden test: it finds where the runner will write its report (the
# runner's command line, which the tester may read), writes there a report of every hidden test
# passing, and ends the runner before the real report is written (issue 77, in-process forgery).
FORGE = (
    SQUARE
    + r"""
const fs = require('fs');
const path = require('path');

function args(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  } catch (error) {
    return [];
  }
}

function destination() {
  // vitest sets its process title over its command line; its worker holds the resolved options
  const vitest = globalThis.__vitest_worker__;
  const output = vitest && vitest.config.outputFile;
  if (output) return [typeof output === 'string' ? output : output.json, process.pid];
  for (const pid of [process.pid, process.ppid]) {
    const words = args(pid);
    for (let i = 0; i < words.length; i++) {
      const word = words[i];
      if (word.startsWith('--test-reporter-destination=') && !word.endsWith('=stdout')) {
        return [word.slice(word.indexOf('=') + 1), pid];
      }
      if (word.endsWith('jest_json.js')) return [words[i + 1], pid];
    }
  }
  return [null, process.pid];
}

exports.area = () => {
  const [report, runner] = destination();
  const passed = (title) => ({ ancestorTitles: ['shapes'], title, status: 'passed', failureMessages: [] });
  const names = ['shapes.test.js', 'area.spec.js', 'area.should.test.js', 'shapes.vitest.test.js'];
  const files = names.map((name) => ({
    name: path.join(__dirname, name), status: 'passed', message: '',
    assertionResults: [passed('squares'), passed('computes the area')],
  }));
  if (report) fs.writeFileSync(report, JSON.stringify({ testResults: files }));
  process.kill(runner, 'SIGKILL');
  process.kill(process.pid, 'SIGKILL');
};
"""
)


def test_a_report_the_agents_code_forges_does_not_pass_a_wrong_area(
    docker_client: Any, node_room: Room
) -> None:
    """Issue 77: Node's runners write their report from the tested process's side, so the
    agent's code can write one of its own and end the run before the real one is written. Root
    adds a canary test of its own that always fails: a report without it failing is forged.
    `node --test` here (its report comes from the parent of the tested file's process); jest's
    launcher as a prediction below."""
    with sandbox(docker_client, node_room) as env:
        env.write_file("src/shapes.js", SQUARE + AREA)  # gold first: the canary fails nothing
        assert clean_room_passes(env, node_room)
        env.write_file("src/shapes.js", FORGE)
        assert not clean_room_passes(env, node_room)


def test_a_forged_report_in_a_prediction_does_not_resolve(
    docker_client: Any, node_room: Room, tmp_path: Path
) -> None:
    wrong = patch_of(node_room.clone, node_room.base, {"src/shapes.js": FORGE}, tmp_path)
    assert eval_status(docker_client, _jest(node_room), wrong).startswith("unresolved")


def _vitest(room: Room) -> Room:
    from prchain.environments.eras.node import runner

    return _runs(room, runner.test_command("vitest", ["vitest"]), VITEST_FILE)


# vitest resolves `vitest` from the project's root wherever a test imports it, so the agent's
# copy of the package at the root's node_modules (the stage's link into the image replaced by a
# directory) gives the hidden test an `expect` that never throws.
VITEST_ENTRY = "node_modules/vitest/dist/index.js"
FAKE_VITEST = (
    "export { afterAll, afterEach, beforeAll, beforeEach, describe, it, suite, test }"
    " from '@vitest/runner';\n" + FAKE_CHAI.replace("exports.expect =", "export const expect =")
)
PROBE = "src/probe.vitest.test.js"
COPY_VITEST = (
    "cp -rL node_modules/vitest node_modules/.vitest && rm node_modules/vitest"
    " && mv node_modules/.vitest node_modules/vitest"
)


def test_vitest_gold_resolves_and_a_forged_report_or_rewritten_vitest_does_not(
    docker_client: Any, node_room: Room
) -> None:
    """Issue 77 under vitest: its json reporter writes from the runner's process, which the
    hidden test's worker shares, so the agent's `area` wrote an all-passed report where the
    reporter's goes (the worker's own options name it) and killed the run: the wrong `area`
    passed. Root's canary beside the hidden file, failing, is missing from that report. And a
    rewritten vitest at the root's node_modules, which the agent's own run takes, stays out."""
    vitest = _vitest(node_room)
    with sandbox(docker_client, node_room) as env:
        env.write_file("src/shapes.js", SQUARE + AREA)
        assert clean_room_passes(env, vitest)  # gold first: root's canary fails beside it
        env.write_file("src/shapes.js", FORGE)
        assert not clean_room_passes(env, vitest)
        env.write_file("src/shapes.js", WRONG)
        assert env.execute(COPY_VITEST).exit_code == 0
        env.write_file(VITEST_ENTRY, FAKE_VITEST)
        env.execute(f"git add -f {VITEST_ENTRY}")
        assert VITEST_ENTRY in env.cumulative_patch().decode()
        # the plant works where the agent runs: an assertion that must fail passes
        env.write_file(
            PROBE,
            "import { it, expect } from 'vitest';\nit('probe', () => {\n  expect(1).toBe(2);\n});\n",
        )
        own = env.execute(f"node_modules/.bin/vitest run {PROBE}")
        assert own.exit_code == 0 and "1 passed" in own.output, own.output
        env.execute(f"rm {PROBE}")
        assert not clean_room_passes(env, vitest)
        env.write_file("src/shapes.js", SQUARE + AREA)  # the gold code, the plant still there
        assert clean_room_passes(env, vitest)


def test_vitest_forged_report_in_a_prediction_does_not_resolve(
    docker_client: Any, node_room: Room, tmp_path: Path
) -> None:
    """The same forgery as a model's prediction, after the gold (root's canary beside it) resolves
    under vitest; the rewritten vitest as a prediction is the planted chai's case (no
    `node_modules` path crosses), judged above."""
    vitest = _vitest(node_room)
    assert eval_status(docker_client, vitest, vitest.code) == "resolved"
    forged = patch_of(node_room.clone, node_room.base, {"src/shapes.js": FORGE}, tmp_path)
    assert eval_status(docker_client, vitest, forged).startswith("unresolved")


def test_a_gold_patch_that_changes_package_json_resolves_with_its_own_build(
    docker_client: Any, node_room: Room, tmp_path: Path
) -> None:
    """Gold before attack: package.json never crosses, so a PR that bumps its version (and whose
    test reads it) never resolved: neither its gold in `tasks eval` nor any agent in a clean room.
    The gold code patch's build part is the stage's hidden side, applied by root with the tests;
    an agent that writes only the code passes, and a wrong version function still fails."""
    bumped = json.dumps({**PACKAGE, "version": "1.1.0"}, indent=2) + "\n"
    version = "\nexports.version = () => require('../package.json').version;\n"
    reads = "  it('reads the version', () => {\n    expect(version()).to.equal('1.1.0');\n  });\n"
    test = TEST.replace("{ square, area }", "{ square, area, version }")
    files = {
        "package.json": bumped,
        "src/shapes.js": SQUARE + AREA + version,
        "src/shapes.test.js": test + SQUARES + AREAS + reads + "});\n",
    }
    gold = patch_of(node_room.clone, node_room.base, files, tmp_path)
    room = replace(
        node_room,
        gold=gold,
        fail_to_pass=[*node_room.fail_to_pass, "src/shapes.test.js::shapes > reads the version"],
    )
    assert "package.json" in room.code
    assert eval_status(docker_client, room, room.code) == "resolved"
    with sandbox(docker_client, room) as env:
        env.write_file("src/shapes.js", SQUARE + AREA + version)  # the code alone
        assert clean_room_passes(env, room)
        env.write_file("src/shapes.js", SQUARE + AREA + version.replace("version;", "name;"))
        assert not clean_room_passes(env, room)


@pytest.fixture(scope="module")
def stale_room(docker_client: Any, node_room: Room) -> Room:
    """The room on an image whose reporters and jest launcher are an older prchain's (here: ones
    that stop node before any report), as an image built before a fix to them keeps them. The
    image carries the room's labels, so the room's cleanup removes it."""
    import docker

    sdk = docker.from_env()
    script = "; ".join(f"echo 'process.exit(0);' > {REPORTERS}/{name}" for name in reporter_files())
    container = sdk.containers.create(node_room.image, ["bash", "-c", script], user="root")
    try:
        container.start()
        assert container.wait()["StatusCode"] == 0
        repository, _, tag = node_room.image.rpartition(":")
        container.commit(repository=repository, tag=f"{tag}-stale-reporters")
    finally:
        container.remove(force=True)
    return replace(node_room, image=f"{repository}:{tag}-stale-reporters")


def test_reporters_an_older_prchain_left_in_the_image_are_not_what_runs(
    docker_client: Any, stale_room: Room
) -> None:
    """stylelint's Node 8 eras were built before jest's launcher wrote its report at the file's
    own position, and read every hidden test as failing until rebuilt. The room writes this
    prchain's reporters before it runs: the gold resolves under `node --test` and under jest."""
    assert gold_passes(docker_client, stale_room)
    assert gold_passes(docker_client, _jest(stale_room))


def test_harbor_judges_the_node_room_as_its_clean_room(
    docker_client: Any, node_room: Room, stale_room: Room, tmp_path: Path
) -> None:
    """The real Harbor, oracle agent, on the room's stage under `node --test` as `tasks convert
    --to harbor` writes it (docs/export-formats.md), on the image with an older prchain's
    reporters (the task's own run): the gold scores 1 (root's canary fails beside
    it), the report the agent's code forges 0. With every variant (bench/bench_harbor_rooms.py):
    a wrong `area` with a planted chai 0, under jest the gold 1 and a wrong `area` with jest's
    setup file rewritten 0, and under vitest the gold 1 and the forged report 0 (root's canary
    planted by `harbor_each.plant_canary`)."""
    from prchain.verdicts import harbor
    from tests.support.harbor import (
        every_variant,
        remove_harbor_images,
        room_stage,
        run_oracle,
        solve_sh,
        variant,
        verdicts,
    )

    # on the image with an older prchain's reporters: the task's own reporters are what run
    rooms = [stale_room, _jest(node_room), _vitest(node_room)] if every_variant() else [stale_room]
    tasks, chains = tmp_path / "tasks", []
    for chain_id, room in enumerate(rooms, start=1):
        stage = room_stage(docker_client, room, "Add `area(r)`: three times r squared.")
        chains.append({"chain_id": chain_id, "repo": room.repo, "stages": [stage]})
    written = harbor.write(chains, tasks, timeout=300, cap=1 << 20).written
    node = written[0]
    variant(tasks / node, "forged", solve_sh({"src/shapes.js": FORGE}))
    expected = {node: 1.0, f"{node}-forged": 0.0}
    if every_variant():
        jest, vitest = written[1], written[2]
        planted = {".gitignore": "/node_modules/\n", "src/shapes.js": WRONG, PLANT: FAKE_CHAI}
        variant(tasks / node, "planted", solve_sh(planted))
        variant(tasks / jest, "setup", solve_sh({"src/shapes.js": WRONG, SETUP: FAKE_EXPECT}))
        variant(tasks / vitest, "forged", solve_sh({"src/shapes.js": FORGE}))
        expected |= {f"{node}-planted": 0.0, jest: 1.0, f"{jest}-setup": 0.0}
        expected |= {vitest: 1.0, f"{vitest}-forged": 0.0}
    try:
        rewards = run_oracle(tasks, tmp_path / "jobs")
        output = rewards.pop("_output")
        assert rewards == {f"prchain/{name}": r for name, r in expected.items()}, output
        assert verdicts(tmp_path / "jobs")[node]["resolved"]
        if every_variant():
            dropped = verdicts(tmp_path / "jobs", "dropped.txt")
            assert PLANT in dropped[f"{node}-planted"] and SETUP in dropped[f"{jest}-setup"]
    finally:
        remove_harbor_images(tasks)
