"""Code reading: what a changed file and its lines are, per language, from the text alone (no store, no git, no rules)."""
