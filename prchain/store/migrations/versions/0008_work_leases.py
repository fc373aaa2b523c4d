"""Work leases for any step, (kind, key) → holder; the chain lease becomes kind "chain"."""

import sqlalchemy as sa
from alembic import op

revision = "0008_work_leases"
down_revision = "0007_llm_repairs"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "work_leases",
        sa.Column("kind", sa.String(length=40), nullable=False),
        sa.Column("key", sa.String(length=200), nullable=False),
        sa.Column("owner", sa.String(length=200), nullable=False),
        sa.Column("heartbeat_at", sa.DateTime(), nullable=False),
        sa.Column("acquired_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("kind", "key", name=op.f("pk_work_leases")),
    )
    # A chain being rolled out while the store is upgraded keeps its holder.
    op.execute(
        "INSERT INTO work_leases (kind, key, owner, heartbeat_at, acquired_at) "
        "SELECT 'chain', CAST(chain_id AS VARCHAR(200)), owner, heartbeat_at, acquired_at "
        "FROM chain_leases"
    )
    op.drop_table("chain_leases")


def downgrade() -> None:
    op.create_table(
        "chain_leases",
        sa.Column("chain_id", sa.INTEGER(), nullable=False),
        sa.Column("owner", sa.VARCHAR(length=200), nullable=False),
        sa.Column("heartbeat_at", sa.DATETIME(), nullable=False),
        sa.Column("acquired_at", sa.DATETIME(), nullable=False),
        sa.ForeignKeyConstraint(
            ["chain_id"],
            ["chains.id"],
            name=op.f("fk_chain_leases_chain_id_chains"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("chain_id", name=op.f("pk_chain_leases")),
    )
    op.drop_table("work_leases")  # leases are short-lived: holders re-claim after a downgrade
