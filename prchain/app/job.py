"""The whole job in one call (`prchain run`): mine → chains → queries → environments → verdicts →
runnable export → gold evaluation → rollouts and trajectory export, then a funnel per repository.

Every step is the command of the same name, resumable as that command is: a rerun skips what the
store (or the results file) already holds. A step that cannot run here (no model configured for its
role, no Docker engine) is skipped with one line and the steps that do not need it go on; a step
that fails is recorded with its error and the rest goes on where it can.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from prchain.app.config import Config
from prchain.app.funnel import COLUMNS, FunnelRow
from prchain.app.store import opened
from prchain.core.errors import NothingToDo, PrchainError

if TYPE_CHECKING:
    from prchain.store.handle import Store

StepStatus = Literal["done", "skipped", "failed"]
Notify = Callable[[str], None]


@dataclass(frozen=True)
class StepOutcome:
    """What one step of the job did, in one line."""

    step: str
    status: StepStatus
    detail: str


@dataclass(frozen=True)
class JobInput:
    """What to mine (nothing: the job runs over the store as it is) and where outputs go."""

    repos: list[str] = field(default_factory=list)
    source: str | None = None
    name: str | None = None
    out: Path = Path("data/run")


@dataclass
class JobSummary:
    steps: list[StepOutcome] = field(default_factory=list)
    gold: dict[tuple[int, int], str] = field(default_factory=dict)  # (chain, idx) → eval status

    @property
    def failed(self) -> list[StepOutcome]:
        return [s for s in self.steps if s.status == "failed"]


def model_configured(config: Config, role: str) -> bool:
    """Whether a call for `role` has a server to go to (as the LLM client decides at call time)."""
    llm = config.llm
    return bool(
        llm.endpoints.get(role)
        or os.environ.get(llm.base_url_env)
        or os.environ.get(llm.api_key_env)
    )


def docker_reachable() -> bool:
    from prchain.environments.docker_client import connect

    try:
        connect().close()
    except PrchainError:
        return False
    return True


def run_job(
    config: Config, given: JobInput, notify: Notify = print, store: Store | None = None
) -> JobSummary:
    """Run every step that can run here, in order, and say what each did; the steps share one
    store (`store`, or the configured one opened for the job)."""
    summary = JobSummary()
    given.out.mkdir(parents=True, exist_ok=True)
    tasks = given.out / "tasks.jsonl"
    engine_ok = docker_reachable()
    with opened(config.store.url, store) as store:
        for name, needs, step in _steps(config, store, given, tasks, summary):
            missing = _missing(config, needs, engine_ok)
            outcome = StepOutcome(name, "skipped", missing) if missing else _attempt(name, step)
            summary.steps.append(outcome)
            notify(f"{outcome.step}: {outcome.status}: {outcome.detail}")
    return summary


def _missing(config: Config, needs: tuple[str, ...], engine_ok: bool) -> str:
    """Why a step cannot run here, or "" when it can."""
    if "docker" in needs and not engine_ok:
        return "no Docker engine answers (`make install` starts one)"
    roles = [role for role in needs if role != "docker" and not model_configured(config, role)]
    if roles:
        return f"no model server configured for `{roles[0]}` (docs/model-servers.md)"
    return ""


def _attempt(name: str, step: Callable[[], str]) -> StepOutcome:
    try:
        return StepOutcome(name, "done", step())
    except NothingToDo as exc:
        return StepOutcome(name, "skipped", str(exc))
    except PrchainError as exc:
        return StepOutcome(name, "failed", str(exc))


# name, what it needs ("docker", LLM roles), what it runs
JobStep = tuple[str, tuple[str, ...], Callable[[], str]]


def _steps(
    config: Config, store: Store, given: JobInput, tasks: Path, summary: JobSummary
) -> list[JobStep]:
    steps: list[JobStep] = []
    if given.repos:
        steps.append(("mine", (), lambda: _mine(config, store, given)))
    steps += [
        ("chains build", (), lambda: _chains(config, store)),
        ("queries build", ("query_constructor",), lambda: _queries(config, store)),
        ("env setup", ("docker",), lambda: _envs(config, store)),
        ("tests verify", ("docker",), lambda: _verify(config, store)),
        ("tasks export --runnable", ("docker",), lambda: _runnable(config, store, tasks)),
        ("tasks eval (gold)", ("docker",), lambda: _gold(config, tasks, summary)),
        ("rollout", ("docker", "policy", "judge"), lambda: _rollout(config, store)),
        ("export", (), lambda: _trajectories(config, store, given.out / "trajectories.jsonl")),
    ]
    return steps


def _mine(config: Config, store: Store, given: JobInput) -> str:
    from prchain.app.pipeline import mine_from_config

    found = mine_from_config(
        config,
        given.repos,
        source=given.source,
        name=given.name,
        notify=lambda _: None,
        store=store,
    )
    return f"{sum(r.prs_new for r in found.repos)} new PRs in {len(found.repos)} repositories"


def _chains(config: Config, store: Store) -> str:
    from prchain.app.pipeline import chains_from_config

    built = chains_from_config(config, store=store)
    return f"{sum(built.by_length.values())} chains, {built.new} of them new"


def _queries(config: Config, store: Store) -> str:
    from prchain.app.pipeline import queries_from_config

    written = queries_from_config(config, notify=lambda _: None, store=store)
    return (
        f"{written.stages_done} queries written, {written.stages_skipped} there already, "
        f"{written.stages_failed} failed"
    )


def _envs(config: Config, store: Store) -> str:
    from prchain.app.envsetup import setup_from_config

    reports = setup_from_config(config, notify=lambda _: None, store=store)
    verified = sum(r.result in ("verified", "known") for r in reports)
    return f"{verified} of {len(reports)} eras verified"


def _verify(config: Config, store: Store) -> str:
    from prchain.app.verdicts import verify_from_config

    reports = verify_from_config(config, store=store)
    usable = sum(r.usable for r in reports)
    stored = sum(r.result in ("skipped", "reused") for r in reports)
    kept = f" ({stored} stored before)" if stored else ""
    return f"{usable} of {len(reports)} stages with FAIL_TO_PASS and a passing gold patch{kept}"


def _runnable(config: Config, store: Store, tasks: Path) -> str:
    from prchain.app.tasks import export_runnable_from_config

    found = export_runnable_from_config(config, str(tasks), store=store)
    return f"{found.runnable} of {found.stages} stages runnable, in {tasks}"


def _gold(config: Config, tasks: Path, summary: JobSummary) -> str:
    from prchain.app.tasks import eval_from_config, flat_path

    if not flat_path(str(tasks)).exists():
        raise NothingToDo("no runnable task file to evaluate")
    results = eval_from_config(config, str(tasks))
    summary.gold = {(r.chain_id, r.idx): r.status for r in results}
    resolved = sum(r.status == "resolved" for r in results)
    return f"{resolved} of {len(results)} gold patches resolve in the clean room"


def _rollout(config: Config, store: Store) -> str:
    from prchain.app.rollout import rollout_from_config

    results = rollout_from_config(config, notify=lambda _: None, store=store)
    return f"{len(results)} chains rolled out"


def _trajectories(config: Config, store: Store, out: Path) -> str:
    from prchain.app.rollout import public_config
    from prchain.app.views import export_dataset, export_options

    done = export_dataset(
        store.engine,
        out,
        export_options(config),
        public_config(config),
    )
    return f"{done.written} chains of trajectories in {out}"


FUNNEL_FORMAT = "prchain.funnel/1"


def job_funnel(
    config: Config, given: JobInput, summary: JobSummary, store: Store | None = None
) -> list[FunnelRow]:
    """The funnel per repository, also written to OUT/funnel.json with what each step did."""
    from prchain.app.funnel import by_language, funnel

    with opened(config.store.url, store, readonly=True) as store:
        rows = funnel(store.engine, summary.gold)
    record = {
        "format": FUNNEL_FORMAT,
        "steps": [asdict(step) for step in summary.steps],
        "repositories": [_as_record(row) for row in rows],
        "languages": [_as_record(row) for row in by_language(rows)],
    }
    (given.out / "funnel.json").write_text(json.dumps(record, indent=1) + "\n")
    return rows


def _as_record(row: FunnelRow) -> dict[str, object]:
    return {
        "name": row.name,
        "language": row.language,
        **{column: row.counts[column] for column in COLUMNS},
        "losses": dict(row.losses.most_common()),
    }
