"""T(p̂): do a stage's verified tests pass on the sandbox's current state?

`stage_tests` reads what `prchain tests verify` stored for a chain stage; `run_tests` checks them
on whatever the sandbox holds now (the agent's patch, a curated trajectory's patch, ...).

The run happens in a clean room (docs/sandbox.md): a fresh container of the stage's image where
no agent process ever ran, as a user that is not the agent, on the stage base with the repository's
test side as of B_t, plus the agent's change Δ_t without test files and test configuration, plus
the gold test patch. The agent's sandbox is only read (its processes are ended first); nothing the
tests read or write is ever visible to it.
"""

from __future__ import annotations

import secrets
import shlex
from dataclasses import dataclass, field, replace

from sqlalchemy import Engine

from prchain.environments.eras.ecosystems import report_for
from prchain.environments.eras.node import configs as node_configs
from prchain.environments.eras.node.packages import DEPS as NODE_DEPS
from prchain.environments.eras.reports import (
    Canaried,
    Canary,
    RunsEach,
    TestReport,
    Witnessed,
    canaried,
    is_passing,
    judged_only,
    witnessed,
)
from prchain.environments.protocol import Environment, Workspace
from prchain.verdicts.crossing import (
    OVERRIDE_MANIFESTS,
    imported_helpers,
    overridden_dirs,
    shadowing_classes,
)
from prchain.verdicts.sandbox import (
    SealedEach,
    SuiteRun,
    agent_change,
    apply_patch,
    build_part,
    hidden_side,
    is_test_side,
    patch_paths,
    run_each_sealed,
    run_suite,
    without_dirs,
)
from prchain.verdicts.stage import DEFAULT_REPORT_PATH, runnable_stage

MISSING = "missing"  # a required test that the run did not report at all
# Every manifest of the tree but those the build tool ignores (vendored modules' go.mod, testdata).
FIND_MANIFESTS = (
    "find . \\( -name .git -o -name vendor -o -name testdata -o -name node_modules \\) -prune "
    "-o -type f \\( {names} \\) -print"
)


@dataclass
class StageTests:
    """A stage's hidden tests, as verified: what T(p̂) checks."""

    fail_to_pass: list[str]
    pass_to_pass: list[str]
    test_command: str  # the command as run, test files filled in
    test_files: list[str]
    test_patch: str = ""  # the gold test patch, applied before the run
    build_patch: str = ""  # the gold code patch's build part (sandbox.build_part), applied too
    report_path: str = DEFAULT_REPORT_PATH
    tail_chars: int = 4000
    ecosystem: str = "python"  # its reader reads the run (prchain/environments/eras/reports.py)

    @property
    def required(self) -> list[str]:
        return [*self.fail_to_pass, *self.pass_to_pass]


@dataclass
class TestVerdict:
    __test__ = False  # not a pytest test class despite its name

    passed: bool  # T(p̂) = 1
    outcomes: dict[str, str]  # every reported test, and each required one missing from the report
    output_tail: str
    failing: list[str] = field(default_factory=list)  # required tests that did not pass
    error: str | None = None  # the run could not happen (the test patch did not apply)


def stage_tests(engine: Engine, stage_id: int) -> StageTests | None:
    """The verified tests of chain stage `stage_id` (ChainStage.id), read as the runnable stage
    record (prchain/verdicts/stage.py); None unless they are usable."""
    stage = runnable_stage(engine, stage_id)
    if stage is None or stage.tests is None or stage.tests.status != "usable":
        return None
    era = stage.usable_era
    ecosystem = era.ecosystem if era is not None else "python"
    return StageTests(
        list(stage.tests.fail_to_pass),
        list(stage.tests.pass_to_pass),
        stage.tests.test_command,
        list(stage.tests.test_files),
        stage.gold_test_patch,
        build_part(stage.gold_patch or "", ecosystem),
        ecosystem=ecosystem,
    )


