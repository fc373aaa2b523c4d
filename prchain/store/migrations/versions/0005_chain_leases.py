"""Chain leases and the validity of cached replies (14c895e)."""

import sqlalchemy as sa
from alembic import op

revision = "0005_chain_leases"
down_revision = "0004_p2t"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "chain_leases",
        sa.Column("chain_id", sa.Integer(), nullable=False),
        sa.Column("owner", sa.String(length=200), nullable=False),
        sa.Column("heartbeat_at", sa.DateTime(), nullable=False),
        sa.Column("acquired_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["chain_id"],
            ["chains.id"],
            name=op.f("fk_chain_leases_chain_id_chains"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("chain_id", name=op.f("pk_chain_leases")),
    )
    op.add_column(
        "llm_cache", sa.Column("valid", sa.Boolean(), server_default=sa.true(), nullable=False)
    )
    op.add_column("llm_cache", sa.Column("error", sa.Text(), nullable=True))
    op.add_column(
        "llm_cache", sa.Column("scrubbed_chars", sa.Integer(), server_default="0", nullable=False)
    )


def downgrade() -> None:
    with op.batch_alter_table("llm_cache") as batch:
        batch.drop_column("scrubbed_chars")
    with op.batch_alter_table("llm_cache") as batch:
        batch.drop_column("error")
    with op.batch_alter_table("llm_cache") as batch:
        batch.drop_column("valid")
    op.drop_table("chain_leases")
