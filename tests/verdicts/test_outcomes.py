"""How an era check reads a suite run: collection errors apart, the root error, the threshold."""

from __future__ import annotations

import socket
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from prchain.dev.repos import git
from prchain.environments.eras.go.report import GoTest
from prchain.environments.eras.python.report import Pytest, root_error
from prchain.environments.eras.rust.report import Cargo
from prchain.verdicts.outcomes import count, exclusions, service_failures, unit_output
from prchain.verdicts.verify import _go_module, in_excluded
from tests.support.eras_repo import commit_files

DATA = Path(__file__).parent.parent / "data" / "root_errors"

OUTPUT = """\
==================================== ERRORS ====================================
__________________ ERROR collecting tests/test_plugins.py ___________________
ImportError while importing test module '/work/repo/tests/test_plugins.py'.
Hint: make sure your test modules/packages have valid Python names.
Traceback:
tests/test_plugins.py:3: in <module>
    from importlib_metadata import entry_points
E   ModuleNotFoundError: No module named 'importlib_metadata'
=========================== short test summary info ============================
ERROR tests/test_plugins.py
"""


def test_a_module_that_does_not_collect_is_counted_apart() -> None:
    found = count(
        {
            "tests/test_plugins.py": "error",
            "tests/test_a.py::test_one": "passed",
            "tests/test_a.py::test_two": "failed",
            "tests/test_a.py::test_three": "error",
            "tests/test_a.py::test_four": "skipped",
            "tests/test_a.py::test_five": "xfailed",
        }
    )
    assert (found.passed, found.failed, found.errors, found.skipped) == (2, 1, 1, 1)
    assert found.collection_errors == 1 and found.ran == 4
    # one module of two did not import: half the units ran, too few at any share above a half
    assert found.units == 1 and found.verified(0.5) and not found.verified(0.51)


def test_verified_needs_the_share_of_passing_tests() -> None:
    outcomes = {f"t.py::test_{i}": "passed" for i in range(8)}
    outcomes |= {"t.py::test_8": "failed", "t.py::test_9": "failed"}
    assert count(outcomes).verified(0.8) and not count(outcomes).verified(0.81)
    assert not count({}).verified(0.0)  # nothing ran: nothing verified


def test_the_root_error_is_the_exception_not_the_banner() -> None:
    assert root_error(OUTPUT) == "ModuleNotFoundError: No module named 'importlib_metadata'"
    assert (
        root_error("Traceback...\nSyntaxError: invalid syntax\n") == "SyntaxError: invalid syntax"
    )
    assert root_error("all good\n") == ""


def test_pytests_own_crash_names_its_exception() -> None:
    """marshmallow 2015: pytest 2.8 on 3.9 dies in its config with exit code 2 and no test."""
    crash = (
        "INTERNALERROR> Traceback (most recent call last):\n"
        'INTERNALERROR>   File "/opt/venv/lib/python3.9/site-packages/_pytest/main.py", line 84\n'
        "INTERNALERROR>     config.do_configure()\n"
        "INTERNALERROR>     assert False\n"
        "INTERNALERROR> AssertionError\n"
    )
    assert root_error(crash) == "pytest INTERNALERROR: AssertionError"
    assert root_error("INTERNALERROR> E   KeyError: 'x'\n") == "pytest INTERNALERROR: KeyError: 'x'"


def test_a_broken_environment_is_not_blamed_on_the_gold_patch() -> None:
    from prchain.verdicts.verify import broken_environment

    root = "ModuleNotFoundError: No module named 'importlib_metadata'"
    outcomes = {"tests/test_plugins.py": "error", "tests/test_a.py::test_one": "failed"}
    assert broken_environment(outcomes, root) == (
        f"environment broken: 1 collection errors (first: {root})"
    )
    assert broken_environment({}, "ImportError: cannot import name 'x'") == (
        "environment broken: the test command reported no test (first: ImportError: cannot import "
        "name 'x')"
    )
    assert broken_environment({"tests/test_a.py::test_one": "failed"}, "AssertionError") is None
    # a module its era left out is no fault of this stage's environment
    assert broken_environment(outcomes, root, {"tests/test_plugins.py": "build failed"}) is None


