"""The runnable stage: what it takes to run one chain stage, read from the store one way and
written to (and read back from) the exported row one way.

Four consumers run stages: `tests verify`, a rollout's sandbox and its T(p̂) check, `tasks export
--runnable` and `tasks eval`. They all take this record:

- `StageSetup`: where the stage is (repository, clone, base B_t, gold patches, entry) and its
  era as `env setup` left it (`EraEnvironment`, verified or not). What `tests verify` and a
  rollout's sandbox need: verify runs before the stage's tests are verified.
- `RunnableStage(StageSetup)`: also its verified tests (`VerifiedTests`, FAIL_TO_PASS and
  PASS_TO_PASS) and, once `tasks export --runnable` placed it on an engine, its `Placement`
  (the stage image, the checkout, whether it runs and why not).

`stage_setups` and `runnable_stages` read them through the store's one read
(`prchain.store.environments.stage_facts`); `environment_block` writes a stage's `environment`
(docs/export-formats.md) and `from_row` reads a stage of a task file back (no store: what the
file does not carry, the stage's id, its clone, its era's test command template and excluded
units, comes back empty).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from sqlalchemy import Engine
from sqlalchemy.orm import Session

from prchain.core.errors import EnvironmentFailure
from prchain.environments.carry import WORKDIR
from prchain.environments.eras.ecosystems import report_for
from prchain.environments.eras.hidden import hidden_requirements
from prchain.environments.eras.manifests import commit_date
from prchain.environments.languages import LANGUAGES
from prchain.environments.stage_entry import ENTRY_REVERT
from prchain.store.db import session_scope
from prchain.store.environments import Recipe, StageFacts, Verification, stage_facts
from prchain.verdicts.sandbox import build_part, joined

DEFAULT_REPORT_PATH = "/tmp/prchain-junit.xml"
Setup = TypeVar("Setup", bound="StageSetup")


@dataclass(frozen=True)
class StageImage:
    """A stage's image: the sandbox layer (agent, tester, root-only mirror) on its era image."""

    image: str
    image_id: str  # content digest: docker's image id, which save and load keep
    era_image: str
    era_image_id: str


@dataclass(frozen=True)
class EraEnvironment:
    """A stage's era as `env setup` left it, verified or not."""

    key: str
    date: str
    status: str  # verified | unverified | ...
    root_error: str
    image: str  # the era image ("" when the era has none)
    ecosystem: str  # whose reader reads the test report ("python" when the recipe names none)
    test_command: str  # the era's template ({files} filled in per stage)
    setup_command: str  # the per-stage step, run again after each patch
    # units left out of the era → why; its provenance, as exported (compared, not hashed: a
    # stage stays hashable, as the verify and env setup work items always were)
    excluded: Mapping[str, str] = field(default_factory=dict, hash=False)
    recipe: Mapping[str, Any] = field(default_factory=dict, hash=False)

    @property
    def usable(self) -> bool:
        """The one rule for every user (tests verify, rollouts, the hidden tests): an era image
        is used only when its recipe verified. An unverified era's image passed too few of its
        own tests at B_t to be trusted with a verdict."""
        return self.status == "verified" and bool(self.image)


@dataclass(frozen=True)
class VerifiedTests:
    """A stage's tests as `tests verify` found them."""

    status: str  # usable | unusable
    reason: str
    test_command: str  # the command as run, test files filled in
    test_files: tuple[str, ...]
    fail_to_pass: tuple[str, ...]
    pass_to_pass: tuple[str, ...]


@dataclass(frozen=True)
class StageSetup:
    """A chain stage and its era: what running it takes before its tests are verified."""

    stage_id: int  # ChainStage.id (0: read back from a task file)
    chain_id: int
    idx: int
    pr_number: int
    repo: str
    clone_path: str  # "" when read back from a task file: the stage image holds the mirror
    base_sha: str
    gold_patch: str
    gold_test_patch: str
    entry: str = ENTRY_REVERT  # how the sandbox enters it (stage_entry.ENTRIES)
    era: EraEnvironment | None = None  # None: `env setup` has not set its era up
    # its test patch was lent by a later stage (prchain/chains/building/lent.py): a test of it the
    # gold patch fails is not the stage's unless it passed before the gold patch
    lent: bool = False
    # the requirements its hidden side adds to its era's (environments/eras/hidden.py), as
    # `with_hidden` read them from the clone or a task file carries them; () until then
    hidden: tuple[str, ...] = ()

    @property
    def usable_era(self) -> EraEnvironment | None:
        """Its era when the era's image may be used (`EraEnvironment.usable`), else None."""
        return self.era if self.era is not None and self.era.usable else None

    @property
    def ecosystem(self) -> str:
        return self.era.ecosystem if self.era is not None else "python"


