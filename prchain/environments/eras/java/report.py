"""Per-test outcomes of a Maven (surefire) or Gradle run, keyed `<class>::<method>`.

Both write one junit XML file per test class (`target/surefire-reports/TEST-*.xml`,
`build/test-results/<task>/TEST-*.xml`); the script gathers the files the run wrote into one report,
each after a marker line, so one unreadable file costs only its own cases. A module that did not
compile (or whose dependencies or plugins could not be resolved offline) ran no test at all: it is
read from Maven's `Failed to execute goal … on project <module>` line (Gradle's `Execution failed
for task ':<module>:compileTestJava'`) as the unit `<module>`, outcome error. Surefire's console
names only failing methods, never passing ones, so without a report the console gives those units
only.
"""

from __future__ import annotations

import re
import shlex
import xml.etree.ElementTree as ET
from collections.abc import Callable, Mapping

from prchain.environments.eras.reports import FILES_PLACEHOLDER, Canary, record

# Surefire 2.x and 3.x take the selection as `test`; both must not fail a module without it.
NARROW_FLAGS = "-DfailIfNoTests=false -Dsurefire.failIfNoSpecifiedTests=false"
_MARKER = re.compile(r"^<!-- prchain-report (.*) -->$", re.MULTILINE)
_REPORTS = (
    r"\( -path '*/target/surefire-reports/TEST-*.xml'"
    r" -o -path '*/build/test-results/*/TEST-*.xml' \)"
)
_GOAL_FAILED = re.compile(r"^\[ERROR\] Failed to execute goal (.*?)on project ([^\s:]+): (.*)$")
_TEST_FAILURES = re.compile(r"There (are|were) test failures|There are test errors")
_GRADLE_FAILED = re.compile(
    r"Execution failed for task '((?::[\w.-]+)*):(compile\w*|\w*Resolve\w*)'"
)
_JAVAC_MAVEN = re.compile(r"^\[ERROR\] (\S+\.(?:java|kt|groovy)):\[(\d+),(\d+)\] (.*)$")
_JAVAC_PLAIN = re.compile(r"^(\S+\.(?:java|kt|groovy)):(\d+): error: (.*)$")
_DETAIL = re.compile(r"^\s*(?:\[ERROR\]\s*)?(symbol|location|required|found)\s*:\s*(.*)$")
_BUILD_ERROR = re.compile(
    r"^\[(?:ERROR|FATAL)\] (Failed to execute goal .*|Non-resolvable .*|The build could not read .*"
    r"|Unknown lifecycle phase .*|Plugin .* could not be resolved.*)$"
)
_EXCEPTION = re.compile(r"^((?:[\w$]+\.)+[\w$]*(?:Error|Exception))\b[: ].*")
_SUREFIRE_AT = re.compile(r"^\[INFO\] --- maven-surefire-plugin:\S+:test \(.*\) @ (\S+) ---$")
_SKIPPED = "[INFO] Tests are skipped."
_ROOT = "/work/repo/"


def _case_outcome(case: ET.Element) -> str:
    tags = {str(child.tag) for child in case}
    if "error" in tags:
        return "error"
    if "failure" in tags:
        return "failed"
    if "skipped" in tags:
        return "skipped"
    return "passed"  # flakyFailure/flakyError: passed on a rerun, which surefire counts as passed


def parse_reports(report: str) -> dict[str, str]:
    """`<class>::<method>` → outcome for every test case of the gathered junit files."""
    outcomes: dict[str, str] = {}
    for chunk in _MARKER.split(report)[2::2] or [report]:
        try:
            root = ET.fromstring(chunk.strip())
        except ET.ParseError:
            continue  # a file cut short (the JVM was killed while writing): its cases are lost
        for case in root.iter("testcase"):
            name, owner = case.get("name", ""), case.get("classname", "")
            if name or owner:
                record(outcomes, f"{owner or name}::{name or owner}", _case_outcome(case))
    return outcomes


def broken_units(output: str) -> dict[str, str]:
    """The modules whose tests never ran: a compiler, resolver or plugin failure, not a test's."""
    units: dict[str, str] = {}
    for line in output.splitlines():
        line = line.strip()
        maven = _GOAL_FAILED.match(line)
        if maven and not _TEST_FAILURES.search(maven.group(3)):
            units[maven.group(2)] = "error"
        gradle = _GRADLE_FAILED.search(line)
        if gradle:
            units[gradle.group(1) or ":"] = "error"
    return units