def test_a_gold_patch_that_changes_build_files_is_named_as_the_cause(tmp_path) -> None:
    """A gold patch adding a module to go.mod cannot build in the hidden tests' room, where go.mod
    stays B_t's: the reason says so, not only that the environment is broken."""
    from prchain.dev.repos import git
    from prchain.verdicts.verify import held_back

    git(tmp_path, "init", "-q", "-b", "main")
    for name, text in {
        "go.mod": "module m\n",
        "go.sum": "",
        "cmd/init.go": "package cmd\n",
    }.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text)
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "start")
    (tmp_path / "go.mod").write_text("module m\n\nrequire github.com/fatih/color v1.17.0\n")
    (tmp_path / "go.sum").write_text("github.com/fatih/color v1.17.0 h1:x\n")
    (tmp_path / "cmd/init.go").write_text('package cmd\n\nimport _ "github.com/fatih/color"\n')
    patch = git(tmp_path, "diff")
    assert held_back(patch) == ["go.mod", "go.sum"]
    assert held_back(git(tmp_path, "diff", "--", "cmd")) == []
    # every name the room keeps out as a build file, not only the exact ones (crossing.py's rule)
    (tmp_path / "requirements-dev.txt").write_text("pytest\n")
    git(tmp_path, "add", "-N", "requirements-dev.txt")
    assert held_back(git(tmp_path, "diff", "--", "requirements-dev.txt")) == [
        "requirements-dev.txt"
    ]


def test_a_full_sandbox_disk_is_said_with_the_limits_to_raise() -> None:
    """ruff's 2023 era: cargo's target directory, in a tmpfs sandbox's /tmp, filled its 256m on
    the first crate; the root error says so, and which settings the user raises."""
    from prchain.environments.eras.rust.report import Cargo
    from prchain.setup.ladder import _counted
    from prchain.verdicts.sandbox import SuiteRun

    full = (
        "   Compiling ruff_source_file v0.0.0 (/work/repo/crates/ruff_source_file)\n"
        "error: failed to write query cache to `/tmp/cargo-target/debug/incremental/"
        "ruff_source_file-2vhtsxsc2gxz0/s-hoii2cl0hr-18iokct-working/query-cache.bin`: "
        "No space left on device (os error 28)\n\n"
        "error: could not compile `ruff_source_file` (lib) due to 1 previous error\n"
    )
    said = _counted(SuiteRun(exit_code=101, output_tail=full), Cargo(), 600).first_error
    assert said.startswith("error: failed to write query cache")
    assert said.endswith(
        "raise environment.scratch_limit, the size of /tmp and the agent's "
        "home, or environment.disk_limit, of /work)"
    )
    # tokio-rs/bytes of 2023: the tests ran, then the doctests' binaries filled /tmp
    halfway = (
        "test result: ok. 76 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out\n"
        "   Doc-tests bytes\n"
        "error: linking with `cc` failed: exit status: 1\n"
        "  = note: /usr/bin/ld: final link failed: No space left on device\n"
        "error: doctest failed, to rerun pass `--doc`\n"
    )
    found = _counted(SuiteRun(exit_code=101, output_tail=halfway), Cargo(), 600).first_error
    assert found.endswith("or environment.disk_limit, of /work)")
    other = "error[E0425]: cannot find function `missing` in this scope\n --> src/lib.rs:1:5\n"
    plain = _counted(SuiteRun(exit_code=101, output_tail=other), Cargo(), 600).first_error
    assert "scratch_limit" not in plain and plain.startswith("error[E0425]")


