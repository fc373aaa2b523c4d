"""`prchain export`: kept trajectories in the chosen format and container, with card and manifest.

The formats are the `trajectories` entries of prchain.export.registry: each converts the record
`prchain.agent.export.build_record` makes and checks a row as loaded back."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import Engine

from prchain.agent.choices import KeepPolicyName, KeepSignal
from prchain.agent.export import Forbidden, build_record
from prchain.agent.formats.card import CardFacts, write_card, write_manifest
from prchain.agent.formats.files import write_rows
from prchain.export import registry
from prchain.store.db import session_scope
from prchain.store.rollouts import exportable


@dataclass(frozen=True)
class ExportOptions:
    format: str = "openai"  # a trajectory format of prchain.export.registry
    min_score: float = 0.8
    keep: KeepPolicyName = "all"
    keep_on: KeepSignal = "judge"
    keep_prm: bool = False
    keep_reasoning: bool = False
    leak_min_chars: int = 20
    rollout_ids: tuple[int, ...] | None = None  # from a manifest: exactly these rollouts

    def filters(self) -> dict[str, Any]:
        return {
            "min_score": self.min_score,
            "keep": self.keep,
            "keep_on": self.keep_on,
            "keep_prm": self.keep_prm,
            "keep_reasoning": self.keep_reasoning,
            "rollout_ids": list(self.rollout_ids) if self.rollout_ids is not None else None,
        }


@dataclass
class DatasetExport:
    path: Path
    card: Path | None = None
    manifest: Path | None = None
    written: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    redactions: int = 0
    tool_calls: int = 0
    tokens: int = 0


def export_dataset(
    engine: Engine,
    out: str | Path,
    options: ExportOptions,
    config: dict[str, Any],
    *,
    forbidden: Forbidden | None = None,
) -> DatasetExport:
    """Write the rows, then the manifest and the dataset card beside them (`forbidden` as in
    build_record: strings no exported message may show)."""
    result = DatasetExport(Path(out))
    facts = CardFacts(options.format, result.path.name, options.filters(), config)
    convert = registry.converter(options.format)

    def rows() -> Iterator[dict[str, Any]]:
        for record in _records(engine, options, facts, forbidden):
            facts.add(record["metadata"])
            result.redactions += record["metadata"]["redactions"]
            yield convert(record)

    result.written = write_rows(result.path, rows())
    result.skipped, result.tool_calls, result.tokens = facts.skipped, facts.tool_calls, facts.tokens
    result.manifest = write_manifest(result.path, facts)
    result.card = write_card(result.path, facts)
    return result


def _records(
    engine: Engine, options: ExportOptions, facts: CardFacts, forbidden: Forbidden | None
) -> Iterator[dict[str, Any]]:
    with session_scope(engine) as session:
        for rollout in exportable(session, options.rollout_ids):
            record, why = build_record(
                session,
                rollout,
                min_score=options.min_score,
                keep=options.keep,
                keep_prm=options.keep_prm,
                leak_min_chars=options.leak_min_chars,
                keep_reasoning=options.keep_reasoning,
                forbidden=forbidden,
                keep_on=options.keep_on,
            )
            if record is None:
                facts.skipped[why] += 1
                continue
            yield record


def check_row(format: str, row: dict[str, Any]) -> None:
    """Raise jsonschema.ValidationError when a row (as loaded back) breaks its format's schema."""
    registry.checker(format)(row)
