"""`prchain tests verify`: find each chain stage's FAIL_TO_PASS and PASS_TO_PASS tests.

Per stage, in a fresh sandbox on the stage's base B_t (the state a perfect agent reaches: every
earlier gold patch is part of B_t), the configured test command runs
  1. on the start as it is,
  2. with the stage's hidden side applied: the gold test patch and the gold code patch's build
     part (its sections no change crosses with: build files, manifests; sandbox.build_part), a
     Rust room's tests rewritten as root's seal rewrites them in a clean room (qualify_tests),
     again when a test the test patch does not touch passed on the start and fails here (is that
     chance? classify.unsteady_suspects),
  3. with the rest of the gold code patch, the part an agent writes, on top, `gold_runs` times;
and classify.py turns the outcomes into the two lists (a test whose unit did not build with the
test patch alone takes its outcome at the start, unless the test patch touches it: touched.py).
Results are stored per chain stage with a recipe hash (base, patches, command, gold runs): a rerun
skips stages whose recipe is unchanged, and an identical stage of another chain reuses the result
instead of running again.
"""

from __future__ import annotations

import contextlib
import functools
import re
import shlex
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from sqlalchemy import Engine

from prchain.chains.reading.imports_foreign import go_modules
from prchain.core import git
from prchain.core.errors import PrchainError
from prchain.environments.eras import hidden
from prchain.environments.eras.ecosystems import report_for
from prchain.environments.eras.manifests import root_snapshot
from prchain.environments.eras.python import PYTEST_CONFIGS, python_files
from prchain.environments.eras.python.report import Pytest
from prchain.environments.eras.reports import (
    Silent,
    TestReport,
    disk_hinted,
    is_passing,
    judged_only,
)
from prchain.environments.eras.rust import qualify
from prchain.environments.eras.rust.features import needed, with_features
from prchain.environments.images import recipe_hash
from prchain.environments.protocol import Environment
from prchain.store.environments import Environments
from prchain.store.leases import holding
from prchain.verdicts.classify import Classification, classify, unsteady_suspects, unusable
from prchain.verdicts.config import RepoTests, VerdictsConfig
from prchain.verdicts.crossing import is_build_file
from prchain.verdicts.outcomes import count, never_ran
from prchain.verdicts.sandbox import (
    FILES_PLACEHOLDER,
    SuiteRun,
    apply_patch,
    collected_test_files,
    crossing_part,
    data_test_files,
    fill_command,
    patch_paths,
    run_suite,
)
from prchain.verdicts.stage import (
    EraEnvironment,
    StageSetup,
    stage_setup,
    stage_setups,
    with_hidden,
)
from prchain.verdicts.touched import touched_by

# busy: another `tests verify` holds the stage's lease and is running it now
Result = Literal[
    "usable", "unusable", "skipped", "reused", "unconfigured", "era-unverified", "error", "busy"
]
RECIPE_VERSION = "6"  # bump when the procedure below changes what a result means
WHOLE_OUTPUT = 1_000_000  # characters of a run's output kept in memory (execute bounds it anyway)


# One chain stage to verify: the runnable stage record before its tests are verified
# (prchain/verdicts/stage.py), read by the record's one reader.
StageJob = StageSetup


@dataclass
class Verified:
    """What the runs of one stage found."""

    found: Classification
    test_command: str = ""
    test_files: list[str] = field(default_factory=list)
    runs: dict[str, Any] = field(default_factory=dict)
    output_tail: str = ""
    seconds: float = 0.0


@dataclass
class StageReport:
    """What verify did with one stage (for the progress line and the summary table)."""

    job: StageJob
    result: Result
    reason: str | None = None
    fail_to_pass: int = 0
    pass_to_pass: int = 0
    flaky: int = 0
    seconds: float = 0.0
    stored: str | None = None  # the status a skipped or reused result holds

    @property
    def usable(self) -> bool:
        """Usable now, or by the stored result a rerun skipped or reused."""
        return self.result == "usable" or (
            self.result in ("skipped", "reused") and self.stored == "usable"
        )