@dataclass(frozen=True)
class Placement:
    """Where `tasks export --runnable` placed a stage: its image on the engine, the root commands
    that check out its base, and whether it runs ("" kind) or why not."""

    image: StageImage | None  # None: no stage image (the reason says why)
    checkout: tuple[str, ...]
    not_runnable: str  # one of runnable.NOT_RUNNABLE, "" when it runs
    reason: str
    # the room's image: the stage image on the era image with the hidden side's requirements
    # (environments/eras/hidden.py); None when the stage adds none (its room runs `image`)
    room: StageImage | None = None

    @property
    def runnable(self) -> bool:
        return not self.not_runnable


@dataclass(frozen=True)
class RunnableStage(StageSetup):
    """A stage with its verified tests and, once exported, its placement."""

    tests: VerifiedTests | None = None  # None: `tests verify` has not run on it
    placement: Placement | None = None  # None: not placed on an engine yet (read from the store)

    @property
    def test_command(self) -> str:
        """The verified command as run ("" before `tests verify`)."""
        return self.tests.test_command if self.tests is not None else ""


def with_hidden(stage: Setup) -> Setup:
    """`stage` with the requirements its hidden side adds to its era's (`hidden`), read from its
    clone at its base; as it is without a usable era or a clone (a task file's carries them)."""
    era = stage.usable_era
    if era is None or not stage.clone_path or not stage.base_sha:
        return stage
    try:
        needs = hidden_requirements(
            stage.clone_path,
            stage.base_sha,
            joined(build_part(stage.gold_patch, era.ecosystem), stage.gold_test_patch),
            era.ecosystem,
            str(era.recipe.get("interpreter") or ""),
        )
    except EnvironmentFailure:  # the hidden side does not apply: the runs say so in their terms
        return stage
    return replace(stage, hidden=tuple(needs))


def hidden_cutoff(stage: StageSetup) -> str:
    """The upload time the hidden layer's packages are dated by: its base's, as its era's are."""
    return commit_date(stage.clone_path, stage.base_sha).strftime("%Y-%m-%dT%H:%M:%SZ")


# ---- the one read from the store ------------------------------------------------------------------


def era_of(recipe: Recipe) -> EraEnvironment:
    """An era recipe's row as the record holds it."""
    return EraEnvironment(
        recipe["era_key"],
        recipe["era_date"],
        recipe["status"],
        recipe["root_error"] or "",
        recipe["image"],
        recipe["ecosystem"] or "python",
        recipe["test_command"],
        recipe["setup_command"],
        dict((recipe["verification"] or {}).get("excluded") or {}),
        provenance(recipe),
    )


def provenance(recipe: Recipe) -> dict[str, Any]:
    """Where the stage's environment came from (the recipe's provenance)."""
    return {
        "era_key": recipe["era_key"],
        "era_date": recipe["era_date"],
        "status": recipe["status"],
        "method": recipe["method"],
        "variant": recipe["variant"],
        "suite": recipe["suite"],
        "interpreter": recipe["interpreter"],
        "cutoff": recipe["cutoff"],
        "commands": [str(c) for c in recipe["commands"] or []],
        "notes": [str(n) for n in recipe["notes"] or []],
        "verified_at": recipe["base_sha"],
        "root_error": recipe["root_error"] or "",
    }


def tests_of(found: Verification) -> VerifiedTests:
    return VerifiedTests(
        found.status,
        found.reason or "",
        found.test_command,
        tuple(str(f) for f in found.test_files),
        tuple(found.fail_to_pass),
        tuple(found.pass_to_pass),
    )


def _setup_fields(facts: StageFacts) -> dict[str, Any]:
    return {
        "stage_id": facts.stage_id,
        "chain_id": facts.chain_id,
        "idx": facts.idx,
        "pr_number": facts.pr_number,
        "repo": facts.repo,
        "clone_path": facts.clone_path,
        "base_sha": facts.base_sha,
        "gold_patch": facts.gold_patch,
        "gold_test_patch": facts.gold_test_patch,
        "entry": facts.entry or ENTRY_REVERT,
        "era": era_of(facts.recipe) if facts.recipe is not None else None,
        "lent": facts.lent,
    }


def stage_setups(
    engine: Engine, chain_ids: Iterable[int] = (), stage_ids: Iterable[int] | None = None
) -> list[StageSetup]:
    """The stages of the chains asked for (every chain's by default), only those of `stage_ids`
    when given, in chain and stage order, with their eras; their tests are not read."""
    with session_scope(engine) as session:
        found = stage_facts(session, chain_ids=chain_ids, stage_ids=stage_ids, tests=False)
        return [StageSetup(**_setup_fields(f)) for f in found]


def stage_setup(engine: Engine, stage_id: int) -> StageSetup | None:
    """One stage as `stage_setups` reads it; None: no such stage."""
    found = stage_setups(engine, stage_ids=[stage_id])
    return found[0] if found else None


def runnable_stages(
    session: Session, chain_ids: Iterable[int] = (), stage_ids: Iterable[int] | None = None
) -> list[RunnableStage]:
    """`stage_setups` with each stage's verified tests, in the caller's transaction."""
    found = stage_facts(session, chain_ids=chain_ids, stage_ids=stage_ids, tests=True)
    return [
        RunnableStage(
            **_setup_fields(f),
            tests=tests_of(f.verification) if f.verification is not None else None,
        )
        for f in found
    ]