def run_tests(env: Environment, tests: StageTests, timeout: float) -> TestVerdict:
    """Run the stage's hidden tests on the agent's change, in a clean room.

    The agent's processes are ended before its change is read and again after (reading it runs the
    agent's own git filters, which could start one); none of them can reach the clean room anyway."""
    env.end_agent_processes()
    change = agent_change(env, tests.ecosystem or "python")
    env.end_agent_processes()
    hidden = hidden_side(tests.ecosystem or "python")
    with env.clean_room(patch_paths(tests.test_patch), hidden) as room:
        change = without_dirs(change, _overrides(room, tests))
        error = room.apply(change.patch)
        if error is not None:
            why = "the agent's change does not apply on the stage base"
            return TestVerdict(False, {}, error, failing=tests.required, error=why)
        error = apply_patch(room, tests.build_patch, reset=False)
        if error is not None:
            why = "the gold patch's build files do not apply on the stage base"
            return TestVerdict(False, {}, error, failing=tests.required, error=why)
        error = apply_patch(room, tests.test_patch, reset=False)
        if error is not None:
            why = "the test patch does not apply"
            return TestVerdict(False, {}, error, failing=tests.required, error=why)
        reader = report_for(tests.ecosystem)
        witness, planted = _plant_witness(room, reader, tests)
        canary = _plant_canary(room, reader, tests)
        if canary is not None:
            planted += list(canary.files)
        hidden_paths = [*patch_paths(tests.test_patch), *patch_paths(tests.build_patch)]
        room.seal_tests([*hidden_paths, *tests.test_files, *planted], tests.ecosystem)
        run_as = replace(tests, test_command=canary.command) if canary else tests
        run = _sealed_run(room, reader, run_as, timeout)
    if run.error is not None:
        return TestVerdict(False, {}, run.output_tail, failing=tests.required, error=run.error)
    outcomes = witnessed(run.outcomes, tests.required, witness) if witness else run.outcomes
    if canary is not None:
        outcomes = canaried(outcomes, tests.required, canary.test_id)
    return verdict(tests, outcomes, run.output_tail[-tests.tail_chars :])


def _overrides(room: Workspace, tests: StageTests) -> list[str]:
    """The paths the stage base's own manifests and runner configuration (the room's, before the
    agent's change, which never crosses into them) make part of the room's test machinery
    (crossing.overridden_dirs), the test-support modules the hidden tests import
    (crossing.imported_helpers) and the main classes the change would add that shadow a test
    library's in a hidden test's package (crossing.shadowing_classes)."""
    ecosystem = tests.ecosystem or "python"
    names = OVERRIDE_MANIFESTS.get(ecosystem, ())
    if not names:
        shadowing = _absent(room, shadowing_classes(ecosystem, patch_paths(tests.test_patch)))
        return imported_helpers(ecosystem, tests.test_patch) + shadowing
    if ecosystem == "go":  # a nested module's go.mod or a go.work replaces as the root's does
        manifests = _read_base(room, (), anywhere=names)
        return overridden_dirs(ecosystem, manifests) if manifests else []
    hidden_files = tuple(tests.test_files) if ecosystem == "python" else ()
    texts = _read_base(room, (*names, *hidden_files))
    manifests = {name: texts[name] for name in names if name in texts}
    found = overridden_dirs(ecosystem, manifests) if manifests else []
    hidden = [texts.get(path, "") for path in hidden_files]
    return found + imported_helpers(ecosystem, "\n".join([tests.test_patch, *hidden]))


def _absent(room: Workspace, paths: list[str]) -> list[str]:
    """The `paths` the room's tree (the stage base, before the agent's change) does not hold: a
    class the stage base has is the project's own, one the change would add is sealed."""
    if not paths:
        return []
    mark = f"prchain-{secrets.token_hex(8)}"
    names = " ".join(shlex.quote(p) for p in paths)
    done = room.execute(
        f'for f in {names}; do [ ! -e "$f" ] || echo "{mark} $f"; done; echo {mark}'
    )
    lines = done.output.splitlines()
    if f"{mark}" not in lines:  # the listing did not end: nothing is known to be the base's
        return paths
    held = {line.split(" ", 1)[1] for line in lines if line.startswith(f"{mark} ")}
    return [p for p in paths if p not in held]


def _read_base(
    room: Workspace, names: tuple[str, ...], anywhere: tuple[str, ...] = ()
) -> dict[str, str]:
    """Each of `names` the room's tree has at its root (node_configs.LINKS: the image's links
    into it), and each file named one of `anywhere` at any depth (FIND_MANIFESTS), path → text,
    in one command."""
    mark = f"prchain-{secrets.token_hex(8)}"
    parts = []
    for name in names:
        head = f"printf '\\n%s %s\\n' {mark} {shlex.quote(name)}"
        if name == node_configs.LINKS:
            parts.append(f"{head}; {node_configs.links_command(NODE_DEPS)}")
        else:
            parts.append(
                f"if [ -f {shlex.quote(name)} ]; then {head}; cat -- {shlex.quote(name)}; fi"
            )
    if anywhere:
        find = FIND_MANIFESTS.format(names=" -o ".join(f"-name {n}" for n in anywhere))
        parts.append(
            f"{find} | while IFS= read -r f; do "
            f'printf \'\\n%s %s\\n\' {mark} "${{f#./}}"; cat -- "$f"; done'
        )
    done = room.execute("; ".join(parts))
    found = {}
    for section in done.output.split(f"\n{mark} ")[1:]:
        name, _, text = section.partition("\n")
        found[name] = text
    return found


