"""The environments aggregate: era recipes (`env_recipes`), the era of each chain stage
(`stage_eras`), each stage's verified tests (`stage_verifications`) and each rollout stage's
sandbox transition (`env_transitions`), written and read here only.

Writers and readers on an engine (`Environments(engine)`, or `store.environments`), and the readers
that run inside a caller's transaction (they take its session). A recipe is handed out as a plain
dict of its columns (what recipe memory, `prchain.environments.eras.memory`, has always passed
around); a verification and a transition as frozen records. No module outside `prchain.store`
names the `EnvRecipe`, `StageEra`, `StageVerification` or `EnvTransition` model
(tests/store/test_store_seam.py holds it).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from datetime import datetime
from typing import Any, NamedTuple

from sqlalchemy import Engine, delete, func, inspect, select
from sqlalchemy.orm import Session

from prchain.store.db import session_scope, upsert
from prchain.store.models import (
    Chain,
    ChainStage,
    EnvRecipe,
    EnvTransition,
    PullRequest,
    Repo,
    StageEra,
    StageVerification,
)

Recipe = dict[str, Any]  # one env_recipes row: its columns by name


@dataclass(frozen=True)
class Verification:
    """One chain stage's tests as `prchain tests verify` stored them."""

    chain_stage_id: int
    recipe: str
    status: str  # usable | unusable
    reason: str | None
    test_command: str
    test_files: list[Any]
    fail_to_pass: list[Any]
    pass_to_pass: list[Any]
    flaky: list[Any]
    gold_failing: list[Any]
    runs: dict[str, Any]
    output_tail: str
    seconds: float


@dataclass(frozen=True)
class TransitionRow:
    """How the sandbox entered one stage of a rollout (the `env_transitions` row)."""

    stage_idx: int
    base_sha: str
    policy: str
    outcome: str  # clean | conflict_stopped | oracle_reset | partial
    reverted: list[Any]
    applied: bool
    rejected_hunks: str
    revert_failed: list[Any]
    revert_rejected_hunks: str
    carried_bytes: int
    entry: str
    stage_base: str
    stage_start: str
    seconds: float
    created_at: datetime


class RecipeFacts(NamedTuple):
    """What `prchain stats` sums over the era recipes."""

    repo_id: int
    era_key: str
    status: str
    method: str
    ecosystem: str
    cost: float
    build_seconds: float
    verify_seconds: float
    image_bytes: int
    root_error: str


class StageOutcome(NamedTuple):
    """A current chain stage with its latest verification and its era recipe (the funnel)."""

    repo: str
    chain_id: int
    idx: int
    status: str | None  # of its verification; None: not verified
    reason: str | None
    era_status: str | None  # of its era's recipe; None: no recipe
    root_error: str | None
    # "own": its PR changes or adds a test file; "lent": it changes none and a later stage of
    # its chain lent its tests (chain_stages.tests_from); "none": no test patch
    tests: str


def _record(kind: type[Any], row: Any) -> Any:
    return kind(**{f.name: getattr(row, f.name) for f in fields(kind)})


def _plain(row: EnvRecipe) -> Recipe:
    return {c.name: getattr(row, c.name) for c in EnvRecipe.__table__.columns}


