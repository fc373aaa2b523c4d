"""Per-test outcomes from `go test -json`, keyed `<package import path>::TestName/sub`.

`go test -json` (test2json) prints one JSON event per line: `run`/`pass`/`fail`/`skip` of a test
(`Test` set) or of a package (`Test` absent), `output` lines, and from go 1.24 on `build-output`/
`build-fail` events of the compiler. A package that did not build (`FAIL pkg [build failed]`, or
`[setup failed]` when go could not even load it) has no test events: it is recorded as the
package's id without `::`, outcome "error", an environment fact. A package that failed with no
failing test (TestMain exited, the binary crashed between tests) gets `<package>::(package)`,
failed. The compiler's words come on stderr before go 1.24 and in `build-output` events after:
the console output holds both (the script tees the JSON into it), so `root_error` reads either.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Iterator
from typing import Any

from prchain.environments.eras.reports import FILES_PLACEHOLDER, record

GO_TEST = "go test"
IN_MODULES = "prchain-in-modules"  # a tree of modules: `go test` from each module's directory
_GO_TEST = re.compile(r"(?<![\w-])go test(?=\s|$)")
_SETUP = ("[build failed]", "[setup failed]")
# `./pkg/x.go:12:3: undefined: Foo` (or `pkg/x.go:12: ...` of old compilers); vet's findings
# under `go test` look the same and are as fatal.
_COMPILE = re.compile(r"^(?:#\s)?\S+\.go:\d+(?::\d+)?: .+")
_GO_ERROR = re.compile(
    r"^(go: |go build |cannot find package |package \S+ is not in |pattern \S+: )"
)
_PACKAGE_LEVEL = "(package)"
_PLAIN_BUILD_FAILED = re.compile(r"^FAIL\s+(\S+)\s+\[(?:build|setup) failed\]", re.M)


def events(text: str) -> Iterator[dict[str, Any]]:
    """The JSON events among `text`'s lines (other lines, stderr's, are passed over)."""
    for line in text.splitlines():
        if not line.startswith("{"):
            continue
        try:
            found = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(found, dict):
            yield found


def parse_events(text: str) -> dict[str, str]:
    """Test id → outcome for every test and every package that did not run its tests."""
    outcomes: dict[str, str] = {}
    # package → whether it never built; go before 1.24 says so in a plain line, not an event
    failed_packages: dict[str, bool] = dict.fromkeys(_PLAIN_BUILD_FAILED.findall(text), True)
    for event in events(text):
        action, package, test = event.get("Action"), event.get("Package"), event.get("Test")
        if not package:
            continue
        if test and action in ("pass", "fail", "skip"):
            word = {"pass": "passed", "fail": "failed", "skip": "skipped"}[action]
            record(outcomes, f"{package}::{test}", word)
        elif action == "output" and not test and any(s in event.get("Output", "") for s in _SETUP):
            failed_packages[package] = True
        elif action == "fail" and not test:
            never = bool(event.get("FailedBuild")) or failed_packages.get(package, False)
            failed_packages[package] = never
    for package, never_built in failed_packages.items():
        if never_built:
            record(outcomes, package, "error")
        elif not any(k.startswith(f"{package}::") and v == "failed" for k, v in outcomes.items()):
            record(outcomes, f"{package}::{_PACKAGE_LEVEL}", "failed")
    return outcomes


def console_lines(output: str) -> Iterator[str]:
    """The console's lines as a person reads them: plain lines, and the text of JSON events."""
    for line in output.splitlines():
        if line.startswith("{"):
            try:
                found = json.loads(line)
            except json.JSONDecodeError:
                found = None
            if isinstance(found, dict):
                yield from str(found.get("Output", "")).splitlines()
                continue
        yield line


def root_error(output: str) -> str:
    """The compiler's first error (`./x.go:3:2: undefined: Foo`), else the go command's own
    (`go: updates to go.mod needed`), else the first panic. A test's own lines are indented
    (`    x_test.go:19: PASS:\tGreet(string)`, testify's log of a met expectation): a compiler's
    or the go command's start the line, so only such lines are read for them."""
    raw = list(console_lines(output))
    lines = [line.strip() for line in raw if line[:1] not in (" ", "\t")]
    for pattern in (_COMPILE, _GO_ERROR):
        for line in lines:
            if pattern.match(line) and not line.startswith("go: downloading"):
                return line.removeprefix("# ")[:300]
    return next((line.strip()[:300] for line in raw if line.strip().startswith("panic: ")), "")


