"""The Rust room: toolchain choice and plans on snapshots of real git repositories, and the cargo
test reader on what the host's real cargo prints."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from prchain.core import git
from prchain.environments.eras.config import ErasConfig
from prchain.environments.eras.ecosystems import detect, ecosystem
from prchain.environments.eras.manifests import Snapshot, snapshot
from prchain.environments.eras.rust.features import with_features
from prchain.environments.eras.rust.report import Cargo, parse, root_error
from prchain.environments.eras.rust.toolchains import choose, stable_on, wanted
from prchain.verdicts.sandbox import fill_command
from tests.support.rust_repo import make_digits

CARGO = shutil.which("cargo") or str(Path.home() / ".cargo/bin/cargo")


def _snap(files: dict[str, str], when: str = "2023-06-01") -> Snapshot:
    date = datetime.fromisoformat(when).replace(tzinfo=UTC)
    return Snapshot("0" * 40, date, files, sorted(files))


def _need_cargo() -> None:
    if not os.access(CARGO, os.X_OK):
        pytest.skip("no cargo on this machine")


# ---- toolchains and plans -----------------------------------------------------------------------


def test_the_digits_history_gets_bookworms_rustc_and_vendored_crates(tmp_path: Path) -> None:
    clone = make_digits(tmp_path / "digits")
    first = git.output(clone, "rev-list", "--max-parents=0", "HEAD").strip()
    snap = snapshot(clone, first)
    rust = detect(snap, ["tests/pair.rs"])
    assert rust is not None and rust.name == "rust"
    (plan,) = rust.plans(snap, ErasConfig())
    assert (plan.suite, plan.interpreter) == ("bookworm", "1.63")
    assert "stable of 2022-08-15 is 1.63" in plan.notes[0]
    # bookworm's cargo 1.63 predates the sparse index: a newer cargo of the suite fetches.
    assert any("apt-get download cargo-web" in c for c in plan.toolchain)
    assert any("/opt/rust-fetch/usr/bin/cargo vendor" in c for c in plan.commands)
    assert plan.env["CARGO_NET_OFFLINE"] == "true" and plan.setup_command


@pytest.mark.parametrize(
    ("files", "when", "version", "suite"),
    [
        (
            {"rust-toolchain.toml": '[toolchain]\nchannel = "1.80.0"\n'},
            "2024-09-01",
            "1.85",
            "trixie",
        ),
        ({"rust-toolchain": "1.70\n"}, "2024-09-01", "1.78", "bullseye"),
        ({}, "2019-01-01", "1.48", "bullseye"),  # nothing older is packaged
        ({}, "2026-06-01", "1.96", "trixie"),
        ({"Cargo.lock": "version = 4\n"}, "2023-01-01", "1.78", "bullseye"),
    ],
)
def test_the_nearest_packaged_toolchain_not_older_than_the_era(
    files: dict[str, str], when: str, version: str, suite: str
) -> None:
    manifest = {"Cargo.toml": '[package]\nname = "x"\nversion = "0.1.0"\nedition = "2018"\n'}
    want, _, _ = wanted(_snap({**manifest, **files}, when))
    chain, _ = choose(want, ErasConfig().suites)
    assert (chain.version, chain.suite) == (version, suite)


def test_a_workspace_members_edition_and_rust_version_raise_the_floor() -> None:
    files = {
        "Cargo.toml": '[workspace]\nmembers = ["a"]\n',
        "a/Cargo.toml": '[package]\nname = "a"\nedition = "2024"\n',
    }
    assert wanted(_snap(files, "2023-01-01"))[0] == 85
    files["a/Cargo.toml"] = '[package]\nname = "a"\nrust-version = "1.81"\n'
    assert wanted(_snap(files, "2023-01-01"))[0] == 81


def test_a_nightly_channel_gets_its_dates_stable_with_bootstrap() -> None:
    files = {
        "Cargo.toml": '[package]\nname = "x"\n',
        "rust-toolchain": "nightly-2024-03-01\n",
    }
    (plan,) = ecosystem("rust").plans(_snap(files), ErasConfig())
    assert stable_on(datetime(2024, 3, 1, tzinfo=UTC)) == 76
    assert plan.interpreter == "1.78" and plan.env["RUSTC_BOOTSTRAP"] == "1"


def test_era_facts_ignore_a_version_bump_and_follow_the_lock() -> None:
    rust = ecosystem("rust")
    base = {"Cargo.toml": '[package]\nname = "x"\nversion = "0.1.0"\n', "Cargo.lock": "a"}
    bumped = {**base, "Cargo.toml": base["Cargo.toml"].replace("0.1.0", "0.2.0")}
    relocked = {**base, "Cargo.lock": "b"}
    assert rust.era_facts(_snap(base)) == rust.era_facts(_snap(bumped))
    assert rust.era_facts(_snap(base)) != rust.era_facts(_snap(relocked))


def test_a_failed_build_that_asks_for_a_newer_rustc_gets_it() -> None:
    rust = ecosystem("rust")
    snap = _snap({"Cargo.toml": '[package]\nname = "x"\n'}, "2022-08-20")
    (plan,) = rust.plans(snap, ErasConfig())
    log = "error: package `clap v4.5.0` cannot be built because it requires rustc 1.74 or newer"
    revised = rust.revise(snap, ErasConfig(), plan, log, ran=False)
    assert revised is not None and revised.interpreter == "1.78"
    assert rust.revise(snap, ErasConfig(), plan, "failed to fetch github.com", ran=False) is None


# ---- the reader, on the host's real cargo -------------------------------------------------------

LIB_A = """/// Adds.
///
/// ```
/// assert_eq!(a::add(1, 2), 3);
/// ```
pub fn add(x: i32, y: i32) -> i32 { x + y }

