"""The C/C++ room without Docker: build files read, suites and packages chosen, reports read."""

from __future__ import annotations

import json
import re
import shlex
import subprocess
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

import prchain.environments.eras.c as c_room
from prchain.dev.repos import git
from prchain.environments.eras.c import C, missing, packages, systems
from prchain.environments.eras.c.report import SECTION, CTests, parse_bundle, parse_console
from prchain.environments.eras.config import ErasConfig
from prchain.environments.eras.ecosystems import detect
from prchain.environments.eras.manifests import Snapshot, snapshot
from tests.support.eras_repo import commit_files

CMAKE = """cmake_minimum_required(VERSION 3.5...3.28)
project(cbor C)
option(WITH_TESTS "[TEST] Build unit tests (requires CMocka)" OFF)
find_package(Threads)
pkg_check_modules(DEPS REQUIRED glib-2.0>=2.50 libpcre2-8)
"""
MESON = """project('kb', 'c', meson_version: '>= 0.62')
xml = dependency('libxml-2.0', required: false)
m = cc.find_library('m')
"""
MESON_OPTIONS = "option('enable-tests', type: 'boolean', value: false)\n"
CONFIGURE_AC = """AC_PREREQ([2.69])
AC_ARG_ENABLE([tests], [AS_HELP_STRING([--enable-tests])])
PKG_CHECK_MODULES([ZLIB], [zlib >= 1.2])
AC_CHECK_LIB([sodium], [sodium_init])
"""


def _snap(files: dict[str, str], day: str = "2024-03-01") -> Snapshot:
    when = datetime.fromisoformat(f"{day}T00:00:00+00:00")
    paths = [*files, "src/a.c", "test/test_a.c"]
    return Snapshot("0" * 40, when, files, paths, tests=("test/test_a.c",))


def test_cmake_build_files_give_minimum_libraries_and_test_switches() -> None:
    found = systems.read(_snap({"CMakeLists.txt": CMAKE}), "cmake")
    assert found.system == "cmake" and found.minimum == "3.5"
    assert found.libraries == ("Threads", "glib-2.0", "libpcre2-8")
    assert "-DWITH_TESTS=ON" in found.test_switches and not found.cxx


def test_an_option_that_turns_tests_off_or_asks_for_a_tool_is_no_test_switch() -> None:
    """jansson's options: ON would drop its tests, or run them under valgrind."""
    text = (
        'option(JANSSON_WITHOUT_TESTS "Don\'t build tests" OFF)\n'
        'option(JANSSON_TEST_WITH_VALGRIND "Enable valgrind tests." OFF)\n'
        'option(DISABLE_TESTS "x" OFF)\noption(ENABLE_COVERAGE_TESTS "x" OFF)\n'
        'option(WITH_TESTS "x" OFF)\n'
    )
    found = systems.read(_snap({"CMakeLists.txt": text}), "cmake")
    assert found.test_switches == ("-DBUILD_TESTING=ON", "-DWITH_TESTS=ON")


def test_meson_and_autotools_build_files() -> None:
    meson = systems.read(_snap({"meson.build": MESON, "meson_options.txt": MESON_OPTIONS}), "meson")
    assert (meson.minimum, meson.libraries) == ("0.62", ("libxml-2.0", "m"))
    assert meson.test_switches == ("-Denable-tests=true",)
    auto = systems.read(_snap({"configure.ac": CONFIGURE_AC}), "autotools")
    assert (auto.minimum, auto.libraries) == ("2.69", ("zlib", "sodium"))
    assert auto.test_switches == ("--enable-tests",)


def test_cmake_wins_over_autotools_and_c_tests_choose_the_room() -> None:
    snap = _snap({"CMakeLists.txt": CMAKE, "configure.ac": CONFIGURE_AC})
    assert systems.system(snap) == "cmake"
    assert (found := detect(snap, ["test/test_a.c"])) is not None and found.name == "c"
    assert C().owns("test/test_a.c") and C().owns("tests/unit/x.cpp") and not C().owns("src/a.c")


