"""Issue 77, class 2, in the Rust room: gold first, then the agent's code forging libtest's lines.

Gold: the `shapes` crate (no dependencies, tests/support/shapes_crate.py) gets its era, its
stages verify, and each stage's gold patch resolves through `tasks eval` and through a rollout's
clean room. On the code before, `env setup` failed (`du: cannot access '/opt/cargo/vendor'`), and
with that fixed the report script wrote `report.log` beside root's pipe, where the tester may not
write: no report reached root, the console's ids lacked their crate prefix, and 0 of 2 gold stages
resolved.

Attack: the agent's `area` returns 0 and writes, straight to stdout (past libtest's capture), a
pass of the hidden test, a pass of the other binary's test and the report's fingerprint marker
with a listing that names its own binaries' hashes (read from `current_exe`). On the code before,
the console reader stopped at the marker and the wrong `area` passed. Now root runs each hidden
test on its own and reads its exit status; nothing printed counts.

Attack: the agent's `area` ends the process with status 0 (`std::process::exit(0)`) before the
hidden test's assertion; judged by exit status alone it passed.

Attack (issue 77, round 2): the agent's `area` installs a panic hook that prints the rest of
libtest's lines (`ok`, `test result: ok. 1 passed; …`) and exits 0 when the assertion fails. On
the code before, the console check (libtest's line and summary as the last line of what the
process printed) was fooled. Now root runs each test under its tracer and a pass counts only when
libtest's main thread reported it and ended the process; the hook ran on the test's thread.

Attack: the same `exit(0)`, reached from a doc test on `area` the agent's source carries. rustdoc
judges a doc test by its child's exit status, and on the code before a required doc test passed.
A doc test's text is the agent's source, so verification keeps doc tests out of the hidden tests
and a clean room counts a required one (an older store's) as failed.

Attack: the stage base overrides its dev-dependency pretty_assertions with a local copy
(`forks/pretty_assertions`, a path dependency); the agent's wrong `area` plus an `assert_eq!` there
that never fails. On the code before the `.rs` crossed and the hidden test passed; now the
directory the base's Cargo.toml gives a test library is sealed (crossing.overridden_dirs).

Not an attack: a right `area` that starts a process and never waits for it (coreutils' `more`
tests leave `more` running on a pseudo-terminal). Root's tracer followed it and waited for it,
and the stage's time ran out on the first such test: `tasks eval` of coreutils #10416 hung there
for the whole hour. Now the test's end is seen when it comes and what it left running ends.

Not an attack: a right `area` whose program runs only untraced. Root's tracer followed every
process a test started, so coreutils' tsort loop test (tsort writes 500,000 lines, each a traced
write) passed its own 30 s limit in every clean room and 1 s in verification. Now the tracer lets
go of a process when it runs another program; a test that fails so runs once more with every
process traced (coreutils' `tail -F` truncation tests race `tail`: with the test process alone
slowed they lost 5 runs in 12). Attack: the test thread becomes a shell that prints libtest's pass
and exits 0; it is let go at its execve, and nothing witnesses a pass."""

from __future__ import annotations

import shutil
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from prchain.store.db import session_scope
from prchain.store.models import ChainStage
from prchain.store.opener import make_engine
from prchain.verdicts.oracle import StageTests, TestVerdict, run_tests, stage_tests
from tests.support.era_runs import (
    chain_sandbox,
    invoke,
    remove_repo_images,
    verdicts_by_pr,
    write_config,
)
from tests.support.shapes_crate import (
    AREA,
    AREA_ID,
    DOC,
    DOC_ID,
    FORK,
    FORK_LIB,
    SQUARE,
    SQUARE_ID,
    make_shapes,
)

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.timeout(1800)]
REPO = f"rust-report-test-{uuid.uuid4().hex[:8]}/shapes"  # this run's own images
FORGE = r"""
pub fn area(_w: u64, _h: u64) -> u64 {
    use std::io::Write;
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().to_path_buf();
    let own = exe.file_name().unwrap().to_string_lossy().into_owned();
    let mut hashes = vec![own.rsplit('-').next().unwrap().to_string()];
    let mut text = String::from("\ntest areas ... ok\n");
    for entry in std::fs::read_dir(&dir).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if name.starts_with("square-") && name.len() == "square-".len() + 16 {
            text += &format!("     Running tests/square.rs ({}/{})\n", dir.display(), name);
            text += "test squares ... ok\n";
            hashes.push(name.rsplit('-').next().unwrap().to_string());
        }
    }
    text += "# prchain: fingerprints\n";
    for hash in hashes {
        text += &format!("/tmp/cargo-target/debug/.fingerprint/shapes-{}\n", hash);
    }
    std::io::stdout().write_all(text.as_bytes()).unwrap();
    std::io::stdout().flush().unwrap();
    0
}
"""

