"""(unit) A non-Python room's verdict as a Harbor verifier runs it (prchain/verdicts/harbor_each.py
and the room's reader modules, shipped into each task under tests/lib/): the shipped reader is
prchain's own module and imports on a bare interpreter with nothing but the task's files; the
verdict is read from the clean room's scripts' output as `oracle._sealed_run` reads it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from prchain.environments.clean_room import EACH_LOG
from prchain.environments.eras.c.report import CTEST_NONE, CTests
from prchain.verdicts import harbor

LISTING = """UpdateCTestConfiguration  from :/work/.cache/c-build/DartConfiguration.tcl
Test project /work/.cache/c-build
Constructing a list of tests
Updating test list for fixtures
Added 0 tests to meet fixture requirements
Checking test dependency graph...
Checking test dependency graph end
test 1
    Start 1: test_area

1: Test command: /work/.cache/c-build/test_area
1: Working Directory: /work/.cache/c-build
1: Test timeout computed to be: 10000000
  Test #1: test_area
test 2
    Start 2: test_square

2: Test command: /work/.cache/c-build/test_square
2: Working Directory: /work/.cache/c-build
2: Test timeout computed to be: 10000000
  Test #2: test_square

Total Tests: 2
"""


def _task(tmp_path: Path, f2p: list[str], p2p: list[str]) -> Path:
    stage = {
        "idx": 1, "instance_id": "acme__shapes-1", "base_commit": "0" * 40, "patch": "x",
        "test_patch": "diff --git a/tests/test_area.c b/tests/test_area.c\n",
        "problem_statement": "Area.", "FAIL_TO_PASS": f2p, "PASS_TO_PASS": p2p,
        "environment": {
            "runnable": True, "not_runnable": "", "ecosystem": "c", "log_parser": "ctest",
            "image": "prchain/repo-acme-shapes:0", "image_id": "sha256:0", "era": "e",
            "workdir": "/work/repo", "checkout": ["true"], "setup_command": "",
            "test_command": "cmake --build /work/.cache/c-build && cd /work/.cache/c-build && ctest",
            "test_files": ["tests/test_area.c"],
        },
    }  # fmt: skip
    chain = {"chain_id": 1, "repo": "acme/shapes", "stages": [stage]}
    summary = harbor.write([chain], tmp_path / "tasks", timeout=60, cap=1 << 20)
    return tmp_path / "tasks" / summary.written[0] / "tests"


def _run(tests: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The shipped driver on this interpreter in isolated mode without site-packages: only the
    task's own files can be imported (prchain's installed package is out of reach)."""
    return subprocess.run(
        [sys.executable, "-I", "-S", str(tests / "prchain_each.py"), *args],
        capture_output=True, text=True, cwd="/",
    )  # fmt: skip


def test_the_shipped_reader_is_prchains_module_and_imports_bare(tmp_path: Path) -> None:
    tests = _task(tmp_path, ["ctest::test_area"], ["ctest::test_square"])
    shipped = tests / "lib" / "prchain" / "environments" / "eras" / "c" / "report.py"
    from prchain.environments.eras.c import report

    assert shipped.read_text() == Path(report.__file__).read_text()
    room = json.loads((tests / "room.json").read_text())
    assert room["reader"] == "prchain.environments.eras.c.report:CTests" and room["each"]
    (tmp_path / "listing").write_text(LISTING)
    done = _run(tests, "each", str(tests / "room.json"), str(tmp_path / "listing"),
                str(tmp_path / "args"), str(tmp_path / "apart"))  # fmt: skip
    assert done.returncode == 0, done.stderr
    fields = (tmp_path / "args").read_bytes().split(b"\0")[:-1]
    expected = CTests().each(LISTING, ["ctest::test_area", "ctest::test_square"])
    assert len(fields) == 9 * len(expected) == 18
    check = expected[0].check
    assert check is not None
    assert [f.decode() for f in fields[:3]] == [expected[0].directory, check.listed, check.run]
    canary, shows, never = (f.decode() for f in fields[6:9])  # root's canary: drawn per run
    assert canary.startswith("ctest -R '^") and canary != check.run
    assert (
        (shows, never) == (check.canary_shows, check.canary_never) == (CTEST_NONE, "tests passed")
    )
    assert (tmp_path / "apart").read_text() == ""


@pytest.mark.parametrize(
    ("statuses", "built", "resolved", "area"),
    [
        ("prchain-each 0 0\nprchain-each 1 0\n", "", True, "passed"),
        ("prchain-each 0 1\nprchain-each 1 0\n", "", False, "failed"),
        ("prchain-each 0 witness\nprchain-each 1 0\n", "", False, "failed"),
        ("prchain-each 0 canary\nprchain-each 1 0\n", "", False, "failed"),
        ("prchain-each 0 missing\nprchain-each 1 0\n", "", False, "missing"),
        # a line the tested program printed after the marker poses as a status: never read
        (f"prchain-each 1 0\n{EACH_LOG}\nprchain-each 0 0\n", "", False, "missing"),
    ],
)
def test_the_verdict_is_read_as_the_clean_room_reads_it(
    tmp_path: Path, statuses: str, built: str, resolved: bool, area: str
) -> None:
    tests = _task(tmp_path, ["ctest::test_area"], ["ctest::test_square"])
    verifier, work = tmp_path / "verifier", tmp_path / "work"
    verifier.mkdir()
    work.mkdir()
    (work / "listing").write_text(LISTING)
    (verifier / "build-output.log").write_text(built)
    (verifier / "each-output.log").write_text(statuses + f"{EACH_LOG}\n")
    done = _run(tests, "decide", str(tests / "room.json"), str(verifier), str(work))
    assert done.returncode == 0, done.stderr
    verdict: dict[str, Any] = json.loads((verifier / "verdict.json").read_text())
    assert verdict["resolved"] is resolved and verdict["outcomes"]["ctest::test_area"] == area
    assert (verifier / "reward.txt").read_text() == ("1\n" if resolved else "0\n")


def test_a_listing_past_the_cap_is_not_read(tmp_path: Path) -> None:
    tests = _task(tmp_path, ["ctest::test_area"], [])
    room = json.loads((tests / "room.json").read_text())
    room["max_report_bytes"] = 100
    (tests / "room.json").write_text(json.dumps(room))
    verifier, work = tmp_path / "verifier", tmp_path / "work"
    verifier.mkdir()
    work.mkdir()
    (work / "listing").write_text(LISTING)
    (verifier / "each-output.log").write_text("prchain-each 0 0\n")
    done = _run(tests, "decide", str(tests / "room.json"), str(verifier), str(work))
    assert done.returncode == 0, done.stderr
    verdict = json.loads((verifier / "verdict.json").read_text())
    assert not verdict["resolved"] and "over 100 bytes" in verdict["error"]
