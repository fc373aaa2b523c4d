"""Identifier extraction from gold patches, the leak check, body cleaning, patch trimming, parsing."""

from __future__ import annotations

from pathlib import Path

import pytest

from prchain.chains.reading.leakage import changed_identifiers, find_leaks, names_in_line
from prchain.chains.writers.textclean import (
    clean_body,
    parse_query,
    parse_query_repaired,
    trim_patch,
)
from prchain.core.errors import LLMOutputInvalid
from prchain.dev.repos import make_chain_repo

RUST_DIFF = """diff --git a/crates/ruff/src/rules/pylint/mod.rs b/crates/ruff/src/rules/pylint/mod.rs
--- a/crates/ruff/src/rules/pylint/mod.rs
+++ b/crates/ruff/src/rules/pylint/mod.rs
@@ -10,2 +10,7 @@ impl Checker {
     let settings = &self.settings;
-    let max_args = settings.max_args;
+    let max_positional_args = settings.max_positional_args;
+    if parameters.len() > max_positional_args {
+        self.diagnostics.push(Diagnostic::new(TooManyPositional { count }, range));
+    }
+    // Keep the old error message for now
+    let message = String::from("too many");
diff --git a/docs/rules.md b/docs/rules.md
--- a/docs/rules.md
+++ b/docs/rules.md
@@ -1 +1,2 @@
 # Rules
+The new `TooManyPositionalInDocs` rule.
"""


def test_identifiers_of_a_real_git_patch(tmp_path: Path) -> None:
    repo = make_chain_repo(tmp_path / "calc")
    assert changed_identifiers([repo.prs[2].gold_patch]) == {"multiply", "_check_numbers"}
    assert changed_identifiers([repo.prs[4].gold_patch]) == set()  # docs only
    # divide is defined; subtract is named by the hunk header (the enclosing context git prints)
    assert "divide" in changed_identifiers([repo.prs[3].gold_patch])
    assert "ZeroDivisionError" not in changed_identifiers([repo.prs[3].gold_patch])  # a builtin


def test_identifiers_are_precise() -> None:
    names = changed_identifiers([RUST_DIFF])
    assert {"max_args", "max_positional_args", "TooManyPositional"} <= names
    # Plain words (even capitalised) that are merely used, not defined, do not count.
    assert not {"Diagnostic", "diagnostics", "parameters"} & names
    assert "Checker" not in names  # a one-hump plain word in the hunk header, not defined there
    assert not {"settings", "message", "String", "len", "too", "many", "the", "old"} & names
    assert "TooManyPositionalInDocs" not in names  # documentation files are skipped


def test_a_diff_unidiff_refuses_is_still_read() -> None:
    broken = RUST_DIFF.replace("@@ -10,2 +10,7 @@", "@@ -10,9 +10,1 @@")
    assert changed_identifiers([broken]) == changed_identifiers([RUST_DIFF])


def test_definitions_of_plain_words_count_unless_common() -> None:
    assert names_in_line("def frobnicate(x):") == {"frobnicate"}
    assert names_in_line("def parse(x):") == set()  # too common to give anything away
    assert names_in_line("class Tokenizer:") == {"Tokenizer"}
    assert names_in_line("    cache_dir = tmp") == {"cache_dir"}
    assert names_in_line("pub fn is_valid_noqa(line: &str) -> bool {") == {"is_valid_noqa"}
    assert names_in_line("def __init__(self, ab):") == set()
    # a plural of a common word is as common: Rust's test module, a query's "make the tests pass"
    assert names_in_line("mod tests {") == set()
    assert names_in_line("fn matches(x: u8) -> bool {") == set()
    assert names_in_line("fn entries() {") == set()
    assert names_in_line("fn frobnicates() {") == {"frobnicates"}


def test_find_leaks_matches_whole_words_and_allows_paths() -> None:
    ids = {"max_positional_args", "multiply", "ops_registry"}
    assert find_leaks("Limit positional arguments via max_positional_args.", ids) == [
        "max_positional_args"
    ]
    assert find_leaks("Multiply is needed.", ids) == ["multiply"]
    assert (
        find_leaks(
            "Products of numbers (multiplying) in calc/ops_registry/mod.rs and ops_registry.py.",
            ids,
        )
        == []
    )


