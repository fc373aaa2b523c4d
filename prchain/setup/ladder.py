"""`prchain env setup`: an era image per (repository, era key), verified by running its tests.

For every stage of the chosen chains the era of its base B_t is found (prchain/environments/eras). Per era
not yet in recipe memory, candidates are tried in order until one verifies:
  1. memory: the image of the verified era nearest in time (no build; often the same packages do);
     where it verifies with units left out, the era's own plans are still tried, and the attempt
     leaving fewer out is kept;
  2. planner: each plan of the ecosystem (dated resolution first);
  3. agent: the LLM setup agent, when one is plugged in (`AgentRepair`), given the last failure.
A candidate is *verified* when at least `eras.pass_share` of the tests that ran at B_t in its image
passed, and as large a share of the units (packages, test modules, crates) ran their tests; a unit
that never ran is left out with its reason (`prchain.verdicts.outcomes`). The evidence (counts,
units left out, root error, logs) and the time (and cost) are stored with the recipe, verified or
not, so a rerun skips the era.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import re
import shlex
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any

from sqlalchemy import Engine

from prchain.core.errors import GitError, PrchainError
from prchain.environments.eras import growth, memory, native
from prchain.environments.eras.config import ErasConfig
from prchain.environments.eras.ecosystems import Method, NoPlan, Plan, report_for
from prchain.environments.eras.era import Era, era_of
from prchain.environments.eras.manifests import Snapshot, snapshot
from prchain.environments.eras.reports import (
    FILES_PLACEHOLDER,
    NO_SPACE,
    TestReport,
    disk_hinted,
)
from prchain.environments.protocol import Environment
from prchain.store.leases import holding
from prchain.verdicts.losses import era_loss
from prchain.verdicts.outcomes import Counts, count, exclusions, service_failures
from prchain.verdicts.sandbox import (
    SuiteRun,
    collected_test_files,
    fill_command,
    patch_paths,
    run_suite,
)
from prchain.verdicts.verify import StageJob, find_stages

log = logging.getLogger(__name__)

LOG_CHARS = 20_000  # of each build and test output kept with the recipe
# of a run's output read for its root error and its units' errors: a package that did not build is
# reported long before the last tests' lines (ent's go1.20 era: a hundred packages)
WHOLE_OUTPUT = 1_000_000
REPORT_PATH = "/tmp/prchain-era-junit.xml"

# An opener of a sandbox on a given image at one commit: (repo, clone, sha, image) → environment.
ImageOpener = Callable[[str, str, str, str], contextlib.AbstractContextManager[Environment]]


@dataclass(frozen=True)
class Candidate:
    method: Method
    plan: Plan
    image: str = ""  # an image that exists already (memory, or one the agent committed)
    cost: float = 0.0


@dataclass(frozen=True)
class RepairRequest:
    """What the setup agent is given when neither memory nor the planner verified an era."""

    repo: str
    clone: str
    sha: str
    era_key: str
    snapshot: Snapshot
    plan: Plan | None  # the planner's last plan, as a starting point
    failure: str  # its root error, one line
    log: str  # the build or test output that shows it


AgentRepair = Callable[[RepairRequest], Candidate | None]


@dataclass
class EraReport:
    """What setup did with one era (the progress line and the summary table)."""

    repo: str
    era_key: str
    date: str
    stages: int
    result: str  # verified | unverified | known | busy | error
    method: str = ""
    reason: str = ""
    seconds: float = 0.0
    cost: float = 0.0
    counts: Counts = field(default_factory=Counts)
    node: str = ""  # where it ran (a Ray node's label; this host's name with threads)
    image: str = ""  # the era image the recipe names
    image_bytes: int = 0  # the era image's size, and what its own layers add over what it is
    own_bytes: int = 0  # built on (content no other era shares), where the engine knows it

    @property
    def loss(self) -> str:
        """Why an era is not verified, as `prchain.verdicts.losses` counts it ("" when it is)."""
        if self.result not in ("unverified", "known") or not self.reason:
            return ""
        return era_loss(self.reason).label


@dataclass(frozen=True)
class Check:
    """What one verification run found: counts, output, and its scope ("" for the whole suite)."""

    counts: Counts
    output: str
    scope: str = ""


def check_image(
    open_on: ImageOpener, job: StageJob, image: str, plan: Plan, config: ErasConfig
) -> Check:
    """Run the whole suite at B_t in a sandbox of `image`. When it is too big for the sandbox
    (killed for memory, or past the time limit), the stage's own test files and a bounded sample
    of the others are run instead, and the scope says so."""
    reader = report_for(plan.ecosystem)
    timeout = config.verify_limit(job.repo).timeout
    with open_on(job.repo, job.clone_path, job.base_sha, image) as env:
        env.enter_stage(1)
        if plan.setup_command:  # a compiled project's extensions are built here
            built = env.execute(plan.setup_command, timeout=config.setup_timeout)
            if built.exit_code != 0:
                return _setup_failed(built.exit_code, built.output)
        whole = plan.test_command.replace(FILES_PLACEHOLDER, "").strip()
        run = _run(env, whole, timeout, reader)
        not_whole = _not_whole(run)
        own, others = (
            sized_sample(job, reader, config.verify_sample, whole) if not_whole else ([], [])
        )
        if own or others:
            if not_whole == DISK_FULL:
                env.execute(CLEAR_SCRATCH, timeout=timeout)
            narrowed = reader.narrowed(plan.test_command)
            sized = _run(env, fill_command(narrowed, own + others), timeout, reader)
            left_out: list[str] = []
            for _ in range(UNLOADED_RETRIES):
                unloaded = _unloaded(sized, others)
                if not unloaded:
                    break
                left_out += unloaded
                others = [p for p in others if p not in unloaded]
                sized = _run(env, fill_command(narrowed, own + others), timeout, reader)
            scope = (
                f"the stage's {len(own)} test files and {len(others)} others of B_t "
                f"(the whole suite {not_whole})" + _stopped(sized, timeout) + _not_loaded(left_out)
            )
            return Check(_counted(sized, reader, timeout), _kept(sized.output_tail), scope)
    stopped = _stopped(run, timeout)
    return Check(
        _counted(run, reader, timeout),
        _kept(run.output_tail),
        stopped and f"the whole suite of B_t{stopped}",
    )


# How many times a sample is run again without the sampled files that stopped it loading.
UNLOADED_RETRIES = 3


def _unloaded(run: SuiteRun, sampled: list[str]) -> list[str]:
    """The sampled files whose loading stopped a run before any test ran. mocha loads every file
    before it runs one and stops at the first that throws; what a path names a test file is
    sometimes not one (eslint's tests/performance/jshint.js, a bundle that needs a browser's
    `window`; docs/_examples/…/sample-data/test-file.js, a linter's input). The stage's own files
    are never left out: one that does not load is the era's failure."""
    if any("::" in test for test in run.outcomes):
        return []
    return [
        path for path, outcome in run.outcomes.items() if outcome == "error" and path in sampled
    ]


def _not_loaded(paths: list[str]) -> str:
    if not paths:
        return ""
    return f"; sampled files left out, they did not load: {', '.join(paths)}"


def _kept(output: str) -> str:
    """The run's output as the recipe keeps it: its last LOG_CHARS, after the lines that say what
    is missing wherever they are (a header, a pkg-config module, a library, a program), which
    the native revision reads: 389 tests' JSON events pushed gopacket's "pcap.h: No such file or
    directory" out of the tail."""
    tail = output[-LOG_CHARS:]
    asked = [m.line for m in native.missing(output[:-LOG_CHARS])]
    return "\n".join([*dict.fromkeys(asked), tail]) if asked else tail


def _stopped(run: SuiteRun, timeout: float) -> str:
    """What a run stopped at its time limit counted ("" for one that finished)."""
    if not (run.timed_out and run.outcomes):
        return ""
    return f", stopped at its {timeout:g} s limit; tests finished: {len(run.outcomes)}"


def _setup_failed(code: int, output: str) -> Check:
    """The per-stage setup command failed: its last error line is the root error."""
    lines = [x.strip() for x in output.splitlines() if x.strip()]
    errors = [x for x in lines if re.search(r"\berror\b", x, re.I)]
    said = (errors or lines or [""])[0 if errors else -1][:300]
    first = f"the setup command failed (exit {code}): {said}"
    return Check(Counts(first_error=first), output[-LOG_CHARS:], "")


def _run(env: Environment, command: str, timeout: float, reader: TestReport) -> SuiteRun:
    return run_suite(
        env,
        command,
        timeout=timeout,
        report_path=REPORT_PATH,
        tail_chars=WHOLE_OUTPUT,
        report=reader,
    )


DISK_FULL = "filled the sandbox's disk"
# The sized run starts from the scratch space the whole suite started from: pytest clears its base
# temporary directory only when a test first asks for one, so what the suite left there would
# fill the disk again before the runner writes its report.
CLEAR_SCRATCH = 'find "${TMPDIR:-/tmp}" -mindepth 1 -maxdepth 1 -user "$(id -u)" -exec rm -rf {} +'


# A runner that, given no files, looked where the project keeps none (mocha's ./test: eslint's
# suite is `tests/{bin,conf,lib,tools}/**/*.js`, handed over by its Makefile.js); mocha 1 (2014)
# says only that nothing passed.
NO_TEST_FILES = re.compile(
    r"No test files found|cannot resolve path \(or pattern\)|No tests found|^\s*0 passing\b", re.M
)


def _not_whole(run: SuiteRun) -> str:
    """Why the whole suite could not finish in the sandbox ("" when it did), or found nothing to
    run by itself: then the stage's own test files and a sample of the others run instead."""
    if not run.outcomes and NO_TEST_FILES.search(run.output_tail):
        return "found no test file by itself"
    if run.timed_out:
        return "ran past its time limit"
    if run.exit_code in (137, -9) or run.output_tail.rstrip().endswith("Killed"):
        return "was killed at the memory limit"
    if not run.outcomes and NO_SPACE in run.output_tail:
        # numpy 2024's whole suite filled the sandbox's 256m /tmp with its tests' files and
        # pytest could not write its report: every test had run, none was counted.
        return DISK_FULL
    return ""


def sized_sample(
    job: StageJob, reader: TestReport, size: int, whole: str = ""
) -> tuple[list[str], list[str]]:
    """(the stage's test files that exist at B_t, up to `size` other test modules of B_t in a
    fixed order of their digest: the same sample on every run). When the whole suite's command
    names its directories (`go test ./plugins/a/...`), the others are taken from them: a module
    of a monorepo outside the era's is not in its image."""
    from prchain.core import git

    tracked = git.output(job.clone_path, "ls-tree", "-r", "--name-only", job.base_sha).split("\n")
    # a target is a tracked file (pytest), or the directory of some (a Go package: `./pkg/x`)
    present = set(tracked) | {p.rsplit("/", 1)[0] for p in tracked if "/" in p}
    own = [
        p
        for p in collected_test_files(job.gold_test_patch, reader)
        if p.removeprefix("./") in present
    ]
    scope = _named_dirs(whole)
    tracked = [p for p in tracked if not scope or any(p.startswith(d) for d in scope)]
    tests = [p for p in reader.targets(tracked) if p not in own and _test_path(p)]
    tests.sort(key=lambda p: hashlib.sha256(f"{job.base_sha}:{p}".encode()).hexdigest())
    return own, tests[:size]


def _named_dirs(command: str) -> list[str]:
    """The directories a command names as `./x/...` or `./x` ("" for `./...`: the whole tree)."""
    try:
        words = shlex.split(command)
    except ValueError:
        return []
    named = [w.removeprefix("./").removesuffix("...").rstrip("/") for w in words]
    dirs = [d for w, d in zip(words, named, strict=True) if w.startswith("./")]
    return [] if "" in dirs else [f"{d}/" for d in dirs]


def _test_path(path: str) -> bool:
    return any(part in ("test", "tests", "testing") for part in path.split("/")[:-1]) or (
        path.rsplit("/", 1)[-1].startswith("test")
    )


def _counted(run: SuiteRun, reader: TestReport, timeout: float) -> Counts:
    """A run stopped at its time limit counts the tests it finished (interrupted, the runner
    still reports them); one that finished none says it ran past the limit. Failed tests that
    needed a service the sandbox lacks are left out, like units that did."""
    needing = service_failures(run.outcomes, run.output_tail)
    found = count({t: o for t, o in run.outcomes.items() if t not in needing})
    found.excluded = exclusions(run.outcomes, run.output_tail, reader) | needing
    found.first_error = reader.root_error(run.output_tail)
    if run.timed_out and run.outcomes:
        found.first_error = ""  # the interrupt's own traceback is no error of the suite's
    elif run.timed_out:
        found.first_error = f"the suite ran past {timeout:g} s" + (
            f" ({found.first_error})" if found.first_error else ""
        )
    found.first_error = disk_hinted(found.first_error, run.output_tail)
    if not run.outcomes and not found.first_error:
        # No exception to name (a usage error, a plugin refusing the options): its last line does.
        last = next((x.strip() for x in reversed(run.output_tail.splitlines()) if x.strip()), "")
        found.first_error = f"the test command reported no test (exit code {run.exit_code})" + (
            f": {last[:200]}" if last else ""
        )
    return found


# ---- one era ---------------------------------------------------------------------------------------


BuildFn = Callable[[StageJob, Era, Plan], tuple[str, float, str, str]]
"""(job, era, plan) → (image tag or "" on failure, seconds of the build that made the image (an
image that existed: as it records, else 0), log, root error of a failed build)."""


@dataclass
class Setup:
    """Everything one `env setup` run needs, wired by the app layer."""

    engine: Engine
    config: ErasConfig
    build: BuildFn
    open_on: ImageOpener
    agent: AgentRepair | None = None
    redo: bool = False
    # Whether an image is in the engine: a remembered era whose image was pruned is no candidate.
    image_exists: Callable[[str], bool] | None = None
    # An image's size in bytes, kept with the recipe (the cost users of an era judge it by).
    image_size: Callable[[str], int] | None = None


def _memory_candidate(
    setup: Setup, repo_id: int, era: Era, planned: Plan | None
) -> Candidate | None:
    if era.ecosystem is None:
        return None
    near = memory.nearest_verified(setup.engine, repo_id, era.ecosystem.name, era.date, era.key)
    if near is None or (setup.image_exists is not None and not setup.image_exists(near["image"])):
        return None
    if planned is not None and not same_suite(planned.test_command, near["test_command"]):
        return None
    plan = Plan(
        near["ecosystem"],
        near["suite"],
        near["interpreter"],
        near["cutoff"],
        list(near["commands"]),
        near["test_command"],
        near["setup_command"],
        [f"the image of era {near['era_key']} ({near['era_date'][:10]})"],
        variant=f"era {near['era_key']}",
    )
    return Candidate("memory", plan, image=near["image"])


def _attempt(
    setup: Setup, job: StageJob, era: Era, candidate: Candidate
) -> tuple[dict[str, Any], Counts, str]:
    """Build (unless the candidate has an image) and check one candidate; (record, counts, log)."""
    record: dict[str, Any] = {"method": candidate.method, "variant": candidate.plan.variant}
    if candidate.plan.caveat:
        record["caveat"] = candidate.plan.caveat
    image, build_seconds, log = candidate.image, 0.0, ""
    if not image:
        image, build_seconds, log, failure = _build(setup, job, era, candidate.plan, record)
        record.update(image=image, build_seconds=round(build_seconds, 1))
        if not image:
            record["root_error"] = f"build failed: {failure}"
            return record, Counts(first_error=record["root_error"]), log
    if candidate.method == "memory" or (not candidate.image and not build_seconds):
        # An image this run did not build (memory's, or one of this recipe an earlier run built
        # that does not say how long it took): the build that made it, never a 0-second build
        # that would pull `prchain stats`' mean build time per era down. (A revised plan on the
        # image the attempt before it built adds nothing: that attempt counted the build.)
        record["build_seconds"] = memory.image_build_seconds(setup.engine, image)
    started = time.monotonic()
    check = check_image(setup.open_on, job, image, candidate.plan, setup.config)
    if not check.counts.first_error and not check.counts.verified(setup.config.pass_share):
        check.counts.first_error = _too_few(check, setup.config.pass_share)
    record.update(
        image=image,
        verify_seconds=round(time.monotonic() - started, 1),
        counts=_counts_dict(check.counts),
        root_error=check.counts.first_error,
    )
    if check.scope:
        record["scope"] = check.scope
    return record, check.counts, (log[-LOG_CHARS:] + "\n---- tests ----\n" + check.output)


def _build(
    setup: Setup, job: StageJob, era: Era, plan: Plan, record: dict[str, Any]
) -> tuple[str, float, str, str]:
    """Build the plan's image: on the nearest earlier verified era image of the repository where
    the plan allows it and a thin layer pays (growth.py; `record` says which, or why not), else,
    or when that thin build fails (`record` says why), from the toolchain layer. The seconds are
    both builds' when the first failed."""
    earlier = _earlier(setup, job, era, plan)
    if earlier is None:
        return setup.build(job, era, plan)
    grew = {"era": earlier["era_key"], "date": earlier["era_date"][:10], "image": earlier["image"]}
    why = growth.refusal(_units(setup, job, era, earlier), plan.units)
    if why:
        record["not_grown"] = {**grew, "why": why}
        return setup.build(job, era, plan)
    thin = setup.build(job, era, replace(plan, on=earlier["image"]))
    if thin[0]:
        record["grew_from"] = grew
        return thin
    record["thin_failed"] = {**grew, "why": thin[3]}
    image, seconds, log, failure = setup.build(job, era, plan)
    return (
        image,
        thin[1] + seconds,
        f"{thin[2][-LOG_CHARS // 4 :]}\n---- full build ----\n{log}",
        failure,
    )


def _earlier(setup: Setup, job: StageJob, era: Era, plan: Plan) -> dict[str, Any] | None:
    """The recipe of the era an image of `plan` may grow from: verified, of the same repository,
    ecosystem, suite and toolchain, its base not later than this era's (nothing it holds comes
    after B_t), its image in the engine; None when the plan or `eras.incremental` says no."""
    if not (setup.config.incremental and plan.grows) or era.ecosystem is None:
        return None
    repo_id = memory.repo_id(setup.engine, job.repo)
    if repo_id is None:
        return None
    near = memory.earlier_verified(setup.engine, repo_id, era.snap.date.isoformat(), era.key, plan)
    if near is None or (setup.image_exists is not None and not setup.image_exists(near["image"])):
        return None
    return near


def _units(
    setup: Setup, job: StageJob, era: Era, recipe: dict[str, Any]
) -> tuple[growth.Unit, ...]:
    """What the earlier era's build compiled, planned again from its base's manifests (() when
    that no longer plans: the share is then not judged)."""
    assert era.ecosystem is not None
    try:
        earlier = snapshot(job.clone_path, recipe["base_sha"])
        return era.ecosystem.plans(earlier, setup.config)[0].units
    except (NoPlan, PrchainError, IndexError, ValueError):
        return ()


def _grown(record: dict[str, Any]) -> list[str]:
    """The recipe's notes on the era image it grew from, or on the thin build that failed."""
    if record.get("grew_from"):
        g = record["grew_from"]
        return [f"grew from era {g['era']} ({g['date']}): a thin layer on {g['image']}"]
    if record.get("not_grown"):
        g = record["not_grown"]
        return [
            f"built from the toolchain layer, not grown on era {g['era']} ({g['date']}): {g['why']}"
        ]
    if record.get("thin_failed"):
        g = record["thin_failed"]
        return [
            f"built from the toolchain layer: the thin build on era {g['era']} failed: {g['why']}"
        ]
    return []


def _too_few(check: Check, pass_share: float) -> str:
    """Why a suite that ran without an exception to name did not verify: its pass share, and the
    first failure it printed (`FAILED tests/x.py::t - sh.CommandNotFound: dotenv`)."""
    c = check.counts
    ran = c.passed + c.failed + c.errors
    first = re.search(r"^(?:FAILED|ERROR) (.+)$", check.output, re.M)
    if (c.share >= pass_share and c.passed) or (not ran and c.excluded):  # too few units ran
        every = c.units + c.collection_errors
        unit, why = next(iter(c.excluded.items()), ("", ""))
        return (
            f"{c.units} of {every} units ran their tests (under eras.pass_share {pass_share:g})"
            + (f"; first left out: {unit}: {why[:200]}" if unit else "")
        )
    return f"{c.passed} of {ran} tests passed (under eras.pass_share {pass_share:g})" + (
        f"; first: {first.group(1)[:200]}" if first else ""
    )


def _counts_dict(c: Counts) -> dict[str, Any]:
    return {
        "passed": c.passed,
        "failed": c.failed,
        "errors": c.errors,
        "skipped": c.skipped,
        "collection_errors": c.collection_errors,
        "share": round(c.share, 3),
        "first_error": c.first_error,
        "units": c.units,
        "excluded": dict(c.excluded),
    }


def same_suite(planned: str, remembered: str) -> bool:
    """Whether a remembered era's test command runs the suite this era's planner would: it holds
    every word of the planned one (a revision only adds words, `--assert=plain`). A monorepo's
    eras of two modules test two suites (`go test ./plugins/a/...`, `./plugins/b/...`): the image
    of one passing its own tests says nothing of the other's."""
    try:
        return set(shlex.split(planned)) <= set(shlex.split(remembered))
    except ValueError:
        return planned == remembered


def _candidates(setup: Setup, repo_id: int, era: Era) -> tuple[list[Candidate], str]:
    """(memory's candidate, then the planner's, in order; why there is none when the ecosystem
    says nothing can be built for this base)."""
    plans: list[Plan] = []
    if era.ecosystem is not None:
        try:
            plans = era.ecosystem.plans(era.snap, setup.config)
        except NoPlan as exc:
            return [], str(exc)
        plans = [native.with_known(p, era.snap, setup.config) for p in plans]
    remembered = _memory_candidate(setup, repo_id, era, plans[0] if plans else None)
    found = [remembered] if remembered is not None else []
    found += [Candidate("planner", p) for p in plans]
    return found, "no ecosystem recognises the stage base"


def setup_era(setup: Setup, repo_id: int, job: StageJob, era: Era, stages: int) -> EraReport:
    """Try memory, the planner's plans, then the agent; store the recipe either way."""
    started = time.monotonic()
    report = EraReport(job.repo, era.key, era.date, stages, "unverified")
    attempts: list[dict[str, Any]] = []
    chosen: tuple[Candidate, dict[str, Any], Counts, str] | None = None
    last: tuple[Candidate, dict[str, Any], Counts, str] | None = None
    queue, why_none = _candidates(setup, repo_id, era)
    while queue:
        candidate = queue.pop(0)
        record, counts, log = _attempt(setup, job, era, candidate)
        attempts.append(record)
        last = (candidate, record, counts, log)
        if record.get("counts") and counts.verified(setup.config.pass_share):
            if chosen is None or _fewer_left_out(record, chosen):
                chosen = last
            if chosen is last and candidate.method == "memory" and _left_out(record):
                # this era's own plans next, revised as they fail, as if memory had not
                # verified; whichever leaves fewer out is kept (_fewer_left_out)
                continue
            fuller = _fuller(setup.config, candidate, record, log) if chosen is last else None
            if fuller is None:
                break
            queue = [fuller]
            continue
        if chosen is not None and chosen[0].method != "memory":
            break  # the fuller try did not verify: the era stays as first verified
        revised = _revised(era, setup.config, candidate, record, log)
        if revised is not None:
            queue.insert(0, revised)
        if not queue and chosen is None and setup.agent is not None and candidate.method != "agent":
            repaired = setup.agent(_request(job, era, candidate, counts, log))
            if repaired is not None:
                queue.append(repaired)
    if last is None:
        report.result, report.reason = "unverified", why_none
        _store(setup, repo_id, job, era, None, attempts, report, time.monotonic() - started)
        return report
    report.result = "verified" if chosen else "unverified"
    candidate, record, counts, log = chosen or last
    report.method, report.counts = candidate.method, counts
    report.reason = "" if chosen else _first_root_error(attempts, counts)
    report.cost = sum(float(a.get("cost", 0.0)) for a in attempts) + candidate.cost
    report.seconds = time.monotonic() - started
    _store(setup, repo_id, job, era, (candidate, record, log), attempts, report, report.seconds)
    return report


def _revised(
    era: Era, config: ErasConfig, candidate: Candidate, record: dict[str, Any], log: str
) -> Candidate | None:
    """The change of a planner plan that failed, tried before the next plan: the Debian packages
    its log says are missing (a header, a pkg-config module, a library, a program), else the
    ecosystem's own (a dependency that does not compile here taken as a wheel; a test command
    that suits the old code); on the same image when only the test command changed."""
    if candidate.method != "planner" or era.ecosystem is None:
        return None
    ran = bool(record.get("counts"))
    plan = native.revise(candidate.plan, log, config)
    if plan is None:
        plan = era.ecosystem.revise(era.snap, config, candidate.plan, log, ran)
        plan = native.carried(candidate.plan, plan) if plan is not None else None
    if plan is None:
        return None
    same = ran and plan.commands == candidate.plan.commands
    return Candidate("planner", plan, image=record.get("image", "") if same else "")


def _left_out(record: dict[str, Any]) -> dict[str, str]:
    """The units a verified attempt left out (unit → why)."""
    return dict((record.get("counts") or {}).get("excluded") or {})


def _fewer_left_out(
    record: dict[str, Any], chosen: tuple[Candidate, dict[str, Any], Counts, str]
) -> bool:
    """Whether an attempt leaves out fewer units than the one chosen, or as few where that one
    is memory's: an image of another era's manifests. encode/starlette's 2019 era verified on its
    2018 era's image with five test modules left out (aiofiles, graphene, …) and every form test
    failing, for want of what its requirements.txt had added; its own plans were never tried."""
    mine, theirs = len(_left_out(record)), len(_left_out(chosen[1]))
    return mine < theirs or (mine == theirs and chosen[0].method == "memory")


def _fuller(
    config: ErasConfig, candidate: Candidate, record: dict[str, Any], log: str
) -> Candidate | None:
    """A verified planner era that left units out because their build misses a header, a
    pkg-config module, a library or a program of the suite: the plan again with those packages,
    tried once more (native.revise is bounded). google/gopacket verified without its `pcap`
    package ("pcap.h: No such file or directory"), whose tests then no stage could run."""
    if candidate.method != "planner" or not _left_out(record):
        return None
    plan = native.revise(candidate.plan, log, config)
    return Candidate("planner", plan) if plan is not None else None


def _first_root_error(attempts: list[dict[str, Any]], counts: Counts) -> str:
    """The planner's first failure that got as far as running the suite, else its first build
    failure (it names what the manifests ask for), else the first attempt's."""
    planned = [a for a in attempts if a["method"] == "planner" and a.get("root_error")]
    # A failure a revision of the attempt got past is not what blocks the era (pmd's reactor: the
    # class its test module missed under `test` was there under `package`, and the revision failed
    # on a dependency only jcenter served): the revision's failure stands for it.
    planned = [
        a
        for a in planned
        if not any(
            b is not a and str(b.get("variant", "")).startswith(f"{a.get('variant', '')}+")
            for b in planned
        )
    ]
    # The attempt that got furthest: a suite that ran (built) shows the next blocker, which a build
    # failure before it (greenlet's sdist, then lifted to a wheel) no longer is.
    ran = [a for a in planned if a.get("counts")]
    first = (ran or planned or attempts)[0]
    root = str(first.get("root_error") or counts.first_error)
    # What no plan here can give comes first: "declares Python 2.7 only; no Python 2 here — …".
    return f"{first['caveat']} — {root}" if first.get("caveat") else root


def _request(
    job: StageJob, era: Era, candidate: Candidate, counts: Counts, log: str
) -> RepairRequest:
    return RepairRequest(
        job.repo,
        job.clone_path,
        job.base_sha,
        era.key,
        era.snap,
        candidate.plan,
        counts.first_error,
        log,
    )


def _store(
    setup: Setup,
    repo_id: int,
    job: StageJob,
    era: Era,
    outcome: tuple[Candidate, dict[str, Any], str] | None,
    attempts: list[dict[str, Any]],
    report: EraReport,
    seconds: float,
) -> None:
    if report.result != "verified" and setup.redo:
        stored = memory.recipe(setup.engine, repo_id, era.key)
        if stored is not None and stored["status"] == "verified":
            # `--redo` after a planner change gave strawberry's verified era of 2023-08 a plan
            # that did not verify (pytest-django without Django), and stored it over the one
            # that did: a try that fails loses nothing
            said = report.reason or "it did not verify"
            report.reason = f"the stored verified recipe stays; set up again: {said}"
            return
    plan = outcome[0].plan if outcome else None
    record = outcome[1] if outcome else {}
    image = record.get("image", "")
    memory.save_recipe(
        setup.engine,
        {
            "repo_id": repo_id,
            "era_key": era.key,
            "ecosystem": era.ecosystem.name if era.ecosystem else "unknown",
            "era_date": era.snap.date.isoformat(),
            "base_sha": job.base_sha,
            "status": report.result,
            "method": report.method or "planner",
            "variant": plan.variant if plan else "",
            "suite": plan.suite if plan else "",
            "interpreter": plan.interpreter if plan else "",
            "cutoff": plan.cutoff if plan else "",
            "commands": plan.commands if plan else [],
            "test_command": plan.test_command if plan else "",
            "setup_command": plan.setup_command if plan else "",
            "image": image,
            "image_bytes": setup.image_size(image) if image and setup.image_size else 0,
            "verification": {
                **_counts_dict(report.counts),
                "attempts": attempts,
                **({"grew_from": record["grew_from"]} if record.get("grew_from") else {}),
            },
            "root_error": report.reason,
            "notes": (plan.notes if plan else [])
            + _grown(record)
            + ([f"verified on {record['scope']}"] if record.get("scope") else [])
            + [f"left out {unit}: {why}" for unit, why in report.counts.excluded.items()],
            "cost": report.cost,
            "build_seconds": era_build_seconds(attempts),
            "verify_seconds": sum(float(a.get("verify_seconds", 0.0)) for a in attempts),
            "log": outcome[2][-LOG_CHARS:] if outcome else "",
        },
    )


def era_build_seconds(attempts: list[dict[str, Any]]) -> float:
    """How long building this era's image took, over its attempts. An attempt on another era's
    image (`memory`) brings the build that made that image, which counts only where no attempt
    built one of this era's own: cloudquery's era of #6763 tried #6759's image first (it lacked
    testify), then built its own, and summed both builds (209.6 s for a 100.5 s build)."""
    own = [a for a in attempts if a.get("method") != "memory"]
    return round(sum(float(a.get("build_seconds", 0.0)) for a in own or attempts), 1)


# ---- all eras of the chosen chains -----------------------------------------------------------------


def choosing_paths(job: StageJob) -> list[str]:
    """The paths that choose a stage's room where its tree has several: its test files, else (a
    PR that changes no test) the files its gold patch changes. sphinx-doc/sphinx's stages without
    tests got the Node room of the `package.json` its JavaScript tests read, in a Python project."""
    return patch_paths(job.gold_test_patch) or patch_paths(job.gold_patch)


def plan_eras(
    engine: Engine, chain_ids: Iterable[int] = (), repo: str | None = None
) -> list[tuple[int, StageJob, Era, int]]:
    """The eras the chosen stages need: (repo id, representative stage, era, number of stages).

    The representative is the era's latest stage base: its date is the resolution cutoff, so
    whatever any stage of the era requires was released by then."""
    groups: dict[tuple[int, str], list[tuple[StageJob, Era]]] = {}
    rows = []
    for job in find_stages(engine, chain_ids):
        if (repo and job.repo != repo) or not job.base_sha or not job.clone_path:
            continue
        repo_id = memory.repo_id(engine, job.repo)
        if repo_id is None:
            continue
        try:
            era = era_of(job.clone_path, job.base_sha, choosing_paths(job))
        except GitError as error:  # a snapshot that lacks the commit's objects: this stage only
            where = f"stage {job.chain_id}:{job.idx} (base {job.base_sha[:12]})"
            log.warning("%s has no era: %s", where, str(error)[-300:])
            continue
        groups.setdefault((repo_id, era.key), []).append((job, era))
        rows.append(
            {
                "chain_stage_id": job.stage_id,
                "repo_id": repo_id,
                "era_key": era.key,
                "base_sha": job.base_sha,
            }
        )
    if rows:
        memory.save_stage_eras(engine, rows)
    found = []
    for (repo_id, _key), members in groups.items():
        job, era = max(members, key=lambda m: m[1].snap.date)
        found.append((repo_id, job, era, len(members)))
    return sorted(found, key=lambda f: (f[1].repo, f[2].snap.date))


EraItem = tuple[int, StageJob, Era, int]
"""One era to set up: (repo id, representative stage, era, number of stages)."""


def setup_eras(
    setup: Setup,
    *,
    chain_ids: Iterable[int] = (),
    repo: str | None = None,
    on_start: Callable[[int], None] | None = None,
    on_done: Callable[[EraReport], None] | None = None,
) -> list[EraReport]:
    """Every era the chosen stages need; eras with a stored recipe are skipped (unless redo)."""
    eras = plan_eras(setup.engine, chain_ids, repo)
    if on_start is not None:
        on_start(len(eras))
    reports = []
    for item in eras:
        reports.append(setup_one(setup, item))
        if on_done is not None:
            on_done(reports[-1])
    return reports


def setup_one(setup: Setup, item: EraItem) -> EraReport:
    """One era, under its lease: a second `env setup` on the store reports it busy, builds nothing."""
    repo_id, job, era, stages = item
    with holding(setup.engine, "env_setup", f"{repo_id}:{era.key}") as lease:
        if lease is None:
            busy = "another `env setup` is building it"
            return EraReport(job.repo, era.key, era.date, stages, "busy", reason=busy)
        return _one(setup, repo_id, job, era, stages)


def waves(eras: list[EraItem]) -> list[list[EraItem]]:
    """The eras in rounds that may run at once and store what running them one by one, in date
    order, stores: an era waits for every earlier era that recipe memory could offer it (same
    repository and ecosystem, not later, within memory.NEAREST_DAYS); eras no memory links (two
    repositories, two ecosystems, years apart) share a round."""
    from datetime import date as Date

    rounds: list[int] = []
    for i, (repo_id, _job, era, _n) in enumerate(eras):
        after = [
            rounds[j]
            for j, (other_repo, _o, other, _m) in enumerate(eras[:i])
            if other_repo == repo_id
            and era.ecosystem is not None
            and other.ecosystem is not None
            and other.ecosystem.name == era.ecosystem.name
            and other.date <= era.date
            and (Date.fromisoformat(era.date) - Date.fromisoformat(other.date)).days
            <= memory.NEAREST_DAYS
        ]
        rounds.append(1 + max(after) if after else 0)
    return [
        [item for item, r in zip(eras, rounds, strict=True) if r == n]
        for n in range(max(rounds) + 1 if rounds else 0)
    ]


def _one(setup: Setup, repo_id: int, job: StageJob, era: Era, stages: int) -> EraReport:
    known = memory.recipe(setup.engine, repo_id, era.key)
    if known is not None and not setup.redo:
        counts = Counts(**{k: v for k, v in known["verification"].items() if k in _FIELDS})
        return EraReport(
            job.repo,
            era.key,
            era.date,
            stages,
            "known",
            known["method"],
            known["root_error"],
            0.0,
            known["cost"],
            counts,
        )
    try:
        return setup_era(setup, repo_id, job, era, stages)
    except PrchainError as exc:
        return EraReport(
            job.repo, era.key, era.date, stages, "error", "", f"{type(exc).__name__}: {exc}"
        )


_FIELDS = {
    "passed", "failed", "errors", "skipped", "collection_errors", "first_error", "units", "excluded",
}  # fmt: skip
