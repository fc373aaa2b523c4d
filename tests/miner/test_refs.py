"""Reference extraction, as a table of texts and the references a reader would see in them."""

from __future__ import annotations

import pytest

from prchain.miner.refs import EVIDENCE_CHARS, extract_refs, strip_ignored

REPO = "acme/calc"

# (text, [(target_repo, number, type, external)])
CASES = [
    ("Fixes #12", [(REPO, 12, "fixes", False)]),
    ("fixes: #12", [(REPO, 12, "fixes", False)]),
    ("Closes #3", [(REPO, 3, "fixes", False)]),
    ("closed #3", [(REPO, 3, "fixes", False)]),
    ("close: #3", [(REPO, 3, "fixes", False)]),
    ("Resolves #4", [(REPO, 4, "fixes", False)]),
    ("resolved: GH-4", [(REPO, 4, "fixes", False)]),
    ("fix #5", [(REPO, 5, "fixes", False)]),
    ("Fixed issue #6", [(REPO, 6, "fixes", False)]),
    (
        "Fixes #1, #2 and #3",
        [(REPO, 1, "fixes", False), (REPO, 2, "fixes", False), (REPO, 3, "fixes", False)],
    ),
    ("Fixes #1. See also #2", [(REPO, 1, "fixes", False), (REPO, 2, "mention", False)]),
    ("See #7", [(REPO, 7, "mention", False)]),
    ("(#7)", [(REPO, 7, "mention", False)]),
    ("GH-8 is related", [(REPO, 8, "mention", False)]),
    ("gh-8 too", [(REPO, 8, "mention", False)]),
    ("Follow-up to #1", [(REPO, 1, "follow_up", False)]),
    ("Follow up of #1", [(REPO, 1, "follow_up", False)]),
    ("followup #1", [(REPO, 1, "follow_up", False)]),
    ("This builds on #5 and adds more", [(REPO, 5, "follow_up", False)]),
    ("Builds on top of #5", [(REPO, 5, "follow_up", False)]),
    ("Part of #100", [(REPO, 100, "follow_up", False)]),
    ("Supersedes #3", [(REPO, 3, "follow_up", False)]),
    ("Stacked on #9", [(REPO, 9, "follow_up", False)]),
    ("This is a follow-up to the work in #9", [(REPO, 9, "follow_up", False)]),
    ("Reverts #4", [(REPO, 4, "reverts", False)]),
    ("revert: #4", [(REPO, 4, "reverts", False)]),
    ("Back out #850", [(REPO, 850, "reverts", False)]),
    # A revert of part of a PR says so before the number (redis #11178).
    ("Reverts most of the changes of #10969", [(REPO, 10969, "reverts", False)]),
    ("This partially reverts the work in #7", [(REPO, 7, "reverts", False)]),
    ("We should not revert the changes in a hurry, see #7", [(REPO, 7, "mention", False)]),
    ("This rolls back PR #12 for now", [(REPO, 12, "reverts", False)]),
    ("Backed out of the plan in #7", [(REPO, 7, "mention", False)]),
    ('Revert "Add multiply (#2)"', [(REPO, 2, "reverts", False)]),
    # Single quotes too (application-services #1165 reverts a merge commit by its subject); a
    # quoted word before the number is no reverted title.
    (
        "Revert 'Merge pull request #1157 from lyuyuan92/master' for general breakage",
        [(REPO, 1157, "reverts", False)],
    ),
    ("Revert 'foo' handling, see #12", [(REPO, 12, "mention", False)]),
    # Conventional-commit revert titles (vite), and a list of reverted PRs without commas.
    (
        'fix: revert "load sourcemaps (#11576)" (#11775)',
        [(REPO, 11576, "reverts", False), (REPO, 11775, "mention", False)],
    ),
    ('revert: "fix(css): spread options (#14024)"', [(REPO, 14024, "reverts", False)]),
    # A component prefix of tikv's kind: `*: ` for the whole tree, or a list of components.
    ('*: Revert "*: update rust-toolchain (#15584)"', [(REPO, 15584, "reverts", False)]),
    ('cdc, resolved_ts: Revert "track locks (#14)"', [(REPO, 14, "reverts", False)]),
    ("revert: fix(logger): truncate long logs (#16581)", [(REPO, 16581, "reverts", False)]),
    (
        "fix: revert #5601 #6025, keep the input",
        [(REPO, 5601, "reverts", False), (REPO, 6025, "reverts", False)],
    ),
    ("Revert to the old parser, see #12", [(REPO, 12, "mention", False)]),
    ("fix: the revert of #3 broke #4", [(REPO, 3, "mention", False), (REPO, 4, "mention", False)]),
    (
        'Revert "Add multiply (#2)"\n\nAs discussed in #5',
        [(REPO, 2, "reverts", False), (REPO, 5, "mention", False)],
    ),
    ("See acme/calc#11", [(REPO, 11, "mention", False)]),
    ("See ACME/Calc#11", [(REPO, 11, "mention", False)]),
    ("Fixes python/cpython#123", [("python/cpython", 123, "fixes", True)]),
    ("https://github.com/acme/calc/pull/77", [(REPO, 77, "mention", False)]),
    ("Fixes https://github.com/acme/calc/issues/78", [(REPO, 78, "fixes", False)]),
    (
        "see https://github.com/other/lib/issues/3#issuecomment-1",
        [("other/lib", 3, "mention", True)],
    ),
    ("see https://github.com/other/lib.git/pull/3", [("other/lib", 3, "mention", True)]),
    ("https://www.github.com/acme/calc/pulls/5", [(REPO, 5, "mention", False)]),
    # Ignored: code, quotes, HTML comments, anchors and entities that only look like references.
    ("use `#5` literally", []),
    ("```\nfixes #6\n```", []),
    ("~~~python\n# 7\nx = '#7'\n~~~\nreal #8", [(REPO, 8, "mention", False)]),
    ("> Fixes #9 (a quoted reply)\nmine", []),
    ("<!-- Fixes #10 -->", []),
    ("<!--\nfixes #10\n-->\nCloses #11", [(REPO, 11, "fixes", False)]),
    ("page.html#12", []),
    ("&#123;", []),
    ("https://example.com/#12", []),
    ("x#4", []),
    ("color #fff", []),
    ("#1234567890123 is not a number we store", []),
    ("", []),
]