def _sealed_run(room: Workspace, reader: TestReport, tests: StageTests, timeout: float) -> SuiteRun:
    """The hidden tests' run: each on its own where the runner's report is written by the
    tested code itself or only on the console it shares (Rust, C's ctest and GoogleTest; tests
    the harness cannot run alone, cmocka's, still from the sealed run: `RunsEach.apart`), else
    the runner's report through root's pipe. A required test the room cannot judge (a Rust doc
    test, from a store verified before they were left out) fails."""
    each = None
    if isinstance(reader, RunsEach) and isinstance(room, SealedEach):
        each = run_each_sealed(room, reader, tests.test_command, tests.required, timeout)
    apart = each.apart if each is not None else []
    if each is None or apart:
        run = run_suite(
            room,
            tests.test_command,
            timeout=timeout,
            report_path=tests.report_path,
            tail_chars=tests.tail_chars,
            report=reader,
        )
        if each is None or run.error is not None:
            return run
        for test in apart:
            if test in run.outcomes:
                each.outcomes[test] = run.outcomes[test]
    unjudged = sorted(
        set(tests.required) - set(judged_only(reader, dict.fromkeys(tests.required, "")))
    )
    for test in unjudged:
        each.outcomes[test] = "failed"
        each.output_tail += f"\nprchain: {test} is not judged: its text is the agent's source\n"
    return each


def _plant_witness(room: Workspace, reader: TestReport, tests: StageTests) -> tuple[str, list[str]]:
    """(the witness's test name, its files) when the room's reader reads a report the tested
    process writes itself (prchain/environments/eras/reports.py: Witnessed); ("", []) otherwise. The
    files are written before any tested code runs and sealed by root with the hidden tests."""
    if not isinstance(reader, Witnessed):
        return "", []
    texts = {}
    for path in tests.test_files:
        try:
            texts[path] = room.read_file(path)
        except (FileNotFoundError, PermissionError):
            continue
    nonce = secrets.token_hex(8)
    files = reader.witness_files(texts, nonce, tests.test_command)
    for path, text in files.items():
        room.write_file(path, text)
    return (reader.witness_name(nonce) if files else ""), list(files)


def _plant_canary(room: Workspace, reader: TestReport, tests: StageTests) -> Canary | None:
    """Root's canary (reports.Canaried), with a nonce of this run, written before any tested code
    runs and sealed with the hidden tests; None when the room's reader has none for the command.
    The reader sees the hidden test files as root applied them (one read, `_read_base`)."""
    if not isinstance(reader, Canaried):
        return None
    hidden = dict.fromkeys([*tests.test_files, *patch_paths(tests.test_patch)])
    texts = _read_base(room, tuple(hidden))
    canary = reader.canary(tests.test_command, tests.test_files, secrets.token_hex(8), texts)
    for path, text in (canary.files if canary else {}).items():
        room.write_file(path, text)
    return canary


@dataclass
class CleanRun:
    """One test command run in a clean room (the coarse T(p̂): did the command exit 0?)."""

    exit_code: int
    timed_out: bool
    output: str
    error: str | None = None  # the run could not happen: a patch did not apply

    @property
    def passed(self) -> bool:
        return self.error is None and self.exit_code == 0 and not self.timed_out


def run_command_clean(env: Environment, test_patch: str, command: str, timeout: float) -> CleanRun:
    """Run `command` in a clean room on the agent's change (no test files or test configuration of
    its own) plus `test_patch`: the same isolation as run_tests, for a whole-command verdict. Its
    room is not known, so no room's sealed places cross (prchain.verdicts.crossing)."""
    env.end_agent_processes()
    change = agent_change(env, None)
    env.end_agent_processes()
    with env.clean_room(patch_paths(test_patch), is_test_side) as room:
        error = room.apply(change.patch)
        if error is not None:
            return CleanRun(1, False, error, "the agent's change does not apply on the stage base")
        error = apply_patch(room, test_patch, reset=False)
        if error is not None:
            return CleanRun(1, False, error, "the test patch does not apply")
        room.seal_tests(patch_paths(test_patch))
        result = room.execute(command, timeout=timeout)
    return CleanRun(result.exit_code, result.timed_out, result.output)


def verdict(tests: StageTests, outcomes: dict[str, str], output_tail: str) -> TestVerdict:
    """T(p̂) from a run's outcomes: every required test reported as passing."""
    seen = dict(outcomes)
    for test in tests.required:
        seen.setdefault(test, MISSING)
    failing = [t for t in tests.required if not is_passing(seen[t])]
    return TestVerdict(bool(tests.required) and not failing, seen, output_tail, failing)
