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
                str(tmp_path / "args"), str(tmp_path / "apart"), str(tmp_path / "kind"))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "kind").read_text() == "cases"
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


def _room_task(tmp_path: Path, ecosystem: str, command: str, test_files: list[str],
               f2p: list[str], p2p: list[str], test_patch: str = "") -> Path:  # fmt: skip
    """A non-Python stage's task directory, as `tasks convert --to harbor` writes it."""
    stage = {
        "idx": 1, "instance_id": f"acme__{ecosystem}-1", "base_commit": "0" * 40, "patch": "x",
        "test_patch": test_patch, "problem_statement": "Area.", "FAIL_TO_PASS": f2p, "PASS_TO_PASS": p2p,
        "environment": {
            "runnable": True, "not_runnable": "", "ecosystem": ecosystem, "log_parser": ecosystem,
            "image": "prchain/repo-acme-x:0", "image_id": "sha256:0", "era": "e",
            "workdir": "/work/repo", "checkout": ["true"], "setup_command": "",
            "test_command": command, "test_files": test_files,
        },
    }  # fmt: skip
    chain = {"chain_id": 1, "repo": f"acme/{ecosystem}", "stages": [stage]}
    summary = harbor.write([chain], tmp_path / "tasks", timeout=60, cap=1 << 20)
    assert summary.written, summary.skipped
    return tmp_path / "tasks" / summary.written[0] / "tests"


GO_MANIFESTS = {
    "go.mod": "module example.com/shapes\n\ngo 1.22\n\nreplace github.com/stretchr/testify"
    " => ./forks/testify\nreplace example.com/own => ./own\n",
    "geo/go.mod": "module example.com/shapes/geo\n\nreplace github.com/stretchr/testify v1.8.4"
    " => ../forks/testify2 // a comment\n",
    "forks/is/go.mod": "module github.com/matryer/is\n",
    "vendor/x/go.mod": "module github.com/stretchr/testify\n",  # vendor/: not read by go
}
RUST_MANIFESTS = {
    "Cargo.toml": '[package]\nname = "s"\n\n[dev-dependencies]\n'
    'pretty_assertions = { path = "forks/pa" }\nserde = { path = "own/serde" }\n\n'
    '[patch.crates-io]\nproptest = { path = "forks/proptest" }\n',
    ".cargo/config.toml": 'paths = ["forks/any"]\n\n[source.local]\ndirectory = "vendored"\n',
}


NODE_MANIFESTS = {
    "package.json": json.dumps(
        {"name": "s", "jest": {"setupFilesAfterEnv": ["./support/expect.js"]},
         "scripts": {"test": "mocha --require test/hooks.js"}}
    ),
}  # fmt: skip


@pytest.mark.parametrize(
    ("ecosystem", "files"),
    [("go", GO_MANIFESTS), ("rust", RUST_MANIFESTS), ("node", NODE_MANIFESTS)],
)
def test_the_overridden_paths_are_crossings_and_the_change_below_them_stays_out(
    tmp_path: Path, ecosystem: str, files: dict[str, str]
) -> None:
    from prchain.verdicts.crossing import overridden_dirs

    tests = _room_task(tmp_path, ecosystem, "go test {files}", [], ["a::T"], [])
    tree = tmp_path / "tree"
    for rel, text in files.items():
        (tree / rel).parent.mkdir(parents=True, exist_ok=True)
        (tree / rel).write_text(text)
    read = {k: v for k, v in files.items() if not k.startswith("vendor/")}
    expected = overridden_dirs(ecosystem, read)
    assert expected  # the case has overrides to find
    sections = [f"{d}/lib.src" for d in expected] + ["src/area.src", "own/kept.src"]
    change = "".join(
        f"diff --git a/{p} b/{p}\nnew file mode 100644\n--- /dev/null\n+++ b/{p}\n@@ -0,0 +1 @@\n+x\n"
        for p in sections
    )
    (tmp_path / "in.diff").write_text(change)
    done = _run(tests, "overrides", str(tests / "room.json"), str(tree),
                str(tmp_path / "in.diff"), str(tmp_path / "out.diff"))  # fmt: skip
    assert done.returncode == 0, done.stderr
    kept = (tmp_path / "out.diff").read_text()
    assert "b/src/area.src" in kept and "b/own/kept.src" in kept
    assert all(f"{d}/lib.src" not in kept and f"{d}/lib.src" in done.stderr for d in expected)


