"""GraphQL points: mine_runs (73e212c)."""

import sqlalchemy as sa
from alembic import op

revision = "0003_mine_runs"
down_revision = "0002_verifications"
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "mine_runs",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("repo_id", sa.Integer(), nullable=False),
        sa.Column("source", sa.String(length=20), nullable=False),
        sa.Column("prs", sa.Integer(), nullable=False),
        sa.Column("requests", sa.Integer(), nullable=False),
        sa.Column("points", sa.Integer(), nullable=False),
        sa.Column("seconds", sa.Double(), nullable=False),
        sa.Column("finished_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["repo_id"], ["repos.id"], name=op.f("fk_mine_runs_repo_id_repos"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_mine_runs")),
    )


def downgrade() -> None:
    op.drop_table("mine_runs")
