"""A test that fails by chance with the test patch alone is not FAIL_TO_PASS.

coreutils #10416 changes `tac` and its tests; dd's test_seek_do_not_overwrite passed on the start,
failed with the test patch alone and passed in every gold run, so `tests verify` made it
FAIL_TO_PASS of a stage that never touched dd. verify_stage now repeats the with-tests run when a
test the test patch does not touch passed on the start and fails there: passing on the repeat, it
is flaky; failing again (the patch changed a shared fixture the gold code answers), it stays.
Here a real git history and the host's pytest, run by verify_stage itself.
"""

from __future__ import annotations

from pathlib import Path

from prchain.verdicts.config import RepoTests, VerdictsConfig
from prchain.verdicts.verify import verify_stage
from tests.support.host_checkout import PYTEST, HostCheckout, one_pr_stage

SHAPES = 'UNIT = "m"\n\n\ndef square(side):\n    return side * side\n\n\ndef label(x):\n    return f"{x} {UNIT}"\n'
CUBE = "\n\ndef cube(side):\n    return side * square(side)\n"
FIXTURE = 'import pytest\n\n\n@pytest.fixture\ndef unit():\n    return "{unit}"\n'
# test_wobbly fails on the second run that collects it, and only then
TESTS = """from pathlib import Path

from geo.shapes import label, square


def test_wobbly():
    runs = Path({counter!r})
    n = int(runs.read_text()) + 1 if runs.exists() else 1
    runs.write_text(str(n))
    assert n != 2


def test_label(unit):
    assert label(2) == f"2 {{unit}}"


def test_square():
    assert square(3) == 9
"""
NEW_TEST = "\n\ndef test_cube():\n    from geo.shapes import cube\n\n    assert cube(2) == 8\n"


def test_a_test_that_fails_once_by_chance_is_flaky_and_one_failing_twice_stays(
    tmp_path: Path,
) -> None:
    tests = TESTS.format(counter=str(tmp_path / "runs"))
    start = {
        "geo/__init__.py": "",
        "geo/shapes.py": SHAPES,
        "tests/conftest.py": FIXTURE.format(unit="m"),
        "tests/test_shapes.py": tests,
    }
    pr = {  # cubes, and labels in centimetres: the fixture moves with the code
        "geo/shapes.py": SHAPES.replace('"m"', '"cm"') + CUBE,
        "tests/conftest.py": FIXTURE.format(unit="cm"),
        "tests/test_shapes.py": tests + NEW_TEST,
    }
    repo = tmp_path / "geo"
    job = one_pr_stage(repo, start, pr, "geo", "acme/geo")

    done = verify_stage(
        HostCheckout(repo),  # type: ignore[arg-type]
        job,
        RepoTests(test=PYTEST, ecosystem="python"),
        VerdictsConfig(gold_runs=1, report_path=str(tmp_path / "report.xml")),
    )

    wobbly, label = "tests/test_shapes.py::test_wobbly", "tests/test_shapes.py::test_label"
    assert done.runs["tests"][wobbly] == "failed" == done.runs["tests"][label]
    assert done.runs["tests_again"] == {label: "failed", wobbly: "passed"}
    assert done.found.status == "usable", done.found.reason
    assert done.found.flaky == [wobbly]
    assert done.found.fail_to_pass == ["tests/test_shapes.py::test_cube", label]
    assert done.found.pass_to_pass == ["tests/test_shapes.py::test_square"]
    assert (tmp_path / "runs").read_text() == "4"  # start, with tests, its repeat, gold
