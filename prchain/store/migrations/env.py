"""Alembic's entry point for the store's migrations (run by `prchain.store.migrate`, never by hand).

`prchain.store.migrate` hands over an open connection in `config.attributes["connection"]`; it has already
taken the store's schema lock and, on SQLite, switched foreign keys off so that a table rebuilt by
batch mode does not cascade-delete its children's rows.
"""

from __future__ import annotations

from alembic import context

from prchain.store.models import Base


def _run_by_alembic() -> bool:
    """Importing this module outside a migration (e.g. the wheel's import check) does nothing."""
    try:
        context.is_offline_mode()
    except NameError:
        return False
    return True


def run() -> None:
    context.configure(
        connection=context.config.attributes["connection"],
        target_metadata=Base.metadata,
        render_as_batch=True,  # SQLite alters most columns by rebuilding the table
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


if _run_by_alembic():
    run()
