"""Issue 20 finding 3: the hidden tests run in a clean room, out of the agent's hands.

Each attack ran, on the code before the clean room, in the agent's own tree as the agent, and
fooled T(p̂) or leaked the hidden tests. Here each one is tried by an agent that has not
implemented anything (or, for the leak, by an agent fishing for the tests), in a real container."""

from __future__ import annotations

import pytest

from prchain.chains.reading.patches import split_patch
from prchain.dev.repos import CIRCLE, SHAPES_V0, ChainRepo
from prchain.verdicts.oracle import StageTests, run_tests
from prchain.verdicts.sandbox import collected_test_files, fill_command

pytestmark = pytest.mark.docker

REPO = "acme/geo"
COMMAND = "python3 -m pytest -p no:cacheprovider {files}"
F2P = [
    "tests/test_shapes.py::test_circle_area[unit - r]",
    "tests/test_shapes.py::test_circle_area[r=2]",
]
P2P = ["tests/test_shapes.py::test_square_area"]
FIX = SHAPES_V0 + CIRCLE.replace("radius * radius", "radius ** 2")
# A pytest plugin that reports every test as passed.
FORCE_PASS = """
import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome, report.longrepr = "passed", None
"""
# Code that copies every test module it can find to places the agent reads in its next stage.
STEAL = """
import glob, os, shutil
for _place in ("/home/agent/stolen", "/tmp/stolen", "/work/repo/stolen"):
    try:
        os.makedirs(_place, exist_ok=True)
        for _test in glob.glob("/work/repo/tests/*.py"):
            shutil.copy(_test, _place)
    except OSError:
        pass
"""
LOOK = "cat /home/agent/stolen/* /tmp/stolen/* /work/repo/stolen/* 2>/dev/null; echo looked"


def hidden_tests(geo: ChainRepo) -> StageTests:
    patch = split_patch(geo.prs[1].gold_patch).test
    files = collected_test_files(patch)
    return StageTests(F2P, P2P, fill_command(COMMAND, files), files, patch)


def test_a_conftest_that_forces_passes_does_not_reach_the_hidden_tests(stage_one, geo) -> None:
    for place in ("conftest.py", "tests/conftest.py", "geo/conftest.py"):
        stage_one.write_file(place, FORCE_PASS)
    verdict = run_tests(stage_one, hidden_tests(geo), timeout=120)
    assert not verdict.passed and verdict.failing == F2P
    assert stage_one.read_file("conftest.py") == FORCE_PASS  # the agent's tree is untouched


def test_test_configuration_that_loads_a_plugin_is_left_out(stage_one, geo) -> None:
    stage_one.write_file("geo/plugin.py", FORCE_PASS)  # non-test code: it is applied
    stage_one.write_file(
        "setup.cfg", "[metadata]\nname = geo\n\n[tool:pytest]\naddopts = -p geo.plugin\n"
    )
    stage_one.write_file("pytest.ini", "[pytest]\naddopts = -p geo.plugin\n")
    verdict = run_tests(stage_one, hidden_tests(geo), timeout=120)
    assert not verdict.passed and verdict.failing == F2P


def test_code_that_copies_the_hidden_tests_leaves_nothing_for_the_agent(stage_one, geo) -> None:
    stage_one.write_file("geo/__init__.py", STEAL)
    stage_one.write_file("conftest.py", STEAL)
    verdict = run_tests(stage_one, hidden_tests(geo), timeout=120)
    assert not verdict.passed
    seen = stage_one.execute(LOOK).output
    assert "test_circle_area" not in seen and seen.strip().endswith("looked")
    found = stage_one.execute(
        "grep -rl test_circle_area /home/agent /tmp /work 2>/dev/null; echo searched"
    ).output
    assert found.strip() == "searched"


def test_a_git_clean_filter_watcher_cannot_fix_the_tree_under_the_hidden_tests(
    stage_one, geo
) -> None:
    stage_one.write_file("/tmp/fix.py", FIX)
    stage_one.write_file(
        "/tmp/watch.sh",
        "while true; do grep -qs test_circle_area /work/repo/tests/test_shapes.py && "
        "cp /tmp/fix.py /work/repo/geo/shapes.py; sleep 0.02; done\n",
    )
    stage_one.write_file(".gitattributes", "* filter=watch\n")
    filter_ = "sh -c 'setsid sh /tmp/watch.sh >/dev/null 2>&1 </dev/null & cat'"
    stage_one.execute(f'git config filter.watch.clean "{filter_}"')
    stage_one.diff()  # the filter runs: a watcher is alive from now on
    listing = "cat /proc/[0-9]*/cmdline 2>/dev/null | tr '\\0' ' '"
    assert "watch.sh" in stage_one.execute(listing).output
    verdict = run_tests(stage_one, hidden_tests(geo), timeout=120)
    assert not verdict.passed and verdict.failing == F2P
    assert "watch.sh" not in stage_one.execute(listing).output