def runnable_stage(engine: Engine, stage_id: int) -> RunnableStage | None:
    """One stage as `runnable_stages` reads it; None: no such stage."""
    with session_scope(engine) as session:
        found = runnable_stages(session, stage_ids=[stage_id])
        return found[0] if found else None


# ---- the one mapping to and from the exported row ------------------------------------------------


def reader_name(ecosystem: str) -> str:
    """The name of the test-report reader an ecosystem's verdicts use (`pytest`, ...)."""
    reader = report_for(ecosystem)
    return str(getattr(reader, "name", type(reader).__name__.lower()))


def environment_block(stage: RunnableStage) -> dict[str, Any]:
    """The `environment` a placed stage of the chain form carries (the same keys on every
    stage; docs/export-formats.md)."""
    placed, era, tests = stage.placement, stage.era, stage.tests
    if placed is None:
        raise ValueError(f"stage {stage.chain_id}:{stage.idx} was not placed on an engine")
    ecosystem = stage.ecosystem
    # an era no room recognised is stored as `unknown` (and never verified): it has no reader
    # (asked of the rooms' names, not of the registry, which fills as the rooms are imported)
    reader = report_for(ecosystem) if ecosystem in LANGUAGES else None
    command = stage.test_command
    found = placed.image or StageImage("", "", "", "")
    return {
        "runnable": placed.runnable,
        "not_runnable": placed.not_runnable,
        "reason": placed.reason,
        "image": found.image,
        "image_id": found.image_id,
        "era_image": found.era_image or (era.image if era else ""),
        "era_image_id": found.era_image_id,
        "era": era.key if era else "",
        "ecosystem": ecosystem,
        "log_parser": reader_name(ecosystem) if reader else "",
        "setup_command": era.setup_command if era else "",
        "test_command": command,
        "test_files": list(tests.test_files) if tests is not None else [],
        "test_script": reader.script(command, DEFAULT_REPORT_PATH) if command and reader else "",
        "report_path": DEFAULT_REPORT_PATH,
        "workdir": WORKDIR,
        "checkout": list(placed.checkout),
        "hidden_requirements": list(stage.hidden),
        "room_image": placed.room.image if placed.room else "",
        "room_image_id": placed.room.image_id if placed.room else "",
        "room_era_image": placed.room.era_image if placed.room else "",
        "recipe": dict(era.recipe) if era else {},
    }


def from_row(chain: Mapping[str, Any], stage: Mapping[str, Any]) -> RunnableStage:
    """A stage of a task file (the chain form `tasks export --runnable` writes) as the record.
    The keys a task file must hold are taskfile.ENVIRONMENT_KEYS; the others default to empty."""
    env = stage["environment"]
    recipe = env.get("recipe") or {}
    era = None
    # an export writes these as empty (and `python`) exactly when the stage had no era
    held = (env.get("era"), recipe, env.get("era_image"), env["setup_command"])
    if any(held) or env["ecosystem"] != "python":
        era = EraEnvironment(
            env.get("era", ""),
            recipe.get("era_date", ""),
            recipe.get("status", ""),
            recipe.get("root_error", ""),
            env.get("era_image", ""),
            env["ecosystem"],
            "",  # the era's template is not exported: the verified command is
            env["setup_command"],
            {},
            recipe,
        )
    f2p, p2p = stage.get("FAIL_TO_PASS") or [], stage.get("PASS_TO_PASS") or []
    tests = None
    if stage.get("tests_status") or env["test_command"] or env["test_files"] or f2p or p2p:
        tests = VerifiedTests(
            stage.get("tests_status", ""),
            stage.get("tests_reason", ""),
            env["test_command"],
            tuple(env["test_files"]),
            tuple(f2p),
            tuple(p2p),
        )
    image = None
    if env["image"] or env["image_id"]:
        image = StageImage(
            env["image"], env["image_id"], env.get("era_image", ""), env.get("era_image_id", "")
        )
    # `checkout` is not read by `tasks eval` (the sandbox checks the base out itself): a row made
    # by hand, or by an export before it was written, may leave it out
    checkout = tuple(env.get("checkout") or ())
    room = None
    if env.get("room_image"):
        room = StageImage(
            env["room_image"], env.get("room_image_id", ""), env.get("room_era_image", ""), ""
        )
    placement = Placement(image, checkout, env["not_runnable"], env.get("reason", ""), room)
    return RunnableStage(
        0, chain["chain_id"], stage["idx"], stage.get("pr_number", 0), chain.get("repo", ""), "",
        stage["base_commit"], stage["patch"], stage.get("test_patch", ""),
        stage.get("entry", ENTRY_REVERT), era, bool(stage.get("tests_from")),
        tuple(env.get("hidden_requirements") or ()), tests=tests, placement=placement,
    )  # fmt: skip