def test_a_stage_whose_build_fills_the_disk_says_which_limit_to_raise(tmp_path: Path) -> None:
    """tokio #2375 (2020): the workspace's test builds of a stage's three runs filled 4g of /tmp
    and the link failed; `tests verify` said `linking with cc failed` and no more. The runs here
    print what that build printed, so the stage is judged on it as on a real one."""
    from prchain.verdicts.config import RepoTests, VerdictsConfig
    from prchain.verdicts.verify import verify_stage
    from tests.support.host_checkout import HostCheckout, one_pr_stage

    link = (
        "error: linking with `cc` failed: exit code: 1\n"
        "  = note: /usr/bin/ld: final link failed: No space left on device\n"
        "error: could not compile `tests-integration`.\n"
    )
    start = {"build.sh": f"printf '%s' '{link}'; exit 101\n", "src/lib.rs": "pub fn a() {}\n"}
    pr = {"src/lib.rs": "pub fn a() {}\npub fn b() {}\n", "tests/b.rs": "#[test] fn b() {}\n"}
    job = one_pr_stage(tmp_path / "ws", start, pr, "src", "acme/ws")
    done = verify_stage(
        HostCheckout(tmp_path / "ws"),  # type: ignore[arg-type]
        job,
        RepoTests(test="bash build.sh", ecosystem="rust"),
        VerdictsConfig(gold_runs=1, report_path=str(tmp_path / "report")),
    )
    assert done.found.status == "unusable"
    assert done.found.reason == (
        "environment broken: 1 collection errors (first: error: linking with `cc` failed: exit "
        "code: 1 (the sandbox's disk is full: raise environment.scratch_limit, the size of /tmp "
        "and the agent's home, or environment.disk_limit, of /work))"
    )


@pytest.mark.parametrize(
    "name",
    [
        "go-1.26-build-failed.out",
        "go-1.20-build-failed.out",
        "go-1.20-build-failed-stderr-last.out",
    ],
)
def test_a_go_package_that_does_not_build_is_left_out_and_the_era_verifies_on_the_rest(
    name: str,
) -> None:
    """go's real output: `example.com/m/a` passes (its testify mock logs `PASS:`), `broken`'s
    test file calls a function that is not there (the compiler's words in events from go 1.24,
    on stderr before)."""
    output = (DATA / name).read_text()
    outcomes = GoTest().parse(output, output)
    found = count(outcomes)
    assert (found.passed, found.collection_errors, found.units) == (1, 1, 1)
    assert not found.verified(0.8)  # one package of two: half the units
    found.excluded = exclusions(outcomes, output, GoTest())
    assert found.excluded == {
        "example.com/m/broken": "build failed: broken/b_test.go:6:5: undefined: Three"
    }
    # the same package among nine that ran: the era verifies on them
    outcomes |= {f"example.com/m/p{i}::TestP": "passed" for i in range(8)}
    assert count(outcomes).verified(0.8) and not count(outcomes).verified(0.95)


def test_a_unit_s_output_is_its_own_not_another_package_s_test_lines() -> None:
    output = (DATA / "go-1.26-build-failed.out").read_text()
    own = unit_output(output, "example.com/m/broken")
    assert "undefined: Three" in own and "PASS:" not in own and "example.com/m/a" not in own


def test_a_module_that_needs_a_database_is_left_out_for_it() -> None:
    """pytest's real output: tests/test_db.py connects at import to a port nothing listens on."""
    output = (DATA / "pytest-collection-refused.out").read_text()
    outcomes = Pytest().parse(None, output)
    assert outcomes["tests/test_db.py"] == "error"
    assert exclusions(outcomes, output, Pytest()) == {
        "tests/test_db.py": "needs a service: network (ConnectionRefusedError: [Errno 111] "
        "Connection refused)"
    }


