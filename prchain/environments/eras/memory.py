"""Recipe memory: which era recipe a stage uses and which earlier one an era may grow from. The
`env_recipes` and `stage_eras` rows are read and written through the store's environments
aggregate (`prchain.store.environments`). Which era a stage runs in, and whether its image may be
used, every user reads from the runnable stage record (prchain/verdicts/stage.py)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Engine, select

from prchain.environments.eras.ecosystems import Plan
from prchain.store.db import session_scope
from prchain.store.environments import Environments, Recipe
from prchain.store.models import Repo

NEAREST_DAYS = 365  # a verified image further away in time than this is not worth a test run


def repo_id(engine: Engine, repo: str) -> int | None:
    with session_scope(engine) as session:
        return session.scalar(select(Repo.id).where(Repo.full_name == repo))


def recipe(engine: Engine, repo: int, era_key: str) -> Recipe | None:
    return Environments(engine).recipe(repo, era_key)


def save_recipe(engine: Engine, values: Recipe) -> None:
    """Replace the recipe of (repo, era key): one row per era, never two."""
    Environments(engine).save_recipe(values)


def nearest_verified(
    engine: Engine, repo: int, ecosystem: str, date: str, exclude: str
) -> dict[str, Any] | None:
    """The verified recipe of the repository nearest in time to `date` (within NEAREST_DAYS) and
    not after it: an image planned on a later stage base would show an earlier stage what its
    repository's future installs (issue 52); one of an earlier era shows nothing it has not had."""
    from datetime import date as Date

    rows = Environments(engine).verified(repo, ecosystem, exclude=exclude)
    target = Date.fromisoformat(date[:10])

    def distance(row: Recipe) -> int:
        return abs((Date.fromisoformat(row["era_date"][:10]) - target).days)

    earlier = [r for r in rows if r["era_date"][:10] <= date[:10]]
    near = sorted((r for r in earlier if distance(r) <= NEAREST_DAYS), key=distance)
    return near[0] if near else None


def earlier_verified(
    engine: Engine, repo: int, date: str, exclude: str, plan: Plan
) -> dict[str, Any] | None:
    """The verified recipe with an image that an era image of `plan`, planned on a base of
    `date` (ISO, with its time), may grow from: the same repository, ecosystem, suite and
    toolchain, within NEAREST_DAYS, and of a base not later than `date` to the second, so the
    grown image holds nothing of a later date than B_t; the latest of those."""
    from datetime import timedelta

    target = _instant(date)
    rows = Environments(engine).verified(
        repo, plan.ecosystem, exclude=exclude, suite=plan.suite, interpreter=plan.interpreter
    )
    near = [
        (when, row)
        for row in rows
        if target - timedelta(days=NEAREST_DAYS) <= (when := _instant(row["era_date"])) <= target
    ]
    return max(near, key=lambda pair: pair[0])[1] if near else None


def _instant(iso: str) -> datetime:
    """An ISO date and time; one without a zone is UTC (git's dates, as snapshots read them)."""
    when = datetime.fromisoformat(iso)
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


def image_build_seconds(engine: Engine, image: str) -> float:
    """How long the build of `image` took, as the attempts of the recipes using it recorded (0:
    none did); for an image that does not carry its build time (built before it did)."""
    seconds = [
        float(a.get("build_seconds", 0.0))
        for verification in Environments(engine).image_verifications(image)
        for a in verification.get("attempts", [])
        if a.get("image") == image
    ]
    return max(seconds, default=0.0)


def save_stage_eras(engine: Engine, rows: list[dict[str, Any]]) -> None:
    Environments(engine).save_stage_eras(rows)


def recipes(engine: Engine, repo: str | None = None) -> list[Recipe]:
    return Environments(engine).recipes(repo)
