"""link_verdicts: which of the two PRs the vetter called thin stages"""

import sqlalchemy as sa
from alembic import op

revision = "0019_link_verdicts_thin"
down_revision = "0018_env_recipes_variant_is_text"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("link_verdicts", schema=None) as batch_op:
        batch_op.add_column(
            sa.Column("older_thin", sa.Boolean(), server_default=sa.false(), nullable=False)
        )
        batch_op.add_column(
            sa.Column("newer_thin", sa.Boolean(), server_default=sa.false(), nullable=False)
        )


def downgrade() -> None:
    with op.batch_alter_table("link_verdicts", schema=None) as batch_op:
        batch_op.drop_column("newer_thin")
        batch_op.drop_column("older_thin")
