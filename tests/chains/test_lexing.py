"""Pygments driven faster (prchain.chains.reading.lexing) gives Pygments' own tokens, and a chains build that
lexes so, and stops reading a file for strings past the hunks' last line
(`substance.string_spans(until=...)`), decides every link and keeps every answer as one that
lexes every file whole with Pygments' own loop (main before this change)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from pygments.lexer import RegexLexer
from sqlalchemy import select
from sqlalchemy.orm import Session

from prchain.chains.config import ChainsConfig
from prchain.chains.evidence import symbols
from prchain.chains.reading import lexing, substance
from prchain.chains.reading.substance import lexer_for, string_spans
from prchain.store.models import PairEvidence
from tests.support.history import History
from tests.support.links import links_by_number, mine_and_build

RUST = """//! Import sorting.
use std::collections::BTreeMap;

const TEMPLATE: &str = r##"
[sections]
order = "future, stdlib"
JoinedSection = "first"
"quoted" lines and a "# hash
"##;

/* a block /* nested */ comment */
pub fn check_imports<'a>(source: &'a str, width: usize) -> Vec<&'a str> {
    let raw = br#"bytes "inside""#;
    let plain = "a plain string
that spans lines";
    source.lines().filter(|line| line.len() > width).collect()
}
"""
GO = """package store

const regionQuery = `SELECT resource_identifier
FROM cloud_resources_by_region`