def test_a_stage_whose_tests_all_lie_in_a_left_out_unit_is_unusable_with_why() -> None:
    left = {"example.com/m/broken": "build failed: broken/b_test.go:6:5: undefined: Three"}
    assert in_excluded(["./broken"], left) == (
        "its tests lie in example.com/m/broken, which its era left out "
        "(build failed: broken/b_test.go:6:5: undefined: Three)"
    )
    assert in_excluded(["./broken", "./a"], left) is None  # some of its tests can run
    assert in_excluded(["./a"], left) is None and in_excluded(["."], left) is None
    # the root package (target `.`) is the module's path: google/gousb's root left out
    root = {"github.com/google/gousb": "build failed: libusb.go:188:22: could not determine …"}
    assert in_excluded(["."], root, "github.com/google/gousb") == (
        "its tests lie in github.com/google/gousb, which its era left out "
        "(build failed: libusb.go:188:22: could not determine …)"
    )
    assert (
        in_excluded(["."], root, "") is None and in_excluded(["."], left, "example.com/m") is None
    )
    assert in_excluded(["tests/test_db.py"], {"tests/test_db.py": "needs a service: x"}) == (
        "its tests lie in tests/test_db.py, which its era left out (needs a service: x)"
    )


def test_failed_tests_that_open_a_missing_sound_card_are_left_out_and_the_era_verifies() -> None:
    """diwic/alsa-rs's real cargo output (its 2022 era): 9 of 26 tests open the default ALSA
    device, which a sandbox has none of; each is left out with its own panic line, not another
    test's lines interleaved with the progress list."""
    output = (DATA / "cargo-alsa-no-sound-card.out").read_text()
    outcomes = Cargo().parse(None, output)
    assert not count(outcomes).verified(0.8)  # 17 of 26
    needing = service_failures(outcomes, output)
    assert len(needing) == 9 and set(needing) == {t for t, o in outcomes.items() if o == "failed"}
    drop = needing["alsa::pcm::drop"]
    assert drop.startswith("needs a service: device (thread 'pcm::drop' panicked")
    assert 'Error("snd_pcm_open", ENOENT)' in drop
    for test, why in needing.items():  # each from its own section, never a neighbour's
        name = test.partition("::")[2]
        assert "(doc)" in test or f"thread '{name}' panicked" in why, (test, why)
    rest = count({t: o for t, o in outcomes.items() if t not in needing})
    assert rest.verified(0.8) and (rest.passed, rest.failed) == (17, 0)


def test_only_the_failed_test_that_needed_a_service_is_left_out(tmp_path: Path) -> None:
    """A real pytest run: one test connects to a port nothing listens on, one fails its own
    assertion, one passes; only the first is left out."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again before the run
    (tmp_path / "test_mixed.py").write_text(
        "import socket\n\n"
        f"def test_reads_the_cache():\n    socket.create_connection(('127.0.0.1', {port}))\n\n"
        "def test_adds():\n    assert 1 + 1 == 3\n\n"
        "def test_subtracts():\n    assert 2 - 1 == 1\n"
    )
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-rA", "-p", "no:cacheprovider", "test_mixed.py"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    outcomes = Pytest().parse(None, run.stdout)
    assert outcomes["test_mixed.py::test_adds"] == "failed"
    needing = service_failures(outcomes, run.stdout)
    assert list(needing) == ["test_mixed.py::test_reads_the_cache"]
    assert needing["test_mixed.py::test_reads_the_cache"].startswith("needs a service: network (")
    assert service_failures({"test_mixed.py::test_adds": "failed"}, "AssertionError") == {}


def test_the_root_package_is_named_by_the_stage_base_s_go_mod(tmp_path: Path) -> None:
    clone = tmp_path / "usb"
    clone.mkdir()
    git(clone, "init", "-q", "-b", "main")
    commit_files(clone, {"go.mod": "module github.com/google/gousb\n\ngo 1.16\n"}, "Start", "")
    sha = git(clone, "rev-parse", "HEAD").strip()
    job = SimpleNamespace(clone_path=str(clone), base_sha=sha)
    assert _go_module(job) == "github.com/google/gousb"  # type: ignore[arg-type]
    assert _go_module(SimpleNamespace(clone_path=str(clone), base_sha="0" * 40)) == ""  # type: ignore[arg-type]
