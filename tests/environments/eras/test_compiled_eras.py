"""Acceptance: a Python project with a C extension, on a made-up history spanning two eras.

`fastsum` (tests/support/cext_repo.py) computes in C, with a header from a git submodule whose
GitHub URL is unreachable and which a local mirror serves (`eras.git_mirrors`). Its suite base has no
compiler (`extra_base_packages: []`), so the toolchain layer must bring one. `prchain env setup`
verifies both eras: the extension is built per stage, in place, from the stage's own tree (the
project itself is never in the image). `prchain tests verify` finds each PR's new C function's
test FAIL_TO_PASS: the gold patch's C change is compiled before the gold run. Last, an agent's edit
to the `.c` file in its sandbox changes what the tests see once the per-stage build runs again, and
in the clean room of the hidden tests, which builds the agent's C itself.
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
from tests.support.cext_repo import MATHLIB_URL, make_fastsum, make_mathlib
from tests.support.era_runs import (
    invoke,
    recipes_by_pr,
    remove_repo_images,
    stage_specs,
    verdicts_by_pr,
    write_config,
)

pytestmark = [pytest.mark.docker, pytest.mark.slow]
REPO = f"cext-eras-test-{uuid.uuid4().hex[:8]}/fastsum"


@pytest.fixture(scope="module")
def own_images(docker_client: Any) -> Iterator[None]:
    """Remove, afterwards, only the images this module built and its build-cache volume."""
    yield
    remove_repo_images(docker_client, REPO, ("repo", "era", "sandbox"))


def test_a_c_extension_is_built_per_stage_from_the_agents_tree(
    tmp_path: Path, own_images: None, base_image: str, sqlite_url: str
) -> None:
    mathlib = make_mathlib(tmp_path / "mathlib.git")
    clone = make_fastsum(tmp_path / "fastsum", mathlib)
    eras = {
        "suites": {"bookworm": "3.11"},
        "extra_base_packages": [],  # no compiler in the suite's base: the toolchain layer's
        "git_mirrors": {MATHLIB_URL: str(mathlib)},
    }
    common = ["--config", str(write_config(tmp_path, eras)), "--db", sqlite_url]
    assert invoke("mine", "--source", "git", "--name", REPO, str(clone), *common).exit_code == 0
    built = invoke(
        "chains", "build", "--strategy", "single", "--min-len", "1", "--max-len", "1", *common
    )
    assert built.exit_code == 0, built.output

    setup = invoke("env", "setup", *common)
    # The 2024 era may reuse the 2023 image (recipe memory): its stage builds its own extension.
    assert "2 eras for 2 stages: 2 verified" in setup.output, setup.output
    recipes = recipes_by_pr(sqlite_url)
    assert recipes[1].era_key != recipes[2].era_key
    assert recipes[1].setup_command == "prchain-build", recipes[1].setup_command
    assert recipes[2].verification["passed"] == 2  # test_add and test_sub, built from C
    theme = "submodule vendor/docs-theme (https://github.com/prchain-test/docs-theme.git): no "
    assert any(n.startswith(theme) for n in recipes[1].notes), recipes[1].notes

    verify = invoke("tests", "verify", "--gold-runs", "1", *common)
    verdicts = verdicts_by_pr(sqlite_url)
    assert verdicts[1].fail_to_pass == ["tests/test_sub.py::test_sub"], verify.output
    assert verdicts[2].fail_to_pass == ["tests/test_mul.py::test_mul"], verify.output

    _an_agents_edit_to_the_c_file_changes_the_outcome(clone, recipes, sqlite_url, tmp_path)


def _an_agents_edit_to_the_c_file_changes_the_outcome(
    clone: Path, recipes: dict[int, EnvRecipe], url: str, tmp_path: Path
) -> None:
    stages = stage_specs(url, recipes)[:1]
    config = EnvironmentConfig(log_dir=str(tmp_path / "logs"))  # no network: the default
    test = "python -m pytest -p no:cacheprovider tests/test_add.py 2>&1"
    with DockerEnvironment(config, repo=REPO, clone_path=str(clone), stages=stages) as env:
        entered = env.enter_stage(1)
        assert entered.setup_error == "", entered  # built, offline, as the agent
        before = env.execute(test, timeout=300)
        assert before.exit_code == 0 and "1 passed" in before.output, before.output
        source = env.read_file("fastsum/_speed.c")
        env.write_file("fastsum/_speed.c", source.replace("ml_add(a, b)", "a * b"))
        after = env.execute(f"prchain-build >/dev/null && {test}", timeout=300)
        assert after.exit_code != 0 and "assert 18 == 9" in after.output, after.output
        # The built module is no change of the agent's: the diff holds the C file only.
        patch = env.cumulative_patch()
        assert patch.decode().count("diff --git") == 1
        with env.clean_room() as room:  # the hidden tests' room builds the agent's C itself
            assert room.apply(patch) is None
            hidden = room.execute(test, timeout=300)
            assert hidden.exit_code != 0 and "assert 18 == 9" in hidden.output, hidden.output
