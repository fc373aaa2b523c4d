"""Per-test outcomes from cargo test, read from libtest's console lines.

Stable libtest has no machine-readable format (`--format json` is nightly-only), so the lines are
read by pattern: `Running <source> (<binary>)` (cargo ≥ 1.58; `Running <binary>` before) opens a test
binary, `Doc-tests <crate>` the doc tests, `test <path> ... ok|FAILED|ignored` is one test.

Ids are `<unit>::<test path>`. The unit is the test binary's target name: a library's unit tests
are `mylib::tests::it_works`, as Rust itself names the function. Integration tests (`tests/cli.rs`)
of two workspace members share a target name, so a unit that is not its package's own library is
qualified by the package (`mycrate/cli::works`); the package of a binary is found through the
fingerprint directory cargo keeps beside it (same hash), which the report script lists. Doc tests
are `mylib(doc)::src/lib.rs - add`, without their `(line N)`, which moves with every edit above it.
A target that did not compile is the unit alone with outcome "error" (`mycrate/cli`).
"""

from __future__ import annotations

import json
import re
import shlex
from pathlib import PurePosixPath

from prchain.environments.eras.reports import FILES_PLACEHOLDER, OneTest, record

SUITE = "cargo test --workspace --no-fail-fast"
FINGERPRINTS = "# prchain: fingerprints"
_RUNNING = re.compile(
    r"^\s*Running\s+(?:(?P<source>.+?)\s+\((?P<exe>[^()]+)\)|`?(?P<bare>[^`\s]+)`?)\s*$"
)
_DOC = re.compile(r"^\s*Doc-tests\s+(?P<crate>\S+)\s*$")
_TEST = re.compile(r"^test (?P<name>.+?) \.\.\. (?P<word>ok|FAILED|ignored)\b")
# One test thread (a sandbox of one CPU) prints `test X ... ` when X starts and its result when it
# ends; what X writes to stderr itself lands in between (insta's `stored new snapshot …` of a
# failing snapshot), so the result word starts a later line.
_STARTED = re.compile(r"^test (?P<name>\S.*?) \.\.\. ")
_RESULT = re.compile(r"^(?P<word>ok|FAILED|ignored)\b")
_STEM = re.compile(r"^(?P<name>.+)-(?P<hash>[0-9a-f]{16})$")
_NOT_COMPILED = re.compile(
    r"^error: could not compile `(?P<package>[^`]+)`(?: \((?P<what>[^)]*)\))?"
)
_CODE_ERROR = re.compile(
    r"^error(\[E\d+\])?: (?!(?:doc)?test failed|\d+ targets? failed|could not compile)"
)
# A test's panic, as libtest prints it: since Rust 1.73 `thread 'x' panicked at src/a.rs:3:5:` with
# the message on the next line, before it `thread 'x' panicked at 'message', src/a.rs:3:5`.
_PANIC = re.compile(
    r"^thread '(?P<test>[^']+)' panicked at (?:'(?P<old>.*)', (?P<at>\S+)|(?P<where>\S+?):)$"
)
# A scratch directory the runner's user owns ($TMPDIR, else /tmp), removed at the end.
_SCRATCH = 't=$(mktemp -d "${TMPDIR:-/tmp}/prchain-report.XXXXXX") || exit 98\n'
_WORDS = {"ok": "passed", "FAILED": "failed", "ignored": "skipped"}
# The lines the report keeps (the console output of a large suite is mostly failure details).
_KEPT = r"^\s*(Running|Doc-tests) |^test .* \.\.\. |^(ok|FAILED|ignored)\b|^error(\[E[0-9]+\])?: "


def _norm(name: str) -> str:
    return name.replace("-", "_")


def unit(package: str, target: str) -> str:
    """A test binary's id prefix: its target name, qualified by its package unless it is the
    package's own library (whose target name is the package's)."""
    if not package or _norm(package) == _norm(target):
        return _norm(target)
    return f"{package}/{_norm(target)}"


def fingerprints(report: str) -> dict[str, str]:
    """Binary hash → package name, from the fingerprint directories listed after FINGERPRINTS."""
    _, _, listing = report.partition(FINGERPRINTS)
    found = {}
    for line in listing.split():
        stem = _STEM.match(PurePosixPath(line.strip()).name)
        if stem:
            found[stem.group("hash")] = stem.group("name")
    return found