EnvOpener = Callable[[StageJob], contextlib.AbstractContextManager[Environment]]


def find_stages(engine: Engine, chain_ids: Iterable[int] = ()) -> list[StageJob]:
    """Every stage of the chosen chains (all chains by default), in chain and stage order."""
    return stage_setups(engine, chain_ids)


def era_tests(era: EraEnvironment | None) -> RepoTests | None:
    """The stage's test command and image from its era (`prchain env setup`), if it may be used."""
    if era is None or not era.usable:
        return None
    return RepoTests(
        test=report_for(era.ecosystem).narrowed(era.test_command),
        image=era.image,
        setup=era.setup_command,
        ecosystem=era.ecosystem,
        excluded=dict(era.excluded),
    )


def stage_recipe(job: StageJob, tests: RepoTests, gold_runs: int) -> str:
    return recipe_hash(
        "verify",
        RECIPE_VERSION,
        job.base_sha,
        job.gold_patch,
        job.gold_test_patch,
        tests.install,
        tests.test,
        tests.image,
        tests.setup,
        gold_runs,
        # the units its era left out decide whether it runs at all; an era without any hashes
        # as it always did, so no stored result is verified again for nothing
        *([sorted(tests.excluded)] if tests.excluded else []),
        # a Rust room's hidden tests are rewritten as the clean room seals them (qualify.py)
        *([f"qualified-{qualify.VERSION}"] if qualify.applies(tests.ecosystem) else []),
        # a test patch of data alone is run through the test modules beside it (stage_test_files)
        *(["data-beside"] if _data_only(job, tests) else []),
        # a lent module that does not import asks nothing (_runs): lent stages verify again
        *(["lent-excused"] if job.lent else []),
        # its hidden tests run on its era with what its hidden side adds (eras/hidden.py)
        *([f"hidden-{hidden.VERSION}", sorted(job.hidden)] if job.hidden else []),
    )


def _data_only(job: StageJob, tests: RepoTests) -> bool:
    reader = report_for(tests.ecosystem)
    return bool(job.gold_test_patch.strip()) and not collected_test_files(
        job.gold_test_patch, reader
    )


# ---- one stage in one sandbox -------------------------------------------------------------------


def base_command(env: Environment, template: str, files: list[str]) -> str | None:
    """The test command of the run on the stage base: of the stage's test files or packages, those
    the base holds (an option such as Java's `-Dtest=…` is kept). One the test patch creates (a
    new Go package, a new test module) would fail the whole run for some runners (`go test
    ./internal/fs` loads nothing when that directory is missing; pytest stops at a missing file),
    and every other package's outcomes on the base would be lost: gin #4053's 407 FAIL_TO_PASS
    tests, almost all of them passing before. None: the base holds none of them."""
    paths = [f for f in files if not f.startswith("-")]
    if FILES_PLACEHOLDER not in template or not paths:
        return fill_command(template, files)
    quoted = " ".join(shlex.quote(p) for p in paths)
    probe = env.execute(f'for f in {quoted}; do [ -e "$f" ] && printf \'%s\\n\' "$f"; done; true')
    held = set(probe.output.splitlines())
    kept = [f for f in files if f.startswith("-") or f in held]
    return fill_command(template, kept) if any(f in held for f in paths) else None


def stage_test_files(job: StageJob, reader: TestReport) -> list[str]:
    """The test files the stage's hidden tests are in: those its test patch leaves in place, else
    the test modules beside the data it changes (`data_test_files`, from the stage base)."""
    files = collected_test_files(job.gold_test_patch, reader)
    if files or not job.gold_test_patch.strip() or not job.base_sha or not job.clone_path:
        return files
    if isinstance(reader, Pytest):  # modules named as the project's pytest config names them
        patterns = python_files(root_snapshot(job.clone_path, job.base_sha, PYTEST_CONFIGS))
        files = collected_test_files(job.gold_test_patch, Pytest(patterns)) if patterns else []
        if files:
            return files
    tracked = git.output(job.clone_path, "ls-tree", "-r", "--name-only", job.base_sha)

    def read(path: str) -> str:
        return git.output(job.clone_path, "show", f"{job.base_sha}:{path}")

    return data_test_files(job.gold_test_patch, tracked.splitlines(), reader, read)


