"""T(p̂) in a real sandbox: the hidden tests run on the agent's state, which comes back unchanged."""

from __future__ import annotations

import pytest

from chains.patches import split_patch
from prchain.dev.repos import CIRCLE, SHAPES_V0
from prchain.verdicts.oracle import StageTests, run_tests
from prchain.verdicts.sandbox import collected_test_files, fill_command
from tests.verdicts.conftest import GEO_TEST_COMMAND

pytestmark = pytest.mark.docker

F2P = [
    "tests/test_shapes.py::test_circle_area[unit - r]",
    "tests/test_shapes.py::test_circle_area[r=2]",
]
P2P = ["tests/test_shapes.py::test_square_area"]


def stage_one_tests(geo_repo) -> StageTests:
    test_patch = split_patch(geo_repo.prs[1].gold_patch).test
    files = collected_test_files(test_patch)
    return StageTests(F2P, P2P, fill_command(GEO_TEST_COMMAND, files), files, test_patch)


def state(env) -> tuple[str, str]:
    return env.diff(), env.execute("git status --porcelain && git rev-parse HEAD").output


def test_hidden_tests_fail_on_the_start_and_pass_on_a_fix(geo_env, geo_repo) -> None:
    env = geo_env()
    env.enter_stage(1)
    tests = stage_one_tests(geo_repo)
    assert tests.test_files == ["tests/test_shapes.py"]
    before = state(env)
    verdict = run_tests(env, tests, timeout=120)
    assert not verdict.passed and verdict.failing == F2P
    assert verdict.outcomes[P2P[0]] == "passed"
    assert state(env) == before  # the test patch is gone again

    # The agent's own fix (not the gold one) and its own, broken, edit of the test file.
    env.write_file("geo/shapes.py", SHAPES_V0 + CIRCLE.replace("radius * radius", "radius ** 2"))
    env.write_file("tests/test_shapes.py", "def test_mine():\n    assert False\n")
    env.write_file("notes.txt", "untracked work\n")
    before = state(env)
    verdict = run_tests(env, tests, timeout=120)
    assert verdict.passed and verdict.failing == []
    assert "tests/test_shapes.py::test_mine" not in verdict.outcomes  # reset to the stage's version
    assert state(env) == before
    assert env.read_file("tests/test_shapes.py") == "def test_mine():\n    assert False\n"