GO_EVENTS = [
    {"Action": "pass", "Package": "example.com/shapes", "Test": "TestArea"},
    {"Action": "pass", "Package": "example.com/shapes", "Test": "TestSquare"},
]


@pytest.mark.parametrize("witness_ran", [True, False])
def test_a_go_run_counts_only_with_roots_witness_passing(tmp_path: Path, witness_ran: bool) -> None:
    from prchain.environments.eras.go.report import WITNESS_FILE

    tests = _room_task(
        tmp_path, "go", "go test ./...", ["shapes_test.go"],
        ["example.com/shapes::TestArea"], ["example.com/shapes::TestSquare"],
    )  # fmt: skip
    assert "prchain '' \"${hidden[@]}\"" in (tests / "test.sh").read_text()  # no rewrite: Rust's
    tree, work, verifier = tmp_path / "tree", tmp_path / "work", tmp_path / "verifier"
    for made in (tree, work, verifier):
        made.mkdir()
    (tree / "shapes_test.go").write_text('package shapes\n\nimport "testing"\n')
    done = _run(tests, "plant", str(tests / "room.json"), str(tree), str(work))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [WITNESS_FILE]
    planted = (tree / WITNESS_FILE).read_text()
    name = (work / "witness.nonce").read_text()
    assert "package shapes_test" in planted and f"func {name}(t *testing.T)" in planted
    events = GO_EVENTS + (
        [{"Action": "pass", "Package": "example.com/shapes", "Test": name}] if witness_ran else []
    )
    (work / "report").write_text("".join(json.dumps(e) + "\n" for e in events))
    done = _run(tests, "decide", str(tests / "room.json"), str(verifier), str(work))
    assert done.returncode == 0, done.stderr
    verdict = json.loads((verifier / "verdict.json").read_text())
    assert verdict["resolved"] is witness_ran, verdict
    assert name not in json.dumps(verdict["outcomes"])


RUST_LISTING = (
    '{"reason":"compiler-artifact","profile":{"test":true},'
    '"package_id":"path+file:///work/repo#shapes@0.1.0","manifest_path":"/work/repo/Cargo.toml",'
    '"executable":"/work/.cache/t/debug/deps/areas-4a2375d417cb2b53"}\n'
    "# prchain: fingerprints\n/work/.cache/t/debug/.fingerprint/shapes-4a2375d417cb2b53\n"
)


def test_a_rust_stage_runs_each_test_under_roots_tracer(tmp_path: Path) -> None:
    from prchain.environments.clean_room import RUN_EACH
    from prchain.environments.eras.rust import qualify, witness

    tests = _room_task(
        tmp_path, "rust", "cargo test --no-fail-fast -p shapes", ["tests/areas.rs"],
        ["shapes/areas::areas"], ["shapes(doc)::src/lib.rs - area"],
    )  # fmt: skip
    assert (tests / "witness.py").read_text() == witness.source()
    assert harbor.shlex.quote(RUN_EACH) in (tests / "test.sh").read_text()
    # root's seal rewrites the hidden tests' standard macros as the clean room's does
    sealing = f'prchain {harbor.shlex.quote(qualify.source())} "${{hidden[@]}}"'
    assert sealing in (tests / "test.sh").read_text()
    (tmp_path / "listing").write_text(RUST_LISTING)
    args, apart, kind = (tmp_path / n for n in ("args", "apart", "kind"))
    done = _run(tests, "each", str(tests / "room.json"), str(tmp_path / "listing"),
                str(args), str(apart), str(kind))  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert kind.read_text() == "libtest"
    assert args.read_bytes().split(b"\0")[:-1] == [
        b"/work/repo",
        b"/work/.cache/t/debug/deps/areas-4a2375d417cb2b53",
        b"areas",
        b"shapes@0.1.0",  # cargo's variables of the package, as `cargo test` sets them
    ]
    verifier, work = tmp_path / "verifier", tmp_path / "work"
    verifier.mkdir()
    work.mkdir()
    (work / "listing").write_text(RUST_LISTING)
    (verifier / "each-output.log").write_text(f"prchain-each 0 0\n{EACH_LOG}\n")
    done = _run(tests, "decide", str(tests / "room.json"), str(verifier), str(work))
    verdict = json.loads((verifier / "verdict.json").read_text())
    # the doc test is not judged (its text is the agent's source): failed, as the clean room has it
    assert verdict["outcomes"] == {
        "shapes/areas::areas": "passed", "shapes(doc)::src/lib.rs - area": "failed"
    }  # fmt: skip
    assert not verdict["resolved"]


