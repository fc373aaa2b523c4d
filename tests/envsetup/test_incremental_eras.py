"""Incremental eras in the ladder: an era's image grows from the nearest earlier verified era
image of its repository (same ecosystem, suite and toolchain; a base not later than its own, so
nothing of a later date reaches it), the recipe says which, and a thin build that fails is built
again from the toolchain layer, the recipe saying why. The builds are the `BuildFn` seam's: which
plan each call got is what is checked; the store is a real SQLite file."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine

from prchain.environments.eras.config import ErasConfig
from prchain.environments.eras.ecosystems import Plan, ecosystem
from prchain.environments.eras.era import Era
from prchain.environments.eras.manifests import Snapshot
from prchain.environments.eras.memory import NEAREST_DAYS
from prchain.environments.eras.rust import lock_units
from prchain.setup.ladder import Setup, _build, _grown
from prchain.store.db import session_scope
from prchain.store.models import EnvRecipe, Repo
from prchain.verdicts.verify import StageJob
from tests.support.history import History

REPO = "acme/crates"
BASE = datetime(2024, 11, 6, 12, 0, tzinfo=UTC)
PLAN = Plan("rust", "trixie", "1.85", BASE.isoformat(), ["cargo vendor"], "cargo test", grows=True)


def _store(
    engine: Engine,
    *recipes: tuple[str, datetime, str, str],
    base_sha: str = "0" * 40,
) -> None:
    """The repository and its recipes: (era key, base date, status, toolchain), each of
    `base_sha`."""
    with session_scope(engine) as session:
        repo = Repo(full_name=REPO, source="git", clone_path="/nowhere")
        session.add(repo)
        session.flush()
        for key, when, status, toolchain in recipes:
            session.add(
                EnvRecipe(
                    repo_id=repo.id,
                    era_key=key,
                    ecosystem="rust",
                    era_date=when.isoformat(),
                    base_sha=base_sha,
                    status=status,
                    method="planner",
                    suite="trixie",
                    interpreter=toolchain,
                    image=f"prchain/era-crates:{key}",
                )
            )


class Builds:
    """The build seam: records the base each call was asked to grow from; a thin build fails
    when `thin_fails`."""

    def __init__(self, thin_fails: bool = False) -> None:
        self.thin_fails = thin_fails
        self.on: list[str] = []

    def __call__(self, job: StageJob, era: Era, plan: Plan) -> tuple[str, float, str, str]:
        self.on.append(plan.on)
        if plan.on and self.thin_fails:
            return "", 4.0, f"{plan.on} has another toolchain or ENV\n", "has another toolchain"
        return f"prchain/era-crates:new-{len(self.on)}", 30.0 if not plan.on else 6.0, "", ""


def _setup(engine: Engine, builds: Builds, **config: Any) -> Setup:
    return Setup(engine, ErasConfig(**config), builds, None, image_exists=lambda tag: True)  # type: ignore[arg-type]


def _era(when: datetime = BASE, clone: str = "/nowhere") -> tuple[StageJob, Era]:
    job = StageJob(1, 1, 1, 7, REPO, clone, "f" * 40, "", "")
    return job, Era("now", ecosystem("rust"), Snapshot(sha="f" * 40, date=when, files={}))


def test_an_era_grows_from_the_nearest_earlier_verified_era_of_its_toolchain(
    sqlite_engine: Engine,
) -> None:
    _store(
        sqlite_engine,
        ("older", BASE - timedelta(days=60), "verified", "1.85"),
        ("nearest", BASE - timedelta(days=5), "verified", "1.85"),
        ("unverified", BASE - timedelta(days=1), "unverified", "1.85"),
        ("other-rustc", BASE - timedelta(days=2), "verified", "1.78"),
        # an hour after B_t: an image planned on it may hold a release B_t's stage never saw
        ("later", BASE + timedelta(hours=1), "verified", "1.85"),
    )
    builds, record = Builds(), {}
    job, era = _era()
    image, seconds, _log, _failure = _build(_setup(sqlite_engine, builds), job, era, PLAN, record)
    assert builds.on == ["prchain/era-crates:nearest"] and image and seconds == 6.0
    assert record["grew_from"] == {
        "era": "nearest",
        "date": (BASE - timedelta(days=5)).date().isoformat(),
        "image": "prchain/era-crates:nearest",
    }
    assert _grown(record) == [
        "grew from era nearest (2024-11-01): a thin layer on prchain/era-crates:nearest"
    ]


def test_a_failed_thin_build_is_built_again_from_the_toolchain_layer(
    sqlite_engine: Engine,
) -> None:
    _store(sqlite_engine, ("nearest", BASE - timedelta(days=5), "verified", "1.85"))
    builds, record = Builds(thin_fails=True), {}
    job, era = _era()
    image, seconds, log, failure = _build(_setup(sqlite_engine, builds), job, era, PLAN, record)
    assert builds.on == ["prchain/era-crates:nearest", ""]  # thin, then full
    assert image == "prchain/era-crates:new-2" and not failure
    assert seconds == 34.0  # what the era cost: both builds
    assert "has another toolchain or ENV" in log and "---- full build ----" in log
    assert "grew_from" not in record
    assert _grown(record) == [
        "built from the toolchain layer: the thin build on era nearest failed: "
        "has another toolchain"
    ]


@pytest.mark.parametrize(
    ("why", "config", "plan", "recipes"),
    [
        ("switched off", {"incremental": False}, PLAN, [("a", -5)]),
        ("a room whose builds do not allow it", {}, replace(PLAN, grows=False), [("a", -5)]),
        ("only a later era", {}, PLAN, [("later", 1)]),
        ("further than memory reaches", {}, PLAN, [("old", -(NEAREST_DAYS + 1))]),
    ],
)
def test_no_earlier_era_to_grow_from_builds_from_the_toolchain_layer(
    sqlite_engine: Engine,
    why: str,
    config: dict[str, Any],
    plan: Plan,
    recipes: list[tuple[str, int]],
) -> None:
    _store(
        sqlite_engine,
        *((key, BASE + timedelta(days=days), "verified", "1.85") for key, days in recipes),
    )
    builds, record = Builds(), {}
    job, era = _era()
    _build(_setup(sqlite_engine, builds, **config), job, era, plan, record)
    assert builds.on == [""], why
    assert _grown(record) == [], why


def _lock(changed: int | None = None) -> str:
    """A Cargo.lock of ten registry crates, each built on the one before (c0 at the bottom), and
    the workspace's own package; `changed`: that crate at another checksum."""
    registry = "registry+https://github.com/rust-lang/crates.io-index"
    blocks = [
        'version = 3\n\n[[package]]\nname = "crates"\nversion = "0.1.0"\ndependencies = ["c9"]\n'
    ]
    for i in range(10):
        checksum = ("b" if i == changed else "a") * 64
        dependencies = f'dependencies = ["c{i - 1}"]\n' if i else ""
        blocks.append(
            f'[[package]]\nname = "c{i}"\nversion = "1.0.0"\nsource = "{registry}"\n'
            f'checksum = "{checksum}"\n{dependencies}'
        )
    return "\n".join(blocks)


