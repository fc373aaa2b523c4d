"""chain_stages.entry, env_transitions.entry: how the sandbox enters each stage (revert, or the
propagate fallback)"""

import sqlalchemy as sa
from alembic import op

revision = "0020_stage_entry"
down_revision = "0019_link_verdicts_thin"
branch_labels = None
depends_on = None


TABLES = ("chain_stages", "env_transitions")


def upgrade() -> None:
    for table in TABLES:
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.add_column(
                sa.Column("entry", sa.String(length=20), server_default="revert", nullable=False)
            )


def downgrade() -> None:
    for table in TABLES:
        with op.batch_alter_table(table, schema=None) as batch_op:
            batch_op.drop_column("entry")