def _binary_unit(line: re.Match[str], packages: dict[str, str]) -> str:
    return exe_unit((line.group("exe") or line.group("bare")).strip(), packages)


def exe_unit(path: str, packages: dict[str, str]) -> str:
    """A test executable's unit, the same from a `Running` line and from cargo's JSON listing."""
    exe = PurePosixPath(path)
    stem = _STEM.match(exe.name)
    if not stem:
        return _norm(exe.name)
    return unit(packages.get(stem.group("hash"), ""), stem.group("name"))


def _test_name(name: str, doc: bool) -> str:
    name = name.removesuffix(" - should panic")
    return re.sub(r" \(line \d+\)$", "", name) if doc else name


def is_doc(test_id: str) -> bool:
    return test_id.partition("::")[0].endswith("(doc)")


def names(test_id: str) -> list[str]:
    """`mylib::tests::it_works` → [tests, it_works]; a doc test `mylib(doc)::src/lib.rs - Foo::bar`
    → [Foo, bar], the item it documents."""
    where, _, name = test_id.partition("::")
    if where.endswith("(doc)"):
        name = name.rpartition(" - ")[2]
    return [part for part in name.split("::") if part]


def parse(report: str | None, output: str) -> dict[str, str]:
    """Test id → outcome; a target that did not compile → its unit, "error"."""
    text = report if report else output
    packages = fingerprints(text)
    outcomes: dict[str, str] = {}
    current, doc = "", False
    started = ""  # a test whose result word was pushed to a later line
    for line in text.partition(FINGERPRINTS)[0].splitlines():
        if running := _RUNNING.match(line):
            current, doc, started = _binary_unit(running, packages), False, ""
        elif found := _DOC.match(line):
            current, doc, started = f"{_norm(found.group('crate'))}(doc)", True, ""
        elif (test := _TEST.match(line)) and current:
            name = f"{current}::{_test_name(test.group('name'), doc)}"
            record(outcomes, name, _WORDS[test.group("word")])
            started = ""
        elif (begun := _STARTED.match(line)) and current:
            started = f"{current}::{_test_name(begun.group('name'), doc)}"
        elif (result := _RESULT.match(line)) and started:
            record(outcomes, started, _WORDS[result.group("word")])
            started = ""
        elif broken := _NOT_COMPILED.match(line):
            record(outcomes, _broken_unit(broken), "error")
    return outcomes


def _broken_unit(line: re.Match[str]) -> str:
    """`could not compile `pkg` (test "cli")` → pkg/cli; `(lib test)`, `(lib)` or none → pkg."""
    package, what = line.group("package"), line.group("what") or ""
    named = re.search(r'"([^"]+)"', what)
    return unit(package, named.group(1) if named else package)


def root_error(output: str) -> str:
    """The first compiler or cargo error (`error[E0425]: …` with its ` --> file:line`), else the
    first test's panic, else ""."""
    lines = output.splitlines()
    for i, line in enumerate(lines):
        if _CODE_ERROR.match(line):
            where = next(
                (n.strip().removeprefix("--> ") for n in lines[i + 1 : i + 3] if "--> " in n), ""
            )
            return (f"{line.strip()} ({where})" if where else line.strip())[:300]
    found = next((line for line in lines if _NOT_COMPILED.match(line)), "")
    return (found.strip() or _first_panic(lines))[:300]


def _first_panic(lines: list[str]) -> str:
    """The first failing test's panic (`test pcm::drop panicked at src/pcm.rs:9:5: ENOENT`), not
    cargo's last hint (`error: doctest failed, to rerun pass --doc`); "" when none panicked."""
    for i, line in enumerate(lines):
        found = _PANIC.match(line.strip())
        if found is None:
            continue
        if found["where"] is not None:
            message = lines[i + 1].strip() if i + 1 < len(lines) else ""
            return f"test {found['test']} panicked at {found['where']}: {message}"
        return f"test {found['test']} panicked at {found['at']}: {found['old']}"
    return ""


