"""Tables other packages may add to the store: rendered when present, skipped when not.

Read by reflection so the report works on a store written before those packages existed (and
does not import them): P2T runs (tables named `p2t_*`). Test verdicts are read through the store's
environments aggregate (`prchain.store.environments`).
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import MetaData, Table, func, inspect, select
from sqlalchemy.orm import Session

P2T_PREFIX = "p2t_"
P2T_STAGES = "p2t_stages"


def _table(session: Session, name: str) -> Table | None:
    bind = session.get_bind()
    if not inspect(bind).has_table(name):
        return None
    return Table(name, MetaData(), autoload_with=bind)


def p2t_tables(session: Session) -> list[Table]:
    bind = session.get_bind()
    names = sorted(n for n in inspect(bind).get_table_names() if n.startswith(P2T_PREFIX))
    return [Table(name, MetaData(), autoload_with=bind) for name in names]


def p2t_counts(session: Session) -> list[tuple[str, int]]:
    return [
        (t.name, session.scalar(select(func.count()).select_from(t)) or 0)
        for t in p2t_tables(session)
    ]


def p2t_stages(session: Session, rollout_id: int) -> list[dict[str, Any]]:
    """The P2T forward phase of a curated rollout, one row per stage: admitted, coverage, the nodes
    established and each window's candidates (name, Eff, length, ...), the one chosen and the
    steps committed (`p2t_stages.windows`, as `prchain.p2t` writes it)."""
    table = _table(session, P2T_STAGES)
    if table is None:
        return []
    query = select(table).where(table.c.rollout_id == rollout_id).order_by(table.c.stage_idx)
    return [dict(row) for row in session.execute(query).mappings()]


def p2t_rows(session: Session, rollout_id: int) -> list[tuple[str, list[str], list[list[Any]]]]:
    """Per other P2T table that refers to rollouts: (name, columns, this rollout's rows)."""
    found = []
    for table in p2t_tables(session):
        if "rollout_id" not in table.c or table.name == P2T_STAGES:
            continue
        query = select(table).where(table.c.rollout_id == rollout_id)
        order = [c for c in ("stage_idx", "window", "window_idx", "idx", "id") if c in table.c]
        rows = session.execute(query.order_by(*(table.c[c] for c in order))).all()
        if rows:
            columns = [c.name for c in table.c if c.name not in ("rollout_id", "created_at")]
            found.append(
                (table.name, columns, [[row._mapping[c] for c in columns] for row in rows])
            )
    return found
