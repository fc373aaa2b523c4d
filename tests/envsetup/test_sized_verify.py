"""Verification sized to the stage: a whole suite too big for the sandbox (killed for memory) is
replaced by the stage's own test files plus a bounded, fixed sample, and the recipe says so.

The sample is checked on a real repository made here; the end-to-end test runs `prchain env setup`
on a repository whose suite holds a test that needs more memory than the verification sandbox
has (`eras.verify_limits`), in real containers."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from sqlalchemy import select

from prchain.cli import main
from prchain.dev.repos import git
from prchain.environments.eras.config import ErasConfig, VerifyLimits
from prchain.environments.eras.python.report import Pytest
from prchain.setup.ladder import _not_whole, sized_sample
from prchain.store.db import session_scope
from prchain.store.models import EnvRecipe
from prchain.store.opener import make_engine
from prchain.verdicts.sandbox import SuiteRun
from prchain.verdicts.verify import StageJob
from tests.support.era_runs import offline_eras, remove_repo_images
from tests.support.fake_index import FakeIndex

REPO = f"py51-sized-{uuid.uuid4().hex[:8]}/hog"
HOG = "def test_hog():\n    block = b'x' * (600 * 2**20)\n    assert block\n"
OK = "def test_ok():\n    assert 1 + 1 == 2\n"


def _repository(path: Path, others: int, hog: str = HOG) -> Path:
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    files = {"app/__init__.py": "", "tests/test_ok.py": OK, "tests/test_hog.py": hog}
    files |= {f"tests/test_more_{i}.py": OK.replace("ok", f"more_{i}") for i in range(others)}
    files["tests/helpers.py"] = "X = 1\n"  # no test module: never sampled
    for rel, text in files.items():
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        (path / rel).write_text(text)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "Start", date="2024-02-01T12:00:00Z")
    (path / "tests/test_ok.py").write_text(OK + "\n\ndef test_two():\n    assert 2\n")
    (path / "tests/test_new.py").write_text(OK)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "Add a check (#1)\n\nMore.", date="2024-03-01T12:00:00Z")
    return path


def _job(clone: Path) -> StageJob:
    """The PR's stage: its test patch is the commit's change under tests/."""
    return _job_of(clone, "tests")


def _job_of(clone: Path, tests: str) -> StageJob:
    base = git(clone, "rev-parse", "HEAD~1")
    patch = git(clone, "diff", "HEAD~1", "HEAD", "--", tests) + "\n"
    return StageJob(1, 1, 1, 1, REPO, str(clone), base, "", patch)


def test_the_sample_is_the_stages_files_then_a_fixed_bounded_few(tmp_path: Path) -> None:
    clone = _repository(tmp_path / "repo", others=6)
    # The stage changes test_ok.py and adds test_new.py (absent at B_t: not run there).
    job = _job(clone)
    own, others = sized_sample(job, Pytest(), 3)
    assert own == ["tests/test_ok.py"] and len(others) == 3
    assert not {"tests/test_new.py", "tests/helpers.py", "tests/test_ok.py"} & set(others)
    assert sized_sample(job, Pytest(), 3) == (own, others)  # the same sample on every run
    assert len(sized_sample(job, Pytest(), 100)[1]) == 7  # every other test module, once
    assert sized_sample(job, Pytest(), 0) == (own, [])


def test_in_a_monorepo_the_sample_stays_in_the_modules_the_suite_names(tmp_path: Path) -> None:
    """`go test ./plugins/a/...` is the era's suite: another module's test packages are not in
    its image (and outside its workspace), so none is sampled."""
    from prchain.environments.eras.go.report import GoTest

    clone = tmp_path / "mono"
    clone.mkdir()
    git(clone, "init", "-q", "-b", "main")
    test = 'package x\n\nimport "testing"\n\nfunc TestX(t *testing.T) {}\n'
    files = {f"plugins/{m}/test{i}/x_test.go": test for m in ("a", "b") for i in range(3)}
    for rel, text in {**files, "plugins/a/go.mod": "", "plugins/b/go.mod": ""}.items():
        (clone / rel).parent.mkdir(parents=True, exist_ok=True)
        (clone / rel).write_text(text)
    git(clone, "add", "-A")
    git(clone, "commit", "-q", "-m", "Start", date="2024-02-01T12:00:00Z")
    (clone / "plugins/a/test0/x_test.go").write_text(test + "\nfunc TestY(t *testing.T) {}\n")
    git(clone, "commit", "-q", "-am", "More (#1)", date="2024-03-01T12:00:00Z")
    job = _job_of(clone, "plugins")
    own, others = sized_sample(job, GoTest(), 10, "go test ./plugins/a/...")
    assert own == ["./plugins/a/test0"]
    assert others and all(o.startswith("./plugins/a/") for o in others)
    assert len(sized_sample(job, GoTest(), 10, "go test ./...")[1]) == 5  # the whole tree


def test_limits_per_repository_fall_back_to_the_eras_defaults() -> None:
    config = ErasConfig(
        verify_memory="3g", verify_limits={"a/b": VerifyLimits(memory="8g", timeout=60)}
    )
    assert config.verify_limit("a/b") == VerifyLimits(memory="8g", timeout=60)
    assert config.verify_limit("c/d") == VerifyLimits(memory="3g", timeout=900)


@pytest.fixture
def own_images(docker_client: Any) -> Iterator[None]:
    yield
    remove_repo_images(docker_client, REPO)


def _setup(
    tmp_path: Path, clone: Path, sqlite_url: str, environment: Any = None, **eras: Any
) -> EnvRecipe:
    """`mine`, `chains build` and `env setup` as a user runs them; the one recipe stored."""
    with FakeIndex([]) as index:
        config = offline_eras(index.url, **eras)
        path = tmp_path / "prchain.yaml"
        settings = {"eras": config, "chains": {"min_chain_code_lines": 0}}
        path.write_text(yaml.safe_dump(settings | {"environment": environment or {}}))
        common = ["--config", str(path), "--db", sqlite_url]
        for args in (
            ["mine", "--source", "git", "--name", REPO, str(clone)],
            ["chains", "build", "--strategy", "single", "--min-len", "1", "--max-len", "1"],
            ["env", "setup"],
        ):
            CliRunner().invoke(main, [*args, *common], catch_exceptions=False)
    with session_scope(make_engine(sqlite_url)) as session:
        recipe = session.scalars(select(EnvRecipe)).one()
        session.expunge_all()
    return recipe


@pytest.mark.docker
@pytest.mark.slow
def test_a_suite_killed_for_memory_is_verified_on_the_stages_files(
    tmp_path: Path, own_images: None, base_image: str, sqlite_url: str, docker_client: Any
) -> None:
    clone = _repository(tmp_path / "repo", others=0)
    limits = {"verify_sample": 0, "verify_limits": {REPO: {"memory": "300m"}}}
    recipe = _setup(tmp_path, clone, sqlite_url, **limits)
    assert recipe.status == "verified" and recipe.verification["passed"] == 1
    # The recipe keeps its image's size, as the engine counts it (shared layers in).
    assert recipe.image_bytes == docker_client.api.inspect_image(recipe.image)["Size"] > 0
    (attempt,) = recipe.verification["attempts"]
    assert recipe.notes[-1] == (
        "verified on the stage's 1 test files and 0 others of B_t "
        "(the whole suite was killed at the memory limit)"
    )
    assert attempt["scope"] in recipe.notes[-1]


@pytest.mark.docker
@pytest.mark.slow
def test_a_suite_that_passes_too_little_says_how_little_and_its_first_failure(
    tmp_path: Path, own_images: None, base_image: str, sqlite_url: str
) -> None:
    """python-dotenv 2016: 4 of 6 passed, no exception to name; the era's reason was empty."""
    bad = "def test_b1():\n    assert 0\n\n\ndef test_b2():\n    assert 0\n"
    clone = _repository(tmp_path / "repo", others=0, hog=bad)
    recipe = _setup(tmp_path, clone, sqlite_url)
    assert recipe.status == "unverified"
    assert recipe.root_error.startswith("1 of 3 tests passed (under eras.pass_share 0.8); first: ")
    assert "tests/test_hog.py::test_b1" in recipe.root_error