# cargo before 1.51 (Debian bullseye's is 1.46) gives a member the features of the packages a
# command selects (resolver 1, `-Z package-features` unstable), and refuses `--features` in the root
# of a virtual workspace. So there a stage runs the workspace's whole suite, as its era verified,
# and names no feature: tokio's stages of 2020 under `-p tokio` lost the `rt-core` its workspace
# gave it (`could not find task_local in tokio`), and four of five stopped at `--features is not
# allowed in the root of a virtual workspace`.
OLD_CARGO = '"cargo 1."[0-9].*|"cargo 1."[1-4][0-9].*|"cargo 1.50".*'


def on_cargo(old: str, new: str) -> str:
    """Shell words: `old` where the running cargo is older than 1.51, else `new`."""
    return f'$(case "$(cargo --version 2>/dev/null)" in {OLD_CARGO}) echo {old};; *) echo {new};; esac)'


# The crate (package) of each file `{files}` names: the nearest directory up whose manifest is a
# [package] of the workspace `cargo metadata` lists (a `tests/Cargo.toml` outside the workspace, as in
# rust-lang/log, names no package `cargo test -p` can take); any [package] manifest when cargo cannot
# list the workspace. `-p <name>:<version>` each (`-p <name>` where the version is not written
# there, e.g. inherited from the workspace), so only the stage's crates are built and tested. The
# version tells the member from a package of its name on crates.io: tokio's tests of 2020 use
# tokio-test from crates.io, which brings tokio 0.2.11 beside the tree's 0.2.13, and cargo 1.46
# found `-p tokio` ambiguous (`There are multiple `tokio` packages in your project`); cargo 1.95
# takes the member.
_PACKAGES = (
    r"""$(m=$(cargo metadata --offline --no-deps --format-version 1 2>/dev/null); r=$(pwd -P);"""
    r""" for d in {files}; do while [ "$d" != . ] && ! { grep -qs '^\[package\]' "$d/Cargo.toml" &&"""
    r""" { [ -z "$m" ] || printf %s "$m" | grep -qF "\"$r/$d/Cargo.toml\""; }; }; do"""
    r""" d=$(dirname "$d"); done; awk '/^\[/{p=($0=="[package]")}"""
    r""" p&&/^name *= *"/{gsub(/^name *= *"|".*$/,"");n=$0}"""
    r""" p&&/^version *= *"/{gsub(/^version *= *"|".*$/,"");v=$0}"""
    r""" END{if(n!="")print n (v!=""?":" v:"")}' "$d/Cargo.toml" 2>/dev/null; done"""
    r""" | sort -u | sed 's/^/-p /')"""
)


_CARGO_TEST = re.compile(r"\bcargo\s+test\b")
# What the build listing keeps of cargo's JSON messages: the test executables, and the errors
# (their rendered text explains a target that did not compile).
_LISTED = r'"executable":"/|"level":"error"'


def build_command(command: str) -> str | None:
    """`command` building its test executables without running them, messages as JSON; None when
    it runs no `cargo test`. libtest's own arguments (after ` -- `) are dropped: root runs each
    test with its own."""
    found = _CARGO_TEST.search(command)
    if found is None:
        return None
    rest = command[found.end() :].split(" -- ", 1)[0]
    return f"{command[: found.end()]} --no-run --message-format=json{rest}"


def package_of(package_id: str) -> str:
    """`name@version` from cargo's package id, in either of its forms: `path+file:///w#name@1.2.3`
    (cargo 1.77 on; `#1.2.3` alone when the directory is the name) or `name 1.2.3 (path+…)`."""
    old = re.match(r"^([\w-]+) (\S+) \(", package_id)
    if old:
        return f"{old.group(1)}@{old.group(2)}"
    url, _, fragment = package_id.partition("#")
    name, _, version = fragment.rpartition("@")
    return f"{name or url.rstrip('/').rsplit('/', 1)[-1]}@{version}" if version else ""


def listed(report: str) -> tuple[dict[str, list[tuple[str, str, str]]], str]:
    """(unit → its (executable, package directory, `name@version`), the rendered errors) from a
    build listing. A package whose library and binary share a name has two test executables of
    one unit (uutils/coreutils: `coreutils::common::validation::tests::test_name` is the
    binary's)."""
    packages = fingerprints(report)
    exes: dict[str, list[tuple[str, str, str]]] = {}
    errors = []
    for line in report.partition(FINGERPRINTS)[0].splitlines():
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if not isinstance(message, dict):
            continue
        exe, manifest = message.get("executable"), str(message.get("manifest_path") or "")
        if isinstance(exe, str) and (message.get("profile") or {}).get("test"):
            found = (exe, str(PurePosixPath(manifest).parent))
            package = package_of(str(message.get("package_id") or ""))
            exes.setdefault(exe_unit(exe, packages), []).append((*found, package))
        rendered = (message.get("message") or {}).get("rendered")
        if isinstance(rendered, str):
            errors.append(rendered)
    return exes, "".join(errors)