class GoTest:
    """`go test`'s reader: every `go test` of the command gets `-json`; its stdout is teed into
    the report, so the console keeps the events (and stderr's compiler errors) too."""

    def script(self, command: str, report_path: str) -> str:
        path = shlex.quote(report_path)
        with_json = _GO_TEST.sub(f"{GO_TEST} -json", command)
        return f"rm -f {path}; set -o pipefail; {{ {with_json}\n}} | tee {path}"

    def parse(self, report: str | None, output: str) -> dict[str, str]:
        return parse_events(report) if report else parse_events(output)

    def root_error(self, output: str) -> str:
        return root_error(output)

    def witness_files(self, tests: dict[str, str], nonce: str, command: str) -> dict[str, str]:
        return witness_files(tests, nonce, command)

    def witness_name(self, nonce: str) -> str:
        return witness_name(nonce)

    def narrowed(self, suite: str) -> str:
        """`go test`'s flags are kept, its package patterns become `{files}` (behind the
        module-by-module runner too: `prchain-in-modules go test ...`)."""
        runner, _, rest = suite.partition(GO_TEST)
        if FILES_PLACEHOLDER in suite or runner.strip() not in ("", IN_MODULES) or "&&" in suite:
            return suite
        kept = [w for w in shlex.split(rest) if not _is_pattern(w)]
        return " ".join([*runner.split(), GO_TEST, *map(shlex.quote, kept), FILES_PLACEHOLDER])

    def targets(self, test_paths: list[str]) -> list[str]:
        """The packages (`./pkg/x`, `.` for the root) of the stage's `_test.go` files; testdata
        trees hold fixtures, never a package of the suite."""
        dirs = {
            p.rsplit("/", 1)[0] if "/" in p else "."
            for p in test_paths
            if p.endswith("_test.go") and "testdata/" not in f"/{p}" and "vendor/" not in f"/{p}"
        }
        return sorted(d if d == "." else f"./{d}" for d in dirs)

    def names(self, test_id: str) -> list[str]:
        """`pkg::TestFoo/sub_case` → [TestFoo]: a subtest's name is a string of its parent's
        body (spaces made underscores), so the parent's function is what defines it."""
        _, _, name = test_id.partition("::")
        top = name.split("/", 1)[0]
        return [top] if top and top != _PACKAGE_LEVEL else []


_PACKAGE = re.compile(r"^package\s+(\w+)", re.MULTILINE)
WITNESS_FILE = "zzzz_prchain_seal_test.go"  # the external test package's last file
# Flags that run the witness out of order or not at all: no witness is added then.
_UNWITNESSED = re.compile(r"(?<![\w-])-(test\.)?(run|shuffle|skip)\b")


def witness_files(tests: dict[str, str], nonce: str, command: str = "") -> dict[str, str]:
    """A witness per package directory of `tests`: a test in the package's external test package
    (`<name>_test`, whose tests run after the package's own) in a file sorted after the others."""
    if _UNWITNESSED.search(command):
        return {}
    found: dict[str, str] = {}
    for path, text in sorted(tests.items()):
        clause = _PACKAGE.search(text)
        if not path.endswith("_test.go") or clause is None:
            continue
        where = path.rsplit("/", 1)[0] + "/" if "/" in path else ""
        package = clause.group(1).removesuffix("_test")
        found.setdefault(
            f"{where}{WITNESS_FILE}",
            f'package {package}_test\n\nimport "testing"\n\n'
            "// prchain's clean room: the package's last test; its run must reach it.\n"
            f"func {witness_name(nonce)}(t *testing.T) {{}}\n",
        )
    return found


def witness_name(nonce: str) -> str:
    return f"TestPrchainSeal{nonce}"


def _is_pattern(word: str) -> bool:
    return word in (".", "all", "./...") or word.startswith(("./", "../")) or "..." in word