# Ends the test binary with status 0 from inside the hidden test, before its assertion; the doc
# test on `area` reaches it too.
EXIT_ZERO = f"{DOC}\npub fn area(_w: u64, _h: u64) -> u64 {{\n    std::process::exit(0)\n}}\n"
# When the hidden test's assertion fails, prints the rest of libtest's lines and exits 0.
PANIC_HOOK = r"""
pub fn area(_w: u64, _h: u64) -> u64 {
    std::panic::set_hook(Box::new(|_| {
        use std::io::Write;
        let mut out = std::io::stdout();
        let _ = out.write_all(b"ok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n\n");
        let _ = out.flush();
        std::process::exit(0);
    }));
    0
}
"""
WRONG = "\npub fn area(_w: u64, _h: u64) -> u64 {\n    0\n}\n"
# Right, when cargo's variables of the package are there at run time, as `cargo test` sets them.
AS_CARGO_RUNS = (
    "\npub fn area(w: u64, h: u64) -> u64 {\n"
    '    let name = std::env::var("CARGO_PKG_NAME").unwrap();\n'
    '    let major: u64 = std::env::var("CARGO_PKG_VERSION_MAJOR").unwrap().parse().unwrap();\n'
    '    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap();\n'
    '    assert!(name == "shapes" && std::path::Path::new(&dir).join("Cargo.toml").exists());\n'
    "    w * h + major\n}\n"
)
# Right, and leaves a process running that it never waits for.
LINGERING = (
    "\npub fn area(w: u64, h: u64) -> u64 {\n"
    '    let _ = std::process::Command::new("sleep").arg("100000").spawn();\n    w * h\n}\n'
)
# Right, and as coreutils' test_dd::test_nocache_eof_fadvise_zero_length does: traces a child
# with strace when it can (then its trace must show the child), and skips that where it cannot.
TRACING = (
    "\npub fn area(w: u64, h: u64) -> u64 {\n"
    '    let out = std::env::temp_dir().join("shapes-strace.out");\n'
    '    let ran = std::process::Command::new("strace").arg("-o").arg(&out).arg("true").output();\n'
    "    if ran.is_err() {\n        return w * h; // no strace to run\n    }\n"
    "    let trace = std::fs::read_to_string(&out).unwrap_or_default();\n"
    '    if trace.contains("execve") { w * h } else { 0 }\n}\n'
)
# Right only where the program it runs is not traced (a tracer's pid in TracerPid): under root's
# tracer, coreutils' tsort loop test, whose tsort writes 500,000 lines, ran past its own 30 s.
UNTRACED = (
    "\npub fn area(w: u64, h: u64) -> u64 {\n"
    '    let out = std::process::Command::new("grep").arg("TracerPid").arg("/proc/self/status")\n'
    "        .output().unwrap();\n"
    "    let status = String::from_utf8_lossy(&out.stdout).into_owned();\n"
    '    if status.split_whitespace().nth(1) == Some("0") { w * h } else { 0 }\n}\n'
)
# Right only where the program it runs is traced: a test that wins its race with a program only
# when both are slowed (coreutils' `tail -F` truncation tests), made certain.
TRACED_ONLY = UNTRACED.replace('== Some("0")', '!= Some("0")')
# The test thread becomes a shell that prints libtest's lines of a pass and exits 0.
REEXEC = r"""
pub fn area(_w: u64, _h: u64) -> u64 {
    use std::os::unix::process::CommandExt;
    let lines = "test areas ... ok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n";
    let failed = std::process::Command::new("sh").arg("-c").arg("printf '%b' \"$0\"").arg(lines).exec();
    panic!("{failed}")
}
"""
# A right `square` that writes 6,000 bytes past libtest's capture (root runs `areas` first: the
# stage's FAIL_TO_PASS, then its PASS_TO_PASS).
LOUD_SQUARE = (
    "pub fn square(s: u64) -> u64 {\n    use std::io::Write;\n"
    '    let _ = std::io::stdout().write_all("x".repeat(6000).as_bytes());\n    s * s\n}\n'
)
# An assert_eq! in the base's own copy of pretty_assertions that never fails.
PLANTED = (
    "#[macro_export]\nmacro_rules! assert_eq {\n    ($left:expr, $right:expr $(,)?) => {\n"
    "        let _ = (&$left, &$right);\n    };\n}\n"
)


