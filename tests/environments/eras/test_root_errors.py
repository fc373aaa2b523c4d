"""The stored root error is the first real error each tool printed (a build failure, a missing
symbol, a refused download), never a passing test's line nor a tool's closing hint. The outputs in
tests/data/root_errors are the tools' own (regenerate.sh there says how they were made)."""

from __future__ import annotations

from pathlib import Path

import pytest

from prchain.environments.eras.build import build_failure
from prchain.environments.eras.ecosystems import report_for
from prchain.environments.eras.reports import Silent

DATA = Path(__file__).parent.parent.parent / "data" / "root_errors"
TESTIFY_PASS = "a_test.go:19: PASS:\tGreet(string)"


@pytest.mark.parametrize(
    "name",
    [
        "go-1.26-build-failed.out",  # the compiler's words in build-output events
        "go-1.20-build-failed.out",  # on stderr, before the events
        "go-1.20-build-failed-stderr-last.out",  # on stderr, after every test's lines
    ],
)
def test_go_s_root_error_is_the_compiler_s_not_a_testify_pass_line(name: str) -> None:
    output = (DATA / name).read_text()
    assert TESTIFY_PASS in output.replace("\\t", "\t")  # the line a reader must pass over
    assert report_for("go").root_error(output) == "broken/b_test.go:6:5: undefined: Three"


def test_go_s_root_error_passes_over_an_indented_test_log_that_looks_like_a_compile_error() -> None:
    test_log = (
        '{"Action":"output","Package":"p","Test":"TestX","Output":"    x_test.go:3: oops\\n"}'
    )
    assert report_for("go").root_error(test_log) == ""
    assert report_for("go").root_error("./x.go:3:2: undefined: Foo\n") == (
        "./x.go:3:2: undefined: Foo"
    )


def test_pnpm_s_root_error_is_its_error_not_its_last_hint() -> None:
    output = (DATA / "pnpm-fetch-403.out").read_text()
    assert output.rstrip().endswith("or add the auth tokens manually to the ~/.npmrc file.")
    said = "ERR_PNPM_FETCH_403  GET http://127.0.0.1:48731/yaml/-/yaml-2.3.1.tgz: Forbidden - 403"
    assert build_failure(output, 1) == said  # `pnpm install` in the era's build
    assert build_failure(f"+ pnpm install --frozen-lockfile\n{output}+ rmdir /x\n", 1) == said
    assert report_for("node").root_error(output) == said  # the same text in a test run


def test_cargo_s_root_error_is_the_first_compiler_error_with_where() -> None:
    output = (DATA / "cargo-test-not-compiled.out").read_text()
    assert report_for("rust").root_error(output) == (
        "error[E0425]: cannot find function `four` in crate `bad` (bad/tests/it.rs:2:29)"
    )


def test_maven_s_root_error_is_its_fatal_line_not_its_last_help_line() -> None:
    """FasterXML/jackson-core's eras: a SNAPSHOT parent POM from a repository this machine cannot
    reach. The stored error was `[ERROR] [Help 2] http://cwiki…` or, after the ANSI reset Maven
    prints last, nothing readable."""
    output = (DATA / "maven-parent-pom.out").read_text()
    said = build_failure(output, 1)
    assert said.startswith("[FATAL] Non-resolvable parent POM for org.acme:calc:2.15.0-SNAPSHOT: ")
    assert "jackson-base:pom:2.15.0-SNAPSHOT" in said
    advice = "[ERROR] To see the full stack trace of the errors, re-run Maven with the -e switch.\n"
    assert build_failure(advice + "[ERROR] The goal you specified requires a project\n", 1) == (
        "[ERROR] The goal you specified requires a project"
    )
    # the same run read as a test run's (an era from recipe memory whose parent went missing):
    # its root error was "The build could not read 1 project -> [Help 1]"
    assert (
        report_for("java")
        .root_error(output)
        .startswith("Non-resolvable parent POM for org.acme:calc:2.15.0-SNAPSHOT: ")
    )