@dataclass(frozen=True)
class Environments:
    engine: Engine

    # ---- era recipes ----------------------------------------------------------------------------

    def recipe(self, repo_id: int, era_key: str) -> Recipe | None:
        with session_scope(self.engine) as session:
            row = session.scalar(
                select(EnvRecipe).where(EnvRecipe.repo_id == repo_id, EnvRecipe.era_key == era_key)
            )
            return _plain(row) if row is not None else None

    def save_recipe(self, values: Recipe) -> None:
        """Replace the recipe of (repo, era key): one row per era, never two."""
        with session_scope(self.engine) as session:
            session.execute(
                delete(EnvRecipe).where(
                    EnvRecipe.repo_id == values["repo_id"], EnvRecipe.era_key == values["era_key"]
                )
            )
            session.add(EnvRecipe(**values))

    def verified(
        self,
        repo_id: int,
        ecosystem: str,
        *,
        exclude: str,
        suite: str | None = None,
        interpreter: str | None = None,
    ) -> list[Recipe]:
        """The repository's verified recipes of `ecosystem` with an image, other than era
        `exclude`; of one suite and interpreter when they are given."""
        query = select(EnvRecipe).where(
            EnvRecipe.repo_id == repo_id,
            EnvRecipe.ecosystem == ecosystem,
            EnvRecipe.status == "verified",
            EnvRecipe.era_key != exclude,
            EnvRecipe.image != "",
        )
        if suite is not None:
            query = query.where(EnvRecipe.suite == suite)
        if interpreter is not None:
            query = query.where(EnvRecipe.interpreter == interpreter)
        with session_scope(self.engine) as session:
            return [_plain(row) for row in session.scalars(query).all()]

    def image_verifications(self, image: str) -> list[dict[str, Any]]:
        """The `verification` record of every recipe whose image is `image`."""
        with session_scope(self.engine) as session:
            found = session.scalars(
                select(EnvRecipe.verification).where(EnvRecipe.image == image)
            ).all()
        return [verification or {} for verification in found]

    def recipes(self, repo: str | None = None) -> list[Recipe]:
        """Every recipe (of one repository), with its repository's name as `repo`, by
        repository and era date."""
        query = select(EnvRecipe, Repo.full_name).join(Repo, Repo.id == EnvRecipe.repo_id)
        if repo:
            query = query.where(Repo.full_name == repo)
        with session_scope(self.engine) as session:
            found = session.execute(query.order_by(Repo.full_name, EnvRecipe.era_date)).all()
            return [{**_plain(row), "repo": name} for row, name in found]

    def verified_images(self) -> list[tuple[str, str]]:
        """(repository, era image tag) of every verified recipe with an image."""
        with session_scope(self.engine) as session:
            rows = session.execute(
                select(Repo.full_name, EnvRecipe.image)
                .join(Repo, Repo.id == EnvRecipe.repo_id)
                .where(EnvRecipe.status == "verified", EnvRecipe.image != "")
            ).all()
        return [(repo, image) for repo, image in rows]

    # ---- the era of each stage ------------------------------------------------------------------

    def save_stage_eras(self, rows: list[dict[str, Any]]) -> None:
        """Set the era of each stage of `rows` (chain_stage_id, repo_id, era_key, base_sha)."""
        with session_scope(self.engine) as session:
            ids = [r["chain_stage_id"] for r in rows]
            session.execute(delete(StageEra).where(StageEra.chain_stage_id.in_(ids)))
            session.add_all(StageEra(**r) for r in rows)

    # ---- verified tests -------------------------------------------------------------------------

    def save_verification(self, row: dict[str, Any]) -> None:
        """Replace the stage's result (one row per chain stage, never two)."""
        with session_scope(self.engine) as session:
            session.execute(
                delete(StageVerification).where(
                    StageVerification.chain_stage_id == row["chain_stage_id"]
                )
            )
            session.add(StageVerification(**row))

    def known(self, stage_id: int, recipe: str) -> tuple[str | None, Verification | None]:
        """(the stage's stored recipe hash, a stored result of hash `recipe` from any stage)."""
        with session_scope(self.engine) as session:
            own = session.scalar(
                select(StageVerification.recipe).where(StageVerification.chain_stage_id == stage_id)
            )
            same = session.scalars(
                select(StageVerification).where(StageVerification.recipe == recipe).limit(1)
            ).first()
            return own, (_record(Verification, same) if same is not None else None)


# ---- readers inside a caller's transaction -------------------------------------------------------


def verification(session: Session, stage_id: int) -> Verification | None:
    found = session.scalar(
        select(StageVerification).where(StageVerification.chain_stage_id == stage_id)
    )
    return _record(Verification, found) if found is not None else None


def verifications(session: Session, stage_ids: Sequence[int]) -> dict[int, Verification]:
    """Chain stage id → its verification, for those of `stage_ids` verified."""
    found = session.scalars(
        select(StageVerification).where(StageVerification.chain_stage_id.in_(list(stage_ids)))
    )
    return {v.chain_stage_id: _record(Verification, v) for v in found}


def fail_to_pass(session: Session, stage_ids: Sequence[int]) -> dict[int, list[Any]]:
    """Chain stage id → its FAIL_TO_PASS list, for those of `stage_ids` verified."""
    return dict(
        session.execute(
            select(StageVerification.chain_stage_id, StageVerification.fail_to_pass).where(
                StageVerification.chain_stage_id.in_(list(stage_ids))
            )
        ).all()
    )


def verified_stages(session: Session, stage_ids: Iterable[int]) -> list[int]:
    """Those of `stage_ids` that have a verification."""
    return list(
        session.scalars(
            select(StageVerification.chain_stage_id).where(
                StageVerification.chain_stage_id.in_(list(stage_ids))
            )
        )
    )


