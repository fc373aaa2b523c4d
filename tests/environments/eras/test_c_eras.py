"""Acceptance: C era environments on a made-up history spanning two library eras.

The `matcher` library (tests/support/c_repo.py) is built with CMake against PCRE1 in its first
era and against PCRE2 in its second, where the first era's code no longer compiles.
`prchain env setup` builds bookworm's C toolchain layer once (gcc, cmake, meson, autotools; shared
by both eras) and each era's -dev package on top; both eras verify. `prchain tests verify` then
builds and runs each stage's suite, offline, as the agent and finds each PR's new test
FAIL_TO_PASS (from ctest's JUnit). Last, an agent on a chain crossing the eras writes PR #1's
function in the first, runs the suite there and, its change carried into the second era's
container, again there, where editing one file rebuilds only that file.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from prchain.environments.config import EnvironmentConfig
from prchain.environments.docker_env import DockerEnvironment
from prchain.store.models import EnvRecipe
from tests.support.c_repo import make_matcher
from tests.support.era_runs import (
    invoke,
    recipes_by_pr,
    remove_repo_images,
    stage_specs,
    verdicts_by_pr,
    write_config,
)

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.timeout(1800)]
REPO = f"c-eras-test-{uuid.uuid4().hex[:8]}/matcher"
# The agent's own solution of PR #1's task (count_matches), with a helper of its own.
COUNT = (
    '#include "matcher.h"\n#include "count.h"\n\nint count_matches(const char *pattern, '
    "const char **texts, int n) {\n    int k = 0;\n    while (n-- > 0)\n"
    "        k += matches(pattern, texts[n]) == 1;\n    return k;\n}\n\n"
    "int twice(int n) {\n    return 2 * n;\n}\n"
)
COUNT_H = "int count_matches(const char *pattern, const char **texts, int n);\nint twice(int n);\n"


@pytest.fixture(scope="module")
def own_images(docker_client: Any) -> Iterator[None]:
    """Remove, afterwards, only the images this module built (labelled with its made-up repo)
    and its repository's build-cache volume; the toolchain layer is shared and stays."""
    yield
    remove_repo_images(docker_client, REPO, ("repo", "era", "sandbox"))


def _config(tmp_path: Path) -> Path:
    return write_config(tmp_path, {"suites": {"bookworm": "3.11"}, "extra_base_packages": []})


def test_each_c_era_builds_verifies_and_finds_its_fail_to_pass(
    tmp_path: Path, own_images: None, base_image: str, sqlite_url: str
) -> None:
    clone = make_matcher(tmp_path / "matcher")
    common = ["--config", str(_config(tmp_path)), "--db", sqlite_url]
    assert invoke("mine", "--source", "git", "--name", REPO, str(clone), *common).exit_code == 0
    built = invoke(
        "chains", "build", "--strategy", "single", "--min-len", "1", "--max-len", "1", *common
    )
    assert built.exit_code == 0, built.output

    setup = invoke("env", "setup", *common)
    assert "2 eras for 2 stages: 2 verified (2 by planner), 0 not" in setup.output, setup.output
    recipes = recipes_by_pr(sqlite_url)
    assert [recipes[n].ecosystem for n in (1, 2)] == ["c", "c"]
    assert "libpcre3-dev" in recipes[1].log and "libpcre2-dev" in recipes[2].log
    assert "ctest" in recipes[1].test_command and "bookworm" in recipes[1].notes[0]

    verify = invoke("tests", "verify", "--gold-runs", "1", *common)
    verdicts = verdicts_by_pr(sqlite_url)
    assert "ctest::test_count" in verdicts[1].fail_to_pass, verify.output
    assert "ctest::test_matches" in verdicts[1].pass_to_pass, verify.output
    assert "ctest::test_first" in verdicts[2].fail_to_pass, verify.output

    _an_agent_carries_its_change_across_the_eras(clone, recipes, sqlite_url, tmp_path)


def _an_agent_carries_its_change_across_the_eras(
    clone: Path, recipes: dict[int, EnvRecipe], url: str, tmp_path: Path
) -> None:
    stages = stage_specs(url, recipes)
    assert stages[0].image != stages[1].image
    config = EnvironmentConfig(log_dir=str(tmp_path / "logs"))  # no network: the default
    with DockerEnvironment(config, repo=REPO, clone_path=str(clone), stages=stages) as env:
        entered = env.enter_stage(1)
        assert entered.setup_error == "", entered
        env.write_file("src/count.c", COUNT)
        env.write_file("src/count.h", COUNT_H)
        first = env.execute(f"{stages[0].test_command} 2>&1", timeout=600)
        assert first.exit_code == 0, first.output
        assert "count.c.o" in first.output and "100% tests passed" in first.output

        moved = env.enter_stage(2)
        # PR #1's gold code is reverted, the agent's change applied in its place.
        assert moved.applied and moved.reverted == [1] and moved.setup_error == "", moved
        assert "int twice(int n)" in env.read_file("src/count.c")
        again = env.execute(f"{stages[1].test_command} 2>&1", timeout=600)
        assert again.exit_code == 0 and "100% tests passed" in again.output, again.output
        # The agent's next edit recompiles that one file, not the tree the setup built.
        env.write_file("src/count.c", env.read_file("src/count.c") + "\n/* again */\n")
        third = env.execute(f"{stages[1].test_command} 2>&1", timeout=600)
        assert third.exit_code == 0, third.output
        assert "count.c.o" in third.output and "matcher.c.o" not in third.output