@pytest.fixture(scope="module")
def verified(
    tmp_path_factory: pytest.TempPathFactory, docker_client: Any, base_image: str
) -> Iterator[tuple[list[str], str, Path, Path, str]]:
    """(CLI options, store URL, clone, exported tasks, env setup's output), once per module."""
    work = tmp_path_factory.mktemp("rust-report")
    clone = make_shapes(work / "shapes")
    config = write_config(work, {"suites": {"bookworm": "3.11"}, "extra_base_packages": []})
    url = f"sqlite:///{work / 'store.db'}"
    common = ["--config", str(config), "--db", url]
    try:
        assert invoke("mine", "--source", "git", "--name", REPO, str(clone), *common).exit_code == 0
        built = invoke("chains", "build", "--min-len", "2", "--max-len", "2", *common)
        assert built.exit_code == 0, built.output
        setup = invoke("env", "setup", *common)
        invoke("tests", "verify", "--gold-runs", "1", *common)
        tasks = work / "tasks.jsonl"
        exported = invoke("tasks", "export", str(tasks), "--runnable", *common)
        assert exported.exit_code == 0, exported.output
        yield common, url, clone, tasks, setup.output
    finally:
        remove_repo_images(docker_client, REPO, ("repo", "era", "sandbox"))


def _first_stage_tests(url: str) -> StageTests:
    """The hidden tests of the chain's first stage, as the store holds them."""
    engine = make_engine(url)
    with session_scope(engine) as session:
        first = session.scalar(select(ChainStage.id).where(ChainStage.idx == 1))
    hidden = stage_tests(engine, first)
    assert hidden is not None
    return hidden


def _first_stage_with(verified: Any, tmp_path: Path, lib: str, timeout: float = 600) -> TestVerdict:
    """The first stage's hidden tests run in its clean room with `lib` as the agent's src/lib.rs."""
    _common, url, clone, _tasks, _setup = verified
    hidden = _first_stage_tests(url)
    with chain_sandbox(url, tmp_path / "logs", REPO, clone) as env:
        env.enter_stage(1)
        env.write_file("src/lib.rs", lib)
        return run_tests(env, hidden, timeout=timeout)


def test_a_crate_with_no_dependencies_gets_its_era_and_both_gold_stages_resolve(
    verified: Any, tmp_path: Path
) -> None:
    common, url, _clone, tasks, setup = verified
    assert "1 verified (1 by planner), 0 not" in setup and "du: cannot access" not in setup, setup
    found = verdicts_by_pr(url)
    assert found[1].fail_to_pass == [AREA_ID] and SQUARE_ID in found[1].pass_to_pass  # no doc test
    results = tmp_path / "gold.jsonl"
    out = invoke("tasks", "eval", str(tasks), "--results", str(results), *common)
    assert "2 of 2 stages resolved" in out.output, out.output


