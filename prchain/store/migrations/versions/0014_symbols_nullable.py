"""chain_links.symbols is NULL where it was not measured"""

import sqlalchemy as sa
from alembic import op

revision = "0014_symbols_nullable"
down_revision = "0013_chain_links_drop_kind"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("chain_links", schema=None) as batch_op:
        batch_op.alter_column(
            "symbols", existing_type=sa.Integer(), nullable=True, server_default=None
        )
    # Symbols are read only for a link a rule would drop and symbols may keep: a kept link that
    # used none was kept without them, so its 0 means "not measured". The next build rewrites
    # every link anyway.
    op.execute("UPDATE chain_links SET symbols = NULL WHERE kept = true AND symbols = 0")


def downgrade() -> None:
    op.execute("UPDATE chain_links SET symbols = 0 WHERE symbols IS NULL")
    with op.batch_alter_table("chain_links", schema=None) as batch_op:
        batch_op.alter_column(
            "symbols", existing_type=sa.Integer(), nullable=False, server_default="0"
        )
