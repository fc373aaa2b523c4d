"""Chain builds with their rule counts (cbc76c8)."""

import sqlalchemy as sa
from alembic import op

revision = "0006_chain_builds"
down_revision = "0005_chain_leases"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "chain_builds",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("strategy", sa.String(length=40), nullable=False),
        sa.Column("chains", sa.Integer(), nullable=False),
        sa.Column("rules", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_chain_builds")),
    )
    op.create_index(op.f("ix_chain_builds_strategy"), "chain_builds", ["strategy"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_chain_builds_strategy"), table_name="chain_builds")
    op.drop_table("chain_builds")