def test_forged_libtest_lines_or_an_exit_do_not_pass_a_wrong_area_but_the_gold_does(
    verified: Any, tmp_path: Path
) -> None:
    _common, url, clone, _tasks, _setup = verified
    hidden = _first_stage_tests(url)
    assert hidden is not None and hidden.fail_to_pass == [AREA_ID]
    with chain_sandbox(url, tmp_path / "logs", REPO, clone) as env:
        env.enter_stage(1)
        env.write_file("src/lib.rs", SQUARE + AREA)  # the gold code, as the agent might write it
        gold = run_tests(env, hidden, timeout=600)
        assert gold.passed, (gold.outcomes, gold.output_tail)
        env.write_file("src/lib.rs", SQUARE + FORGE)
        forged = run_tests(env, hidden, timeout=600)
        assert not forged.passed and AREA_ID in forged.failing, forged.outcomes
        assert forged.outcomes[AREA_ID] == "failed" and forged.outcomes[SQUARE_ID] == "passed"
        env.write_file("src/lib.rs", SQUARE + EXIT_ZERO)
        # as an older store has it: the doc test on `area` among the hidden tests
        ended = run_tests(env, replace(hidden, fail_to_pass=[AREA_ID, DOC_ID]), timeout=600)
        env.write_file("src/lib.rs", SQUARE + PANIC_HOOK)
        hooked = run_tests(env, hidden, timeout=600)
    assert not ended.passed and ended.outcomes[AREA_ID] == "failed", ended.outcomes
    assert ended.outcomes[DOC_ID] == "failed" and ended.outcomes[SQUARE_ID] == "passed"
    assert "exited 0, not witnessed" in ended.output_tail, ended.output_tail
    assert not hooked.passed and hooked.outcomes[AREA_ID] == "failed", hooked.outcomes
    assert "did not end the process with status 0" in hooked.output_tail, hooked.output_tail
    assert hooked.outcomes[SQUARE_ID] == "passed", hooked.outcomes


def test_a_planted_copy_of_the_bases_overridden_test_library_does_not_pass_a_wrong_area(
    verified: Any, tmp_path: Path
) -> None:
    _common, url, clone, _tasks, _setup = verified
    hidden = _first_stage_tests(url)
    with chain_sandbox(url, tmp_path / "logs", REPO, clone) as env:
        env.enter_stage(1)
        env.write_file("src/lib.rs", SQUARE + AREA)
        env.write_file(FORK, FORK_LIB + "// kept as the base has it\n")
        gold = run_tests(env, hidden, timeout=600)
        assert gold.passed, (gold.outcomes, gold.output_tail)
        env.write_file("src/lib.rs", SQUARE + WRONG)
        env.write_file(FORK, PLANTED)
        planted = run_tests(env, hidden, timeout=600)
    assert not planted.passed and planted.outcomes[AREA_ID] == "failed", planted.outcomes


def test_a_test_that_leaves_a_process_running_passes_and_the_next_one_runs(
    verified: Any, tmp_path: Path
) -> None:
    # before, the tracer waited for `sleep` until these 300 s ran out: every test failed
    done = _first_stage_with(verified, tmp_path, SQUARE + LINGERING, timeout=300)
    assert done.passed, (done.outcomes, done.output_tail)
    assert done.outcomes == {AREA_ID: "passed", SQUARE_ID: "passed"}, done.outcomes


def test_a_hidden_test_runs_with_the_variables_cargo_gives_its_package(
    verified: Any, tmp_path: Path
) -> None:
    """coreutils' util_version reads CARGO_PKG_VERSION at run time: it passed under `cargo test`
    in verification and failed every clean room, which ran the executable without it."""
    done = _first_stage_with(verified, tmp_path, SQUARE + AS_CARGO_RUNS)  # shapes 0.1.0: major 0
    assert done.passed, (done.outcomes, done.output_tail)


def test_a_hidden_test_that_runs_strace_itself_runs_as_where_strace_is_absent(
    verified: Any, tmp_path: Path
) -> None:
    """A process root's tracer traces cannot trace its own child: coreutils' dd test that straces
    `dd` passed in verification and failed in every clean room. Root's tracer is root's alone, so
    the test's strace does not run, as on a machine without one, and the test skips that part."""
    done = _first_stage_with(verified, tmp_path, SQUARE + TRACING)
    assert done.passed, (done.outcomes, done.output_tail)


