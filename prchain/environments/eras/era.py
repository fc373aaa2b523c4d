"""The era of a commit: its ecosystem, its key, and the snapshot the plans are made from."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from prchain.environments.eras.ecosystems import Ecosystem, detect
from prchain.environments.eras.manifests import Snapshot, snapshot
from prchain.environments.images import recipe_hash

ERA_VERSION = "1"  # bump when era_facts change meaning: every key changes with it


@dataclass(frozen=True)
class Era:
    key: str
    ecosystem: Ecosystem | None  # None: no registered ecosystem recognises the commit
    snap: Snapshot

    @property
    def date(self) -> str:
        return self.snap.date.date().isoformat()


def date_bucket(snap: Snapshot) -> str:
    """Half-years: the same manifests a year apart resolve to different packages, so they are
    different eras; within six months one image serves (fewer builds, a staleness of ≤ 6 months)."""
    return f"{snap.date.year}H{1 if snap.date.month <= 6 else 2}"


def era_of(clone: str | Path, sha: str, test_paths: Sequence[str] = ()) -> Era:
    """The era of commit `sha`; `test_paths` (the stage's test files) choose between ecosystems
    when the tree has several, and the modules of a tree of nested ones."""
    snap = replace(snapshot(clone, sha), tests=tuple(test_paths))
    found = detect(snap, test_paths)
    facts = found.era_facts(snap) if found is not None else {"paths": len(snap.paths)}
    name = found.name if found is not None else "unknown"
    key = recipe_hash("era", ERA_VERSION, name, facts, date_bucket(snap))[:16]
    return Era(key, found, snap)
