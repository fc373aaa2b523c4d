"""Test verdicts: stage_verifications and rollout_stages.tests_passed (fa84d32)."""

import sqlalchemy as sa
from alembic import op

revision = "0002_verifications"
down_revision = "0001_first_store"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "stage_verifications",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("chain_stage_id", sa.Integer(), nullable=False),
        sa.Column("recipe", sa.String(length=64), nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("test_command", sa.Text(), nullable=False),
        sa.Column("test_files", sa.JSON(), nullable=False),
        sa.Column("fail_to_pass", sa.JSON(), nullable=False),
        sa.Column("pass_to_pass", sa.JSON(), nullable=False),
        sa.Column("flaky", sa.JSON(), nullable=False),
        sa.Column("gold_failing", sa.JSON(), nullable=False),
        sa.Column("runs", sa.JSON(), nullable=False),
        sa.Column("output_tail", sa.Text(), nullable=False),
        sa.Column("seconds", sa.Double(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["chain_stage_id"],
            ["chain_stages.id"],
            name=op.f("fk_stage_verifications_chain_stage_id_chain_stages"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_stage_verifications")),
        sa.UniqueConstraint("chain_stage_id", name=op.f("uq_stage_verifications_chain_stage_id")),
    )
    op.create_index(
        op.f("ix_stage_verifications_recipe"), "stage_verifications", ["recipe"], unique=False
    )
    op.add_column("rollout_stages", sa.Column("tests_passed", sa.Boolean(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("rollout_stages") as batch:
        batch.drop_column("tests_passed")
    op.drop_index(op.f("ix_stage_verifications_recipe"), table_name="stage_verifications")
    op.drop_table("stage_verifications")