@pytest.mark.parametrize(("text", "expected"), CASES, ids=[c[0][:40] or "empty" for c in CASES])
def test_extract_refs_table(text: str, expected: list[tuple[str, int, str, bool]]) -> None:
    found = [
        (r.target_repo, r.target_number, r.type, r.external)
        for r in extract_refs(text, "body", REPO)
    ]
    assert found == expected


def test_revert_commit_sha_is_a_commit_reference() -> None:
    refs = extract_refs("Revert foo\n\nThis reverts commit 0123abcd4567.", "commit", REPO)
    assert [(r.target_number, r.target_sha, r.type, r.found_in) for r in refs] == [
        (None, "0123abcd4567", "reverts", "commit")
    ]


def test_found_in_is_carried() -> None:
    assert {r.found_in for r in extract_refs("Fixes #1", "review", REPO)} == {"review"}


def test_evidence_is_the_sentence_around_the_reference() -> None:
    text = "We tried many things. In the end this follows up on #42 and closes the gap! Unrelated words."
    (ref,) = extract_refs(text, "body", REPO)
    assert ref.evidence == "In the end this follows up on #42 and closes the gap!"


def test_evidence_of_a_long_line_is_bounded_and_keeps_the_reference() -> None:
    text = "word " * 200 + "see #42 " + "tail " * 200
    (ref,) = extract_refs(text, "body", REPO)
    assert len(ref.evidence) <= EVIDENCE_CHARS
    assert "#42" in ref.evidence


def test_strip_ignored_keeps_positions() -> None:
    text = "a `#1` b\n<!-- #2 -->\n> #3\nc"
    stripped = strip_ignored(text)
    assert len(stripped) == len(text)
    assert stripped.count("\n") == text.count("\n")
    assert "#" not in stripped
    assert stripped.endswith("c")


def test_numbers_in_links_to_other_repositories_are_not_ours() -> None:
    body = (
        'Bumps <a href="https://github.com/other/tool/issues/5396">#5396</a> and '
        "[#77](https://github.com/other/tool/pull/77); see also #12 and "
        "[#78](https://github.com/acme/calc/pull/78)."
    )
    refs = extract_refs(body, "body", "acme/calc")
    ours = sorted({r.target_number for r in refs if not r.external})
    theirs = sorted({(r.target_repo, r.target_number) for r in refs if r.external})
    assert ours == [12, 78]
    assert theirs == [("other/tool", 77), ("other/tool", 5396)]


def test_wrapped_sentences_and_list_leads_are_the_evidence() -> None:
    body = "Contains the same changes as\n#17705.\n\nRelated:\n- #12\n- #13\n"
    refs = {r.target_number: r for r in extract_refs(body, "body", "acme/calc")}
    assert refs[17705].evidence == "Contains the same changes as #17705."
    assert refs[13].evidence == "Related: | - #13"
    follow = extract_refs("This is a follow-up to\n#44 with tests.", "body", "acme/calc")
    assert follow[0].type == "follow_up"