def _jest_report(tests: dict[str, list[tuple[list[str], str, str]]]) -> str:
    """jest's --json report: file → (describe titles, title, status) of each test."""
    files = [
        {"name": f"/work/repo/{name}", "assertionResults": [
            {"ancestorTitles": above, "title": title, "status": status}
            for above, title, status in cases
        ]}
        for name, cases in tests.items()
    ]  # fmt: skip
    return json.dumps({"testResults": files})


NODE_HIDDEN = "src/area.spec.js"
NODE_REQUIRED = [f"{NODE_HIDDEN}::shapes > computes the area", f"{NODE_HIDDEN}::shapes > squares"]


def _planted_node_room(tmp_path: Path, runner: str) -> tuple[Path, Path, Path, str, str]:
    """A Node stage's task with root's canary planted: (its tests/, the work and verifier
    directories, the canary's file and its test's title)."""
    tests = _room_task(
        tmp_path, "node", f"node_modules/.bin/{runner} {NODE_HIDDEN}", [NODE_HIDDEN],
        NODE_REQUIRED[:1], NODE_REQUIRED[1:],
    )  # fmt: skip
    tree, work, verifier = tmp_path / "tree", tmp_path / "work", tmp_path / "verifier"
    for made in (tree / "src", work, verifier):
        made.mkdir(parents=True)
    done = _run(tests, "plant", str(tests / "room.json"), str(tree), str(work))
    assert done.returncode == 0, done.stderr
    [canary] = done.stdout.split()
    assert canary.startswith("src/prchain-canary-") and canary.endswith(".spec.js")
    assert "throw new Error" in (tree / canary).read_text()
    assert canary in (work / "run.sh").read_text() and NODE_HIDDEN in (work / "run.sh").read_text()
    title = (work / "canary.id").read_text().split("::", 1)[1]
    return tests, work, verifier, canary, title


def _node_report(canary: str, title: str, canary_failed: bool) -> str:
    """jest's report of both hidden tests passing, with root's canary failing or absent."""
    report = {
        NODE_HIDDEN: [
            (["shapes"], "squares", "passed"),
            (["shapes"], "computes the area", "passed"),
        ]
    }
    if canary_failed:
        report[canary] = [([], title, "failed")]
    return _jest_report(report)


def _decided(tests: Path, verifier: Path, work: Path) -> dict[str, Any]:
    done = _run(tests, "decide", str(tests / "room.json"), str(verifier), str(work))
    assert done.returncode == 0, done.stderr
    return dict(json.loads((verifier / "verdict.json").read_text()))


@pytest.mark.parametrize("runner", ["jest", "vitest run"])
@pytest.mark.parametrize("canary_failed", [True, False])
def test_a_node_run_counts_only_with_roots_canary_failing(
    tmp_path: Path, canary_failed: bool, runner: str
) -> None:
    tests, work, verifier, canary, title = _planted_node_room(tmp_path, runner)
    (work / "report").write_text(_node_report(canary, title, canary_failed))
    verdict = _decided(tests, verifier, work)
    assert verdict["resolved"] is canary_failed, verdict


def test_a_console_forged_by_the_tested_code_passes_nothing(tmp_path: Path) -> None:
    """Issue 77, round 5, in a Harbor verifier: the agent's code prints vitest's verbose lines of
    the hidden tests passing and of root's canary failing (its file is in the tree it runs in),
    then ends the process before vitest writes its report. The console can fail a test, never
    pass one (`reports.reported_passes`, as `sandbox.run_suite` reads a clean room's run)."""
    tests, work, verifier, canary, title = _planted_node_room(tmp_path, "vitest run")
    forged = [
        f" ✓ {NODE_HIDDEN} > shapes > squares 1ms",
        f" ✓ {NODE_HIDDEN} > shapes > computes the area 2ms",
        f" × {canary} > {title} 1ms",
    ]
    (verifier / "test-output.log").write_text("\n".join(forged) + "\n")
    verdict = _decided(tests, verifier, work)
    assert not verdict["resolved"], verdict
    assert set(verdict["failing"]) == set(NODE_REQUIRED)
    # the same console lines beside vitest's report of the same run: the report's passes count
    (work / "report").write_text(_node_report(canary, title, canary_failed=True))
    assert _decided(tests, verifier, work)["resolved"]