def test_the_clean_room_is_another_user_with_no_agent_process(stage_one, geo) -> None:
    stage_one.write_file("geo/shapes.py", FIX)
    with stage_one.clean_room(["tests/test_shapes.py"]) as room:
        assert room.execute("id -un").output.strip() == "tester"
        assert room.execute("id -u agent").output.strip() != room.execute("id -u").output.strip()
        owners = room.execute("stat -c %U /proc/[0-9]*/ 2>/dev/null | sort -u").output.split()
        assert "agent" not in owners
        assert room.execute("test -e .git").exit_code != 0  # no repository: no config, no hooks
        assert room.apply(b"") is None
        assert room.read_file("geo/shapes.py") == SHAPES_V0  # the stage base, before the change
    verdict = run_tests(stage_one, hidden_tests(geo), timeout=120)
    assert verdict.passed and verdict.failing == []  # an honest fix still passes


def test_the_agents_git_config_cannot_move_what_crosses(stage_one) -> None:
    """Issue 77, the git-config item: with `diff.noprefix` and mnemonic prefixes in the agent's
    repository and home, the diff the crossing check read named `lib/json.py` (a nested module: it
    crosses) while the clean room's `git apply` wrote `json.py` at the root, named like the
    standard library (which never crosses). The bookkeeping's diffs are now in prchain's format:
    what is checked is what is written."""
    from prchain.verdicts.sandbox import agent_change

    stage_one.execute(
        "git config diff.noprefix true && git config diff.mnemonicPrefix true"
        " && git config --global diff.noprefix true"
    )
    stage_one.write_file("lib/json.py", "raise SystemExit('shadowed')\n")
    change = agent_change(stage_one, "python")
    assert change.patch.startswith(b"diff --git a/lib/json.py b/lib/json.py\n")
    with stage_one.clean_room([]) as room:
        assert room.apply(change.patch) is None
        assert room.execute("test -f lib/json.py && test ! -e json.py").exit_code == 0
    assert stage_one.diff().startswith("diff --git a/lib/json.py b/lib/json.py\n")


def test_a_whole_command_run_is_just_as_clean(stage_one, geo) -> None:
    from prchain.verdicts.oracle import run_command_clean

    test_patch = split_patch(geo.prs[1].gold_patch).test
    command = "python3 -m pytest -q -p no:cacheprovider tests/test_shapes.py -k 'not coin'"
    stage_one.write_file("conftest.py", FORCE_PASS)
    forced = run_command_clean(stage_one, test_patch, command, timeout=120)
    assert not forced.passed and forced.error is None and "circle_area" in forced.output
    stage_one.write_file("geo/shapes.py", FIX)
    fixed = run_command_clean(stage_one, test_patch, command, timeout=120)
    assert fixed.passed, fixed.output


# A test script the gold test patch adds, executable as git records it (json-c's `tests/*.test`,
# which ctest runs by path), and the hidden test that runs it.
SCRIPT_PATCH = (
    "diff --git a/tests/check.test b/tests/check.test\nnew file mode 100755\n"
    "--- /dev/null\n+++ b/tests/check.test\n@@ -0,0 +1,2 @@\n+#!/bin/sh\n+echo script-ran\n"
    "diff --git a/tests/test_script.py b/tests/test_script.py\nnew file mode 100644\n"
    "--- /dev/null\n+++ b/tests/test_script.py\n@@ -0,0 +1,6 @@\n+import subprocess\n+\n+\n"
    "+def test_the_script_runs():\n"
    '+    done = subprocess.run(["tests/check.test"], capture_output=True, text=True)\n'
    '+    assert done.stdout == "script-ran\\n"\n'
)


def test_a_hidden_test_script_git_made_executable_stays_executable_and_sealed(stage_one) -> None:
    """json-c #702: the seal made every hidden test file 0644, so ctest's run of the gold's new
    `tests/test_json_patch.test` was `[permission denied]` in the clean room and passed in
    `tests verify`. A hidden file git made executable is sealed 0755: root's, still runnable."""
    files = collected_test_files(SCRIPT_PATCH)
    tests = StageTests(
        ["tests/test_script.py::test_the_script_runs"], [], fill_command(COMMAND, files), files,
        SCRIPT_PATCH,
    )  # fmt: skip
    verdict = run_tests(stage_one, tests, timeout=120)
    assert verdict.passed, verdict.output_tail
    with stage_one.clean_room([]) as room:
        from prchain.verdicts.sandbox import apply_patch

        assert apply_patch(room, SCRIPT_PATCH, reset=False) is None
        room.seal_tests(["tests/check.test", "tests/test_script.py"])
        shown = room.execute("stat -c '%a %U' tests/check.test tests/test_script.py").output
        assert shown.split("\n")[:2] == ["755 root", "644 root"]
        assert room.execute("echo x >> tests/check.test").exit_code != 0  # the tester's
