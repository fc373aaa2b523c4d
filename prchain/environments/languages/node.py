"""JavaScript's and TypeScript's facts (`prchain.environments.languages`)."""

from prchain.environments.languages import LanguageFacts

FACTS = LanguageFacts(
    name="node",
    source_suffixes=frozenset({".js", ".mjs", ".cjs", ".jsx", ".ts", ".tsx"}),
    lock_files=frozenset({"package-lock.json", "yarn.lock", "pnpm-lock.yaml", "bun.lockb"}),
    setup_agent=("JavaScript/TypeScript", "the npm registry"),
)
