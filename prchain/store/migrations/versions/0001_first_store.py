"""The first released store: mining, chains, queries, rollouts, judge, PRM, LLM calls and cache (a3722e7)."""

import sqlalchemy as sa
from alembic import op

revision = "0001_first_store"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "llm_cache",
        sa.Column("cache_key", sa.String(length=64), nullable=False),
        sa.Column("role", sa.String(length=40), nullable=False),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column("response", sa.JSON(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("cache_key", name=op.f("pk_llm_cache")),
    )
    op.create_table(
        "llm_calls",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("role", sa.String(length=40), nullable=False),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column("prompt_tokens", sa.Integer(), nullable=False),
        sa.Column("completion_tokens", sa.Integer(), nullable=False),
        sa.Column("latency_ms", sa.Double(), nullable=False),
        sa.Column("cost_usd", sa.Double(), nullable=False),
        sa.Column("cache_key", sa.String(length=64), nullable=False),
        sa.Column("cached", sa.Boolean(), nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("rollout_id", sa.Integer(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_llm_calls")),
    )
    op.create_index(op.f("ix_llm_calls_cache_key"), "llm_calls", ["cache_key"], unique=False)
    op.create_index(op.f("ix_llm_calls_role"), "llm_calls", ["role"], unique=False)
    op.create_index(op.f("ix_llm_calls_rollout_id"), "llm_calls", ["rollout_id"], unique=False)
    op.create_table(
        "repos",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("full_name", sa.String(length=200), nullable=False),
        sa.Column("source", sa.String(length=20), nullable=False),
        sa.Column("default_branch", sa.String(length=200), nullable=True),
        sa.Column("clone_path", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_repos")),
        sa.UniqueConstraint("full_name", name=op.f("uq_repos_full_name")),
    )
    op.create_table(
        "chains",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("repo_id", sa.Integer(), nullable=False),
        sa.Column("strategy", sa.String(length=40), nullable=False),
        sa.Column("signature", sa.String(length=400), nullable=False),
        sa.Column("length", sa.Integer(), nullable=False),
        sa.Column("score", sa.Double(), nullable=False),
        sa.Column("edges", sa.JSON(), nullable=False),
        sa.Column("overview", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["repo_id"], ["repos.id"], name=op.f("fk_chains_repo_id_repos"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_chains")),
        sa.UniqueConstraint("strategy", "signature", name=op.f("uq_chains_strategy_signature")),
    )
    op.create_index(op.f("ix_chains_repo_id"), "chains", ["repo_id"], unique=False)
    op.create_table(
        "issues",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("repo_id", sa.Integer(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("state", sa.String(length=20), nullable=False),
        sa.Column("author", sa.String(length=200), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=True),
        sa.Column("closed_at", sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["repo_id"], ["repos.id"], name=op.f("fk_issues_repo_id_repos"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_issues")),
        sa.UniqueConstraint("repo_id", "number", name=op.f("uq_issues_repo_id_number")),
    )
    op.create_table(
        "pull_requests",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("repo_id", sa.Integer(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("title", sa.Text(), nullable=False),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("state", sa.String(length=20), nullable=False),
        sa.Column("author", sa.String(length=200), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=True),
        sa.Column("merged_at", sa.DateTime(), nullable=True),
        sa.Column("closed_at", sa.DateTime(), nullable=True),
        sa.Column("updated_at", sa.DateTime(), nullable=True),
        sa.Column("base_ref", sa.String(length=200), nullable=True),
        sa.Column("base_sha", sa.String(length=64), nullable=True),
        sa.Column("head_sha", sa.String(length=64), nullable=True),
        sa.Column("merge_commit_sha", sa.String(length=64), nullable=True),
        sa.Column("additions", sa.Integer(), nullable=False),
        sa.Column("deletions", sa.Integer(), nullable=False),
        sa.Column("changed_files", sa.Integer(), nullable=False),
        sa.Column("patch_status", sa.String(length=20), nullable=False),
        sa.Column("source", sa.String(length=20), nullable=False),
        sa.ForeignKeyConstraint(
            ["repo_id"],
            ["repos.id"],
            name=op.f("fk_pull_requests_repo_id_repos"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_pull_requests")),
        sa.UniqueConstraint("repo_id", "number", name=op.f("uq_pull_requests_repo_id_number")),
    )
    op.create_index(
        op.f("ix_pull_requests_repo_id_merged_at"),
        "pull_requests",
        ["repo_id", "merged_at"],
        unique=False,
    )
    op.create_table(
        "sync_cursors",
        sa.Column("repo_id", sa.Integer(), nullable=False),
        sa.Column("source", sa.String(length=20), nullable=False),
        sa.Column("kind", sa.String(length=40), nullable=False),
        sa.Column("value", sa.Text(), nullable=False),
        sa.Column("updated_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["repo_id"],
            ["repos.id"],
            name=op.f("fk_sync_cursors_repo_id_repos"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("repo_id", "source", "kind", name=op.f("pk_sync_cursors")),
    )
    op.create_table(
        "chain_stages",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("chain_id", sa.Integer(), nullable=False),
        sa.Column("idx", sa.Integer(), nullable=False),
        sa.Column("pr_id", sa.Integer(), nullable=False),
        sa.Column("base_sha", sa.String(length=64), nullable=True),
        sa.Column("end_sha", sa.String(length=64), nullable=True),
        sa.Column("gold_patch", sa.Text(), nullable=False),
        sa.Column("gold_test_patch", sa.Text(), nullable=False),
        sa.Column("query", sa.Text(), nullable=True),
        sa.Column("query_attempts", sa.Integer(), nullable=False),
        sa.Column("query_leaks", sa.JSON(), nullable=False),
        sa.ForeignKeyConstraint(
            ["chain_id"],
            ["chains.id"],
            name=op.f("fk_chain_stages_chain_id_chains"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["pr_id"],
            ["pull_requests.id"],
            name=op.f("fk_chain_stages_pr_id_pull_requests"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_chain_stages")),
        sa.UniqueConstraint("chain_id", "idx", name=op.f("uq_chain_stages_chain_id_idx")),
    )
    op.create_index(op.f("ix_chain_stages_chain_id"), "chain_stages", ["chain_id"], unique=False)
    op.create_table(
        "comments",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("pr_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=20), nullable=False),
        sa.Column("external_id", sa.String(length=100), nullable=False),
        sa.Column("author", sa.String(length=200), nullable=True),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("path", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["pr_id"],
            ["pull_requests.id"],
            name=op.f("fk_comments_pr_id_pull_requests"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_comments")),
        sa.UniqueConstraint(
            "pr_id", "kind", "external_id", name=op.f("uq_comments_pr_id_kind_external_id")
        ),
    )
    op.create_index(op.f("ix_comments_pr_id"), "comments", ["pr_id"], unique=False)
    op.create_table(
        "pr_commits",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("pr_id", sa.Integer(), nullable=False),
        sa.Column("sha", sa.String(length=64), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("author", sa.String(length=200), nullable=True),
        sa.Column("authored_at", sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["pr_id"],
            ["pull_requests.id"],
            name=op.f("fk_pr_commits_pr_id_pull_requests"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_pr_commits")),
        sa.UniqueConstraint("pr_id", "sha", name=op.f("uq_pr_commits_pr_id_sha")),
    )
    op.create_index(op.f("ix_pr_commits_pr_id"), "pr_commits", ["pr_id"], unique=False)
    op.create_table(
        "pr_files",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("pr_id", sa.Integer(), nullable=False),
        sa.Column("path", sa.Text(), nullable=False),
        sa.Column("previous_path", sa.Text(), nullable=True),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("additions", sa.Integer(), nullable=False),
        sa.Column("deletions", sa.Integer(), nullable=False),
        sa.Column("is_binary", sa.Boolean(), nullable=False),
        sa.ForeignKeyConstraint(
            ["pr_id"],
            ["pull_requests.id"],
            name=op.f("fk_pr_files_pr_id_pull_requests"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_pr_files")),
        sa.UniqueConstraint("pr_id", "path", name=op.f("uq_pr_files_pr_id_path")),
    )
    op.create_index(op.f("ix_pr_files_pr_id"), "pr_files", ["pr_id"], unique=False)
    op.create_table(
        "pr_patches",
        sa.Column("pr_id", sa.Integer(), nullable=False),
        sa.Column("diff", sa.Text(), nullable=False),
        sa.Column("size_bytes", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["pr_id"],
            ["pull_requests.id"],
            name=op.f("fk_pr_patches_pr_id_pull_requests"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("pr_id", name=op.f("pk_pr_patches")),
    )
    op.create_table(
        "pr_references",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("repo_id", sa.Integer(), nullable=False),
        sa.Column("src_pr_id", sa.Integer(), nullable=False),
        sa.Column("target_repo", sa.String(length=200), nullable=False),
        sa.Column("target_number", sa.Integer(), nullable=False),
        sa.Column("target_kind", sa.String(length=20), nullable=False),
        sa.Column("target_pr_id", sa.Integer(), nullable=True),
        sa.Column("type", sa.String(length=20), nullable=False),
        sa.Column("found_in", sa.String(length=20), nullable=False),
        sa.Column("via_issue", sa.Integer(), nullable=False),
        sa.Column("evidence", sa.Text(), nullable=False),
        sa.ForeignKeyConstraint(
            ["repo_id"],
            ["repos.id"],
            name=op.f("fk_pr_references_repo_id_repos"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["src_pr_id"],
            ["pull_requests.id"],
            name=op.f("fk_pr_references_src_pr_id_pull_requests"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["target_pr_id"],
            ["pull_requests.id"],
            name=op.f("fk_pr_references_target_pr_id_pull_requests"),
            ondelete="SET NULL",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_pr_references")),
        sa.UniqueConstraint(
            "src_pr_id",
            "target_repo",
            "target_number",
            "type",
            "found_in",
            "via_issue",
            name=op.f(
                "uq_pr_references_src_pr_id_target_repo_target_number_type_found_in_via_issue"
            ),
        ),
    )
    op.create_index(
        op.f("ix_pr_references_repo_id_target_number"),
        "pr_references",
        ["repo_id", "target_number"],
        unique=False,
    )
    op.create_index(
        op.f("ix_pr_references_src_pr_id"), "pr_references", ["src_pr_id"], unique=False
    )
    op.create_table(
        "rollouts",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("chain_id", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("conflict_policy", sa.String(length=20), nullable=False),
        sa.Column("keep_policy", sa.String(length=20), nullable=False),
        sa.Column("prm_variant", sa.String(length=10), nullable=True),
        sa.Column("kept_stages", sa.Integer(), nullable=False),
        sa.Column("models", sa.JSON(), nullable=False),
        sa.Column("config", sa.JSON(), nullable=False),
        sa.Column("action_format", sa.String(length=10), nullable=False),
        sa.Column("prompt_tokens", sa.Integer(), nullable=False),
        sa.Column("completion_tokens", sa.Integer(), nullable=False),
        sa.Column("trajectory_tokens", sa.Integer(), nullable=False),
        sa.Column("agent_steps", sa.Integer(), nullable=False),
        sa.Column("tool_calls", sa.Integer(), nullable=False),
        sa.Column("cost_usd", sa.Double(), nullable=False),
        sa.Column("started_at", sa.DateTime(), nullable=False),
        sa.Column("finished_at", sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["chain_id"],
            ["chains.id"],
            name=op.f("fk_rollouts_chain_id_chains"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_rollouts")),
    )
    op.create_index(op.f("ix_rollouts_chain_id"), "rollouts", ["chain_id"], unique=False)
    op.create_table(
        "env_transitions",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("rollout_id", sa.Integer(), nullable=False),
        sa.Column("stage_idx", sa.Integer(), nullable=False),
        sa.Column("base_sha", sa.String(length=64), nullable=False),
        sa.Column("policy", sa.String(length=20), nullable=False),
        sa.Column("outcome", sa.String(length=20), nullable=False),
        sa.Column("reverted", sa.JSON(), nullable=False),
        sa.Column("applied", sa.Boolean(), nullable=False),
        sa.Column("rejected_hunks", sa.Text(), nullable=False),
        sa.Column("revert_failed", sa.JSON(), nullable=False),
        sa.Column("revert_rejected_hunks", sa.Text(), nullable=False),
        sa.Column("carried_bytes", sa.Integer(), nullable=False),
        sa.Column("stage_base", sa.String(length=64), nullable=False),
        sa.Column("stage_start", sa.String(length=64), nullable=False),
        sa.Column("seconds", sa.Double(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["rollout_id"],
            ["rollouts.id"],
            name=op.f("fk_env_transitions_rollout_id_rollouts"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_env_transitions")),
        sa.UniqueConstraint(
            "rollout_id", "stage_idx", name=op.f("uq_env_transitions_rollout_id_stage_idx")
        ),
    )
    op.create_index(
        op.f("ix_env_transitions_rollout_id"), "env_transitions", ["rollout_id"], unique=False
    )
    op.create_table(
        "judgements",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("rollout_id", sa.Integer(), nullable=False),
        sa.Column("stage_idx", sa.Integer(), nullable=False),
        sa.Column("round", sa.Integer(), nullable=False),
        sa.Column("score", sa.Double(), nullable=False),
        sa.Column("comment", sa.Text(), nullable=False),
        sa.Column("passed", sa.Boolean(), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("redacted", sa.Boolean(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["rollout_id"],
            ["rollouts.id"],
            name=op.f("fk_judgements_rollout_id_rollouts"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_judgements")),
        sa.UniqueConstraint(
            "rollout_id",
            "stage_idx",
            "round",
            name=op.f("uq_judgements_rollout_id_stage_idx_round"),
        ),
    )
    op.create_index(op.f("ix_judgements_rollout_id"), "judgements", ["rollout_id"], unique=False)
    op.create_table(
        "prm_calls",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("rollout_id", sa.Integer(), nullable=False),
        sa.Column("stage_idx", sa.Integer(), nullable=False),
        sa.Column("step_idx", sa.Integer(), nullable=False),
        sa.Column("variant", sa.String(length=10), nullable=False),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column("window", sa.JSON(), nullable=False),
        sa.Column("verdict", sa.JSON(), nullable=True),
        sa.Column("task_status", sa.String(length=30), nullable=True),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("injected", sa.Boolean(), nullable=False),
        sa.Column("prompt_tokens", sa.Integer(), nullable=False),
        sa.Column("completion_tokens", sa.Integer(), nullable=False),
        sa.Column("cost_usd", sa.Double(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["rollout_id"],
            ["rollouts.id"],
            name=op.f("fk_prm_calls_rollout_id_rollouts"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_prm_calls")),
        sa.UniqueConstraint(
            "rollout_id", "step_idx", name=op.f("uq_prm_calls_rollout_id_step_idx")
        ),
    )
    op.create_index(op.f("ix_prm_calls_rollout_id"), "prm_calls", ["rollout_id"], unique=False)
    op.create_table(
        "rollout_stages",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("rollout_id", sa.Integer(), nullable=False),
        sa.Column("stage_idx", sa.Integer(), nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("score", sa.Double(), nullable=True),
        sa.Column("rounds", sa.Integer(), nullable=False),
        sa.Column("stage_diff", sa.Text(), nullable=False),
        sa.Column("cumulative_diff", sa.Text(), nullable=False),
        sa.Column("test_result", sa.JSON(), nullable=True),
        sa.Column("agent_steps", sa.Integer(), nullable=False),
        sa.Column("started_at", sa.DateTime(), nullable=False),
        sa.Column("finished_at", sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["rollout_id"],
            ["rollouts.id"],
            name=op.f("fk_rollout_stages_rollout_id_rollouts"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_rollout_stages")),
        sa.UniqueConstraint(
            "rollout_id", "stage_idx", name=op.f("uq_rollout_stages_rollout_id_stage_idx")
        ),
    )
    op.create_index(
        op.f("ix_rollout_stages_rollout_id"), "rollout_stages", ["rollout_id"], unique=False
    )
    op.create_table(
        "steps",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("rollout_id", sa.Integer(), nullable=False),
        sa.Column("stage_idx", sa.Integer(), nullable=False),
        sa.Column("idx", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=20), nullable=False),
        sa.Column("message", sa.JSON(), nullable=False),
        sa.Column("tool_call", sa.JSON(), nullable=True),
        sa.Column("observation", sa.Text(), nullable=True),
        sa.Column("prompt_tokens", sa.Integer(), nullable=False),
        sa.Column("completion_tokens", sa.Integer(), nullable=False),
        sa.Column("latency_ms", sa.Double(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["rollout_id"],
            ["rollouts.id"],
            name=op.f("fk_steps_rollout_id_rollouts"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_steps")),
        sa.UniqueConstraint("rollout_id", "idx", name=op.f("uq_steps_rollout_id_idx")),
    )
    op.create_index(op.f("ix_steps_rollout_id"), "steps", ["rollout_id"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_steps_rollout_id"), table_name="steps")
    op.drop_table("steps")
    op.drop_index(op.f("ix_rollout_stages_rollout_id"), table_name="rollout_stages")
    op.drop_table("rollout_stages")
    op.drop_index(op.f("ix_prm_calls_rollout_id"), table_name="prm_calls")
    op.drop_table("prm_calls")
    op.drop_index(op.f("ix_judgements_rollout_id"), table_name="judgements")
    op.drop_table("judgements")
    op.drop_index(op.f("ix_env_transitions_rollout_id"), table_name="env_transitions")
    op.drop_table("env_transitions")
    op.drop_index(op.f("ix_rollouts_chain_id"), table_name="rollouts")
    op.drop_table("rollouts")
    op.drop_index(op.f("ix_pr_references_src_pr_id"), table_name="pr_references")
    op.drop_index(op.f("ix_pr_references_repo_id_target_number"), table_name="pr_references")
    op.drop_table("pr_references")
    op.drop_table("pr_patches")
    op.drop_index(op.f("ix_pr_files_pr_id"), table_name="pr_files")
    op.drop_table("pr_files")
    op.drop_index(op.f("ix_pr_commits_pr_id"), table_name="pr_commits")
    op.drop_table("pr_commits")
    op.drop_index(op.f("ix_comments_pr_id"), table_name="comments")
    op.drop_table("comments")
    op.drop_index(op.f("ix_chain_stages_chain_id"), table_name="chain_stages")
    op.drop_table("chain_stages")
    op.drop_table("sync_cursors")
    op.drop_index(op.f("ix_pull_requests_repo_id_merged_at"), table_name="pull_requests")
    op.drop_table("pull_requests")
    op.drop_table("issues")
    op.drop_index(op.f("ix_chains_repo_id"), table_name="chains")
    op.drop_table("chains")
    op.drop_table("repos")
    op.drop_index(op.f("ix_llm_calls_rollout_id"), table_name="llm_calls")
    op.drop_index(op.f("ix_llm_calls_role"), table_name="llm_calls")
    op.drop_index(op.f("ix_llm_calls_cache_key"), table_name="llm_calls")
    op.drop_table("llm_calls")
    op.drop_table("llm_cache")