def verify_stage(
    env: Environment,
    job: StageJob,
    tests: RepoTests,
    config: VerdictsConfig,
    files: list[str] | None = None,
) -> Verified:
    """Run the three kinds of runs on the stage's start in `env` and classify the outcomes.
    `files`: the stage's test files, when the caller found them already (`stage_test_files`)."""
    started = time.monotonic()
    if files is None:
        files = stage_test_files(job, report_for(tests.ecosystem))
    command = fill_command(tests.test, files)
    done = Verified(unusable(""), command, files)
    reason = _precheck(job, tests, files)
    if reason is None:
        reason = _runs(env, job, tests, config, done)
    if reason is not None:
        done.found = unusable(reason)
    done.seconds = time.monotonic() - started
    return done


def _precheck(job: StageJob, tests: RepoTests, files: list[str]) -> str | None:
    if not job.base_sha:
        return "the stage has no base commit"
    if not job.gold_test_patch.strip():
        return "the PR changes no test file (no gold test patch)"
    if FILES_PLACEHOLDER in tests.test and not files:
        return "the gold test patch changes no test module the command could run"
    return None


def _runs(
    env: Environment, job: StageJob, tests: RepoTests, config: VerdictsConfig, done: Verified
) -> str | None:
    reader = report_for(tests.ecosystem)

    def run(command: str | None = None) -> SuiteRun:
        return run_suite(
            env,
            command or done.test_command,
            timeout=config.timeout,
            report_path=config.report_path,
            tail_chars=WHOLE_OUTPUT,  # the root error is read from all of it; the tail is cut below
            report=reader,
        )

    def setup(after: str) -> str | None:
        """The recipe's per-stage step (a generated version module, extensions compiled in
        place), again after each patch: a C file the gold patch changes must be rebuilt."""
        if not tests.setup:
            return None
        done = env.execute(tests.setup, timeout=config.timeout)
        if done.exit_code == 0:
            return None
        last = next((x for x in reversed(done.output.splitlines()) if x.strip()), "")
        return f"the setup command failed {after} (exit {done.exit_code}): {last.strip()[:300]}"

    env.enter_stage(1)
    error = setup("on the base")
    if error is not None:
        return error
    features = needed_features(env, tests.ecosystem, job.gold_test_patch)
    done.test_command = with_features(done.test_command, features)
    on_base = base_command(env, tests.test, done.test_files)
    on_base = with_features(on_base, features) if on_base is not None else None
    start = run(on_base) if on_base is not None else SuiteRun()
    crossing = crossing_part(job.gold_patch.encode(), tests.ecosystem)
    error = apply_patch(env, job.gold_test_patch, reset=False)
    if error is not None:
        return f"the gold test patch does not apply on the base: {error[-300:]}"
    error = apply_patch(env, crossing.held.decode(), reset=False)
    if error is not None:
        return f"the gold patch's build files do not apply after the test patch: {error[-300:]}"
    qualify_tests(env, job.gold_test_patch, done.test_files, tests.ecosystem)
    more = needed_features(env, tests.ecosystem, job.gold_test_patch)  # a gate the patch adds
    if set(more) - set(features):
        features = sorted({*features, *more})
        done.test_command = with_features(fill_command(tests.test, done.test_files), features)
    error = setup("after the test patch")
    if error is not None:
        return error
    with_tests = run()
    touched = touched_by(job.gold_test_patch, reader.names)
    suspects = unsteady_suspects(start.outcomes, with_tests.outcomes, touched)
    again = run() if suspects else SuiteRun()  # is their failure chance? (classify.py)
    error = apply_patch(env, crossing.patch.decode(), reset=False)
    if error is not None:
        return f"the gold code patch does not apply after the test patch: {error[-300:]}"
    error = setup("after the gold patch")
    if error is not None:
        return error
    gold = [run() for _ in range(config.gold_runs)]
    done.runs = {
        "start": start.outcomes,
        "tests": with_tests.outcomes,
        "gold": [g.outcomes for g in gold],
        "exit_codes": [start.exit_code, with_tests.exit_code, *(g.exit_code for g in gold)],
        "timed_out": any(r.timed_out for r in (start, with_tests, again, *gold)),
        # the suspects' outcomes when the with-tests run was repeated
        "tests_again": {t: again.outcomes.get(t, "missing") for t in suspects},
        "counts": {
            name: vars(count(r.outcomes))
            for name, r in (("start", start), ("tests", with_tests), ("gold", gold[-1]))
        },
        "root_error": disk_hinted(reader.root_error(gold[-1].output_tail), gold[-1].output_tail),
        "setup_command": tests.setup,
        "image": tests.image,
        "build_part": crossing.dropped,  # the gold code patch's paths on the hidden side
        "features": features,  # those the stage's tests need that the default build leaves off
        # installed for these runs only, on the era image (eras/hidden.py): never the agent's
        "hidden_requirements": list(job.hidden),
    }
    done.output_tail = gold[-1].output_tail[-config.output_tail_chars :]
    # Tests no clean room can judge (Rust doc tests: the agent writes their text) are left out.
    done.found = classify(
        judged_only(reader, start.outcomes),
        judged_only(reader, with_tests.outcomes),
        [judged_only(reader, g.outcomes) for g in gold],
        touched,
        unsteady=[t for t in suspects if is_passing(again.outcomes.get(t))],
        lent=job.lent,
    )
    done.runs["why"] = done.found.why
    if gold[-1].timed_out and not any(g.outcomes for g in gold):
        return f"the gold run timed out after {config.timeout:g} s"
    excused = dict(tests.excluded)
    if job.lent:  # a lent module that does not import reads the lender's code: it asks nothing
        excused |= {path: "lent" for path in patch_paths(job.gold_test_patch)}
    broken = broken_environment(gold[-1].outcomes, done.runs["root_error"], excused)
    if broken and job.lent and _in_files(done.runs["root_error"], job.gold_test_patch):
        # tokio #2279, lent #2325's tests: they import the `batch_semaphore` #2325 adds
        return (
            "the tests lent by a later stage do not build with this stage's gold patch (they "
            f"read code the lender adds): {done.runs['root_error']}"
        )
    held = held_back(job.gold_patch)
    if broken and held:  # the gold patch needs what its build files say (a new module, a crate)
        changed = ", ".join(held[:3])
        return (
            f"{broken}; the gold patch changes {changed}, which its era's image was built without"
        )
    if broken is None and not any(g.outcomes for g in gold) and isinstance(reader, Silent):
        # a build that skips the stage's tests
        why = reader.silence(gold[-1].output_tail, patch_paths(job.gold_test_patch), _reader(env))
        return f"{done.found.reason}: {why}" if why else None
    return broken


