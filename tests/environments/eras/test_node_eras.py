"""Acceptance: Node eras from the npm registry, on a made-up history spanning two of them.

`mimer` (tests/support/node_repo.py) calls mime 1's `lookup` on Node 18 with mocha in 2023 and
mime 2's `getType` on Node 20 with `node --test` in 2024. `prchain env setup` builds both eras from
the registry (two toolchain layers, a dated install and an `npm ci`) and verifies them;
`tests verify` finds each PR's FAIL_TO_PASS under its runner's ids; then a sandbox walks the chain
#1 → #2 as an agent would: offline, it runs the era's tests on a change of its own, which the move
to the second era's image carries across, where the other runner runs it again.
"""

from __future__ import annotations

import contextlib
import json
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from prchain.agent.tasks import load_chain
from prchain.app.envsetup import era_stages
from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.environments.config import EnvironmentConfig
from prchain.environments.docker_env import DockerEnvironment
from prchain.llm.config import LLMConfig
from prchain.store.db import session_scope
from prchain.store.models import Chain, ChainStage
from prchain.store.opener import make_engine
from tests.support.era_runs import (
    gold_resolves_in_tasks_eval,
    gold_rollout,
    invoke,
    recipes_by_pr,
    remove_repo_images,
    verdicts_by_pr,
    write_config,
)
from tests.support.node_repo import (
    HEADER,
    make_built,
    make_mimer,
    make_old_mocha,
    make_sampled,
)
from tests.support.planted import patch_of

pytestmark = [pytest.mark.docker, pytest.mark.slow]
REPO = f"node-eras-test-{uuid.uuid4().hex[:8]}/mimer"  # images are this session's own
# The agent's own module and test (under mocha and node:test alike, as the repository's).
KINDS = "exports.kindOf = (file) => file.split('.').pop().toUpperCase();\n"
KINDS_TEST = (
    HEADER + "const { kindOf } = require('../lib/kinds');\n\n"
    "describe('kindOf', () => {\n  it('shouts the extension', () => {\n"
    "    assert.strictEqual(kindOf('a.md'), 'MD');\n  });\n});\n"
)
REACH_REGISTRY = (
    "node -e \"require('https').get('https://registry.npmjs.org', () => console.log('online'))"
    ".on('error', (e) => console.log('offline', e.code))\""
)


@pytest.fixture(scope="module")
def own_images(docker_client: Any) -> Iterator[None]:
    """Remove, afterwards, only the images this module built (labelled with its made-up repo)
    and its repository's npm cache volume; the toolchain layers are shared by recipe and stay,
    like the suite's base."""
    yield
    remove_repo_images(docker_client, REPO)


def _config(tmp_path: Path) -> Path:
    return write_config(
        tmp_path,
        {"suites": {"bookworm": "3.11"}, "extra_base_packages": []},  # the base CI has
    )


@dataclass
class Mimer:
    """The chain #1 → #2 mined, built, its two eras set up and its tests verified (once)."""

    clone: Path
    work: Path
    common: list[str]
    url: str
    setup: str


@pytest.fixture(scope="module")
def mimer(tmp_path_factory: pytest.TempPathFactory, own_images: None, base_image: str) -> Mimer:
    work = tmp_path_factory.mktemp("node-eras")
    clone = make_mimer(work / "mimer")
    url = f"sqlite:///{work / 'prchain.db'}"
    common = ["--config", str(_config(work)), "--db", url]
    assert invoke("mine", "--source", "git", "--name", REPO, str(clone), *common).exit_code == 0
    built = invoke(
        "chains", "build", "--strategy", "temporal", "--min-len", "2", "--max-len", "2", *common
    )
    assert built.exit_code == 0, built.output
    setup = invoke("env", "setup", *common)
    invoke("tests", "verify", "--gold-runs", "1", *common)
    return Mimer(clone, work, common, url, setup.output)