def test_maven_s_root_error_is_what_its_summary_says_not_a_jvms_notice() -> None:
    """pmd's 2021 era run to `package`: javadoc's forked JVM printed `Picked up JAVA_TOOL_OPTIONS`
    on stderr, which Maven relays as `[ERROR]`, long before the dependency that failed the build
    (an artifact only jcenter served). The stored error was the notice."""
    output = (
        "[ERROR] Picked up JAVA_TOOL_OPTIONS: -Dhttp.proxyHost=127.0.0.1\n"
        "[ERROR] Error fetching link: /src/pmd-vm/target/javadoc-bundle-options. Ignored it.\n"
        "[INFO] Reactor Summary for PMD 6.40.0-SNAPSHOT:\n"
        "[INFO] PMD language module testing utilities ... FAILURE [01:46 min]\n"
        "[INFO] BUILD FAILURE\n"
        "[ERROR] Unable to get dependency information for org.jetbrains.kotlinx:kotlinx-html-jvm:"
        "jar:0.7.2: Failed to retrieve POM\n"
        "[ERROR] -> [Help 1]\n"
    )
    assert build_failure(output, 1).startswith(
        "[ERROR] Unable to get dependency information for org.jetbrains.kotlinx:kotlinx-html-jvm"
    )
    notice_only = "[ERROR] Picked up JAVA_TOOL_OPTIONS: -Dx=1\n[ERROR] Something else broke\n"
    assert build_failure(notice_only, 1) == "[ERROR] Something else broke"


def test_maven_s_root_error_is_javac_s_not_its_help_lines() -> None:
    output = (DATA / "maven-test-compile.out").read_text()
    assert report_for("java").root_error(output) == (
        "src/test/java/ex/CalcTest.java:4: cannot find symbol (method three())"
    )


def test_pytest_s_root_error_is_the_collection_error_s_exception() -> None:
    output = (DATA / "pytest-collection-refused.out").read_text()
    assert report_for("python").root_error(output) == (
        "ConnectionRefusedError: [Errno 111] Connection refused"
    )


def test_a_rust_build_s_root_error_is_rustc_s_coded_error_with_where() -> None:
    """rust-phf's 2019 era on rustc 1.48: the stored error was `error: aborting due to previous
    error`, the line rustc prints after the error that says why."""
    log = (
        "   Compiling rustc-serialize v0.3.24\n"
        "error[E0310]: the parameter type `T` may not live long enough\n"
        "    --> /opt/cargo/vendor/rustc-serialize/src/serialize.rs:1155:5\n"
        "     |\n"
        "error: aborting due to previous error\n"
        "error: could not compile `rustc-serialize`.\n"
    )
    assert build_failure(log, 101) == (
        "error[E0310]: the parameter type `T` may not live long enough "
        "(/opt/cargo/vendor/rustc-serialize/src/serialize.rs:1155:5)"
    )
    # cargo's own error (no compiler error above it) is read as before
    assert build_failure("error: failed to get `rand` as a dependency\n", 101).startswith(
        "error: failed to get `rand`"
    )


def test_a_module_whose_pom_skips_its_tests_is_named_when_a_run_reports_none() -> None:
    """nacos's naming module configured surefire with `<skipTests>true</skipTests>` until 2021:
    a stage whose tests live there ran none, with no error, and read only as "no test outcome"."""
    output = (DATA / "maven-tests-skipped.out").read_text()
    surefire = report_for("java")
    assert isinstance(surefire, Silent)
    assert surefire.parse(None, output) == {}
    assert surefire.root_error(output) == ""
    assert surefire.silence(output, [], lambda path: None) == (
        "the build skips the tests of skipping (surefire: Tests are skipped.)"
    )
    ran = output.replace("[INFO] Tests are skipped.\n", "")
    assert surefire.silence(ran, ["skipping/src/test/java/s/HalfTest.java"], lambda p: None) == ""