#[cfg(test)]
mod tests {
    #[test] fn ok() { assert_eq!(super::add(1, 1), 2); }
    #[test] fn bad() { assert_eq!(super::add(1, 1), 3); }
    #[test] #[ignore] fn skipped() {}
    #[test] #[should_panic] fn panics() { panic!("x") }
}
"""


def _workspace(root: Path, broken: bool = False) -> Path:
    files = {
        "Cargo.toml": '[workspace]\nmembers = ["a", "b-crate"]\nresolver = "2"\n',
        "a/Cargo.toml": '[package]\nname = "a"\nversion = "0.1.0"\nedition = "2021"\n',
        "a/src/lib.rs": LIB_A,
        "a/tests/cli.rs": "#[test] fn works() { assert_eq!(a::add(2, 2), 4); }\n",
        "b-crate/Cargo.toml": '[package]\nname = "b-crate"\nversion = "0.1.0"\nedition = "2021"\n',
        "b-crate/src/lib.rs": "#[cfg(test)]\nmod tests { #[test] fn fine() {} }\n",
        "b-crate/tests/cli.rs": "#[test] fn works() { assert_eq!(%s, 4); }\n"
        % ("missing()" if broken else "4"),
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _run(root: Path, command: str, tmp: Path) -> tuple[dict[str, str], str]:
    report = tmp / "report.txt"
    env = {**os.environ, "CARGO_TARGET_DIR": str(tmp / "target"), "CARGO_TERM_COLOR": "never"}
    env["PATH"] = f"{Path(CARGO).parent}:{env['PATH']}"
    script = Cargo().script(command, str(report))
    done = subprocess.run(["bash", "-c", script], cwd=root, env=env, capture_output=True, text=True)
    written = report.read_text() if report.exists() else None
    return Cargo().parse(written, done.stdout), done.stdout


def test_cargo_outcomes_by_target_with_integration_tests_told_apart(tmp_path: Path) -> None:
    _need_cargo()
    outcomes, output = _run(
        _workspace(tmp_path / "ws"), "cargo test --workspace --no-fail-fast", tmp_path
    )
    assert outcomes == {
        "a::tests::ok": "passed",
        "a::tests::bad": "failed",
        "a::tests::skipped": "skipped",
        "a::tests::panics": "passed",
        "a/cli::works": "passed",
        "b_crate::tests::fine": "passed",
        "b-crate/cli::works": "passed",
        "a(doc)::a/src/lib.rs - add": "passed",
    }, output
    # The console alone (no report): the same tests, integration tests no longer told apart.
    assert set(parse(None, output)) >= {"a::tests::ok", "cli::works", "b_crate::tests::fine"}


def test_a_result_pushed_to_a_later_line_by_the_tests_own_stderr_is_read(tmp_path: Path) -> None:
    """ruff #12136 in a sandbox of one CPU: libtest prints `test X ... ` when X starts, insta
    writes `stored new snapshot …` to stderr, and `FAILED` starts the next line. The failing
    snapshot test had no outcome, and the stage no FAIL_TO_PASS."""
    _need_cargo()
    noisy = (
        "#[cfg(test)]\nmod tests {\n    use std::io::Write;\n"
        "    #[test] fn snap() {\n"
        '        std::io::stderr().write_all(b"stored new snapshot x.snap.new\\n").unwrap();\n'
        '        panic!("snapshot assertion failed");\n    }\n'
        "    #[test] fn quiet() {}\n}\n"
    )
    root = tmp_path / "n"
    (root / "src").mkdir(parents=True)
    (root / "Cargo.toml").write_text('[package]\nname = "n"\nversion = "0.1.0"\nedition = "2021"\n')
    (root / "src/lib.rs").write_text(noisy)
    outcomes, output = _run(root, "cargo test --no-fail-fast -- --test-threads=1", tmp_path)
    assert "test tests::snap ... stored new snapshot" in output
    assert outcomes == {"n::tests::snap": "failed", "n::tests::quiet": "passed"}, output


def test_a_target_that_does_not_compile_is_an_error_unit_with_its_root_error(
    tmp_path: Path,
) -> None:
    _need_cargo()
    ws = _workspace(tmp_path / "ws", broken=True)
    outcomes, output = _run(ws, "cargo test --workspace --no-fail-fast", tmp_path)
    assert outcomes == {"b-crate/cli": "error"}, output
    assert root_error(output).startswith("error[E0425]: cannot find function `missing`")
    assert "b-crate/tests/cli.rs:1" in root_error(output)


def test_the_narrowed_command_tests_only_the_crates_of_the_stage(tmp_path: Path) -> None:
    _need_cargo()
    ws = _workspace(tmp_path / "ws")
    reader = Cargo()
    command = fill_command(
        reader.narrowed("cargo test --workspace --no-fail-fast"),
        reader.targets(["b-crate/tests/cli.rs", "b-crate/src/lib.rs"]),
    )
    outcomes, output = _run(ws, command, tmp_path)
    assert outcomes == {"b_crate::tests::fine": "passed", "b-crate/cli::works": "passed"}, output


def test_a_member_is_named_with_its_version_where_another_package_has_its_name(
    tmp_path: Path,
) -> None:
    """tokio #2325 (2020): tokio-test from crates.io brings a tokio 0.2.11 beside the tree's 0.2.13,
    and cargo 1.46 refused `-p tokio` (`There are multiple `tokio` packages in your project, and
    the specification `tokio` is ambiguous`): the stage had no test. `-p tokio:0.2.13` is one
    package for every cargo; a version the manifest does not write leaves the bare name."""
    _need_cargo()
    ws = tmp_path / "ws"
    files = {
        "Cargo.toml": '[workspace]\nmembers = ["a", "b", "c"]\nexclude = ["old"]\n',
        "a/Cargo.toml": '[package]\nname = "a"\nversion = "0.2.0"\nedition = "2018"\n',
        "a/src/lib.rs": "pub fn v() -> u8 { 2 }\n",
        "a/tests/two.rs": "#[test] fn two() { assert_eq!(a::v(), 2); }\n",
        "old/a/Cargo.toml": '[package]\nname = "a"\nversion = "0.1.0"\nedition = "2018"\n',
        "old/a/src/lib.rs": "pub fn v() -> u8 { 1 }\n",
        "b/Cargo.toml": '[package]\nname = "b"\nversion = "0.1.0"\nedition = "2018"\n\n'
        '[dependencies]\nolda = { path = "../old/a", package = "a" }\n',
        "b/src/lib.rs": "pub fn w() -> u8 { olda::v() }\n",
        "c/Cargo.toml": '[package]\nname = "c"\nversion.workspace = true\nedition = "2018"\n\n'
        '[dependencies]\nb = { version = "0.1.0", path = "../b" }\n',
        "c/src/lib.rs": "#[cfg(test)]\nmod tests { #[test] fn one() { assert_eq!(b::w(), 1); } }\n",
    }
    files["Cargo.toml"] += '\n[workspace.package]\nversion = "0.3.0"\n'
    for rel, text in files.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)
    reader = Cargo()
    command = fill_command(
        reader.narrowed("cargo test --workspace --no-fail-fast"),
        reader.targets(["a/tests/two.rs", "c/src/lib.rs"]),
    )
    assert _words(command, ws) == ["--no-fail-fast", "-p", "a:0.2.0", "-p", "c"]
    outcomes, output = _run(ws, command, tmp_path)
    assert outcomes == {"a/two::two": "passed", "c::tests::one": "passed"}, output


def test_under_a_cargo_older_than_1_51_a_stage_runs_the_whole_workspace_and_names_no_feature(
    tmp_path: Path,
) -> None:
    """cargo 1.46 (bullseye's) gives a member only the features of the packages a command selects
    and refuses `--features` in a virtual workspace's root: tokio's five stages of 2020, whose
    eras verified with the whole workspace, had no test under `-p tokio --features tokio/full`.
    Here a `cargo` that says it is 1.46.0 (and else the host's) decides the words."""
    _need_cargo()
    ws = _workspace(tmp_path / "ws")
    reader = Cargo()
    command = with_features(
        fill_command(
            reader.narrowed("cargo test --workspace --no-fail-fast"),
            reader.targets(["b-crate/tests/cli.rs"]),
        ),
        ["b-crate/extra"],
    )
    old = tmp_path / "old-cargo"
    old.mkdir()
    (old / "cargo").write_text(
        f'#!/bin/sh\n[ "$1" = --version ] && {{ echo "cargo 1.46.0"; exit 0; }}\nexec {CARGO} "$@"\n'
    )
    (old / "cargo").chmod(0o755)
    assert _words(command, ws, old) == ["--no-fail-fast", "--workspace"]
    assert _words(command, ws) == [
        "--no-fail-fast",
        *("-p", "b-crate:0.1.0", "--features", "b-crate/extra"),
    ]


def _words(command: str, cwd: Path, first: Path | None = None) -> list[str]:
    """The words `cargo test` of `command` gets in `cwd`, with `first` (a directory) leading PATH."""
    path = f"{first}:" * (first is not None) + f"{Path(CARGO).parent}:{os.environ['PATH']}"
    return subprocess.run(
        ["bash", "-c", f"printf '%s\\n' {command.removeprefix('cargo test ')}"],
        cwd=cwd,
        env={**os.environ, "PATH": path},
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()


def test_a_package_outside_the_workspace_under_tests_is_not_named(tmp_path: Path) -> None:
    """rust-lang/log #664: `tests/Cargo.toml` is a package of its own that the crate's workspace does
    not hold, and `tests/*.rs` are the root crate's `[[test]]` targets. Its nearest manifest named
    `-p integration`, which cargo refused, and the stage had no tests."""
    _need_cargo()
    root = tmp_path / "logish"
    (root / "src").mkdir(parents=True)
    (root / "tests/src").mkdir(parents=True)
    (root / "Cargo.toml").write_text(
        '[package]\nname = "logish"\nversion = "0.1.0"\nedition = "2021"\n\n'
        '[[test]]\nname = "integration"\npath = "tests/integration.rs"\n'
    )
    (root / "src/lib.rs").write_text("pub fn level() -> u8 { 3 }\n")
    (root / "tests/integration.rs").write_text(
        "#[test] fn level_is_three() { assert_eq!(logish::level(), 3); }\n"
    )
    (root / "tests/Cargo.toml").write_text(
        '[package]\nname = "integration"\nversion = "0.1.0"\nedition = "2021"\n\n'
        '[dependencies]\nlogish = { path = ".." }\n'
    )
    (root / "tests/src/lib.rs").write_text("")
    reader = Cargo()
    command = fill_command(
        reader.narrowed("cargo test --workspace --no-fail-fast"),
        reader.targets(["tests/integration.rs"]),
    )
    outcomes, output = _run(root, command, tmp_path)
    assert outcomes == {"logish/integration::level_is_three": "passed"}, output


# Printed by cargo 1.48 (bullseye's) on the workspace above: binaries without their source, the
# compile failure without its target.
OLD_CARGO = """\
     Running /tmp/t/debug/deps/a-220b9fa3a1f6bdb0

running 2 tests
test tests::bad ... FAILED
test tests::skipped_reason ... ignored

     Running /tmp/t/debug/deps/cli-4a2375d417cb2b53

running 1 test
test works ... ok

   Doc-tests a

running 1 test
test src/lib.rs - add (line 3) ... ok
   Compiling b v0.1.0 (/ws/b)
error[E0425]: cannot find function `missing` in this scope
 --> b/tests/cli.rs:1:33
error: aborting due to previous error
error: could not compile `b`.
"""


def test_old_cargos_lines_are_read_too() -> None:
    listing = "# prchain: fingerprints\n/tmp/t/debug/.fingerprint/a-4a2375d417cb2b53\n"
    assert parse(OLD_CARGO + listing, "") == {
        "a::tests::bad": "failed",
        "a::tests::skipped_reason": "skipped",
        "a/cli::works": "passed",
        "a(doc)::src/lib.rs - add": "passed",
        "b": "error",
    }
    assert root_error(OLD_CARGO) == (
        "error[E0425]: cannot find function `missing` in this scope (b/tests/cli.rs:1:33)"
    )


def test_a_denied_lint_of_a_newer_compiler_is_capped_then_a_newer_rustc_tried() -> None:
    rust = ecosystem("rust")
    snap = _snap({"Cargo.toml": '[package]\nname = "x"\n'}, "2015-11-28")
    (plan,) = rust.plans(snap, ErasConfig())
    denied = (
        "error: use of deprecated macro `try`: use the `?` operator instead\n"
        "note: the lint level is defined here\n #![deny(warnings)]"
    )
    capped = rust.revise(snap, ErasConfig(), plan, denied, ran=False)
    assert capped is not None and capped.interpreter == plan.interpreter == "1.48"
    assert capped.variant == "rustc-1.48+cap-lints"
    assert any("--cap-lints" in c for c in capped.commands)
    unreadable = "error: failed to parse manifest at `/opt/cargo/vendor/proc-macro2/Cargo.toml`"
    newer = rust.revise(snap, ErasConfig(), capped, denied + unreadable, ran=False)
    assert newer is not None and newer.interpreter == "1.63" and "+cap-lints" in newer.variant
    assert any("--cap-lints" in c for c in newer.commands)


SIZED_MANIFEST = (
    '[package]\nname = "sized"\nversion = "0.1.0"\nedition = "2021"\n\n'
    '[dependencies]\nstatic_assertions = "=1.1.0"\n'
)
# A size the era's compiler gave this enum and a newer one does not (ruff's AST, 2023-08 to 2024-02).
SIZED_LIB = (
    "pub enum Shape {\n    Dot,\n    Line(u32, u8),\n    Boxed(Option<u8>),\n}\n\n"
    "static_assertions::assert_eq_size!(Shape, [u8; 16]);\n"
)


def test_a_size_assertion_no_packaged_rustc_passes_is_unchecked_on_the_same_toolchain() -> None:
    rust = ecosystem("rust")
    snap = _snap({"Cargo.toml": SIZED_MANIFEST, "rust-toolchain": "1.73\n"}, "2023-11-01")
    (plan,) = rust.plans(snap, ErasConfig())
    assert plan.interpreter == "1.78"
    failed = (
        "error[E0512]: cannot transmute between types of different sizes\n"
        "  = note: this error originates in the macro `assert_eq_size` (in Nightly builds, …)"
    )
    unchecked = rust.revise(snap, ErasConfig(), plan, failed, ran=False)
    assert unchecked is not None and unchecked.interpreter == "1.78"  # not a newer compiler
    assert unchecked.variant == "rustc-1.78+sizes-unchecked"
    assert "assert_eq_size! compares no sizes" in unchecked.notes[-1]
    assert sum("PhantomData" in c for c in unchecked.commands) == 1
    assert not any("PhantomData" in c for c in plan.commands)
    # The same failure again is no longer the sizes': the next newer compiler, still unchecked.
    newer = rust.revise(snap, ErasConfig(), unchecked, failed, ran=False)
    assert newer is not None and newer.interpreter == "1.85"
    assert newer.variant == "rustc-1.85+sizes-unchecked"
    assert any("PhantomData" in c for c in newer.commands)


def test_unchecked_sizes_let_the_real_cargo_build_what_it_refused(tmp_path: Path) -> None:
    """The real crate vendored from crates.io: the host's rustc refuses the size, as the era's
    newer compiler does; after the era's own command on the vendor directory it builds offline,
    the directory source's checksums still holding."""
    _need_cargo()
    from prchain.environments.eras import rust as room

    crate = tmp_path / "sized"
    (crate / "src").mkdir(parents=True)
    (crate / "Cargo.toml").write_text(SIZED_MANIFEST)
    (crate / "src/lib.rs").write_text(SIZED_LIB)
    env = {**os.environ, "CARGO_HOME": str(tmp_path / "cargo-home"), "CARGO_TERM_COLOR": "never"}
    vendor = tmp_path / "vendor"
    fetched = subprocess.run(
        [CARGO, "vendor", "--quiet", str(vendor)], cwd=crate, env=env, capture_output=True
    )
    if fetched.returncode != 0:
        pytest.skip(f"crates.io is not reachable: {fetched.stderr.decode()[-200:]}")
    offline = [
        "--offline",
        "--config",
        'source.crates-io.replace-with="v"',
        "--config",
        f'source.v.directory="{vendor}"',
    ]

    def build() -> subprocess.CompletedProcess[str]:
        shutil.rmtree(crate / "target", ignore_errors=True)
        return subprocess.run(
            [CARGO, "build", *offline], cwd=crate, env=env, capture_output=True, text=True
        )

    refused = build()
    assert refused.returncode != 0 and room._SIZES.search(refused.stderr), refused.stderr
    command = room._unchecked_sizes().replace(f"{room.CARGO_HOME}/vendor", str(vendor))
    subprocess.run(["bash", "-euo", "pipefail", "-c", command], check=True)
    built = build()
    assert built.returncode == 0, built.stderr


def test_a_workspaces_python_fixtures_belong_to_its_rust_tests() -> None:
    files = {"Cargo.toml": '[workspace]\nmembers = ["crates/*"]\n', "pyproject.toml": ""}
    fixtures = [
        "crates/lint/resources/test/fixtures/E501.py",
        "crates/lint/src/snapshots/lint__E501.py.snap",
    ]
    found = detect(_snap(files), fixtures)
    assert found is not None and found.name == "rust"
    found = detect(_snap(files), ["python/tests/test_core.py"])  # a Python package's own tests
    assert found is not None and found.name == "python"


def test_a_failed_cargo_build_says_its_first_and_deepest_cause() -> None:
    from prchain.environments.eras.build import build_failure

    log = (  # ruff 2025: a git dependency, and GitHub is not reachable
        "+ cargo vendor --quiet /opt/cargo/vendor\nerror: failed to sync\n\nCaused by:\n"
        "  failed to load lockfile for /opt/prchain/src\n\nCaused by:\n"
        "  failed to get `salsa` as a dependency of package `ruff_db v0.0.0`\n\nCaused by:\n"
        "  [6] Could not resolve hostname (Could not resolve host: github.com); class=Net (12)\n"
    )
    assert build_failure(log, 101) == (
        "error: failed to sync failed to load lockfile for /opt/prchain/src … "
        "[6] Could not resolve hostname (Could not resolve host: github.com); class=Net (12)"
    )


def test_the_own_crates_leave_the_target_and_a_dependency_named_after_one_stays(
    tmp_path: Path,
) -> None:
    """diwic/alsa-rs: its own crate `alsa` beside the dependency `alsa-sys`. Old cargo's
    `clean -p alsa` took alsa-sys's fingerprints too (a glob), and the sandbox rebuilt alsa-sys
    into the read-only target; the era layer's cleaning removes `alsa` and nothing of alsa-sys."""
    from prchain.environments.eras.rust import OWN_CRATES

    own, dep = "0123456789abcdef", "fedcba9876543210"
    files = [
        f"debug/.fingerprint/alsa-{own}/lib-alsa",
        f"debug/.fingerprint/alsa-sys-{dep}/lib-alsa-sys",
        f"debug/build/alsa-sys-{dep}/build_script_build-{dep}.d",
        f"debug/build/alsa-sys-{dep}/out/libalsa.a",  # a dependency's output named like ours
        f"debug/deps/libalsa-{own}.rlib",
        f"debug/deps/alsa-{own}",  # the unit-test binary
        f"debug/deps/alsa-{own}.d",
        f"debug/deps/pcm_play-{own}",  # an integration test target of ours
        f"debug/deps/libalsa_sys-{dep}.rlib",
        f"debug/deps/alsa_sys-{dep}.d",
        "debug/libalsa.rlib",
        "debug/libalsa.d",
        "debug/libalsa_sys.rlib",
    ]
    for name in files:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x")
    metadata = {
        "packages": [
            {
                "name": "alsa",
                "targets": [
                    {"name": "alsa", "kind": ["lib"]},
                    {"name": "pcm-play", "kind": ["test"]},
                    {"name": "build-script-build", "kind": ["custom-build"]},
                ],
            }
        ]
    }
    subprocess.run(
        ["python3", "-c", OWN_CRATES, str(tmp_path)],
        input=json.dumps(metadata),
        text=True,
        check=True,
    )
    left = sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*") if p.is_file())
    assert left == sorted(
        [
            f"debug/.fingerprint/alsa-sys-{dep}/lib-alsa-sys",
            f"debug/build/alsa-sys-{dep}/build_script_build-{dep}.d",
            f"debug/build/alsa-sys-{dep}/out/libalsa.a",
            f"debug/deps/libalsa_sys-{dep}.rlib",
            f"debug/deps/alsa_sys-{dep}.d",
            "debug/libalsa_sys.rlib",
        ]
    )


ALSA_RUN = """\
running 3 tests
test error::broken_pcm_name ... ok
ALSA lib conf.c:5180:(_snd_config_evaluate) function snd_func_card_inum returned error: No such file or directory
test pcm::drop ... FAILED

failures:

---- pcm::drop stdout ----
thread 'pcm::drop' panicked at src/pcm.rs:1056:41:
called `Result::unwrap()` on an `Err` value: Error("snd_pcm_open", ENOENT)

failures:
    pcm::drop

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out

error: test failed, to rerun pass `--lib`
---- src/lib.rs - (line 12) stdout ----
thread 'src/lib.rs - (line 12)' panicked at 'open the default device', src/lib.rs:16:1
error: doctest failed, to rerun pass `--doc`
"""


def test_a_failed_test_run_names_its_first_panic_not_cargos_last_hint() -> None:
    """diwic/alsa-rs: tests that open the sound card fail in a sandbox without one; its eras
    read "error: doctest failed, to rerun pass `--doc`" as their root error."""
    assert root_error(ALSA_RUN) == (
        "test pcm::drop panicked at src/pcm.rs:1056:41: called `Result::unwrap()` on an `Err` "
        'value: Error("snd_pcm_open", ENOENT)'
    )
    old_style = ALSA_RUN.split("---- pcm::drop", 1)[0] + ALSA_RUN.split("--lib`\n", 1)[1]
    assert root_error(old_style) == (
        "test src/lib.rs - (line 12) panicked at src/lib.rs:16:1: open the default device"
    )