def test_clean_body_removes_template_noise() -> None:
    body = (
        "## Summary\n\nAllow negative numbers.\n\n<!-- What does this PR do? -->\n"
        "## Test Plan\n\n<!-- How was it tested? -->\n\n## Checklist\n- [x] I read the guide\n- [ ] docs\n\n## Notes\n"
        "![img](https://x.io/a.png) See [the docs](https://x.io/docs) or https://x.io/raw.\n<details><summary>Log</summary>trace</details>"
    )
    cleaned = clean_body(body)
    assert cleaned.startswith("## Summary\n\nAllow negative numbers.")
    assert "Test Plan" not in cleaned and "Checklist" not in cleaned and "<!--" not in cleaned
    assert (
        "http" not in cleaned
        and "See the docs or" in cleaned
        and "<details>" not in cleaned
        and "Log trace" in cleaned
    )
    assert clean_body(None) == "" and clean_body("x" * 50, max_chars=10).endswith("truncated]")


def test_trim_patch_keeps_whole_files_first_and_names_the_rest() -> None:
    files = [
        f"diff --git a/f{i}.py b/f{i}.py\n--- a/f{i}.py\n+++ b/f{i}.py\n@@ -1 +1,40 @@\n"
        + "+line\n" * 40
        for i in range(3)
    ]
    diff = "".join(files)
    assert trim_patch(diff, 10_000) == (diff, False)
    trimmed, cut = trim_patch(diff, (len(files[0]) + 100) // 4)
    assert cut and trimmed.startswith(files[0]) and "more lines of f1.py omitted" in trimmed
    assert "also changed: f2.py" in trimmed and len(trimmed) < len(diff)


@pytest.mark.parametrize(
    ("reply", "error"),
    [
        ("", "empty"),
        ("Use this:\n```\nfoo()\n```", "code"),
        ("See https://x.io.", "URL"),
    ],
)
def test_parse_query_rejects_what_a_query_must_not_be(reply: str, error: str) -> None:
    with pytest.raises(LLMOutputInvalid, match=error):
        parse_query(reply)


def test_a_list_is_repaired_into_prose_and_the_repair_counted() -> None:
    """A small model's overview came as a list five times and was refused: only its form is off."""
    repaired = parse_query_repaired(
        "- keep the parser's `state` across calls\n- Report errors once."
    )
    assert repaired.value == "Keep the parser's state across calls. Report errors once."
    assert repaired.kinds == ("markup_stripped", "list_joined")
    assert parse_query_repaired("Make it faster.").kinds == ()


def test_parse_query_strips_a_preamble() -> None:
    assert (
        parse_query('Query: "Make the parser tolerate trailing commas."\n')
        == "Make the parser tolerate trailing commas."
    )


@pytest.mark.parametrize(
    "filler",
    ["a" * 3_000_000, "a-" * 1_500_000, "a." * 1_500_000, ("word " * 20 + "x" * 5000 + "\n") * 600],
)
def test_find_leaks_reads_a_3mb_reply_in_one_pass(filler: str) -> None:
    # Finding 7 of issue 16: the path regex rescanned long runs from every start, so a 3 MB reply
    # (64 KB already took 11 s) hung `queries build`. The tokenizer reads it once; timings are
    # in bench/bench_leakage.py.
    ids = {"max_positional_args", "frobnicate"}
    assert find_leaks(filler + " then frobnicate, not src/max_positional_args.rs", ids) == [
        "frobnicate"
    ]


def test_assignments_in_long_annotated_lines_are_read_in_one_pass() -> None:
    line = "frobnicate: " + " " * 200_000 + "Path" + " " * 200_000
    assert names_in_line(line) == set()  # no `=`: not an assignment, and no backtracking
    assert names_in_line("frobnicate: Path = tmp") == {"frobnicate"}


def test_file_names_and_paths_are_not_leaks() -> None:
    ids = {"ops_registry", "max_args"}
    assert find_leaks("see ops_registry.py and -max_args.rs.", ids) == []
    assert find_leaks("see ops_registry.pyx", ids) == ["ops_registry"]  # not a known suffix
    assert find_leaks("a.b.ops_registry.toml and max_args.", ids) == ["max_args"]