def _in_files(root_error: str, test_patch: str) -> bool:
    """Does the root error name a file of the test patch (`src/sync/tests/x.rs:1:124`)?"""
    return any(
        re.search(rf"(?<![\w/.-]){re.escape(p)}\b", root_error) for p in patch_paths(test_patch)
    )


def qualify_tests(env: Environment, test_patch: str, files: list[str], ecosystem: str) -> None:
    """What root does to the hidden tests when it seals them in a clean room
    (clean_room.sealing_rewrite): in a Rust room their standard macros through names of std and
    core no crate shadows (qualify.py), so the tests found here flip as the clean room runs them."""
    if not qualify.applies(ecosystem):
        return
    text = _reader(env)
    paths = [*patch_paths(test_patch), *files]
    qualify.rewrite(
        paths, lambda path: text(path) or "", env.write_file, lambda path: text(path) is not None
    )


def needed_features(env: Environment, ecosystem: str, test_patch: str) -> list[str]:
    """A Rust stage's `package/feature`s its test files are compiled only with (features.py)."""
    if ecosystem != "rust":
        return []

    @functools.cache  # a declaring file (tests/tests.rs) is asked of by every test file beside it
    def listing(directory: str) -> list[str]:
        found = env.execute(f"ls -1d -- {shlex.quote(directory)}/*.rs 2>/dev/null; true")
        return [
            line.removeprefix("./") for line in found.output.splitlines() if line.endswith(".rs")
        ]

    return needed(patch_paths(test_patch), _reader(env), listing)


