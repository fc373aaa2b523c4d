"""pytest's own reports of a real test module (run here in a subprocess), read both ways."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from prchain.environments.eras.python.report import (
    PYTEST_OPTIONS,
    Pytest,
    is_passing,
    junit_nodeid,
    parse_junit,
    parse_outcomes,
    parse_summary,
    summary_nodeid,
)

MODULE = """
import pytest


@pytest.fixture
def broken():
    raise RuntimeError("fixture setup fails")


@pytest.mark.parametrize("text", ["a - b", "x[1]", "plain", "caf\\u00e9"])
def test_param(text):
    assert text != "plain"


def test_ok():
    pass


def test_error(broken):
    pass


@pytest.mark.skip(reason="not here")
def test_skipped():
    pass


@pytest.mark.xfail(reason="known")
def test_expected_failure():
    assert False


@pytest.mark.xfail(reason="fixed already")
def test_unexpected_pass():
    pass


class TestGroup:
    class TestInner:
        def test_nested(self):
            pass

    @pytest.mark.parametrize("n", [1, 2], ids=["one - 1", "two"])
    def test_method(self, n):
        assert n == 1
"""

EXPECTED = {
    "pkg/test_sample.py::test_param[a - b]": "passed",
    "pkg/test_sample.py::test_param[x[1]]": "passed",
    "pkg/test_sample.py::test_param[plain]": "failed",
    "pkg/test_sample.py::test_param[caf\\xe9]": "passed",
    "pkg/test_sample.py::test_ok": "passed",
    "pkg/test_sample.py::test_error": "error",
    "pkg/test_sample.py::test_expected_failure": "xfailed",
    "pkg/test_sample.py::TestGroup::TestInner::test_nested": "passed",
    "pkg/test_sample.py::TestGroup::test_method[one - 1]": "passed",
    "pkg/test_sample.py::TestGroup::test_method[two]": "failed",
}


@pytest.fixture(scope="module")
def pytest_run(tmp_path_factory) -> tuple[str, str]:
    root = tmp_path_factory.mktemp("sample")
    (root / "pkg").mkdir()
    (root / "pkg" / "test_sample.py").write_text(MODULE)
    (root / "pkg" / "test_broken.py").write_text("import not_a_module_anywhere\n")
    report = root / "report.xml"
    env = {**os.environ, "PYTEST_ADDOPTS": PYTEST_OPTIONS.format(path=report)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "pkg"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
    )
    return report.read_text(), done.stdout


def test_junit_report_gives_node_ids_and_outcomes(pytest_run) -> None:
    found = parse_junit(pytest_run[0])
    assert {k: found[k] for k in EXPECTED} == EXPECTED
    assert found["pkg/test_sample.py::test_skipped"] == "skipped"
    assert found["pkg/test_sample.py::test_unexpected_pass"] == "passed"  # junit has no xpass
    assert found["pkg/test_broken.py"] == "error"  # the collection error, by module


def test_a_run_interrupted_at_its_time_limit_reports_what_it_finished(tmp_path) -> None:
    """SIGINT (what a sandbox's time limit sends first): pytest still writes its report, with an
    empty test case for the test it stopped; that one has no outcome."""
    began = tmp_path / "began"
    (tmp_path / "test_a.py").write_text("def test_ok():\n    pass\n")
    (tmp_path / "test_b.py").write_text(
        f"import pathlib, time\n\n\ndef test_sleeps():\n"
        f"    pathlib.Path({str(began)!r}).touch()\n    time.sleep(600)\n"
    )
    report = tmp_path / "report.xml"
    env = {**os.environ, "PYTEST_ADDOPTS": PYTEST_OPTIONS.format(path=report)}
    started = subprocess.Popen(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "test_a.py", "test_b.py"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        # a job started in the background (CI's, nohup's) inherits SIGINT ignored, and a Python
        # that starts with SIGINT ignored never raises KeyboardInterrupt
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    try:
        for _ in range(600):  # test_sleeps is running once it touched the file
            if began.exists():
                break
            time.sleep(0.1)
        started.send_signal(signal.SIGINT)
        started.wait(timeout=60)
    finally:
        started.kill()
    assert parse_junit(report.read_text()) == {"test_a.py::test_ok": "passed"}


def test_each_run_starts_with_an_empty_temporary_directory(tmp_path) -> None:
    """The reader's runs share one base directory that pytest clears as a run starts: the files a
    run left are gone when the next one runs (pytest's default keeps three runs' worth, and a
    small /tmp filled up by the third run of numpy's TestIO)."""
    (tmp_path / "test_files.py").write_text(
        "import os\n\n\ndef test_writes(tmp_path):\n"
        "    (tmp_path / os.environ['RUN']).write_bytes(b'x' * 1000)\n"
    )
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    script = Pytest().script(f"{sys.executable} -m pytest -p no:cacheprovider -q", "report.xml")
    for run in ("first", "second"):
        env = {**os.environ, "TMPDIR": str(scratch), "RUN": run}
        done = subprocess.run(["bash", "-c", script], cwd=tmp_path, env=env, check=False)
        assert done.returncode == 0
    left = sorted(p.name for p in scratch.rglob("*") if p.is_file())
    assert left == ["second"]


def test_short_summary_agrees_with_the_report(pytest_run) -> None:
    found = parse_summary(pytest_run[1])
    assert {k: found[k] for k in EXPECTED} == EXPECTED
    assert found["pkg/test_broken.py"] == "error"
    assert found["pkg/test_sample.py::test_unexpected_pass"] == "xpassed"
    assert is_passing("xpassed") and is_passing("xfailed") and not is_passing("skipped")
    assert "pkg/test_sample.py::test_skipped" not in found  # skips are listed by location only


def test_summary_is_the_fallback_when_the_report_is_missing_or_broken(pytest_run) -> None:
    report, output = pytest_run
    assert parse_outcomes(report, "") == parse_junit(report)
    assert parse_outcomes(None, output) == parse_summary(output)
    assert parse_outcomes("<testsuites><testsuite", output) == parse_summary(output)
    with pytest.raises(ValueError, match="not a junit XML report"):
        parse_junit("no xml here")


def test_summary_lines_outside_the_summary_section_are_ignored() -> None:
    output = "PASSED a.py::printed_by_a_test\n==== short test summary info ====\nFAILED t.py::x - boom\n==== 1 failed in 0.1s ====\nPASSED t.py::after\n"
    assert parse_summary(output) == {"t.py::x": "failed"}


@pytest.mark.parametrize(
    ("rest", "nodeid"),
    [
        ("t.py::test_a - AssertionError: 1 - 2", "t.py::test_a"),
        ("t.py::test_a[x - y] - boom", "t.py::test_a[x - y]"),
        ("t.py::test_a[[1, 2]] - boom", "t.py::test_a[[1, 2]]"),
        ("t.py::test_a[a[b] - boom", "t.py::test_a[a[b]"),
        ("t.py::test_a", "t.py::test_a"),
    ],
)
def test_summary_node_ids_keep_their_parameters(rest: str, nodeid: str) -> None:
    assert summary_nodeid(rest) == nodeid


def test_node_ids_without_a_file_attribute() -> None:
    case = {"classname": "testing.test_hooks.TestSpec", "name": "test_x[1]"}
    assert junit_nodeid(case) == "testing/test_hooks.py::TestSpec::test_x[1]"
    assert (
        junit_nodeid({"classname": "testing.test_hooks", "name": "t"}) == "testing/test_hooks.py::t"
    )
    assert (
        junit_nodeid({"classname": "", "name": "testing.test_broken"}) == "testing/test_broken.py"
    )


def test_the_stage_runs_its_test_modules_and_no_helper() -> None:
    """A suite named `*_tests.py` or `tests.py` (arrow 2016) is run; a helper module is not."""
    from prchain.environments.eras.python.report import Pytest

    paths = [
        "tests/test_api.py",
        "tests/parser_test.py",
        "tests/factory_tests.py",
        "markupsafe/tests.py",
        "tests/conftest.py",
        "tests/benchmark_render.py",
        "tests/fixtures/data.json",
    ]
    assert Pytest().targets(paths) == paths[:4]


def test_the_launcher_takes_the_images_modules_first_but_not_the_projects_names(
    tmp_path: Path,
) -> None:
    """(unit, a real pytest run) Issue 77, round 5: a root conftest.py puts the tree first on
    sys.path; the sealed launcher still imports a module the interpreter holds (`colorsys`) from it,
    while a name the project's tree uses (`test`, its own package, also a standard library one)
    stays the project's. Without root's list the launcher changes nothing."""
    from prchain.environments.eras.python.seal import LAUNCHER_SOURCE

    room, tree = tmp_path / "room", tmp_path / "repo"
    (tree / "test").mkdir(parents=True)
    room.mkdir()
    (room / "pytest_main.py").write_text(LAUNCHER_SOURCE)
    (tree / "conftest.py").write_text("")
    (tree / "colorsys.py").write_text("PLANTED = True\n")
    (tree / "test" / "__init__.py").write_text("")
    (tree / "test" / "test_imports.py").write_text(
        "import colorsys\nimport test\n\n\ndef test_where():\n"
        "    assert not hasattr(colorsys, 'PLANTED'), colorsys.__file__\n"
        f"    assert test.__file__.startswith({str(tree)!r}), test.__file__\n"
    )

    def run() -> subprocess.CompletedProcess[str]:
        argv = [sys.executable, str(room / "pytest_main.py"), "-q", "-p", "no:cacheprovider"]
        return subprocess.run(argv, cwd=tree, capture_output=True, text=True, timeout=120)

    (room / "own-names").write_text("conftest\ntest\ntest_imports\n")
    found = run()
    assert found.returncode == 0, found.stdout[-2000:]
    (room / "own-names").unlink()  # no list: the tree's colorsys.py answers, as before
    found = run()
    assert found.returncode == 1 and f"{tree}/colorsys.py" in found.stdout, found.stdout[-2000:]
