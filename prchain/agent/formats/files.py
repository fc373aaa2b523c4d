"""Rows to a file: Parquet when the name ends in .parquet, JSON Lines otherwise; replaced atomically
through the same safe-output checks as every other export (no devices, FIFOs or dangling links)."""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from prchain.core.errors import MissingExtra, OutputPathError
from prchain.core.files import atomic_output, check_target


def is_parquet(path: Path) -> bool:
    return path.suffix.lower() == ".parquet"


def write_rows(path: Path, rows: Iterable[dict[str, Any]]) -> int:
    """Write every row; a reader never sees a half-written file. Returns the row count."""
    if is_parquet(path):
        return _parquet(path, list(rows))
    written = 0
    with atomic_output(path) as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
            written += 1
    return written


def _parquet(path: Path, rows: list[dict[str, Any]]) -> int:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise MissingExtra(
            "writing .parquet needs pyarrow", hint="pip install 'prchain[export]' (or pyarrow)"
        ) from None
    check_target(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".partial")
    except OSError as exc:
        raise OutputPathError(f"cannot write {path}: {exc.strerror}") from None
    os.close(fd)
    try:
        # Nested values become Arrow structs and lists, the types `datasets` reads back unchanged.
        pq.write_table(pa.Table.from_pylist(rows), temp)
        os.chmod(temp, 0o644)
        check_target(path)
        os.replace(temp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        raise
    return len(rows)