@pytest.mark.docker
@pytest.mark.slow
def test_a_run_stopped_at_its_time_limit_counts_the_tests_it_finished(
    tmp_path: Path, own_images: None, base_image: str, sqlite_url: str
) -> None:
    """numpy's sized verification ran past its limit and counted nothing: the killed pytest wrote
    no report. Interrupted first, it reports what it finished, and the recipe says where it
    stopped."""
    sleeper = "import time\n\n\ndef test_sleeps():\n    time.sleep(600)\n"
    clone = _repository(tmp_path / "repo", others=0, hog=sleeper)
    limits = {"verify_sample": 1, "verify_limits": {REPO: {"timeout": 20}}}
    recipe = _setup(tmp_path, clone, sqlite_url, **limits)
    assert recipe.status == "verified", recipe.root_error
    # the stage's own file ran first (test_two is the PR's), then the sampled sleeper, interrupted
    said = f"{recipe.notes}\n{recipe.log[-4000:]}"  # the run itself, should the count be off
    assert recipe.verification["passed"] == 1 and recipe.verification["failed"] == 0, said
    assert recipe.notes[-1] == (
        "verified on the stage's 1 test files and 1 others of B_t "
        "(the whole suite ran past its time limit), stopped at its 20 s limit; tests finished: 1"
    )


