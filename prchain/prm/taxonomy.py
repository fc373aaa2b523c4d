"""The SWE-PRM taxonomy of trajectory-level errors, loaded from `taxonomy.yaml` (data, not code)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

TAXONOMY_FILE = Path(__file__).with_name("taxonomy.yaml")


@dataclass(frozen=True)
class Category:
    key: str  # stable identifier, e.g. step_repetition
    name: str
    definition: str
    recovery: str  # the recovery action the PRM should prescribe when it detects this error
    family: str


@dataclass(frozen=True)
class Family:
    key: str  # specification | reasoning | coordination
    title: str
    scope: str
    categories: tuple[Category, ...]


@dataclass(frozen=True)
class Taxonomy:
    families: tuple[Family, ...]

    @property
    def categories(self) -> tuple[Category, ...]:
        return tuple(c for family in self.families for c in family.categories)

    def category_keys(self) -> list[str]:
        return [c.key for c in self.categories]

    def get(self, key: str) -> Category:
        for category in self.categories:
            if category.key == key:
                return category
        raise KeyError(key)


def _family(raw: dict[str, Any]) -> Family:
    categories = tuple(Category(family=raw["key"], **c) for c in raw["categories"])
    return Family(key=raw["key"], title=raw["title"], scope=raw["scope"], categories=categories)


@cache
def load_taxonomy(path: Path = TAXONOMY_FILE) -> Taxonomy:
    """The taxonomy as typed data; read once per process (on first use, never at import)."""
    raw = yaml.safe_load(path.read_text())
    return Taxonomy(families=tuple(_family(f) for f in raw["families"]))