def test_two_node_eras_verify_and_a_chain_crosses_them(mimer: Mimer, docker_client: Any) -> None:
    clone, tmp_path, sqlite_url = mimer.clone, mimer.work, mimer.url
    assert "2 eras for 2 stages: 2 verified (2 by planner)" in mimer.setup, mimer.setup
    recipes = recipes_by_pr(sqlite_url)
    assert [recipes[n].interpreter for n in (1, 2)] == ["18.20.8", "20.20.2"]
    assert recipes[1].test_command == "node_modules/.bin/mocha"
    assert recipes[2].test_command == "node --test"
    assert recipes[1].verification["passed"] == 1 and recipes[2].verification["passed"] == 2
    assert "npm ci" in recipes[2].commands

    verdicts = verdicts_by_pr(sqlite_url)
    assert verdicts[1].fail_to_pass == ["test/label.test.js::label > names the type"]
    assert verdicts[2].fail_to_pass == ["test/text.test.js::isText > says css is text"]

    engine = make_engine(sqlite_url)
    with session_scope(engine) as session:
        chain_id = session.scalars(select(Chain.id)).one()
        for stage in session.scalars(select(ChainStage)):  # what `queries build` would write
            stage.query = f"Stage {stage.idx}: add what the tests ask for."
    config = EnvironmentConfig(log_dir=str(tmp_path / "logs"))
    config, specs = era_stages(config, engine, load_chain(engine, chain_id))
    assert specs[0].image != specs[1].image  # two eras, two sandbox images
    env = DockerEnvironment(
        config, repo=REPO, clone_path=str(clone), stages=specs, client=docker_client
    )
    with env:
        assert not env.enter_stage(1).setup_error
        _write_kinds(env)
        first = env.execute(specs[0].test_command, timeout=120)
        assert first.exit_code == 0 and "2 passing" in first.output, first.output
        assert env.execute(REACH_REGISTRY, timeout=60).output.startswith("offline")

        moved = env.enter_stage(2)  # a new container of the second era's image
        assert moved.applied and not moved.setup_error
        assert env.execute("cat lib/kinds.js").output == KINDS
        second = env.execute(f"{specs[1].test_command} test/kinds.test.js", timeout=120)
        assert second.exit_code == 0 and "shouts the extension" in second.output, second.output
        assert env.execute("node --version").output.strip() == "v20.20.2"
        assert "node_modules" not in env.cumulative_patch().decode()


def test_the_gold_patches_resolve_in_tasks_eval_and_in_a_rollouts_clean_room(
    mimer: Mimer, fake_llm: ScriptedLLMServer, llm_config: LLMConfig
) -> None:
    """Gold before attack: the Node room's verdicts are trusted only if the real change passes
    them, on the file alone (`tasks eval`) and in a rollout, each stage in its own era."""
    out = gold_resolves_in_tasks_eval(mimer.common, mimer.work)
    assert "2 of 2 stages resolved; 1 of 1 chain resolved throughout" in out, out
    assert _forged_mocha_report_status(mimer).startswith("unresolved")
    stages = gold_rollout(mimer.common, mimer.url, llm_config, fake_llm)
    assert stages == [(1, True, []), (2, True, [])], stages


def _write_kinds(env: DockerEnvironment) -> None:
    for path, text in (("lib/kinds.js", KINDS), ("test/kinds.test.js", KINDS_TEST)):
        env.execute(f"mkdir -p {Path(path).parent} && cat > {path} <<'EOF'\n{text}EOF")


# Issue 77, a forged mocha report: mocha's reporter writes its report in the tested process at the
# run's end, to the path its environment gives it (PRCHAIN_NODE_REPORT, the tested process's
# too). Stage 1's `label` writes a report of its hidden test passing there and ends the process
# before its assertion fails; on the code before (no canary for mocha) the stage resolved.
FORGED_LABEL = """const fs = require('fs');
const path = require('path');

exports.label = () => {
  const output = process.env.PRCHAIN_NODE_REPORT;
  const passed = { ancestorTitles: ['label'], title: 'names the type', status: 'passed',
    failureMessages: [] };
  const file = path.join(__dirname, '..', 'test', 'label.test.js');
  const report = { testResults: [{ name: file, status: 'passed', message: '',
    assertionResults: [passed] }] };
  if (output) fs.writeFileSync(output, JSON.stringify(report));
  process.exit(0);
};
"""


def _forged_mocha_report_status(mimer: Mimer) -> str:
    """`tasks eval --predictions` of stage 1 (mocha) with the forged `label`: its status."""
    tasks = mimer.work / "tasks.jsonl"  # written by gold_resolves_in_tasks_eval
    [chain] = [json.loads(line) for line in tasks.read_text().splitlines() if line.strip()]
    first = chain["stages"][0]
    forged = mimer.work / "forged"
    forged.mkdir()
    patch = patch_of(mimer.clone, first["base_commit"], {"lib/label.js": FORGED_LABEL}, forged)
    predictions = forged / "predictions.jsonl"
    row = {"instance_id": first["instance_id"], "model_patch": patch, "model_name_or_path": "x"}
    predictions.write_text(json.dumps(row) + "\n")
    results = forged / "results.jsonl"
    out = invoke(
        "tasks", "eval", str(tasks), "--predictions", str(predictions), "--chain",
        str(chain["chain_id"]), "--results", str(results), *mimer.common,
    )  # fmt: skip
    rows = [json.loads(line) for line in results.read_text().splitlines() if line.strip()]
    [found] = [r for r in rows if r["instance_id"] == first["instance_id"]]
    return str(found["status"]) + " " + out.output


