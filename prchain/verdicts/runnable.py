"""Runnable rows: each exported stage with what a harness needs to run it on another machine.

`tasks export --runnable` adds an `environment` block to every stage of the chain form (the stage's
image and its content digest, the era, the recipe that made it, the setup and test commands and the
name of the reader of the test report) and writes beside it a flat file of one row per runnable
stage in SWE-rebench-V2's shape (`image_name`, `install_config` with `test_cmd` and `log_parser`).
docs/export-formats.md maps every field.

A stage is runnable when its era environment verified, its image is in the engine and its tests
verified as usable (there is a FAIL_TO_PASS list to check); every other stage says why not, as one
of the kinds of `NotRunnable` and a detail.

Each stage is the runnable stage record (prchain/verdicts/stage.py, read with the store's one
read), placed on this engine (`placed`: its stage image, checkout and verdict) and written by the
record's one mapping (`stage.environment_block`), which `tasks eval` reads back (`stage.from_row`).
"""

from __future__ import annotations

import json
import re
import shlex
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, TextIO, get_args

from sqlalchemy import Engine
from sqlalchemy.orm import Session

from prchain.chains.views.tasks import iter_tasks
from prchain.core.errors import PrchainError
from prchain.core.files import atomic_output
from prchain.environments.absent import absent_paths
from prchain.environments.carry import ORIGIN_DIR, WORKDIR
from prchain.verdicts.stage import (
    Placement,
    RunnableStage,
    StageImage,
    environment_block,
    runnable_stages,
    with_hidden,
)

FLAT_FORMAT = "prchain.stage/1"
NotRunnable = Literal[
    "no environment", "environment not verified", "image missing", "tests not verified",
    "tests unusable",
]  # fmt: skip
NOT_RUNNABLE: tuple[str, ...] = get_args(NotRunnable)


# (repo, clone path, era image) → the stage image, or why there is none
ImageResolver = Callable[[str, str, str], StageImage | str]
# a stage whose hidden side adds requirements → its era image with them (eras/hidden.py), or why
# there is none
HiddenResolver = Callable[[RunnableStage], str]


@dataclass
class RunnableSummary:
    chains: int = 0
    stages: int = 0
    runnable: int = 0
    not_runnable: Counter[str] = field(default_factory=Counter)  # kind → stages
    images: dict[str, str] = field(default_factory=dict)  # runnable stages' images → digest
    # runnable stages left out of the flat form: their hidden tests run in a room image of their
    # own, which a row of SWE-rebench's shape (one image) cannot say
    apart: int = 0


# ---- why a stage is not runnable: one rule each, in the order they are asked -------------------


def _why_not(stage: RunnableStage, image: StageImage | str, unverified: bool) -> tuple[str, str]:
    """(kind, detail) of the first rule that keeps the stage from running; ("", "") when none."""
    era, tests = stage.era, stage.tests
    if era is None:
        return "no environment", "no era recipe (`prchain env setup`)"
    if era.status != "verified" and not unverified:
        return "environment not verified", era.root_error or era.status
    if not era.image:
        return "no environment", "its era has no image"
    if isinstance(image, str):
        return "image missing", image
    if tests is None:
        return "tests not verified", "`prchain tests verify` has not run on it"
    if tests.status != "usable":
        return "tests unusable", tests.reason or tests.status
    return "", ""


def placed(
    stage: RunnableStage,
    image: StageImage | str,
    unverified: bool,
    absent: Sequence[str] = (),
    room: StageImage | str | None = None,
) -> RunnableStage:
    """The stage placed on this engine: its stage image (or why there is none), its room image
    when its hidden side adds requirements (`room`), its checkout (leaving out the `absent`
    files) and whether it runs."""
    kind, detail = _why_not(stage, image, unverified)
    if not kind and isinstance(room, str):
        kind, detail = "image missing", f"its hidden tests' room: {room}"
    found = image if isinstance(image, StageImage) else None
    steps = checkout(stage.base_sha, absent) if stage.base_sha else []
    rooms = room if isinstance(room, StageImage) else None
    return replace(stage, placement=Placement(found, tuple(steps), kind, detail, rooms))


def checkout(base_commit: str, absent: Sequence[str] = ()) -> list[str]:
    """Root commands that put the repository at `base_commit` in WORKDIR (where the era's recipe
    expects it), from the image's root-only mirror. The `absent` files, whose blobs the clone
    and so the mirror lack (`prchain.environments.absent`), are left out of the checkout as they were
    left out of the stage's tree: a sparse checkout never reads their blobs."""
    sha = shlex.quote(base_commit)
    steps = [f"rm -rf {WORKDIR} && git clone -q --no-checkout {ORIGIN_DIR} {WORKDIR}"]
    if absent:
        # Written by hand, not `git sparse-checkout set --no-cone` (git 2.35): bullseye has 2.30.
        patterns = " ".join(shlex.quote("!/" + _SPARSE_SPECIAL.sub(r"\\\g<0>", p)) for p in absent)
        steps.append(
            f"printf '%s\\n' '/*' {patterns} > {WORKDIR}/.git/info/sparse-checkout"
            f" && git -C {WORKDIR} config core.sparseCheckout true"
        )
    steps.append(f"git -C {WORKDIR} checkout -q --detach {sha}")
    return steps