def test_suite_is_the_newest_of_the_date_unless_the_build_asks_a_newer_tool() -> None:
    suites = ErasConfig().suites
    assert packages.choose_suite("2022-11-01", suites, "3.13", "cmake") == "bullseye"
    assert packages.choose_suite("2023-07-01", suites, "3.13", "cmake") == "bookworm"
    # bullseye's cmake is 3.18: a project asking for 3.20 gets bookworm's 3.25
    assert packages.choose_suite("2022-11-01", suites, "3.20", "cmake") == "bookworm"
    assert packages.choose_suite("2020-01-01", suites, "", "meson") == "bullseye"


def test_library_names_become_debian_package_candidates() -> None:
    assert packages.candidates("ZLIB") == ["zlib1g-dev"]
    assert packages.candidates("Threads") == []
    assert packages.candidates("CMocka") == ["libcmocka-dev"]
    assert packages.candidates("libfoo-2.0")[:3] == [
        "liblibfoo-2.0-dev",
        "libfoo-2.0-dev",
        "libfoo-dev",
    ]


def test_the_install_script_takes_the_first_candidate_the_suite_has(tmp_path: Path) -> None:
    """Run in bash with an apt-cache that knows two packages and an apt-get that records."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "apt-cache").write_text(
        '#!/bin/sh\ncase "$2" in libyaml-dev|zlib1g-dev) exit 0;; esac\nexit 100\n'
    )
    (bin_dir / "apt-get").write_text(f'#!/bin/sh\necho "$@" > {tmp_path}/installed\n')
    for tool in bin_dir.iterdir():
        tool.chmod(0o755)
    script = packages.install_script(["yaml-0.1", "ZLIB", "nosuchthing", "Threads"], ["gdb"])
    ran = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script],
        env={"PATH": f"{bin_dir}:/usr/bin:/bin"},
        capture_output=True,
        text=True,
    )
    assert ran.returncode == 0, ran.stderr
    assert "no Debian package found for nosuchthing" in ran.stdout
    assert (tmp_path / "installed").read_text().split()[-3:] == ["gdb", "libyaml-dev", "zlib1g-dev"]


def test_a_configure_step_s_missing_library_is_added_by_the_revision() -> None:
    log = (
        "-- Could NOT find CMocka (missing: CMOCKA_LIBRARIES)\n"
        "Run-time dependency xkeyboard-config found: NO (tried pkgconfig)\n"
        "No package 'zlib' found\n"
    )
    assert missing(log) == ["CMocka", "xkeyboard-config", "zlib"]
    snap = _snap({"CMakeLists.txt": CMAKE})
    plan = C().plans(snap, ErasConfig())[0]
    revised = C().revise(snap, ErasConfig(), plan, log, False)
    assert revised is not None and revised.variant == "missing:CMocka,xkeyboard-config,zlib"
    assert C().revise(snap, ErasConfig(), revised, log, False) is None  # nothing new: stop
    assert "-DWITH_TESTS=ON" in plan.setup_command and "ctest" in plan.test_command


CTEST_JUNIT = """<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="Linux-c++" tests="3" failures="1" disabled="0" skipped="1" hostname="" time="0" timestamp="2026-11-28T09:00:00">
\t<testcase name="test_matches" classname="test_matches" time="0.01" status="run">
\t\t<system-out>ok</system-out>
\t</testcase>
\t<testcase name="test_count" classname="test_count" time="0.01" status="fail">
\t\t<failure message="Failed"/>
\t</testcase>
\t<testcase name="test_first" classname="test_first" time="0" status="notrun">
\t\t<skipped message="Unable to find executable"/>
\t</testcase>
</testsuite>
"""
GTEST_XML = """<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="2" failures="1" name="AllTests">
  <testsuite name="Encoder" tests="2" failures="1">
    <testcase name="Ints" status="run" result="completed" classname="Encoder" />
    <testcase name="Floats" status="run" result="completed" classname="Encoder">
      <failure message="x" type=""/>
    </testcase>
  </testsuite>