@contextlib.contextmanager
def _one_stage(
    tmp_path: Path, docker_client: Any, name: str, make: Callable[[Path], Path]
) -> Iterator[tuple[str, list[str], str]]:
    """A one-PR history made by `make`, mined, its single stage's era set up: (store URL, CLI
    options, env setup's output). Its images are removed afterwards."""
    repo = f"node-{name}-test-{uuid.uuid4().hex[:8]}/{name}"
    clone = make(tmp_path / name)
    url = f"sqlite:///{tmp_path / 'prchain.db'}"
    common = ["--config", str(_config(tmp_path)), "--db", url]
    try:
        assert invoke("mine", "--source", "git", "--name", repo, str(clone), *common).exit_code == 0
        built = invoke(
            "chains", "build", "--strategy", "single", "--min-len", "1", "--max-len", "1", *common
        )
        assert built.exit_code == 0, built.output
        yield url, common, invoke("env", "setup", *common).output
    finally:
        remove_repo_images(docker_client, repo)


def test_a_project_whose_tests_load_its_build_builds_in_each_stage(
    tmp_path: Path, base_image: str, docker_client: Any
) -> None:
    """Its `pretest` builds build/ from src/, which the tests load: the stage's setup runs it, so
    the era verifies and the PR's new test fails before its code and passes after (a stage whose
    checkout was never built found no build/shout.js)."""
    with _one_stage(tmp_path, docker_client, "shout", make_built) as (url, common, setup):
        recipe = recipes_by_pr(url)[1]
        assert recipe.status == "verified", setup
        assert "the project's build its tests load runs per stage: npm run pretest" in recipe.notes
        assert invoke("tests", "verify", "--gold-runs", "1", *common).exit_code == 0
        found = verdicts_by_pr(url)[1]
        assert found.fail_to_pass == ["test/whisper.test.js::whisper"], found.runs
        assert found.runs["exit_codes"] == [0, 1, 0], found.runs  # the base ran no test file


def test_a_sampled_file_that_does_not_load_is_left_out_of_the_sample(
    tmp_path: Path, base_image: str, docker_client: Any
) -> None:
    """eslint/eslint (held out): mocha, given no files, finds none, so the era is verified on a
    sample of its test files; a sampled bundle that needs a browser stopped mocha before any test
    ran (2 of its 9 eras unverified). The sample runs again without it, and the recipe names it.
    Each test file's first hook takes 2.5 s, as hexojs/hexo's `hexo.init()` did loaded cold (held
    out: with mocha's default 2 s its two stages had no test that passed): the project names no
    time of its own, so mocha gets prchain's."""
    with _one_stage(tmp_path, docker_client, "sampled", make_sampled) as (url, common, setup):
        recipe = recipes_by_pr(url)[1]
        assert recipe.status == "verified", setup
        assert recipe.notes[-1] == (
            "verified on the stage's 0 test files and 1 others of B_t (the whole suite found no "
            "test file by itself); sampled files left out, they did not load: "
            "tests/performance/bundle.js"
        ), recipe.notes
        assert invoke("tests", "verify", "--gold-runs", "1", *common).exit_code == 0
        found = verdicts_by_pr(url)[1]
        wanted = ["tests/lib/whisper.js::whisper > changes the case"]
        assert found.fail_to_pass == wanted, found.runs


def test_a_mocha_of_2014_writes_its_report(
    tmp_path: Path, base_image: str, docker_client: Any
) -> None:
    """mocha before 2.2 takes no `--reporter-options` (eslint/eslint's eras of 2013-2014, held
    out: "error: unknown option `--reporter-options'", no test ran): the report's path comes in
    the environment. Given no files it found none and said "0 passing": the era is verified on
    a sample, as a later mocha's "No test files found" is."""
    with _one_stage(tmp_path, docker_client, "old", make_old_mocha) as (url, common, setup):
        recipe = recipes_by_pr(url)[1]
        assert recipe.status == "verified", setup
        assert recipe.notes[-1].startswith("verified on the stage's 0 test files and 1 others")
        assert invoke("tests", "verify", "--gold-runs", "1", *common).exit_code == 0
        found = verdicts_by_pr(url)[1]
        wanted = ["tests/lib/whisper.js::whisper > changes the case"]
        assert found.fail_to_pass == wanted, found.runs