def _reader(env: Environment) -> Callable[[str], str | None]:
    """The sandbox's files by path, each read once; None for one that is not there."""

    @functools.cache
    def text(path: str) -> str | None:
        try:
            return env.read_file(path)
        except (FileNotFoundError, IsADirectoryError, PermissionError):
            return None

    return text


def broken_environment(
    outcomes: dict[str, str], root: str, excluded: Mapping[str, str] = {}
) -> str | None:
    """The reason when the gold run shows the environment, not the patch, is at fault: a test module
    that does not even import (other than those its era left out), or no test reported at all."""
    first = f" (first: {root})" if root else ""
    collection = len([u for u in never_ran(outcomes) if u not in excluded])
    if collection:
        return f"environment broken: {collection} collection errors{first}"
    if not outcomes and root:
        return f"environment broken: the test command reported no test{first}"
    return None


def in_excluded(targets: list[str], excluded: Mapping[str, str], root: str = "") -> str | None:
    """Why a stage whose every test target (`./pkg/x`, `tests/test_x.py`) lies in a unit its era
    left out cannot be verified there; None when some target lies elsewhere. A unit is named as
    its runner names it (Go's import path ends with the package's directory; the root package,
    target `.`, is the module's path, `root`)."""
    found = []
    for target in (t for t in targets if not t.startswith("-")):
        where = target.removeprefix("./").rstrip("/")
        if where in ("", "."):
            unit = root if root in excluded else None
        else:
            unit = next((u for u in excluded if u == where or u.endswith(f"/{where}")), None)
        if unit is None:
            return None
        found.append(unit)
    if not found:
        return None
    return f"its tests lie in {found[0]}, which its era left out ({excluded[found[0]]})"


def _go_module(job: StageJob) -> str:
    """The module path of the stage base's root go.mod ("" when there is none to read)."""
    if not job.clone_path:
        return ""
    try:
        text = git.output(job.clone_path, "show", f"{job.base_sha}:go.mod")
    except PrchainError:
        return ""
    return next(iter(go_modules([text])), "")


def held_back(patch: str) -> list[str]:
    """The runner, build and dependency files a patch changes (go.mod, Cargo.lock, a requirements
    file, conftest.py): an era's image holds the dependencies its stage base's files name, so a
    gold patch that adds one cannot build offline (cloudquery's cli #19016:
    `mkdir …/mod/cache/download/github.com/fatih: read-only file system`)."""
    return [p for p in patch_paths(patch) if is_build_file(p.rsplit("/", 1)[-1])]


# ---- the store ------------------------------------------------------------------------------------


def _row(job: StageJob, recipe: str, done: Verified) -> dict[str, Any]:
    found = done.found
    return {
        "chain_stage_id": job.stage_id,
        "recipe": recipe,
        "status": found.status,
        "reason": found.reason,
        "test_command": done.test_command,
        "test_files": done.test_files,
        "fail_to_pass": found.fail_to_pass,
        "pass_to_pass": found.pass_to_pass,
        "flaky": found.flaky,
        "gold_failing": found.gold_failing,
        "runs": done.runs,
        "output_tail": done.output_tail,
        "seconds": done.seconds,
    }


COPIED = [
    "status",
    "reason",
    "test_command",
    "test_files",
    "fail_to_pass",
    "pass_to_pass",
    "flaky",
    "gold_failing",
    "runs",
    "output_tail",
    "seconds",
]


def store(engine: Engine, row: dict[str, Any]) -> None:
    """Replace the stage's result (one row per chain stage, never two)."""
    Environments(engine).save_verification(row)


def _known(engine: Engine, job: StageJob, recipe: str) -> tuple[str | None, dict[str, Any] | None]:
    """(this stage's stored recipe, a stored result with the same recipe from any stage)."""
    own, same = Environments(engine).known(job.stage_id, recipe)
    return own, ({c: getattr(same, c) for c in COPIED} if same is not None else None)


