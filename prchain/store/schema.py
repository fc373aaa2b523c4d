"""Render the DDL of the models; `python -m prchain.store.schema` rewrites prchain/store/schema.sql."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import create_mock_engine
from sqlalchemy.schema import CreateIndex, CreateTable

from prchain.store.models import Base

SCHEMA_FILE = Path(__file__).with_name("schema.sql")


def render_schema(dialect: str = "sqlite") -> str:
    """The CREATE statements for every table and index, in dependency order."""
    engine = create_mock_engine(f"{dialect}://", lambda *a, **k: None)
    parts = [
        "-- Generated from prchain/store/models by `python -m prchain.store.schema`; do not edit by hand.\n"
    ]
    for table in Base.metadata.sorted_tables:
        parts.append(str(CreateTable(table).compile(engine)).strip() + ";\n")
        for index in sorted(table.indexes, key=lambda i: str(i.name)):
            parts.append(str(CreateIndex(index).compile(engine)).strip() + ";\n")
    return "\n".join(parts)


if __name__ == "__main__":
    SCHEMA_FILE.write_text(render_schema())
    print(f"wrote {SCHEMA_FILE}")
