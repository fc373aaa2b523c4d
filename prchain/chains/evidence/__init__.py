"""Evidence: what git and the store say of PRs and pairs of PRs (line lineage, symbol use, reverts, kept answers)."""
