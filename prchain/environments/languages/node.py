"""JavaScript's and TypeScript's facts (`prchain.environments.languages`)."""

from prchain.environments.languages import LanguageFacts

FACTS = LanguageFacts(
    name="node",
    source_suffixes=frozenset({".js", ".mjs", ".cjs", ".jsx", ".ts", ".tsx"}),
    lock_files=frozenset({"package-lock.json", "yarn.lock", "pnpm-lock.yaml", "bun.lockb"}),
    # `x_test.js`, `x.spec.ts`, `x.test.tsx`, and a module's tests beside it: date-fns keeps
    # `src/intlFormat/test.ts` (round 36's #2232 only rewrote one, a stage both judges called thin)
    test_file_names=r"_tests?\.([jt]sx?|mjs)$|\.(spec|test)\.[jt]sx?$|^tests?\.[cm]?[jt]sx?$",
    setup_agent=("JavaScript/TypeScript", "the npm registry"),
)