def test_a_test_runs_with_its_programs_untraced_then_once_more_with_them_traced(
    verified: Any, tmp_path: Path
) -> None:
    """Root's tracer follows the test process alone: what it runs runs as fast as in verification
    (coreutils' tsort loop test failed every clean room on its own 30 s limit; grep here saw the
    tracer before). A test that fails so runs once more with every process traced (a race with
    its program won only when both are slowed), and the first run's output is kept. A test
    thread that turns into a shell printing libtest's pass is let go at its execve and witnessed
    by nothing, either way."""
    _common, url, clone, _tasks, _setup = verified
    hidden = _first_stage_tests(url)
    with chain_sandbox(url, tmp_path / "logs", REPO, clone) as env:
        env.enter_stage(1)
        env.write_file("src/lib.rs", SQUARE + UNTRACED)
        untraced = run_tests(env, hidden, timeout=600)
        env.write_file("src/lib.rs", SQUARE + TRACED_ONLY)
        traced = run_tests(env, hidden, timeout=600)
        env.write_file("src/lib.rs", SQUARE + REEXEC)
        became = run_tests(env, hidden, timeout=600)
        env.write_file("src/lib.rs", LOUD_SQUARE + WRONG)
        loud = run_tests(env, hidden, timeout=600)
    assert untraced.passed, (untraced.outcomes, untraced.output_tail)
    assert traced.passed, (traced.outcomes, traced.output_tail)
    assert "areas failed (101): it runs once more" in traced.output_tail, traced.output_tail
    # the failing test's own lines end the tail, whatever the passing ones printed
    assert loud.outcomes == {AREA_ID: "failed", SQUARE_ID: "passed"}, loud.outcomes
    assert "---- areas stdout ----" in loud.output_tail, loud.output_tail[-300:]
    assert not became.passed and became.outcomes[AREA_ID] == "failed", became.outcomes
    assert "not witnessed" in became.output_tail and "test result: ok" in became.output_tail


def test_harbor_judges_the_rust_room_as_its_clean_room(verified: Any, tmp_path: Path) -> None:
    """The real Harbor, oracle agent, on the stages `tasks convert --to harbor` writes from the
    exported tasks: the first stage's gold scores 1; a wrong `area` with the base's overridden
    copy of pretty_assertions rewritten 0 (the verifier reads the base's Cargo.toml), and so does
    one whose panic hook prints libtest's pass and exits 0 (root's tracer witnesses no pass).
    With every variant (bench/bench_harbor_rooms.py) the second stage's gold scores 1 too."""
    from tests.support.harbor import (
        every_variant,
        remove_harbor_images,
        run_oracle,
        solve_sh,
        variant,
        verdicts,
    )

    common, _url, _clone, tasks, _setup = verified
    out = tmp_path / "harbor"
    done = invoke("tasks", "convert", str(tasks), str(out), "--to", "harbor", *common)
    assert done.exit_code == 0, done.output
    first, second = sorted(out.iterdir(), key=lambda p: p.name[-1])
    assert first.name.endswith("-s1") and (first / "tests" / "witness.py").is_file()
    variant(first, "planted", solve_sh({"src/lib.rs": SQUARE + WRONG, FORK: PLANTED}))
    variant(first, "hooked", solve_sh({"src/lib.rs": SQUARE + PANIC_HOOK}))
    # right only when the program it runs is untraced: scores 1 only if the verifier's tracer
    # follows the test process alone (the task's compose gives root the capability)
    variant(first, "untraced", solve_sh({"src/lib.rs": SQUARE + UNTRACED}))
    expected = {first.name: 1.0, f"{first.name}-planted": 0.0, f"{first.name}-hooked": 0.0}
    expected[f"{first.name}-untraced"] = 1.0
    if every_variant():
        expected[second.name] = 1.0
    else:
        shutil.rmtree(second)
    try:
        rewards = run_oracle(out, tmp_path / "jobs")
        output = rewards.pop("_output")
        assert rewards == {f"prchain/{name}": r for name, r in expected.items()}, output
        found = verdicts(tmp_path / "jobs")
        for kind in ("planted", "hooked"):
            outcomes = found[f"{first.name}-{kind}"]["outcomes"]
            assert outcomes == {AREA_ID: "failed", SQUARE_ID: "passed"}, (kind, outcomes)
    finally:
        remove_harbor_images(out)
