"""A test patch that does not compile without the gold code takes its whole unit down; only the
tests it adds or changes are FAIL_TO_PASS, the unit's others PASS_TO_PASS (classify.py, touched.py).

Real runs of the host's go and cargo on real git histories: the start, the gold test patch alone
(the unit does not build: the patch calls a function only the gold code adds) and the gold patch,
read by the room's reader as `tests verify` reads them.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from prchain.dev.repos import git
from prchain.environments.eras import reports
from prchain.environments.eras.go.report import GoTest
from prchain.environments.eras.rust.report import Cargo
from prchain.environments.protocol import ExecResult
from prchain.verdicts.classify import classify
from prchain.verdicts.sandbox import collected_test_files, fill_command
from prchain.verdicts.touched import touched_by
from prchain.verdicts.verify import base_command

needs_go = pytest.mark.skipif(shutil.which("go") is None, reason="no go on this host")
CARGO = shutil.which("cargo") or str(Path.home() / ".cargo/bin/cargo")
needs_cargo = pytest.mark.skipif(not Path(CARGO).exists(), reason="no cargo on this host")
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
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)
    return git(repo, "rev-parse", "HEAD")


def _patches(
    repo: Path, start: dict[str, str], pr: dict[str, str], code_files: list[str]
) -> tuple[str, str]:
    """(gold code patch, gold test patch) of a one-PR history; `repo` is left at its base."""
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    base = _commit(repo, start, "start")
    _commit(repo, pr, "The PR (#1)")

    def diff(*paths: str) -> str:
        done = subprocess.run(
            ["git", "diff", base, "HEAD", "--", *paths],
            cwd=repo,
            capture_output=True,
            text=True,
            check=True,
        )
        return done.stdout

    code = diff(*code_files)
    tests = diff(*(p for p in pr if p not in code_files))
    git(repo, "checkout", "-q", base)
    return code, tests


def _runs(
    repo: Path, reader: reports.TestReport, command: str, env: dict[str, str], code: str, tests: str
) -> tuple[dict[str, str], ...]:
    """The outcomes at the start, with the test patch alone, and with the gold patch."""

    def run() -> dict[str, str]:
        report = repo.parent / "report"
        done = subprocess.run(
            ["bash", "-c", reader.script(command, str(report))],
            cwd=repo,
            env={**os.environ, **env},
            capture_output=True,
            text=True,
            timeout=600,
        )
        found = report.read_text() if report.exists() else None
        return reader.parse(found, done.stdout + done.stderr)

    def apply(patch: str) -> None:
        subprocess.run(["git", "apply", "-"], cwd=repo, input=patch, text=True, check=True)

    start = run()
    apply(tests)
    with_tests = run()
    apply(code)
    return start, with_tests, run()


@needs_go
def test_only_the_go_tests_a_patch_adds_or_changes_are_fail_to_pass(tmp_path: Path) -> None:
    repo = tmp_path / "greeter"
    gomod = f"module {PKG}\n\ngo 1.21\n"
    code, tests = _patches(
        repo,
        {"go.mod": gomod, "greeter.go": CODE, "greeter_test.go": BASE_TESTS},
        {
            "greeter.go": CODE + FAREWELL,
            "greeter_test.go": NEW_TESTS,
            "farewell_test.go": FAREWELL_TEST,
        },
        ["greeter.go"],
    )
    env = {"GOFLAGS": "-mod=mod", "GOPROXY": "off", "GOTOOLCHAIN": "local"}
    start, with_tests, gold = _runs(repo, GoTest(), "go test ./...", env, code, tests)
    assert with_tests == {PKG: "error"}  # the package did not build: Farewell is undefined

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


class Shell:
    """`Environment.execute` as a sandbox does it: bash in the stage's checkout (here a real
    directory on the host)."""

    def __init__(self, where: Path) -> None:
        self.where = where

    def execute(self, command: str, timeout: float | None = None) -> ExecResult:
        done = subprocess.run(
            ["bash", "-c", command], cwd=self.where, capture_output=True, text=True, timeout=60
        )
        return ExecResult(done.stdout + done.stderr, done.returncode)


@needs_go
def test_a_package_the_test_patch_creates_does_not_lose_the_bases_outcomes(
    tmp_path: Path,
) -> None:
    """gin #4053 (held out) adds the package `internal/fs` and changes the root package's tests. The
    run on the base asked `go test` for `./internal/fs` too, which loads nothing when the
    directory is missing: the base reported no test at all, and every root test the patched
    package could not build became FAIL_TO_PASS (407, almost all passing before). That is go 1.23,
    gin's era (`stat …/internal/fs: directory not found`, exit 1, nothing run); the host's newer go
    reports the missing directory as an error and runs the rest, so here the command is checked."""
    repo = tmp_path / "greeter"
    gomod = f"module {PKG}\n\ngo 1.21\n"
    new_pkg = (
        'package farewell\n\nimport "testing"\n\n'
        'func TestBye(t *testing.T) {\n\tif Bye() != "bye" {\n\t\tt.Fatal(Bye())\n\t}\n}\n'
    )
    code, tests = _patches(
        repo,
        {"go.mod": gomod, "greeter.go": CODE, "greeter_test.go": BASE_TESTS},
        {
            "greeter.go": CODE + FAREWELL,
            "greeter_test.go": NEW_TESTS,
            "farewell/bye.go": 'package farewell\n\n// Bye says it.\nfunc Bye() string { return "bye" }\n',
            "farewell/bye_test.go": new_pkg,
        },
        ["greeter.go", "farewell/bye.go"],
    )
    reader = GoTest()
    files = collected_test_files(tests, reader)
    assert files == [".", "./farewell"]
    template = reader.narrowed("go test ./...")
    env = {"GOFLAGS": "-mod=mod", "GOPROXY": "off", "GOTOOLCHAIN": "local"}

    on_base = base_command(Shell(repo), template, files)
    assert on_base == "go test ."  # the package the test patch creates is left out
    start, _, _ = _runs(repo, reader, on_base, env, code, tests)
    assert start == {f"{PKG}::{t}": "passed" for t in ("TestEmpty", "TestShort", "TestWelcome")}
    git(repo, "checkout", "-q", "--", ".")
    git(repo, "clean", "-qfd")
    _, with_tests, gold = _runs(repo, reader, fill_command(template, files), env, code, tests)
    assert with_tests[PKG] == "error"  # the test patch alone: Farewell is undefined

    found = classify(start, with_tests, [gold], touched_by(tests, reader.names))
    assert found.fail_to_pass == [f"{PKG}/farewell::TestBye", f"{PKG}::TestShort"]
    assert found.pass_to_pass == [f"{PKG}::TestEmpty", f"{PKG}::TestWelcome"]


def test_a_base_holding_none_of_the_stages_test_files_runs_nothing(tmp_path: Path) -> None:
    """No `{files}` left to fill would run the whole suite on the base: nothing runs instead."""
    (tmp_path / "tests").mkdir()
    assert base_command(Shell(tmp_path), "pytest {files}", ["tests/test_new.py"]) is None
    (tmp_path / "tests" / "test_old.py").write_text("")
    kept = base_command(
        Shell(tmp_path), "pytest {files}", ["tests/test_new.py", "tests/test_old.py"]
    )
    assert kept == "pytest tests/test_old.py"
    # An option of the runner (Java's `-Dtest=...`) is not a path, and stays.
    assert base_command(Shell(tmp_path), "mvn test {files}", ["-Dtest=FooTest"]) == (
        "mvn test -Dtest=FooTest"
    )


CRATE = '[package]\nname = "digits"\nversion = "0.1.0"\nedition = "2021"\n'
LIB = (
    "pub fn render(n: u64) -> String {\n    n.to_string()\n}\n\n#[cfg(test)]\nmod tests {\n"
    '    #[test]\n    fn renders() {\n        assert_eq!(super::render(7), "7");\n    }\n}\n'
)
PAIR = '\npub fn pair(a: u64, b: u64) -> String {\n    format!("{}:{}", render(a), render(b))\n}\n'
RENDER_TEST = '#[test]\nfn renders_big() {\n    assert_eq!(digits::render(10), "10");\n}\n'
PAIR_TEST = '#[test]\nfn pairs() {\n    assert_eq!(digits::pair(1, 2), "1:2");\n}\n'


@needs_cargo
def test_cargo_builds_no_target_when_one_fails_and_only_the_new_test_is_fail_to_pass(
    tmp_path: Path,
) -> None:
    repo = tmp_path / "digits"
    code, tests = _patches(
        repo,
        {"Cargo.toml": CRATE, "src/lib.rs": LIB, "tests/render.rs": RENDER_TEST},
        {"src/lib.rs": LIB + PAIR, "tests/pair.rs": PAIR_TEST},
        ["src/lib.rs"],
    )
    env = {"CARGO_NET_OFFLINE": "true", "CARGO_TARGET_DIR": str(tmp_path / "target")}
    command = f"{CARGO} test --no-fail-fast"
    start, with_tests, gold = _runs(repo, Cargo(), command, env, code, tests)
    assert with_tests == {"digits/pair": "error"}  # and no other target ran

    found = classify(start, with_tests, [gold], touched_by(tests, Cargo().names))
    assert found.fail_to_pass == ["digits/pair::pairs"]
    assert found.pass_to_pass == ["digits/render::renders_big", "digits::tests::renders"]
    assert found.why["digits::tests::renders"].startswith("passed at the start")
