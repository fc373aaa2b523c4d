"""String literals of every language are no code evidence (prchain.chains.reading.substance.evidence_line_flags):
a later PR that rewrites only the text inside an older PR's Go raw string or JS template literal
does not build on its code; one that rewrites a line of its code does."""

from __future__ import annotations

from pathlib import Path

from prchain.chains.config import ChainsConfig
from prchain.chains.evidence.symbols import code_names
from prchain.chains.reading.substance import WholeFile, evidence_line_flags, lexer_for, string_spans
from prchain.dev.repos import git
from tests.support.history import History
from tests.support.links import links_by_number, mine_and_build

REGIONS = """package store

const regionQuery = `SELECT resource_identifier, region_name
FROM cloud_resources_by_region
WHERE account_identifier = $1`

func RegionsOf(db *DB, account string) ([]string, error) {
\trows, err := db.QueryRows(regionQuery, account)
\treturn collectRegionNames(rows), err
}
"""
MAILER = """export function welcomeMail(user) {
  const body = `Welcome aboard, ${user.name}!
Your workspace identifier is ready for you
and the onboarding checklist waits on the dashboard.`;
  return sendMailMessage(user.address, body);
}
"""


def _history(path: Path) -> History:
    repo = History(path)
    repo.commit("Initial commit", {"store/db.go": "package store\n\ntype DB struct{}\n"})
    repo.pr(1, "Query resources by region", {"store/regions.go": REGIONS})
    sql = REGIONS.replace("cloud_resources_by_region", "cloud_resources_by_region_v2").replace(
        "account_identifier = $1", "account_identifier = $1 AND deleted_at IS NULL"
    )
    repo.pr(2, "Skip deleted resources", {"store/regions.go": sql}, body="See #1.")
    repo.pr(3, "Send a welcome mail", {"web/mailer.js": MAILER})
    text = MAILER.replace("is ready for you", "is ready for you today").replace(
        "waits on the dashboard", "waits for you on the dashboard"
    )
    repo.pr(4, "Reword the welcome mail", {"web/mailer.js": text}, body="See #3.")
    code = sql.replace(
        "rows, err := db.QueryRows(regionQuery, account)",
        "rows, err := db.QueryRowsContext(ctx, regionQuery, account)",
    )
    repo.pr(5, "Pass the context down", {"store/regions.go": code}, body="See #1.")
    return repo


def test_text_inside_string_literals_is_no_code_evidence(tmp_path: Path) -> None:
    repo = _history(tmp_path / "cq")
    config = ChainsConfig(
        corroboration_signs=0,
        min_chain_code_lines=0,
        min_stage_code_lines=0,
        plain_mention_min_contact=0,
    )
    links = links_by_number(mine_and_build(repo.path, tmp_path / "store.db", "acme/cq", config))
    # Only the SQL inside #1's raw string and the prose of #3's template literal are rewritten.
    for pair in ((2, 1), (4, 3)):
        assert (links[pair].lineage, links[pair].kept) == (0, False), links[pair].why
        assert links[pair].rule == "plain_mention_without_shared_lines"
    # A line of #1's Go code rewritten is evidence, as before.
    assert links[5, 1].kept and links[5, 1].lineage == 1


def test_a_hunk_inside_a_raw_string_reads_no_names(tmp_path: Path) -> None:
    """A hunk that begins inside a Go raw string shows no backtick: read alone, its SQL reads as
    names. Read with its new file, the string's lines are blanked."""
    repo = History(tmp_path / "raw")
    long_query = REGIONS.replace(
        "FROM cloud_resources_by_region\n",
        "FROM cloud_resources_by_region\n" + "".join(f"-- filler line {n}\n" for n in range(8)),
    )
    repo.commit("Initial commit", {"store/regions.go": long_query})
    grown = long_query.replace("-- filler line 5\n", "-- filler line 5\nJOIN AccountLimits\n")
    repo.pr(1, "Join the limits", {"store/regions.go": grown})
    diff = git(repo.path, "show", "--format=", "--full-index", repo.prs[1])
    new_text = {blob: git(repo.path, "cat-file", "blob", blob) + "\n" for blob in _blobs(diff)}
    assert "AccountLimits" in code_names(diff, None, None).code  # the bug, read alone
    assert "AccountLimits" not in code_names(diff, None, new_text.get).code


def _blobs(diff: str) -> list[str]:
    index = next(line for line in diff.splitlines() if line.startswith("index "))
    return index.split()[1].split("..")


def test_string_spans_and_evidence_flags_by_language() -> None:
    go = lexer_for("a.go")
    assert string_spans(REGIONS, go) == [(3, 5)]
    flags = evidence_line_flags(REGIONS.split("\n"), go)
    assert flags[2:5] == [True, False, False]  # the opening line declares `regionQuery`
    js = MAILER.split("\n")
    assert evidence_line_flags(js, lexer_for("a.js"))[:4] == [True, True, False, False]
    # A line of nothing but strings and punctuation holds no code either.
    assert evidence_line_flags(['    "connection refused",'], lexer_for("a.rs")) == [False]


def test_a_file_is_lexed_only_as_far_as_the_lines_asked_about() -> None:
    """Lineage asks whether a few lines of a file hold code: the file is lexed up to the last line
    asked, and on from there when a later one is asked; each answer is the whole file's."""
    go = lexer_for("a.go")
    lines = (REGIONS + "/* a note\nover lines */\nvar second = `raw\ntext`\n").split("\n")
    whole = evidence_line_flags(lines, go)
    lazy = WholeFile("\n".join(lines), go)
    assert lazy.line_is_evidence(4) == whole[3]
    reader = lazy._evidence
    assert reader is not None and reader._row < 8  # lexed up to the raw string's end, no further
    for line in (2, 9, 12, 13, 1):
        assert lazy.line_is_evidence(line) == whole[line - 1]
    assert lazy.evidence_flags == whole


def test_the_line_after_a_rust_doc_comment_is_code(tmp_path: Path) -> None:
    """Pygments reads `/// text` as a string that takes its line's newline with it; counting that
    newline, the doc comment's string ended on the next line, so the declaration under every doc
    comment was blanked as inside a string, and a documented function a PR added was not among
    its names (the file holds `r#"` elsewhere, which is what makes it be read for strings)."""
    repo = History(tmp_path / "doc")
    old = 'pub fn fixture() -> &\'static str {\n    r#"\nprint(1)\n"#\n}\n'
    repo.commit("Initial commit", {"src/lib.rs": old})
    new = old + "\n/// Counts the widgets.\npub fn count_widgets() -> usize {\n    3\n}\n"
    repo.pr(1, "Count widgets", {"src/lib.rs": new})
    diff = git(repo.path, "show", "--format=", "--full-index", repo.prs[1])
    new_text = {blob: git(repo.path, "cat-file", "blob", blob) + "\n" for blob in _blobs(diff)}
    assert string_spans(new, lexer_for("a.rs")) == [(2, 4)]  # the raw string only
    names = code_names(diff, None, new_text.get)
    assert "count_widgets" in names.code and "count_widgets" in names.own