@pytest.mark.parametrize(
    ("changed", "grows", "note"),
    [
        (8, True, "grew from era nearest"),  # c8 and c9 build again: 2 of 10
        (
            3,  # c3 and the six crates built on it: 7 of 10
            False,
            "built from the toolchain layer, not grown on era nearest (2024-11-01): 7 of its 10 "
            "locked packages would build again (70%; a thin layer pays up to 50%)",
        ),
    ],
)
def test_an_era_grows_only_while_few_of_its_locked_packages_build_again(
    sqlite_engine: Engine, tmp_path: Path, changed: int, grows: bool, note: str
) -> None:
    history = History(tmp_path / "crates")
    manifest = '[package]\nname = "crates"\nversion = "0.1.0"\nedition = "2021"\n'
    earlier = history.commit("Lock", {"Cargo.toml": manifest, "Cargo.lock": _lock()})
    _store(
        sqlite_engine, ("nearest", BASE - timedelta(days=5), "verified", "1.85"), base_sha=earlier
    )
    builds, record = Builds(), {}
    job, era = _era(clone=str(history.path))
    plan = replace(PLAN, units=lock_units(_lock(changed)))
    assert len(plan.units) == 10  # the workspace's own package is no unit
    _build(_setup(sqlite_engine, builds), job, era, plan, record)
    assert builds.on == (["prchain/era-crates:nearest"] if grows else [""])
    assert _grown(record)[0].startswith(note)
