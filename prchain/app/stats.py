"""`prchain stats`: each package contributes one section; this module gathers them.

A section module exposes `collect(session) -> dict` (flat, JSON-ready keys) and
`render(data) -> list[rich.table.Table]`. Sections load only when stats are asked for.
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from sqlalchemy import Engine
from sqlalchemy.orm import Session

SECTION_MODULES = (
    "prchain.miner.stats",
    "prchain.chains.views.stats",
    "prchain.verdicts.era_stats",
    "prchain.verdicts.stats",
    "prchain.llm.stats",
    "prchain.agent.stats",
    "prchain.prm.stats",
)


def _sections() -> list[ModuleType]:
    return [importlib.import_module(name) for name in SECTION_MODULES]


def collect_stats(engine: Engine) -> dict[str, Any]:
    """Every section's numbers merged into one flat mapping."""
    data: dict[str, Any] = {}
    with Session(engine) as session:
        for module in _sections():
            data.update(module.collect(session))
    return data


def render_stats(data: dict[str, Any]) -> list[Any]:
    """Rich tables, one or more per section, in pipeline order."""
    tables: list[Any] = []
    for module in _sections():
        tables.extend(module.render(data))
    return tables