func RegionsOf(db *DB) ([]string, error) { return db.Query(regionQuery) }
"""
TS = """export function welcomeMail(user: User): string {
  const body = `Welcome aboard, ${user.name}!
Your workspace is ready.`;
  return send(user.address, body);
}
"""
SNIPPETS = {
    "src/imports.rs": RUST,
    "store/regions.go": GO,
    "web/mailer.ts": TS,
    "web/mailer.js": TS.replace(": User", "").replace(": string", ""),
    "app/Query.java": 'class Query {\n  String sql = """\n    SELECT 1\n    """;\n}\n',
    "app/Query.kt": 'val sql = """\n  SELECT 1\n"""\nfun run() = sql.trim()\n',
    "doc/README.md": "# Title\n\n```rust\nfn main() {}\n```\n\nSome *text*.\n",
    "pkg/util.py": 'def f(x):\n    """Doc\n    string."""\n    return f"{x!r:>{10}}" + rb"\\d"\n',
    "Cargo.toml": '[package]\nname = "ruff"\n[dependencies]\nserde = { version = "1" }\n',
}


def _own_loop(lexer: Any, text: str) -> list[tuple[int, Any, str]]:
    return list(RegexLexer.get_tokens_unprocessed(lexer, text))


@pytest.mark.parametrize("path", sorted(SNIPPETS))
def test_driven_tokens_are_pygments_own(path: str) -> None:
    lexer = lexer_for(path)
    assert lexer is not None and "get_tokens_unprocessed" in vars(lexer)  # driven
    text = SNIPPETS[path]
    assert list(lexer.get_tokens_unprocessed(text)) == _own_loop(lexer, text)
    # Cut anywhere, an unfinished string or comment reads alike too.
    for cut in range(0, len(text), 7):
        assert list(lexer.get_tokens_unprocessed(text[:cut])) == _own_loop(lexer, text[:cut])


def test_this_projects_own_sources_lex_alike() -> None:
    lexer = lexer_for("module.py")
    for source in sorted(Path(lexing.__file__).parents[1].rglob("*.py")):
        text = source.read_text()
        assert list(lexer.get_tokens_unprocessed(text)) == _own_loop(lexer, text), source.name


def test_markdown_lexes_its_fenced_blocks_driven_and_alike() -> None:
    """A fenced block is lexed by the driven lexer of its language, found once per name, to
    Pygments' own tokens: this project's docs (Python, Rust, shell, YAML, JSON blocks and more),
    whole and cut anywhere, and blocks of no known language or with words after the name."""
    lexer = lexer_for("README.md")
    texts = [p.read_text() for p in sorted((Path(__file__).parents[2] / "docs").glob("*.md"))]
    texts.append("```nosuchlang\nx = 1\n```\n```python extra words\ndef f(): pass\n```\n")
    for text in texts:
        assert list(lexer.get_tokens_unprocessed(text)) == _own_loop(lexer, text)
    for cut in range(0, len(texts[0]), 997):
        text = texts[0][:cut]
        assert list(lexer.get_tokens_unprocessed(text)) == _own_loop(lexer, text)
    rust = lexing._by_name("rust")
    assert rust is lexing._by_name("rust") and "get_tokens_unprocessed" in vars(rust)
    assert lexing._by_name("nosuchlang") is None


def test_a_rule_with_a_backreference_is_tried_alone_in_its_place() -> None:
    """Rust's raw string rule (`r(#*)".*?"\\1`) cannot be a branch: its group would be
    renumbered. It is tried alone, in its place, and only where a `b` or an `r` stands."""
    state = lexing._states(lexer_for("a.rs"))["base"]  # type: ignore[arg-type]
    raw = [i for i, branch in enumerate(state.branches) if branch is None]
    assert len(raw) == 1 and state.begins[raw[0]] == frozenset("br")
    assert (None, raw[0]) in state.steps("r") and (None, raw[0]) in state.steps("")
    assert (None, raw[0]) not in state.steps("x")


def test_a_lexer_with_its_own_loop_is_left_as_it_is() -> None:
    lexer = lexer_for("core.c")  # C's family renames names after RegexLexer's loop
    assert lexer is not None and "get_tokens_unprocessed" not in vars(lexer)


def test_string_spans_until_a_line_finds_every_string_begun_by_then() -> None:
    lexer = lexer_for("src/imports.rs")
    text = RUST * 3
    whole = string_spans(text, lexer)
    # Per copy: the raw string and the plain one spanning lines. The `//!` line, which Pygments
    # files as a doc string with its newline, ends on its own line: it spans none.
    assert len(whole) == 6
    for until in range(1, text.count("\n") + 2):
        part = string_spans(text, lexer, until=until)
        assert part == whole[: len(part)]
        assert all(span in part for span in whole if span[0] <= until)


# A history whose PRs write Rust with raw strings spanning lines: #1 adds a function and a line
# deep inside a raw string (its hunk shows no `r#"`); #2 calls the function; #3 only writes the
# same word inside its own copy of the string.
FILLER = "".join(f"key_{n} = {n}\n" for n in range(12))
RULES = (
    'pub const SETTINGS: &str = r#"\n[settings]\n' + FILLER + '"#;\n\n'
    "pub fn check_imports(source: &str) -> usize {\n    source.len()\n}\n"
)


def _history(path: Path) -> History:
    repo = History(path)
    repo.commit("Initial commit", {"src/rules.rs": RULES, "src/lib.rs": "pub mod rules;\n"})
    added = RULES.replace("key_6 = 6\n", "key_6 = 6\nJoinedSection = true\n") + (
        "\npub fn sort_import_sections(source: &str, width: usize) -> usize {\n"
        "    check_imports(source) * width\n}\n"
    )
    repo.pr(1, "Sort import sections", {"src/rules.rs": added})
    caller = (
        "use crate::rules::sort_import_sections;\n\n"
        "pub fn run_sorter(source: &str) -> usize {\n    sort_import_sections(source, 88)\n}\n"
    )
    repo.pr(2, "Run the sorter", {"src/run.rs": caller, "src/lib.rs": "pub mod rules;\n"
            "pub mod run;\n"}, body="Uses #1.")  # fmt: skip
    copied = 'pub const OTHER: &str = r#"\n' + FILLER + "JoinedSection = false\n" + '"#;\n'
    repo.pr(3, "Another settings table", {"src/other.rs": copied}, body="See #1.")
    return repo


def _built(repo: Path, store: Path) -> tuple[dict[Any, Any], set[Any]]:
    config = ChainsConfig(min_chain_code_lines=0, min_stage_code_lines=0, lineage_workers=1)
    engine = mine_and_build(repo, store, "acme/sorter", config)
    decided = {
        pair: (link.rule, link.kept, link.lineage, link.symbols, link.why)
        for pair, link in links_by_number(engine).items()
    }
    with Session(engine) as session:
        rows = session.execute(
            select(PairEvidence.newer_pr_id, PairEvidence.older_pr_id, PairEvidence.kind)
            .add_columns(PairEvidence.value)
        )  # fmt: skip
        kept = {(a, b, kind, repr(value)) for a, b, kind, value in rows}
    return decided, kept


def test_a_build_decides_as_one_with_pygments_own_loop_and_whole_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _history(tmp_path / "sorter")
    substance._lexer.cache_clear()
    driven = _built(repo.path, tmp_path / "driven.db")

    # As main built before: Pygments' own loop, and every such file lexed to its end.
    real_spans = substance.string_spans
    monkeypatch.setattr(lexing, "drive", lambda lexer: lexer)
    monkeypatch.setattr(
        symbols, "string_spans", lambda text, lexer, until=None: real_spans(text, lexer)
    )
    substance._lexer.cache_clear()
    try:
        assert "get_tokens_unprocessed" not in vars(lexer_for("a.rs"))
        own = _built(repo.path, tmp_path / "own.db")
    finally:
        substance._lexer.cache_clear()
    assert driven == own
    decided = driven[0]
    assert decided[2, 1][3] >= 1  # #2 calls #1's `sort_import_sections`
    assert decided[3, 1][3] == 0  # #1's `JoinedSection` is a line of its raw string: no name


@pytest.mark.parametrize("path", sorted(SNIPPETS))
def test_a_rule_skipped_at_a_character_could_not_match_there(path: str) -> None:
    """Each rule that matches somewhere in the text begins with a character it lists."""
    lexer = lexer_for(path)
    text = SNIPPETS[path] + "ſ Kelvin K \x1c é\n"
    for name, state in lexing._states(lexer).items():  # type: ignore[arg-type]
        for (match, _action, _state), begins in zip(lexer._tokens[name], state.begins, strict=True):  # type: ignore[union-attr]
            for pos in range(len(text)):
                if begins is not None and text[pos] in lexing.ASCII and match(text, pos):
                    assert text[pos] in begins, (name, match.__self__.pattern, text[pos])


def test_case_folding_beyond_ascii_begins_anywhere() -> None:
    """`(?i)ſ` matches `s` and `S`; `[\\u2000-\\u2200]` under IGNORECASE holds KELVIN SIGN (`k`)."""
    assert lexing._begins(["(?i)ſelf"], 0) is None
    assert lexing._begins(["[\u2000-\u2200]x"], re.IGNORECASE) is None
    assert lexing._begins(["(?i)self"], 0) == frozenset("sS")
    assert lexing._begins([r"\s+"], 0) == frozenset(c for c in lexing.ASCII if c.isspace())
    assert lexing._begins([r"\b(?=x)y?"], 0) is None  # may be empty: anything may follow
