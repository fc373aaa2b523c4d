"""Rust's facts (`prchain.environments.languages`)."""

from prchain.environments.languages import LanguageFacts

FACTS = LanguageFacts(
    name="rust",
    source_suffixes=frozenset({".rs"}),
    lock_files=frozenset({"cargo.lock"}),
    setup_agent=("Rust", "crates.io"),
)