def verification_rows(session: Session, stage_ids: Sequence[int]) -> dict[int, dict[str, Any]]:
    """Chain stage id → its verification's columns by name, for those of `stage_ids` verified
    (none when the store has no verifications table)."""
    if not stage_ids or not _has_verifications(session):
        return {}
    found = session.scalars(
        select(StageVerification).where(StageVerification.chain_stage_id.in_(list(stage_ids)))
    )
    columns = StageVerification.__table__.columns
    return {v.chain_stage_id: {c.name: getattr(v, c.name) for c in columns} for v in found}


def verdict_tally(session: Session) -> tuple[int, list[tuple[str, int]]] | None:
    """(stages verified usable, [("status: why", stages)] of the others, most first); None when
    the store has no verifications table."""
    if not _has_verifications(session):
        return None
    rows = session.execute(select(StageVerification.status, StageVerification.reason)).all()
    drops = Counter(f"{status}: {reason or '-'}" for status, reason in rows if status != "usable")
    usable = sum(1 for status, _ in rows if status == "usable")
    return usable, sorted(drops.items(), key=lambda kv: -kv[1])


def _has_verifications(session: Session) -> bool:
    return inspect(session.get_bind()).has_table(StageVerification.__tablename__)


def verification_counts(session: Session) -> dict[str, int]:
    """Verifications per status."""
    rows = session.execute(
        select(StageVerification.status, func.count()).group_by(StageVerification.status)
    ).all()
    return {status: int(n) for status, n in rows}


def usable_lists(session: Session) -> list[tuple[list[Any], list[Any]]]:
    """(FAIL_TO_PASS, PASS_TO_PASS) of every usable verification."""
    rows = session.execute(
        select(StageVerification.fail_to_pass, StageVerification.pass_to_pass).where(
            StageVerification.status == "usable"
        )
    ).all()
    return [(f2p, p2p) for f2p, p2p in rows]


def usable_stages(session: Session) -> set[int]:
    """The chain stages whose tests verified as usable."""
    return set(
        session.scalars(
            select(StageVerification.chain_stage_id).where(StageVerification.status == "usable")
        )
    )


def recipe_facts(session: Session) -> list[RecipeFacts]:
    rows = session.execute(
        select(
            EnvRecipe.repo_id,
            EnvRecipe.era_key,
            EnvRecipe.status,
            EnvRecipe.method,
            EnvRecipe.ecosystem,
            EnvRecipe.cost,
            EnvRecipe.build_seconds,
            EnvRecipe.verify_seconds,
            EnvRecipe.image_bytes,
            EnvRecipe.root_error,
        )
    ).all()
    return [RecipeFacts._make(row) for row in rows]


def stage_eras(session: Session) -> list[tuple[int, int, str]]:
    """(chain stage id, repository id, era key) of every stage with an era."""
    rows = session.execute(select(StageEra.chain_stage_id, StageEra.repo_id, StageEra.era_key))
    return [(stage, repo, key) for stage, repo, key in rows]


def recipe_ecosystems(session: Session) -> list[tuple[str, str]]:
    """(repository name, ecosystem) of every recipe."""
    rows = session.execute(
        select(Repo.full_name, EnvRecipe.ecosystem).join(EnvRecipe, EnvRecipe.repo_id == Repo.id)
    ).all()
    return [(name, ecosystem) for name, ecosystem in rows]


def stage_outcomes(session: Session) -> list[StageOutcome]:
    """Every stage of a current (not superseded) chain, with the latest verification and the era
    recipe it has, if any."""
    latest = (
        select(
            StageVerification.chain_stage_id, func.max(StageVerification.id).label("last")
        ).group_by(StageVerification.chain_stage_id)
    ).subquery()
    rows = session.execute(
        select(
            Repo.full_name,
            Chain.id,
            ChainStage.idx,
            StageVerification.status,
            StageVerification.reason,
            EnvRecipe.status,
            EnvRecipe.root_error,
            ChainStage.gold_test_patch != "",
            ChainStage.tests_from,
        )
        .join(Chain, Chain.repo_id == Repo.id)
        .join(ChainStage, ChainStage.chain_id == Chain.id)
        .outerjoin(latest, latest.c.chain_stage_id == ChainStage.id)
        .outerjoin(StageVerification, StageVerification.id == latest.c.last)
        .outerjoin(StageEra, StageEra.chain_stage_id == ChainStage.id)
        .outerjoin(
            EnvRecipe,
            (EnvRecipe.repo_id == StageEra.repo_id) & (EnvRecipe.era_key == StageEra.era_key),
        )
        .where(Chain.superseded_at.is_(None))
    ).all()
    return [
        StageOutcome._make((*row[:-2], "none" if not row[-2] else "lent" if row[-1] else "own"))
        for row in rows
    ]


