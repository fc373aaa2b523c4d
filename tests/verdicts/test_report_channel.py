"""Issue 77, class 2, without containers: every room's report script writes its report into a
pipe in a directory its user cannot write, as the clean room's tester does, and makes no file
beside it; the Rust room's build listing gives each hidden test the id verification gives it."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from prchain.environments.eras.ecosystems import report_for
from prchain.environments.eras.rust.report import FINGERPRINTS, Cargo, build_command, package_of

NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
# Lines each runner would print, so each script has something to gather.
FAKE_RUNS = {
    "rust": "echo 'test tests::it ... ok'",
    "java": "mkdir -p target/surefire-reports && echo '<testsuite/>' > "
    "target/surefire-reports/TEST-x.xml",
    "python": "true",
    "go": "echo '{}'",
    "node": "true",
}


@pytest.fixture
def traversable() -> Iterator[Path]:
    """A directory the unprivileged runner can reach (pytest's tmp_path is root's 0700)."""
    path = Path(tempfile.mkdtemp(prefix="prchain-report-channel-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path)


def _drained(fd: int) -> bytes:
    """What the pipe holds now that its writers are gone (a writer left behind: what came)."""
    chunks = []
    with contextlib.suppress(BlockingIOError):
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
    return b"".join(chunks)


@pytest.mark.skipif(os.geteuid() != 0 or not shutil.which("setpriv"), reason="needs root")
@pytest.mark.parametrize("room", sorted(FAKE_RUNS))
def test_a_report_script_writes_into_roots_pipe_and_beside_it_nothing(
    room: str, traversable: Path
) -> None:
    tmp_path = traversable
    sealed = tmp_path / "room"
    sealed.mkdir(mode=0o711)
    sealed.chmod(0o711)  # root's, not the runner's: nothing can be made here but by root
    pipe = sealed / "report"
    os.mkfifo(pipe)
    pipe.chmod(0o622)  # as the room's 0620 with the tester's group: the runner may only write
    work = tmp_path / "work"
    work.mkdir()
    work.chmod(0o777)
    (tmp_path / "scratch").mkdir(mode=0o777)
    (tmp_path / "scratch").chmod(0o777)
    # root's end, open before the runner starts (a reader process started beside it could open
    # the pipe only after a runner that writes nothing had ended, and then wait for ever)
    reader = os.open(pipe, os.O_RDONLY | os.O_NONBLOCK)
    try:
        script = report_for(room).script(FAKE_RUNS[room], str(pipe))
        env = {"PATH": os.environ["PATH"], "TMPDIR": str(tmp_path / "scratch")}
        run = subprocess.run(
            [*NOBODY, "bash", "-c", script], cwd=work, env=env, capture_output=True, text=True
        )
        got = _drained(reader).decode()
    finally:
        os.close(reader)
    assert sorted(p.name for p in sealed.iterdir()) == ["report"], run.stdout + run.stderr
    assert list((tmp_path / "scratch").iterdir()) == []  # the scratch directory is removed
    if room in ("rust", "java"):
        assert got.strip(), run.stdout + run.stderr  # the report reached the pipe's reader


def test_the_rust_build_command_lists_test_executables_and_drops_libtests_arguments() -> None:
    assert build_command("cargo test --workspace --no-fail-fast -- --test-threads 1") == (
        "cargo test --no-run --message-format=json --workspace --no-fail-fast"
    )
    assert build_command("cd sub && cargo  test -p a") == (
        "cd sub && cargo  test --no-run --message-format=json -p a"
    )
    assert build_command("make test") is None


def _artifact(exe: str, manifest: str) -> str:
    message = {"reason": "compiler-artifact", "profile": {"test": True}, "executable": exe}
    return json.dumps({**message, "manifest_path": manifest})


def test_each_hidden_test_gets_its_executable_under_verifications_id() -> None:
    deps = "/tmp/cargo-target/debug/deps"
    listing = "\n".join(
        [
            _artifact(f"{deps}/shapes-0123456789abcdef", "/work/repo/Cargo.toml"),
            _artifact(f"{deps}/areas-fedcba9876543210", "/work/repo/Cargo.toml"),
            '{"reason":"compiler-message","message":{"rendered":"error[E0425]: x"}}',
            FINGERPRINTS,
            "/tmp/cargo-target/debug/.fingerprint/shapes-0123456789abcdef",
            "/tmp/cargo-target/debug/.fingerprint/shapes-fedcba9876543210",
        ]
    )
    required = ["shapes/areas::areas", "shapes::tests::unit", "shapes(doc)::src/lib.rs - area"]
    runs = Cargo().each(listing, required)
    assert [(r.test_id, r.exe.rsplit("/", 1)[1], r.name, r.directory) for r in runs] == [
        ("shapes/areas::areas", "areas-fedcba9876543210", "areas", "/work/repo"),
        ("shapes::tests::unit", "shapes-0123456789abcdef", "tests::unit", "/work/repo"),
    ]


def test_a_test_of_a_unit_two_executables_share_runs_in_each() -> None:
    """uutils/coreutils has a library and a binary named `coreutils`: two unit-test executables
    of one unit. The listing kept the last, so the binary's `common::validation` tests were
    "missing" and failed every clean room; now each executable is asked (`--list` first)."""
    deps = "/tmp/cargo-target/debug/deps"
    listing = "\n".join(
        [
            _artifact(f"{deps}/coreutils-0123456789abcdef", "/work/repo/Cargo.toml"),
            _artifact(f"{deps}/coreutils-fedcba9876543210", "/work/repo/Cargo.toml"),
            FINGERPRINTS,
            "/tmp/cargo-target/debug/.fingerprint/coreutils-0123456789abcdef",
            "/tmp/cargo-target/debug/.fingerprint/coreutils-fedcba9876543210",
        ]
    )
    runs = Cargo().each(listing, ["coreutils::common::validation::tests::test_name"])
    assert [r.exe.rsplit("/", 1)[1] for r in runs] == [
        "coreutils-0123456789abcdef",
        "coreutils-fedcba9876543210",
    ]
    assert {r.name for r in runs} == {"common::validation::tests::test_name"}


def test_a_package_id_names_the_package_and_its_version() -> None:
    """cargo's two forms of a package id (1.77 on, and before)."""
    assert package_of("path+file:///work/repo#coreutils@0.2.2") == "coreutils@0.2.2"
    assert package_of("path+file:///work/shapes#0.1.0") == "shapes@0.1.0"
    assert package_of("shapes 0.1.0 (path+file:///work/repo)") == "shapes@0.1.0"
    assert package_of("") == ""