# What a sparse-checkout pattern (gitignore syntax) would read as more than the path's letters.
_SPARSE_SPECIAL = re.compile(r"[\\*?\[\]!#\s]")


def flat_row(chain: dict[str, Any], stage: dict[str, Any]) -> dict[str, Any]:
    """One stage as a SWE-rebench-V2-shaped row (docs/export-formats.md, "Runnable rows")."""
    env = stage["environment"]
    return {
        "format": FLAT_FORMAT,
        **{key: stage[key] for key in SWE_FIELDS},
        "language": env["ecosystem"],
        "image_name": env["image"],
        "image_digest": env["image_id"],
        "install_config": {
            "install": env["checkout"],
            "setup_cmd": env["setup_command"],
            "test_cmd": env["test_script"],
            "log_parser": env["log_parser"],
            "report_path": env["report_path"],
            "workdir": env["workdir"],
            "base_image_name": env["era_image"],
        },
        "era": env["era"],
        "recipe": env["recipe"],
        "chain_id": chain["chain_id"],
        "stage_idx": stage["idx"],
        "chain_length": len(chain["stages"]),
    }


SWE_FIELDS = (
    "instance_id",
    "repo",
    "base_commit",
    "patch",
    "test_patch",
    "problem_statement",
    "hints_text",
    "created_at",
    "FAIL_TO_PASS",
    "PASS_TO_PASS",
)


# ---- the export -------------------------------------------------------------------------------


def flat_path(out: str | Path) -> Path:
    """Where the flat form goes beside the chain form OUT: OUT-stem.stages.jsonl."""
    target = Path(out)
    return target.with_name(f"{target.stem}.stages.jsonl")


def export_runnable(
    engine: Engine,
    out: str | Path,
    images: ImageResolver,
    *,
    strategy: str | None = None,
    unverified: bool = False,
    hidden: HiddenResolver | None = None,
) -> RunnableSummary:
    """Write the chain form with an environment per stage to `out` and the runnable stages' flat
    rows beside it (`flat_path`); both whole or not at all. A stage whose hidden side adds
    requirements gets its room image (`hidden`, then its sandbox layer); without `hidden` it says
    why it has none."""
    summary = RunnableSummary()
    with (
        atomic_output(out) as chains,
        atomic_output(flat_path(out)) as flat,
        Session(engine) as session,
    ):
        for chain in iter_tasks(engine, strategy):
            _chain(session, chain, images, unverified, summary, flat, hidden)
            chains.write(json.dumps(chain, ensure_ascii=False) + "\n")
    return summary


def _chain(
    session: Session,
    chain: dict[str, Any],
    images: ImageResolver,
    unverified: bool,
    summary: RunnableSummary,
    flat: TextIO,
    hidden: HiddenResolver | None,
) -> None:
    records = {r.idx: r for r in runnable_stages(session, chain_ids=[chain["chain_id"]])}
    summary.chains += 1
    for stage in chain["stages"]:
        record = records.get(stage["idx"]) or _unread(chain, stage)
        record = with_hidden(record)
        era = record.era.image if record.era is not None else ""
        clone, base = record.clone_path, stage["base_commit"]
        image = images(chain["repo"], clone, era) if era else ""
        runs = not _why_not(record, image, unverified)[0]  # a room is built for a stage that runs
        room = _room(record, images, hidden) if record.hidden and runs else None
        left_out = absent_paths(clone, base) if clone and base and Path(clone).exists() else ()
        found = placed(record, image, unverified, left_out, room)
        stage["environment"] = env = environment_block(found)
        summary.stages += 1
        if env["runnable"]:
            summary.runnable += 1
            summary.images[env["image"]] = env["image_id"]
            if env["room_image"]:
                summary.images[env["room_image"]] = env["room_image_id"]
                summary.apart += 1
                continue
            flat.write(json.dumps(flat_row(chain, stage), ensure_ascii=False) + "\n")
        else:
            summary.not_runnable[env["not_runnable"]] += 1


def _room(
    stage: RunnableStage, images: ImageResolver, hidden: HiddenResolver | None
) -> StageImage | str:
    """The stage image of the stage's hidden tests' room, or why there is none."""
    if hidden is None:
        return "its hidden side adds requirements and no room image was asked for"
    try:
        era = hidden(stage)
    except PrchainError as exc:
        return str(exc)
    return images(stage.repo, stage.clone_path, era)


def _unread(chain: dict[str, Any], stage: dict[str, Any]) -> RunnableStage:
    """A stage the record's read did not find (its repository row is gone): no era, no tests."""
    return RunnableStage(
        0, chain["chain_id"], stage["idx"], stage["pr_number"], chain["repo"], "",
        stage["base_commit"], stage["patch"], stage["test_patch"], stage["entry"],
    )  # fmt: skip