JAVA_TEST = "src/test/java/org/acme/calc/TwiceTest.java"
JAVA_TEST_PATCH = (
    f"diff --git a/{JAVA_TEST} b/{JAVA_TEST}\nnew file mode 100644\n--- /dev/null\n"
    f"+++ b/{JAVA_TEST}\n@@ -0,0 +1 @@\n+package org.acme.calc;\n"
)


def _surefire(cases: dict[str, tuple[str, str]]) -> str:
    """The report Surefire.script gathers: one TEST-*.xml per class, each after its marker line;
    `cases`: class → (method, outcome)."""
    parts = []
    for owner, (method, outcome) in cases.items():
        inner = "<failure message='x'/>" if outcome == "failed" else ""
        parts.append(
            f"\n<!-- prchain-report ./target/surefire-reports/TEST-{owner}.xml -->\n"
            f"<testsuite name='{owner}'><testcase name='{method}' classname='{owner}'>"
            f"{inner}</testcase></testsuite>"
        )
    return "".join(parts)


@pytest.mark.parametrize(
    ("imports", "canary_failed"),
    [("org.junit.Test", True), ("org.junit.Test", False), ("org.junit.jupiter.api.Test", True)],
)
def test_a_java_run_counts_only_with_roots_canary_class_failing(
    tmp_path: Path, imports: str, canary_failed: bool
) -> None:
    """The stage's `test_files` hold surefire's selection, not a path: root's canary class is
    planted from the hidden test's text as the test patch put it in the tree (its path from the
    patch), in the hidden classes' module, selected beside them and run last."""
    command = "mvn -o -q test -DfailIfNoTests=false -Dtest=TwiceTest"
    twice = "org.acme.calc.TwiceTest::doubles"
    tests = _room_task(
        tmp_path, "java", command, ["-Dtest=TwiceTest"], [twice], [], JAVA_TEST_PATCH
    )  # fmt: skip
    tree, work, verifier = tmp_path / "tree", tmp_path / "work", tmp_path / "verifier"
    for made in ((tree / JAVA_TEST).parent, work, verifier):
        made.mkdir(parents=True)
    (tree / JAVA_TEST).write_text(
        f"package org.acme.calc;\n\nimport {imports};\n\npublic class TwiceTest {{}}\n"
    )
    done = _run(tests, "plant", str(tests / "room.json"), str(tree), str(work))
    assert done.returncode == 0, done.stderr
    [canary] = done.stdout.split()
    name = canary.removeprefix("src/test/java/zzzz/prchain/").removesuffix(".java")
    assert name.startswith("PrchainCanary") and name.endswith("Test") and "/" not in name
    assert f"@{imports}" in (tree / canary).read_text()
    run = (work / "run.sh").read_text()
    assert f"-Dtest=TwiceTest,{name} -Dsurefire.runOrder=alphabetical" in run
    assert (work / "canary.id").read_text() == f"zzzz.prchain.{name}::canary"
    cases = {"org.acme.calc.TwiceTest": ("doubles", "passed")}
    if canary_failed:
        cases[f"zzzz.prchain.{name}"] = ("canary", "failed")
    (work / "report").write_text(_surefire(cases))
    done = _run(tests, "decide", str(tests / "room.json"), str(verifier), str(work))
    assert done.returncode == 0, done.stderr
    verdict = json.loads((verifier / "verdict.json").read_text())
    assert verdict["resolved"] is canary_failed, verdict
    assert verdict["outcomes"] == {twice: "passed" if canary_failed else "failed"}


@pytest.mark.parametrize("room", [r for r in harbor.ROOMS if r != "python"])
def test_each_rooms_shipped_modules_import_only_each_other_and_the_standard_library(
    room: str,
) -> None:
    import ast

    files = harbor.reader_files(room)
    shipped = {
        path.removesuffix(".py").removesuffix("/__init__").replace("/", ".") for path in files
    }
    for path, text in files.items():
        for node in ast.walk(ast.parse(text)):
            names = (
                [a.name for a in node.names] if isinstance(node, ast.Import)
                else [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level
                else []
            )  # fmt: skip
            for name in names:
                top = name.split(".")[0]
                assert name in shipped or (top != "prchain" and top in sys.stdlib_module_names), (
                    room, path, name,
                )  # fmt: skip
