"""Task formats of other harnesses, by short name (`prchain tasks convert TASKS OUT --to NAME`).

Each takes the chains of a runnable task file (`tasks export --runnable`) and writes the stages it
can carry; the others are counted by why not. docs/export-formats.md, "Add a task format". Light:
the CLI's `--help` reads TASK_FORMATS, so each writer loads only when it runs.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from importlib import import_module
from pathlib import Path
from typing import Any, Literal, get_args

TaskFormat = Literal["harbor"]
TASK_FORMATS: tuple[str, ...] = get_args(TaskFormat)
# name → the module whose `write(chains, out, timeout=, cap=)` writes it
WRITERS: dict[str, str] = {"harbor": "prchain.verdicts.harbor"}


@dataclass
class ConvertSummary:
    written: list[str] = field(default_factory=list)  # what was written (task directory names)
    skipped: Counter[str] = field(default_factory=Counter)  # why a stage was not, → stages


def convert(
    to: str, chains: list[dict[str, Any]], out: str | Path, *, timeout: float, cap: int
) -> ConvertSummary:
    """Write `chains` in format `to` under `out`."""
    found: ConvertSummary = import_module(WRITERS[to]).write(chains, out, timeout=timeout, cap=cap)
    return found