</testsuites>
"""
MESON_LOG = "\n".join(
    json.dumps(e)
    for e in [
        {"name": "xkbcommon / keymap", "result": "OK"},
        {"name": "xkbcommon:unit / rules", "result": "FAIL"},
        {"name": "slow", "suite": ["xkbcommon", "slow"], "result": "SKIP"},
    ]
)
TRS = ":test-result: PASS\n:global-test-result: PASS\n:recheck: no\n"
TAP_TRS = ":test-result: PASS\n:test-result: FAIL\n:global-test-result: FAIL\n"
TAP_LOG = "1..3\nok 1 - parses salts\nnot ok 2 - rejects bad salt\nok 3 # SKIP no yescrypt\n"


def _bundle(*parts: tuple[str, str, str]) -> str:
    return "".join(f"{SECTION} {kind} {label}\n{text}\n" for kind, label, text in parts)


def test_ctest_junit_and_a_framework_s_xml_give_per_test_outcomes() -> None:
    report = _bundle(("ctest", "ctest.xml", CTEST_JUNIT), ("xml", "encoder.xml", GTEST_XML))
    output = "FAILED: test/CMakeFiles/test_first.dir/test_first.c.o\nninja: build stopped\n"
    assert parse_bundle(report, output) == {
        "ctest::test_matches": "passed",
        "ctest::test_count": "failed",
        "Encoder::Ints": "passed",
        "Encoder::Floats": "failed",
        # test_first's executable did not build: no outcome, its object an environment fact
        "test/CMakeFiles/test_first.dir/test_first.c.o": "error",
    }


def test_meson_and_automake_reports() -> None:
    report = _bundle(
        ("meson", "testlog", MESON_LOG),
        ("trs", "test/crypt-badsalt", TRS),
        ("log", "test/crypt-badsalt", "PASS\n"),
        ("trs", "test/salts", TAP_TRS),
        ("log", "test/salts", TAP_LOG),
    )
    assert CTests().parse(report, "") == {
        "xkbcommon::keymap": "passed",
        "xkbcommon:unit::rules": "failed",
        "xkbcommon::slow": "skipped",
        "test/crypt-badsalt::crypt-badsalt": "passed",
        "test/salts::parses salts": "passed",
        "test/salts::rejects bad salt": "failed",
        "test/salts::#3": "skipped",
    }


def test_without_a_report_the_console_s_result_lines_are_read() -> None:
    output = (
        "1/3 Test #1: test_matches .....................   Passed    0.00 sec\n"
        "2/3 Test #2: test_count .......................***Failed    0.00 sec\n"
        "3/3 Test #3: test_first .......................***Not Run   0.00 sec\n"
        "PASS: tests/jqtest 1 - basics\nFAIL: tests/shtest\n"
        "2/2 mes:unit / bad FAIL            0.26s   exit status 1\n"
        "make[2]: *** [Makefile:1203: src/jv.lo] Error 1\n"
        "src/jv.c:12:5: error: implicit declaration of function 'jv_new'\n"
    )
    assert parse_console(output) == {
        "ctest::test_matches": "passed",
        "ctest::test_count": "failed",
        "tests/jqtest::basics": "passed",
        "tests/shtest::shtest": "failed",
        "mes:unit::bad": "failed",
        "src/jv.lo": "error",
    }
    assert CTests().root_error(output).startswith("src/jv.c:12:5: error: implicit declaration")
    assert CTests().names("ctest::test_count") == ["test_count"]
    assert CTests().names("test/salts::parses salts") == []


def test_the_script_gathers_a_bundle_from_the_runners_files(tmp_path: Path) -> None:
    """The wrapped command writes a gtest XML where GTEST_OUTPUT says; the script bundles it."""
    report = tmp_path / "report"
    command = f'printf %s {shlex.quote(GTEST_XML)} > "${{GTEST_OUTPUT#xml:}}enc.xml"'
    script = CTests().script(command, str(report))
    ran = subprocess.run(["bash", "-c", script], capture_output=True, text=True, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert CTests().parse(report.read_text(), "") == {
        "Encoder::Ints": "passed",
        "Encoder::Floats": "failed",
    }


def test_era_facts_are_the_build_facts_not_the_build_files() -> None:
    snap = _snap({"CMakeLists.txt": CMAKE})
    more = _snap({"CMakeLists.txt": CMAKE + "add_library(extra src/extra.c)\n"})
    assert C().era_facts(snap) == C().era_facts(more)
    assert C().era_facts(snap)["libraries"] == ["Threads", "glib-2.0", "libpcre2-8"]
    assert datetime(2024, 3, 1, tzinfo=UTC) == snap.date


CMOCKA_OUT = (
    '<?xml version="1.0" encoding="UTF-8" ?>\n<testsuites>\n  <testsuite name="tests" '
    'tests="2">\n    <testcase name="test_array_start" >\n    </testcase>\n    <testcase '
    'name="test_bad" >\n      <failure><![CDATA[0 != 1]]></failure>\n    </testcase>\n'
    "  </testsuite>\n</testsuites>\n"
)


def test_cmocka_cases_printed_under_ctest_are_ids_of_their_ctest_test() -> None:
    """Every libcbor binary names its cmocka group `tests`: ids take the ctest test's name."""
    from xml.sax.saxutils import escape

    junit = (
        '<testsuite name="x" tests="1"><testcase name="ctest_run_array_test" status="fail">'
        f'<failure message=""/><system-out>{escape(CMOCKA_OUT)}</system-out></testcase></testsuite>'
    )
    assert parse_bundle(_bundle(("ctest", "ctest.xml", junit)), "") == {
        "ctest::ctest_run_array_test": "failed",
        "ctest_run_array_test::test_array_start": "passed",
        "ctest_run_array_test::test_bad": "failed",
    }