def root_error(output: str) -> str:
    """The first compiler error (`Foo.java:[12,5] cannot find symbol: method greet(String)`),
    else the first build error Maven reports, else the first Java exception line."""
    lines = [line.rstrip() for line in output.splitlines()]
    for i, line in enumerate(lines):
        found = _JAVAC_MAVEN.match(line.strip()) or _JAVAC_PLAIN.match(line.strip())
        if found:
            where, message = found.group(1).removeprefix(_ROOT), found.groups()[-1]
            details = [m.group(2).strip() for n in lines[i + 1 : i + 3] if (m := _DETAIL.match(n))]
            text = f"{where}:{found.group(2)}: {message}"
            return (text + (f" ({details[0]})" if details else ""))[:300]
    for pattern, group in ((_BUILD_ERROR, 1), (_EXCEPTION, 0)):
        for line in lines:
            matched = pattern.match(line.strip())
            if matched:
                return matched.group(group)[:300]
    return ""


def skipping_modules(output: str) -> list[str]:
    """The modules whose surefire run printed `Tests are skipped.`: a POM that sets `skipTests`
    in the plugin's configuration (nacos's naming module until 2021), which no property on the
    command line undoes."""
    found: list[str] = []
    at = ""
    for line in output.splitlines():
        line = line.strip()
        header = _SUREFIRE_AT.match(line)
        if header:
            at = header.group(1)
        elif line == _SKIPPED and at and at not in found:
            found.append(at)
        elif line and line != "[INFO]":
            at = ""
    return found


# A POM that switches its tests off: `<skipTests>true</skipTests>` in surefire's configuration
# (which no property on the command line undoes), or the property of either name.
_SKIPS = re.compile(r"<(skipTests|maven\.test\.skip)>\s*true\s*</\1>")


def _module_poms(test_paths: list[str]) -> list[str]:
    """The POM of each test file's module: the directory above its `src/test/`."""
    found = []
    for path in test_paths:
        module, marker, _ = path.partition("src/test/")
        pom = f"{module}pom.xml"
        if marker and pom not in found:
            found.append(pom)
    return found


class Surefire:
    """The junit XML files of one run, gathered; Maven's goal failures for modules that never ran."""

    def script(self, command: str, report_path: str) -> str:
        """Only files written by this run count: a narrowed run after a whole-suite one in the same
        worktree leaves the earlier run's files in place."""
        report = shlex.quote(report_path)
        gather = (
            f"find . {_REPORTS} -type f -newer \"$t/start\" -print0 | while IFS= read -r -d '' f; do "
            "printf '\\n<!-- prchain-report %s -->\\n' \"$f\"; "
            "sed '1s/^<?xml[^>]*?>//' \"$f\"; done"
        )
        # The marker and the gathered report live in a scratch directory of the runner's own; the
        # report is then written to `report_path` whole, which in a clean room is root's pipe in a
        # directory the tester cannot write (issue 77: `report.start` beside it was refused).
        return (
            f'[ -p {report} ] || rm -f {report}; t=$(mktemp -d "${{TMPDIR:-/tmp}}/prchain-report.XXXXXX")'
            f' || exit 98; touch "$t/start"; ( {command} ); code=$?; '
            f'{{ {gather}; }} > "$t/report"; '
            f'if [ -s "$t/report" ]; then cat "$t/report" > {report}; fi; '
            f'rm -rf "$t"; exit $code'
        )

    def parse(self, report: str | None, output: str) -> dict[str, str]:
        outcomes = parse_reports(report) if report else {}
        for unit, outcome in broken_units(output).items():
            record(outcomes, unit, outcome)
        return outcomes

    def root_error(self, output: str) -> str:
        return root_error(output)

    def silence(self, output: str, test_paths: list[str], read: Callable[[str], str | None]) -> str:
        """The test files' modules whose POM skips their tests; else the modules the output shows
        skipping theirs (a parent POM or a profile may switch them off). The output alone would
        not do: a sandbox cuts a long one in the middle (nacos's reactor printed 90 kB)."""
        poms = [pom for pom in _module_poms(test_paths) if _SKIPS.search(read(pom) or "")]
        if poms:
            return f"the build skips the tests of the stage's module ({poms[0]} says so)"
        skipping = skipping_modules(output)
        named = ", ".join(skipping[:5])
        return (
            f"the build skips the tests of {named} (surefire: Tests are skipped.)" if named else ""
        )

    def canary(
        self,
        command: str,
        test_files: list[str],
        nonce: str,
        texts: Mapping[str, str] | None = None,
    ) -> Canary | None:
        """reports.Canaried: surefire's TEST-*.xml files are written as each class ends, in a
        directory the forked JVM (the agent's code) can write; code a hidden test calls can write
        an all-passed file of its class and end the JVM before any later class runs. Root's class
        sits in the module of the hidden tests (JUnit 4's or Jupiter's `@Test`, as they import
        it), is selected beside them (`-Dtest=`) and sorts last (`zzzz.` under surefire's
        alphabetical order, one fork reused): a run ended early never reports its failure."""
        return canary(command, [*test_files, *(texts or {})], nonce, texts or {})

    def narrowed(self, suite: str) -> str:
        """Maven's suite with surefire's `-Dtest=` selection appended; Gradle's runs whole."""
        if FILES_PLACEHOLDER in suite or not suite.startswith("mvn "):
            return suite
        return f"{suite} {NARROW_FLAGS} {FILES_PLACEHOLDER}"

    def targets(self, test_paths: list[str]) -> list[str]:
        """One `-Dtest=FooTest,BarTest` of the classes under a `src/test/` tree (a simple name
        matches the class in any module, as surefire's own patterns do); [] runs the whole suite."""
        names = []
        for path in test_paths:
            match = re.search(
                r"(^|/)src/test/(java|kotlin|groovy)/(.+/)?([\w$]+)\.(java|kt|groovy)$", path
            )
            if match and match.group(4) not in names:
                names.append(match.group(4))
        return [f"-Dtest={','.join(names)}"] if names else []

    def names(self, test_id: str) -> list[str]:
        """`com.x.FooTest$Inner::testBar(int)[1]` → [FooTest, Inner, testBar]."""
        where, _, method = test_id.partition("::")
        classes = where.rsplit(".", 1)[-1].split("$")
        return [n for n in [*classes, re.split(r"[(\[]", method, maxsplit=1)[0]] if n]