def each(report: str, required: list[str]) -> list[OneTest]:
    """The required tests (doc tests are not judged: Cargo.judged) whose executable the listing
    names: one run per executable of the test's unit, of which those that do not list it run
    nothing (clean_room.RUN_EACH asks `--list` first)."""
    exes, _ = listed(report)
    return [
        OneTest(test, exe, name, directory, package=package)
        for test in required
        for where, _, name in [test.partition("::")]
        if name
        for exe, directory, package in exes.get(where, [])
    ]


class Cargo:
    """cargo test's reader: the run's libtest lines and cargo's fingerprint listing in one file;
    in a clean room, each hidden test run on its own (reports.RunsEach)."""

    def build_script(self, command: str, report_path: str) -> str | None:
        build = build_command(command)
        if build is None:
            return None
        report = shlex.quote(report_path)
        target = '"${CARGO_TARGET_DIR:-target}"'
        return (
            f"[ -p {report} ] || rm -f {report}\n{_SCRATCH}"
            f'( {build}\n) > "$t/json"\nrc=$?\n'
            f'{{ grep -aE {shlex.quote(_LISTED)} "$t/json"; echo {shlex.quote(FINGERPRINTS)};'
            f" ls -1d {target}/*/.fingerprint/* {target}/*/*/.fingerprint/* 2>/dev/null; }}"
            f' > "$t/report"\ncat "$t/report" > {report}\nrm -rf "$t"\nexit $rc\n'
        )

    def each(self, report: str, required: list[str]) -> list[OneTest]:
        return each(report, required)

    def apart(self, report: str, required: list[str]) -> list[str]:
        """None: a doc test is not judged at all (`judged`), never read from rustdoc's run."""
        return []

    def judged(self, test_id: str) -> bool:
        """Not a doc test (reports.JudgesSome): its text is in the source the agent writes."""
        return not is_doc(test_id)

    def script(self, command: str, report_path: str) -> str:
        """The log and the report are made in a scratch directory of the runner's own, then the
        report is written to `report_path` whole: in a clean room that is root's pipe, in a
        directory the tester cannot write (issue 77: a `report.log` beside it was refused, so no
        report ever reached root)."""
        report = shlex.quote(report_path)
        target = '"${CARGO_TARGET_DIR:-target}"'
        return (
            f"[ -p {report} ] || rm -f {report}\n{_SCRATCH}"
            f'( {command}\n) 2>&1 | tee "$t/log"\nrc=${{PIPESTATUS[0]}}\n'
            f'{{ grep -aE {shlex.quote(_KEPT)} "$t/log"; echo {shlex.quote(FINGERPRINTS)};'
            f" ls -1d {target}/*/.fingerprint/* {target}/*/*/.fingerprint/* 2>/dev/null; }}"
            f' > "$t/report"\ncat "$t/report" > {report}\nrm -rf "$t"\nexit $rc\n'
        )

    def parse(self, report: str | None, output: str) -> dict[str, str]:
        return parse(report, output)

    def root_error(self, output: str) -> str:
        return root_error(output)

    def names(self, test_id: str) -> list[str]:
        return names(test_id)

    def narrowed(self, suite: str) -> str:
        """The workspace's suite narrowed to the packages of the stage's test files (the whole
        workspace under a cargo older than 1.51: OLD_CARGO)."""
        if FILES_PLACEHOLDER in suite or not suite.startswith(SUITE):
            return suite
        rest = suite[len(SUITE) :]
        return f"cargo test --no-fail-fast {on_cargo('--workspace', _PACKAGES)}{rest}"

    def targets(self, test_paths: list[str]) -> list[str]:
        """The directories of the test files (source files with inline tests, integration tests,
        fixtures): the command finds each one's package."""
        return sorted({str(PurePosixPath(p).parent) for p in test_paths})
