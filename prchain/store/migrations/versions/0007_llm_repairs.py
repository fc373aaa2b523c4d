"""Recorded repairs of LLM replies and provenance hashes on rollouts (8cbe7ec); the store of cef42d3."""

import sqlalchemy as sa
from alembic import op

revision = "0007_llm_repairs"
down_revision = "0006_chain_builds"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "llm_repairs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("role", sa.String(length=40), nullable=False),
        sa.Column("kind", sa.String(length=40), nullable=False),
        sa.Column("detail", sa.Text(), nullable=True),
        sa.Column("rollout_id", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_llm_repairs")),
    )
    op.create_index(op.f("ix_llm_repairs_role"), "llm_repairs", ["role"], unique=False)
    op.create_index(op.f("ix_llm_repairs_rollout_id"), "llm_repairs", ["rollout_id"], unique=False)
    op.create_index(op.f("ix_llm_calls_created_at"), "llm_calls", ["created_at"], unique=False)
    op.add_column(
        "rollouts",
        sa.Column("prompt_hash", sa.String(length=64), server_default="", nullable=False),
    )
    op.add_column(
        "rollouts",
        sa.Column("tool_schema_hash", sa.String(length=64), server_default="", nullable=False),
    )


def downgrade() -> None:
    with op.batch_alter_table("rollouts") as batch:
        batch.drop_column("tool_schema_hash")
    with op.batch_alter_table("rollouts") as batch:
        batch.drop_column("prompt_hash")
    op.drop_index(op.f("ix_llm_calls_created_at"), table_name="llm_calls")
    op.drop_index(op.f("ix_llm_repairs_rollout_id"), table_name="llm_repairs")
    op.drop_index(op.f("ix_llm_repairs_role"), table_name="llm_repairs")
    op.drop_table("llm_repairs")