# ---- root's canary (reports.Canaried) -----------------------------------------------------------

CANARY_PACKAGE = "zzzz.prchain"  # sorts after a project's own packages
CANARY_CLASS = "PrchainCanary{nonce}Test"
# Surefire's user properties: classes in name order, in one JVM reused for all of them (a pom
# that sets these itself overrides them: docs/sandbox.md).
CANARY_ORDER = "-Dsurefire.runOrder=alphabetical -DforkCount=1 -DreuseForks=true"
# The source checkers a build may run on test sources before its tests (nacos: checkstyle at
# `validate`, with includeTestSourceDirectory): root's class is no source of the project's and
# must not fail its style (nacos's indentation rule failed the whole module, every hidden test
# with it). Maven takes an unknown property silently.
CANARY_UNCHECKED = (
    "-Dcheckstyle.skip=true -Dspotless.check.skip=true -Drat.skip=true -Dlicense.skip=true"
)
_MAVEN = re.compile(r"^(?:\S+=\S*\s+)*(?:\./)?mvnw?\s")
_SELECTION = re.compile(r"(?<!\S)-Dtest=(\S+)")
_CHAINED = re.compile(r"&&|\|\||;|\|")
_TEST_SOURCE = re.compile(r"^(.*?)src/test/java/(?:.+/)?([\w$]+)\.java$")


def canary(
    command: str, test_files: list[str], nonce: str, texts: Mapping[str, str]
) -> Canary | None:
    """Root's canary class for a Maven run of `command` selecting hidden test classes with
    `-Dtest=`; None for Gradle, a chained command, hidden classes in more than one module, or
    tests of neither JUnit (TestNG)."""
    selected = _SELECTION.findall(command)
    if not _MAVEN.match(command) or _CHAINED.search(command) or len(selected) != 1:
        return None
    names = set(selected[0].split(","))
    modules: set[str] = set()
    kinds: set[str] = set()
    for path in dict.fromkeys(test_files):
        found = _TEST_SOURCE.match(path)
        if found is None or found.group(2) not in names:
            continue
        modules.add(found.group(1))
        text = texts.get(path, "")
        kinds.add(
            "jupiter" if "org.junit.jupiter" in text else "junit4" if "org.junit" in text else ""
        )
    if len(modules) != 1 or not kinds - {""}:
        return None
    test = "org.junit.jupiter.api.Test" if "jupiter" in kinds else "org.junit.Test"
    name = CANARY_CLASS.format(nonce=nonce)
    path = f"{modules.pop()}src/test/java/{CANARY_PACKAGE.replace('.', '/')}/{name}.java"
    title = f"prchain canary {nonce}"
    source = (
        f"package {CANARY_PACKAGE};\n\n// prchain's clean room: root's canary of this run.\n"
        f"public class {name} {{\n\n    @{test}\n    public void canary() {{\n"
        f'        throw new AssertionError("{title}");\n    }}\n}}\n'
    )
    run = _SELECTION.sub(lambda m: f"-Dtest={m.group(1)},{name}", command)
    return Canary(
        {path: source},
        f"{run} {CANARY_ORDER} {CANARY_UNCHECKED}",
        f"{CANARY_PACKAGE}.{name}::canary",
    )
