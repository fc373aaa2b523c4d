"""A runnable task file and a predictions file, read for `tasks eval` and `tasks images`.

The task file is the chain form `tasks export --runnable` writes (every stage with its
`environment`); predictions are SWE-bench's (instance_id, model_patch, model_name_or_path), as
JSON Lines, a JSON list, or an object keyed by instance id. Bad input is one line naming the file
and the line.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prchain.core.errors import ConfigError

GOLD = "gold"
# The keys of a stage's `environment` that reading a task file relies on (`tasks eval`, `tasks
# images`, `tasks convert`); `runnable.environment_block` writes them on every stage. A file without
# one of them is refused before `tasks eval` or `tasks convert` does any work.
ENVIRONMENT_KEYS = (
    "runnable", "not_runnable", "ecosystem", "log_parser", "image", "image_id", "era", "workdir",
    "checkout", "setup_command", "test_command", "test_files",
)  # fmt: skip


@dataclass
class ConvertSummary:
    """What a harness task format wrote from a task file (`prchain tasks convert`)."""

    written: list[str] = field(default_factory=list)  # what was written (task directory names)
    skipped: Counter[str] = field(default_factory=Counter)  # why a stage was not, → stages


@dataclass(frozen=True)
class Patches:
    """What each stage applies: the gold patches, or a model's predictions by instance id."""

    model: str = GOLD
    predictions: dict[str, str] | None = None

    def of(self, stage: dict[str, Any]) -> str | None:
        if self.predictions is None:
            return str(stage["patch"])
        return self.predictions.get(stage["instance_id"])


def read_tasks(path: str | Path, keys: tuple[str, ...] = ()) -> list[dict[str, Any]]:
    """The chains of a task file written by `tasks export --runnable`; with `keys`
    (ENVIRONMENT_KEYS for the commands that run its stages), every stage's environment must hold
    them. The image commands read the image names alone."""
    chains = list(_json_lines(Path(path)))
    for number, chain in enumerate(chains, start=1):
        stages = chain.get("stages") if isinstance(chain, dict) else None
        if not isinstance(stages, list) or any(
            not isinstance(s, dict) or "environment" not in s for s in stages
        ):
            raise ConfigError(
                f"{path}: line {number} is not a chain with runnable stages",
                hint="export it with `prchain tasks export OUT --runnable` (the chain form, not "
                "the .stages.jsonl beside it)",
            )
        missing = _missing_keys(chain, keys)
        if missing:
            raise ConfigError(
                f"{path}: line {number}: {missing}",
                hint="export it again with `prchain tasks export OUT --runnable`",
            )
        odd = _odd_name(chain)
        if odd:
            raise ConfigError(
                f"{path}: line {number}: {odd}",
                hint="task files name their chains and stages as `prchain tasks export` does; "
                "these names become directory names",
            )
    return chains


def _missing_keys(chain: dict[str, Any], keys: tuple[str, ...]) -> str:
    """The first stage whose environment lacks one of `keys`, and which ("" if none)."""
    for stage in chain["stages"]:
        env = stage["environment"]
        missing = [k for k in keys if not isinstance(env, dict) or k not in env]
        if missing:
            return f"stage {stage.get('idx', '?')}'s environment has no `{missing[0]}`"
    return ""


# What `tasks export` writes as an instance id (owner__name-<number>): one path component,
# since `tasks convert` names directories after it (and after the chain id and stage index).
_INSTANCE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,200}$")


def _odd_name(chain: dict[str, Any]) -> str:
    """Why a chain's id, a stage's index or instance id cannot name a directory ("" if none)."""
    if not _is_int(chain.get("chain_id")):
        return f"chain_id {str(chain.get('chain_id'))[:80]!r} is not a whole number"
    for stage in chain["stages"]:
        if not _is_int(stage.get("idx")):
            return f"a stage's idx {str(stage.get('idx'))[:80]!r} is not a whole number"
        found = stage.get("instance_id")
        if not isinstance(found, str) or not _INSTANCE_ID.match(found):
            return f"instance_id {str(found)[:80]!r} is not one name of letters, digits, . _ -"
    return ""


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def read_predictions(path: str | Path) -> Patches:
    """A SWE-bench predictions file: JSON Lines, a JSON list, or an object keyed by instance id,
    of rows with instance_id, model_patch and model_name_or_path."""
    found, models = {}, set()
    for row in _prediction_rows(Path(path)):
        if not isinstance(row, dict) or not isinstance(row.get("instance_id"), str):
            raise ConfigError(
                f"{path}: a prediction without an instance_id: {str(row)[:120]}",
                hint=PREDICTIONS_HINT,
            )
        found[row["instance_id"]] = str(row.get("model_patch") or "")
        models.add(str(row.get("model_name_or_path") or "model"))
    return Patches(", ".join(sorted(models)) or "model", found)


PREDICTIONS_HINT = (
    'one JSON object per line: {"instance_id": …, "model_patch": …, "model_name_or_path": …}'
)


def _prediction_rows(path: Path) -> list[Any]:
    try:
        loaded = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError:
        return list(_json_lines(path))
    if isinstance(loaded, dict) and "instance_id" not in loaded:
        return list(loaded.values())
    return loaded if isinstance(loaded, list) else [loaded]


def _json_lines(path: Path) -> Iterator[Any]:
    with path.open(encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if line.strip():
                try:
                    yield json.loads(line)
                except json.JSONDecodeError as exc:
                    raise ConfigError(
                        f"{path}: line {number} is not JSON ({exc.msg})",
                        hint="a JSON Lines file holds one JSON object per line",
                    ) from None


def stated_images(path: str | Path, chains: Iterable[dict[str, Any]]) -> dict[str, str]:
    """Every stage image a task file names (name → content digest), each with one digest: what
    an archive for it may hold. A file whose stage names an image with no digest, or one name
    with two, states nothing an archive can be checked against."""
    found: dict[str, str] = {}
    for chain in chains:
        for stage in chain["stages"]:
            for name, digest in _named(stage["environment"]):
                if not isinstance(digest, str) or not digest.startswith("sha256:"):
                    raise ConfigError(f"{path} states no content digest for {name}",
                                      hint="export it again with `prchain tasks export OUT --runnable`")  # fmt: skip
                if found.setdefault(name, digest) != digest:
                    raise ConfigError(
                        f"{path} names {name} with two digests", hint="export it again"
                    )
    return found


def images_of(chains: Iterable[dict[str, Any]], every: bool = False) -> dict[str, str]:
    """The images (name → digest) the chains' runnable stages run in; `every`: any stage's."""
    found: dict[str, str] = {}
    for chain in chains:
        for stage in chain["stages"]:
            env = stage["environment"]
            if every or env["runnable"]:
                found |= {name: digest or "" for name, digest in _named(env)}
    return found


def _named(env: dict[str, Any]) -> list[tuple[str, Any]]:
    """(name, digest) of a stage's images: its stage image and its hidden tests' room, if any."""
    pairs = [
        (env.get("image"), env.get("image_id")),
        (env.get("room_image"), env.get("room_image_id")),
    ]
    return [(name, digest) for name, digest in pairs if name]
