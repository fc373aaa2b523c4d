"""T(p̂) in a real sandbox: the hidden tests run on the agent's state, which comes back unchanged."""

from __future__ import annotations

import pytest

from prchain.chains.reading.patches import split_patch
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


def test_a_process_the_agent_left_running_cannot_fix_the_tree_under_the_hidden_tests(
    geo_env, geo_repo
) -> None:
    env = geo_env()
    env.enter_stage(1)
    tests = stage_one_tests(geo_repo)
    fixed = SHAPES_V0 + CIRCLE.replace("radius * radius", "radius ** 2")
    env.write_file("/tmp/fix.py", fixed)
    # It waits until the hidden tests are in the tree, then puts a fix in under them.
    watcher = (
        "while true; do grep -qs test_circle_area tests/test_shapes.py && "
        "cp /tmp/fix.py geo/shapes.py; sleep 0.02; done"
    )
    env.execute(f"setsid bash -c '{watcher}' >/dev/null 2>&1 </dev/null &")
    # minbase has no ps; wait (bounded) for the detached shell to show up.
    running = "cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' ' '"
    started = (
        "for i in $(seq 50); do %s | grep -q 'while true' && echo up && break; sleep 0.1; done"
    )
    assert "up" in env.execute(started % running).output  # it outlived its command
    verdict = run_tests(env, tests, timeout=120)
    assert not verdict.passed and verdict.failing == F2P
    assert "while true" not in env.execute(running).output
