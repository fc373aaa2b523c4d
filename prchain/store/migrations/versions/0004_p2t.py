"""P2T: p2t_graphs, p2t_stages and rollouts.source (6b3e21a)."""

import sqlalchemy as sa
from alembic import op

revision = "0004_p2t"
down_revision = "0003_mine_runs"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "p2t_graphs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("chain_id", sa.Integer(), nullable=False),
        sa.Column("stage_idx", sa.Integer(), nullable=False),
        sa.Column("graph", sa.JSON(), nullable=False),
        sa.Column("rounds", sa.Integer(), nullable=False),
        sa.Column("stop_reason", sa.String(length=20), nullable=False),
        sa.Column("pruned", sa.JSON(), nullable=False),
        sa.Column("feedback", sa.JSON(), nullable=False),
        sa.Column("missing_artifacts", sa.JSON(), nullable=False),
        sa.Column("cost_usd", sa.Double(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["chain_id"],
            ["chains.id"],
            name=op.f("fk_p2t_graphs_chain_id_chains"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_p2t_graphs")),
        sa.UniqueConstraint("chain_id", "stage_idx", name=op.f("uq_p2t_graphs_chain_id_stage_idx")),
    )
    op.create_index(op.f("ix_p2t_graphs_chain_id"), "p2t_graphs", ["chain_id"], unique=False)
    op.create_table(
        "p2t_stages",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("rollout_id", sa.Integer(), nullable=False),
        sa.Column("stage_idx", sa.Integer(), nullable=False),
        sa.Column("graph_id", sa.Integer(), nullable=True),
        sa.Column("admitted", sa.Boolean(), nullable=False),
        sa.Column("reason", sa.Text(), nullable=False),
        sa.Column("established", sa.JSON(), nullable=False),
        sa.Column("coverage", sa.Double(), nullable=False),
        sa.Column("windows", sa.JSON(), nullable=False),
        sa.Column("steps", sa.Integer(), nullable=False),
        sa.Column("response_tokens", sa.Integer(), nullable=False),
        sa.Column("redundant_view_fraction", sa.Double(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["graph_id"],
            ["p2t_graphs.id"],
            name=op.f("fk_p2t_stages_graph_id_p2t_graphs"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["rollout_id"],
            ["rollouts.id"],
            name=op.f("fk_p2t_stages_rollout_id_rollouts"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_p2t_stages")),
        sa.UniqueConstraint(
            "rollout_id", "stage_idx", name=op.f("uq_p2t_stages_rollout_id_stage_idx")
        ),
    )
    op.create_index(op.f("ix_p2t_stages_rollout_id"), "p2t_stages", ["rollout_id"], unique=False)
    op.add_column(
        "rollouts",
        sa.Column("source", sa.String(length=10), server_default="agent", nullable=False),
    )


def downgrade() -> None:
    with op.batch_alter_table("rollouts") as batch:
        batch.drop_column("source")
    op.drop_index(op.f("ix_p2t_stages_rollout_id"), table_name="p2t_stages")
    op.drop_table("p2t_stages")
    op.drop_index(op.f("ix_p2t_graphs_chain_id"), table_name="p2t_graphs")
    op.drop_table("p2t_graphs")