def stage_with_verification(
    session: Session, chain_id: int, idx: int
) -> tuple[ChainStage, int, Verification | None] | None:
    """(the chain's stage `idx`, its PR's number, its verification); None: no such stage."""
    row = session.execute(
        select(ChainStage, PullRequest.number, StageVerification)
        .join(PullRequest, PullRequest.id == ChainStage.pr_id)
        .outerjoin(StageVerification, StageVerification.chain_stage_id == ChainStage.id)
        .where(ChainStage.chain_id == chain_id, ChainStage.idx == idx)
    ).first()
    if row is None:
        return None
    stage, number, found = row
    return stage, number, (_record(Verification, found) if found is not None else None)


# ---- what running a stage reads -----------------------------------------------------------------


@dataclass(frozen=True)
class StageFacts:
    """A chain stage with everything the store holds about running it: where it is (repository,
    clone, base, gold patches, entry), its era's recipe and its verified tests. The one read
    behind `prchain.verdicts.stage` (the runnable stage record every consumer takes)."""

    stage_id: int
    chain_id: int
    idx: int
    pr_number: int
    repo: str
    clone_path: str
    base_sha: str
    gold_patch: str
    gold_test_patch: str
    entry: str
    recipe: Recipe | None
    verification: Verification | None  # None also when read without tests
    lent: bool = False  # its test patch is a later stage's (chain_stages.tests_from)


def stage_facts(
    session: Session,
    *,
    chain_ids: Iterable[int] = (),
    stage_ids: Iterable[int] | None = None,
    tests: bool = True,
) -> list[StageFacts]:
    """The stages of `chain_ids` (every chain's when none is given) that are among `stage_ids`
    (when given: none of an empty list), in chain and stage order, with their era recipe and,
    when `tests`, their verification."""
    chains = list(chain_ids)
    wanted = list(stage_ids) if stage_ids is not None else None

    def only(query: Any) -> Any:
        if chains:
            query = query.where(ChainStage.chain_id.in_(chains))
        if wanted is not None:
            query = query.where(ChainStage.id.in_(wanted))
        return query

    rows = session.execute(
        only(
            select(ChainStage, PullRequest.number, Repo.full_name, Repo.clone_path)
            .join(Chain, Chain.id == ChainStage.chain_id)
            .join(Repo, Repo.id == Chain.repo_id)
            .join(PullRequest, PullRequest.id == ChainStage.pr_id)
            .order_by(ChainStage.chain_id, ChainStage.idx)
        )
    ).all()
    recipes = {
        stage: _plain(recipe)
        for stage, recipe in session.execute(
            only(
                select(StageEra.chain_stage_id, EnvRecipe)
                .join(
                    EnvRecipe,
                    (StageEra.repo_id == EnvRecipe.repo_id)
                    & (StageEra.era_key == EnvRecipe.era_key),
                )
                .join(ChainStage, ChainStage.id == StageEra.chain_stage_id)
            )
        ).all()
    }
    verified = (
        {
            v.chain_stage_id: _record(Verification, v)
            for v in session.scalars(
                only(
                    select(StageVerification).join(
                        ChainStage, ChainStage.id == StageVerification.chain_stage_id
                    )
                )
            )
        }
        if tests
        else {}
    )
    return [
        StageFacts(
            s.id,
            s.chain_id,
            s.idx,
            number,
            repo,
            clone or "",
            s.base_sha or "",
            s.gold_patch,
            s.gold_test_patch,
            s.entry,
            recipes.get(s.id),
            verified.get(s.id),
            lent=s.tests_from is not None,
        )  # fmt: skip
        for s, number, repo, clone in rows
    ]


# ---- sandbox transitions of rollouts -------------------------------------------------------------

TRANSITION_COLUMNS = frozenset(EnvTransition.__table__.columns.keys())


def save_transition(session: Session, row: dict[str, Any]) -> None:
    """Record (or replace) how the sandbox entered a rollout's stage; `row` holds the columns by
    name (rollout_id and stage_idx among them)."""
    upsert(session, EnvTransition, [row], ["rollout_id", "stage_idx"])


def drop_transitions(session: Session, rollout_id: int, after: int) -> None:
    """Forget the transitions of the rollout's stages after stage `after`."""
    session.execute(
        delete(EnvTransition).where(
            EnvTransition.rollout_id == rollout_id, EnvTransition.stage_idx > after
        )
    )


def transitions(session: Session, rollout_id: int) -> list[TransitionRow]:
    """The rollout's transitions in stage order."""
    rows = session.scalars(
        select(EnvTransition).filter_by(rollout_id=rollout_id).order_by(EnvTransition.stage_idx)
    )
    return [_record(TransitionRow, row) for row in rows]
