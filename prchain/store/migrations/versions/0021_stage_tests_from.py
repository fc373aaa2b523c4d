"""chain_stages.tests_from: the later stage whose tests a stage without its own borrowed"""

import sqlalchemy as sa
from alembic import op

revision = "0021_stage_tests_from"
down_revision = "0020_stage_entry"
branch_labels = None
depends_on = None


def upgrade() -> None:
    with op.batch_alter_table("chain_stages", schema=None) as batch_op:
        batch_op.add_column(sa.Column("tests_from", sa.Integer(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("chain_stages", schema=None) as batch_op:
        batch_op.drop_column("tests_from")