def test_a_full_disk_that_left_no_report_sends_verification_to_the_sample() -> None:
    full = "OSError: [Errno 28] No space left on device\n"
    assert _not_whole(SuiteRun(exit_code=1, output_tail=full)) == "filled the sandbox's disk"
    # a test of the suite's own that met a full disk is one outcome among others, counted
    assert _not_whole(SuiteRun({"t.py::t": "failed"}, exit_code=1, output_tail=full)) == ""


# Passes after filling the directory it is given (the tmpfs /tmp of a sandbox) to the last byte.
FILLER = """import errno


def test_fills_tmp(tmp_path):
    block = b"x" * 2**20
    with open(tmp_path / "big", "wb") as out:
        try:
            while True:
                out.write(block)
                out.flush()
        except OSError as error:
            assert error.errno == errno.ENOSPC
"""


@pytest.mark.docker
@pytest.mark.slow
def test_a_suite_that_filled_the_sandboxs_disk_is_verified_on_the_stages_files(
    tmp_path: Path, own_images: None, base_image: str, sqlite_url: str
) -> None:
    """numpy 2024's whole suite ran to its end and filled the sandbox's /tmp with its tests'
    files; pytest could not write its report there, nothing was counted and the era stayed
    unverified ('OSError: [Errno 28] No space left on device') after 23 minutes of tests."""
    clone = _repository(tmp_path / "repo", others=0, hog=FILLER)
    small = {"disk_cap": "tmpfs", "scratch_limit": "32m"}
    recipe = _setup(tmp_path, clone, sqlite_url, small, verify_sample=0)
    assert recipe.status == "verified", recipe.root_error
    assert recipe.verification["passed"] == 1
    assert recipe.notes[-1] == (
        "verified on the stage's 1 test files and 0 others of B_t "
        "(the whole suite filled the sandbox's disk)"
    )


def test_a_runner_that_found_no_test_file_runs_the_stage_s_own() -> None:
    """eslint/eslint (held out): its suite is handed to mocha by Makefile.js; mocha given no
    files looks in ./test, and every era stopped at "No test files found"."""
    said = 'Error: No test files found: "test"\n'
    assert _not_whole(SuiteRun(exit_code=1, output_tail=said)) == "found no test file by itself"
    old = "Error: cannot resolve path (or pattern) 'test'\n"  # mocha 3's words
    assert _not_whole(SuiteRun(exit_code=1, output_tail=old)) == "found no test file by itself"
    assert _not_whole(SuiteRun({"t.js::t": "passed"}, exit_code=0, output_tail=said)) == ""
    oldest = "\n\n  0 passing (2ms)\n\n"  # mocha 1.21 (eslint's eras of 2013-2014), exit 0
    assert _not_whole(SuiteRun(exit_code=0, output_tail=oldest)) == "found no test file by itself"
    assert _not_whole(SuiteRun(exit_code=0, output_tail="  10 passing (2ms)\n")) == ""
