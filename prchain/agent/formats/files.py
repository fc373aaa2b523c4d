"""Rows to a file: Parquet when the name ends in .parquet, JSON Lines otherwise; replaced atomically."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from prchain.core.errors import PrchainError


def is_parquet(path: Path) -> bool:
    return path.suffix.lower() == ".parquet"


def write_rows(path: Path, rows: Iterable[dict[str, Any]]) -> int:
    """Write every row; a reader never sees a half-written file. Returns the row count."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    if is_parquet(path):
        written = _parquet(partial, list(rows))
    else:
        written = 0
        with partial.open("w") as handle:
            for row in rows:
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")
                written += 1
    partial.replace(path)
    return written


def _parquet(path: Path, rows: list[dict[str, Any]]) -> int:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise PrchainError(
            "writing .parquet needs pyarrow", hint="pip install 'prchain[export]' (or pyarrow)"
        ) from None
    # Nested values become Arrow structs and lists, the types `datasets` reads back unchanged.
    pq.write_table(pa.Table.from_pylist(rows), path)
    return len(rows)