def _report(job: StageJob, result: Result, row: dict[str, Any]) -> StageReport:
    return StageReport(
        job,
        result,
        row.get("reason"),
        len(row.get("fail_to_pass", [])),
        len(row.get("pass_to_pass", [])),
        len(row.get("flaky", [])),
        float(row.get("seconds", 0.0)),
        row.get("status"),
    )


def verify_one(
    engine: Engine, job: StageJob, config: VerdictsConfig, open_env: EnvOpener, redo: bool
) -> StageReport:
    """Verify one stage unless its result is stored already; infrastructure errors are reported,
    not stored, so the next run tries the stage again."""
    # the era as it is now, under the lease (an `env setup` may have run since the stages were
    # listed), from the record's one reader
    now = stage_setup(engine, job.stage_id)
    era = now.era if now is not None else None
    if now is not None:  # what its hidden side adds to the era, read from the clone (hidden.py)
        job = replace(job, hidden=with_hidden(now).hidden)
    tests = era_tests(era) or config.repos.get(job.repo)
    if tests is None:
        return _no_environment(job, era)
    recipe = stage_recipe(job, tests, config.gold_runs)
    own, same = _known(engine, job, recipe)
    if own == recipe and not redo and same is not None:
        return _report(job, "skipped", same)
    if same is not None and not redo:
        store(engine, {"chain_stage_id": job.stage_id, "recipe": recipe, **same})
        return _report(job, "reused", same)
    files = stage_test_files(job, report_for(tests.ecosystem))
    root = _go_module(job) if tests.excluded and tests.ecosystem == "go" else ""
    left_out = in_excluded(files, tests.excluded, root)
    try:
        if left_out is not None:  # no sandbox: its tests cannot run in this era
            done = Verified(unusable(left_out), fill_command(tests.test, files), files)
        else:
            with open_env(job) as env:
                done = verify_stage(env, job, tests, config, files)
    except hidden.Unresolvable as exc:  # no run can judge it: stored, not tried again each time
        done = Verified(unusable(str(exc)), fill_command(tests.test, files), files)
        done.runs = {"hidden_requirements": list(job.hidden)}
    except PrchainError as exc:
        return StageReport(job, "error", f"{type(exc).__name__}: {exc}")
    row = _row(job, recipe, done)
    store(engine, row)
    return _report(job, done.found.status, row)


def _no_environment(job: StageJob, era: EraEnvironment | None) -> StageReport:
    """Why a stage has no environment to verify in, as it is: its era did not verify (with the
    era's own root error), or no `env setup` set the era up."""
    if era is not None and era.status != "verified":
        return StageReport(
            job,
            "era-unverified",
            f"era {era.key[:8]} did not verify ({era.root_error or 'no root error'}); "
            "`tests verify` uses no unverified era's image",
        )
    return StageReport(
        job,
        "unconfigured",
        f"no era recipe (`prchain env setup`) nor verdicts.repos entry for {job.repo}",
    )


def verify_stages(
    engine: Engine,
    config: VerdictsConfig,
    open_env: EnvOpener,
    *,
    chain_ids: Iterable[int] = (),
    redo: bool = False,
    on_start: Callable[[int], None] | None = None,
    on_done: Callable[[StageReport], None] | None = None,
) -> list[StageReport]:
    """Verify every stage of the chosen chains, one sandbox per stage, in order.

    Each stage is verified under its "verify" lease (prchain.store.leases), so two runs at once never run
    the same stage's suites twice; `verify_one` reads what is stored only once the lease is held.
    """
    jobs = find_stages(engine, chain_ids)
    if on_start is not None:
        on_start(len(jobs))
    reports = []
    for job in jobs:
        with holding(engine, "verify", str(job.stage_id)) as lease:
            if lease is None:
                reports.append(StageReport(job, "busy", "another `tests verify` is running it"))
            else:
                reports.append(verify_one(engine, job, config, open_env, redo))
        if on_done is not None:
            on_done(reports[-1])
    return reports
