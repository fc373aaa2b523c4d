"""A test patch that does not compile without the gold code takes its whole unit down; only the
tests it adds or changes are FAIL_TO_PASS, the unit's others PASS_TO_PASS (classify.py, touched.py).

Real runs of the host's go on a real git history: the start, the gold test patch alone (the package
does not build: the patch calls `Farewell`, which only the gold code adds) and the gold patch, read
by the Go room's reader as `tests verify` reads them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from environments.eras.go.report import GoTest
from prchain.dev.repos import git
from prchain.verdicts.classify import classify
from prchain.verdicts.touched import touched_by

pytestmark = pytest.mark.skipif(shutil.which("go") is None, reason="no go on this host")
PKG = "example.com/greeter"
CODE = 'package greeter\n\n// Welcome greets.\nfunc Welcome(n string) string { return "hi " + n }\n'
FAREWELL = (
    '\n// Farewell says goodbye.\nfunc Farewell(n string) string { return Welcome(n) + ", bye" }\n'
)


def _test(name: str, call: str, want: str) -> str:
    return (
        f"func {name}(t *testing.T) {{\n\tif got := {call}; got != {want!r} {{\n"
        '\t\tt.Fatalf("got %q", got)\n\t}\n}\n'
    ).replace("'", '"')


BASE_TESTS = 'package greeter\n\nimport "testing"\n\n' + "\n".join(
    [
        _test("TestWelcome", 'Welcome("ada")', "hi ada"),
        _test("TestEmpty", 'Welcome("")', "hi "),
        _test("TestShort", 'Welcome("b")', "hi b"),
    ]
)
# The test patch changes TestShort to call Farewell and adds TestFarewell in a file of its own.
NEW_TESTS = BASE_TESTS.replace('Welcome("b"); got != "hi b"', 'Farewell("b"); got != "hi b, bye"')
FAREWELL_TEST = 'package greeter\n\nimport "testing"\n\n' + _test(
    "TestFarewell", 'Farewell("ada")', "hi ada, bye"
)


def _commit(repo: Path, files: dict[str, str], message: str) -> str:
    for path, text in files.items():
        (repo / path).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)
    return git(repo, "rev-parse", "HEAD")


def _patches(repo: Path) -> tuple[str, str, str]:
    """(base, gold code patch, gold test patch) of a one-PR history."""
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    base = _commit(
        repo,
        {"go.mod": f"module {PKG}\n\ngo 1.21\n", "greeter.go": CODE, "greeter_test.go": BASE_TESTS},
        "start",
    )
    _commit(
        repo,
        {
            "greeter.go": CODE + FAREWELL,
            "greeter_test.go": NEW_TESTS,
            "farewell_test.go": FAREWELL_TEST,
        },
        "Add a farewell (#1)",
    )

    def diff(*paths: str) -> str:
        done = subprocess.run(
            ["git", "diff", base, "HEAD", "--", *paths],
            cwd=repo,
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout

    code, tests = diff("greeter.go"), diff("greeter_test.go", "farewell_test.go")
    git(repo, "checkout", "-q", base)
    return base, code, tests


def _run(repo: Path) -> dict[str, str]:
    reader, report = GoTest(), repo.parent / "report.json"
    env = {**os.environ, "GOFLAGS": "-mod=mod", "GOPROXY": "off", "GOTOOLCHAIN": "local"}
    done = subprocess.run(
        ["bash", "-c", reader.script("go test ./...", str(report))],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    return reader.parse(report.read_text() if report.exists() else None, done.stdout + done.stderr)


def _apply(repo: Path, patch: str) -> None:
    subprocess.run(["git", "apply", "-"], cwd=repo, input=patch, text=True, check=True)


def test_only_the_tests_a_patch_adds_or_changes_are_fail_to_pass(tmp_path: Path) -> None:
    repo = tmp_path / "greeter"
    _, code, tests = _patches(repo)
    start = _run(repo)
    _apply(repo, tests)
    with_tests = _run(repo)
    assert with_tests == {PKG: "error"}  # the package did not build: Farewell is undefined
    _apply(repo, code)
    gold = _run(repo)

    found = classify(start, with_tests, [gold], touched_by(tests, GoTest().names))
    assert found.status == "usable"
    assert found.fail_to_pass == [f"{PKG}::TestFarewell", f"{PKG}::TestShort"]
    assert found.pass_to_pass == [f"{PKG}::TestEmpty", f"{PKG}::TestWelcome"]
    assert found.why == {
        f"{PKG}::TestEmpty": "passed at the start; the test patch does not touch it",
        f"{PKG}::TestFarewell": "new: not at the start either",
        f"{PKG}::TestShort": "touched by the test patch: TestShort",
        f"{PKG}::TestWelcome": "passed at the start; the test patch does not touch it",
    }