def test_ctest_lines_count_beside_a_framework_s_files_when_ctest_writes_no_junit() -> None:
    report = _bundle(("xml", "encoder.xml", GTEST_XML))
    output = "1/1 Test #1: encoder .....................   Passed    0.00 sec\n"
    found = CTests().parse(report, output)
    assert found["ctest::encoder"] == "passed" and found["Encoder::Floats"] == "failed"


def test_a_clean_room_runs_each_ctest_test_and_gtest_case_from_ctests_listing(
    tmp_path: Path,
) -> None:
    """The build script replaces the ctest run by ctest's listing (nothing runs); each required
    test then gets root's single run: a ctest test by ctest, a GoogleTest case by the binary that
    holds it with `--gtest_filter`; a cmocka case of a ctest test is left to the report."""
    (tmp_path / "CMakeLists.txt").write_text(
        "cmake_minimum_required(VERSION 3.10)\nproject(p NONE)\nenable_testing()\n"
        'add_test(NAME unit COMMAND /bin/sh -c "exit 0")\n'
        "add_test(NAME groups COMMAND /bin/true --verbose)\n"
        'add_test(NAME "Area.Unit" COMMAND /bin/echo --gtest_filter=Area.Unit --x)\n'
        "set_tests_properties(unit PROPERTIES WORKING_DIRECTORY /tmp)\n"
    )
    build = tmp_path / "b"
    command = f"cmake -S . -B {build} > /dev/null; cd {build} && ctest --output-on-failure"
    script = CTests().build_script(command, str(tmp_path / "listing"))
    assert script is not None and CTests().build_script("make -k check", "-") is None
    ran = subprocess.run(["bash", "-c", script], capture_output=True, text=True, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    listing = (tmp_path / "listing").read_text()
    assert "Passed" not in listing and "Total Tests: 3" in listing  # listed, not run
    required = ["ctest::unit", "Area::Unit", "Square::Unit", "groups::null_case"]
    runs = {(r.test_id, r.exe, r.directory) for r in CTests().each(listing, required)}
    assert runs == {
        ("ctest::unit", "ctest", str(build)),
        ("Area::Unit", "/bin/echo", str(build)),  # the test registered for the case alone
        ("Square::Unit", "/bin/sh", "/tmp"),  # no test of its own: every binary is asked
        ("Square::Unit", "/bin/true", str(build)),
        ("Square::Unit", "/bin/echo", str(build)),
    }
    assert CTests().apart(listing, required) == ["groups::null_case"]
    [area] = [r for r in CTests().each(listing, ["Area::Unit"])]
    assert area.check is not None
    check = area.check
    [named] = re.findall(r"--gtest_filter=(\S+)", check.run)
    canaries = set(named.split(":")) - {"Area.Unit"}  # root's canaries beside the case
    assert len(canaries) == 3 and all(c.startswith("Area.") for c in canaries)
    assert "--x" in check.run
    assert check.ok == "[       OK ] Area.Unit (" and check.summary == "[  PASSED  ] 1 test."
    assert set(check.failed.splitlines()) == {"[  FAILED  ]", *(f"] {c}" for c in canaries)}
    [alone] = re.findall(r"--gtest_filter=(\S+)", check.canary)  # the canaries, not the case
    assert set(alone.split(":")) == canaries and "--x" in check.canary
    assert check.canary_shows == "[  PASSED  ] 0 tests."
    assert {f"] {c}" for c in canaries} <= set(check.canary_never.splitlines())
    [asked] = re.findall(r"--gtest_filter=(\S+)", check.listed)  # the listing names them too
    assert set(asked.split(":")) == canaries | {"Area.Unit"}
    leaves = [c.split(".", 1)[1] for c in canaries]
    for printed, shown in [("Area.\n  Unit\n", True), (f"Area.\n  Unit\n  {leaves[1]}\n", False)]:
        lister = tmp_path / "lister"
        lister.write_text(f"#!/bin/sh\nprintf '{printed}'\n")
        lister.chmod(0o755)
        listed_by = check.listed.replace("/bin/echo", str(lister), 1)
        assert (subprocess.run(["bash", "-c", listed_by]).returncode == 0) is shown
    again = CTests().each(listing, ["Area::Unit"])[0].check
    assert again is not None and again.canary != check.canary  # drawn per run
    both = CTests().each(listing, ["ctest::unit", "ctest::groups"])
    assert both[0].check is not None and both[1].check is not None
    assert both[0].check.canary == both[1].check.canary  # one per run: RUN_CASES runs it once
    [unit] = CTests().each(listing, ["ctest::unit"])
    assert unit.check is not None and unit.check.canary != both[0].check.canary  # drawn per run
    assert unit.check is not None and unit.check.canary_shows == "No tests were found!!!"
    shown = subprocess.run(
        ["bash", "-c", unit.check.canary],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        cwd=build,
    )  # as RUN_CASES runs it: ctest's own line, status 0, for a name no test has
    assert shown.returncode == 0 and "No tests were found!!!" in shown.stdout.decode().splitlines()
    ok = subprocess.run(["bash", "-c", area.check.listed], capture_output=True, cwd=build)
    assert ok.returncode != 0  # /bin/echo lists no GoogleTest case: the test is missing


FOLDER_CMAKE = """cmake_minimum_required(VERSION 3.13)
project(pair C)
find_package(ZLIB)
enable_testing()
add_library(pair src/pair.c)
add_executable(test_pair tests/test_pair.c)
target_link_libraries(test_pair pair)
add_test(NAME test_pair COMMAND test_pair)
"""


def test_a_build_in_a_top_level_folder_is_read_built_and_tested_there(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """libexpat keeps its whole build under `expat/`: the room reads that folder's build files and
    runs the setup and the tests in it (host cmake and ninja, the build directory in tmp)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commit_files(
        repo,
        {
            "README.md": "pair\n",
            "expat/CMakeLists.txt": FOLDER_CMAKE,
            "expat/src/pair.c": "int pair(int a) { return 2 * a; }\n",
            "expat/tests/test_pair.c": "int pair(int);\nint main(void) { return pair(2) != 4; }\n",
            "fuzz/CMakeLists.txt": "project(fuzz C)\n",  # another folder with a build, no tests
            "fuzz/f.c": "int f;\n",
        },
        "a pair library in a folder",
        "2024-03-01T00:00:00+00:00",
    )
    sha = git(repo, "rev-parse", "HEAD").strip()
    snap = replace(snapshot(repo, sha), tests=("expat/tests/test_pair.c",))
    assert systems.located(snap) == ("expat", "cmake")
    assert (found := detect(snap, snap.tests)) is not None and found.name == "c"
    facts = C().era_facts(snap)
    assert (facts["root"], facts["minimum"], facts["libraries"]) == ("expat", "3.13", ["ZLIB"])
    assert "root" not in C().era_facts(_snap({"CMakeLists.txt": CMAKE}))  # root builds keep keys

    build = tmp_path / "build"
    monkeypatch.setattr(c_room, "BUILD_DIR", str(build))
    [plan] = C().plans(snap, ErasConfig())
    setup = subprocess.run(
        ["bash", "-c", plan.setup_command], cwd=repo, capture_output=True, text=True
    )
    assert (build / "CMakeCache.txt").exists(), setup.stdout + setup.stderr
    report = tmp_path / "report"
    script = CTests().script(plan.test_command, str(report))
    ran = subprocess.run(["bash", "-c", script], cwd=repo, capture_output=True, text=True)
    assert ran.returncode == 0, ran.stdout + ran.stderr
    assert CTests().parse(report.read_text(), ran.stdout) == {"ctest::test_pair": "passed"}
    assert not (repo / "expat" / "CMakeCache.txt").exists()  # built out of the tree
