"""Link precision rules on hand-built stores: reverts named by a branch commit, lineage that counts
only code (imports, comments and moves weigh less or nothing, more is needed as the gap grows), and
strong and stack wording that need some shared code."""

from __future__ import annotations

from sqlalchemy import Engine, insert

from prchain.chains.building.graph import load_graph
from prchain.chains.config import ChainsConfig
from prchain.chains.evidence.lines import Lineage, substantive
from prchain.chains.evidence.reverts import ShaIndex
from prchain.chains.reading.cues import stacked_wording
from prchain.chains.rules.decisions import LinkDecision
from prchain.chains.rules.link_rules import lineage_backs
from prchain.store.models import PRCommit
from tests.support.chain_store import StoreBuilder

CORE = [f"value_{i} = parse_headers(text, limit={i})" for i in range(8)]


def _diff(path: str, added: list[str], removed: list[str] = ()) -> str:  # type: ignore[assignment]
    body = "".join(f"-{line}\n" for line in removed) + "".join(f"+{line}\n" for line in added)
    return (
        f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n"
        f"@@ -1,{1 + len(removed)} +1,{1 + len(added)} @@\n def setup():\n{body}"
    )


def _set_patch(store: StoreBuilder, number: int, *diffs: str) -> None:
    patch = next(p for p in store.patches if p["pr_id"] == store.pr_id(number))
    patch["diff"] = "".join(diffs)


def _decisions(engine: Engine, **config: object) -> dict[tuple[int, int], LinkDecision]:
    # These cases weigh lineage a line at a time: a plain mention needs no more contact here.
    _, nodes, report = load_graph(
        engine, ChainsConfig(**{"plain_mention_min_contact": 0, **config})
    )
    number = {pr_id: node.number for pr_id, node in nodes.items()}
    return {(number[d.newer], number[d.older]): d for d in report.links}


def test_a_revert_of_a_branch_commit_is_seen(engine: Engine) -> None:
    store = StoreBuilder(engine)
    store.pr(20, ["calc/a.py"])
    store.pr(21, ["calc/a.py"], title='Revert "Change 20"', body="This reverts commit abcdef0123.")
    store.pr(22, ["calc/a.py"], day=25)  # opened after the revert merged
    store.ref(22, 20, "follow_up", evidence="Follow-up to #20")
    store.write()
    branch = "abcdef0123" + "4" * 30  # a commit of #20's branch, not its merge commit
    with engine.begin() as conn:
        conn.execute(insert(PRCommit), [{"pr_id": store.pr_id(20), "sha": branch, "message": "x"}])
    links = _decisions(engine)
    assert links[21, 20].rule is None and links[21, 20].attrs["evidence_class"] == "revert"
    assert links[21, 20].attrs["evidence"][0]["text"] == "This reverts commit abcdef0123."
    # #22 starts from a base without #20's change: no link to it.
    assert links[22, 20].rule == "older_reverted_before"


def test_a_revert_named_only_by_the_reverted_title_is_seen(engine: Engine) -> None:
    """tikv #15787, titled `Revert "<#15013's title>"` with a body of its own and no sha: it
    undid #15013, so #15795, which re-landed the change, does not build on #15013's code."""
    store = StoreBuilder(engine)
    store.pr(10, ["calc/a.py"], title="Check the region epoch")  # an older PR of the same title
    store.pr(20, ["calc/a.py"], day=12, title="Check the region epoch")
    store.pr(21, ["calc/a.py"], day=13, title='Revert "Check the region epoch"', body="close #99")
    store.pr(22, ["calc/a.py"], day=14, title='Revert "A title no PR has"')
    store.pr(23, ["calc/a.py"], day=20, title="Check the region epoch")
    store.ref(23, 20, "follow_up", evidence="Follow-up to #20")
    store.ref(21, 20, "mention", evidence="See #20")
    store.write()
    links = _decisions(engine)
    assert links[21, 20].attrs["evidence_class"] == "revert"
    assert {(e["found_in"], e["text"]) for e in links[21, 20].attrs["evidence"]} >= {
        ("title", 'Revert "Check the region epoch"')
    }
    assert links[23, 20].rule == "older_reverted_before"
    assert not {pair for pair in links if 10 in pair or 22 in pair}


def test_a_short_sha_names_one_pr_or_none() -> None:
    index = ShaIndex(
        merges=[("aaaa111" + "0" * 33, 1)],
        commits=[("bbbb222" + "1" * 33, 2), ("cccc333" + "2" * 33, 3), ("cccc333" + "2" * 33, 4)],
    )
    assert index.find("aaaa111") == 1 and index.find("BBBB2221") == 2
    assert index.find("cccc333") is None  # in two PRs' branches
    assert index.find("bbbb22") is None  # too short to trust
    assert index.find("dddd444") is None


def test_lineage_counts_code_not_imports_comments_or_moves(engine: Engine) -> None:
    store = StoreBuilder(engine, rewrite_shared=False)
    imports = ["from calc.parser import HeaderParser", "# headers keep their order here"]
    for number, day in ((1, 1), (2, 3), (3, 4), (4, 400), (5, 401)):
        store.pr(number, ["calc/core.py", "calc/moved.py"], day=day)
        if number > 1:
            store.ref(number, 1, "mention", evidence="See #1.")
    _set_patch(store, 1, _diff("calc/core.py", imports + CORE))
    _set_patch(store, 2, _diff("calc/core.py", ["x = 1"], imports))  # import and comment only
    _set_patch(store, 3, _diff("calc/core.py", ["value_0 = 0"], CORE[:1]))  # one rewritten line
    # 400 days on: a move of two lines (they reappear in another file) weighs one line ...
    _set_patch(
        store, 4, _diff("calc/core.py", [], CORE[:2]), _diff("calc/moved.py", CORE[:2] + ["y"])
    )
    # ... five rewritten lines are enough there (0.75 per 90 days: 3.3 needed).
    _set_patch(store, 5, _diff("calc/core.py", ["values = table()"], CORE[:5]))
    store.write()
    links = _decisions(engine)
    assert (links[2, 1].rule, links[2, 1].attrs["lineage"]) == (
        "plain_mention_without_shared_lines",
        0,
    )
    assert (links[3, 1].rule, links[3, 1].attrs["lineage"]) == (None, 1)
    moved = links[4, 1]
    assert (moved.attrs["lineage"], moved.attrs["lineage_moved"]) == (2, 2)
    assert moved.rule == "plain_mention_without_shared_lines"
    assert "2 of them only moved" in moved.attrs["why"]
    assert (links[5, 1].rule, links[5, 1].attrs["lineage"]) == (None, 5)


def test_a_search_and_replace_over_the_older_prs_lines_is_no_lineage(engine: Engine) -> None:
    """scipy #416 writes `numpy.abs(` for `abs(` on 31 lines, 3 of them #415's: the same edit made
    over and over is no code built on #415's. The lines one edits each its own way are, and so are
    lines edited alike where the edit is aimed at the older PR's code (ruff #10254 puts the
    condition into the four messages #8613 wrote). Reformatting is no edit, aimed or not
    (dialoguer #126 runs rustfmt over the prompt #124 wrote)."""
    store = StoreBuilder(engine, rewrite_shared=False)
    for number in (1, 2, 3, 4, 5):
        store.pr(number, ["calc/core.py"], day=number)
        if number > 1:
            store.ref(number, 1, "mention", evidence="See #1.")
    _set_patch(store, 1, _diff("calc/core.py", CORE))
    others = [f"total_{i} = parse_headers(body, limit={i})" for i in range(5)]
    rewritten = CORE[:3] + others
    replaced = [line.replace("parse_headers(", "http.parse_headers(") for line in rewritten]
    _set_patch(store, 2, _diff("calc/core.py", replaced, rewritten))
    own = [line.replace("text", f"chunk_{i}") for i, line in enumerate(CORE[:3])]
    _set_patch(store, 3, _diff("calc/core.py", own, CORE[:3]))
    aimed = [line.replace("parse_headers(", "http.parse_headers(") for line in CORE[:3]]
    _set_patch(store, 4, _diff("calc/core.py", aimed, CORE[:3]))
    wrapped = [part for line in CORE[:3] for part in line.replace("(", "(\n    ").split("\n")]
    _set_patch(store, 5, _diff("calc/core.py", wrapped, CORE[:3]))
    store.write()
    links = _decisions(engine)
    replace = links[2, 1]
    assert (replace.attrs["lineage"], replace.attrs["lineage_moved"]) == (3, 3)
    assert replace.rule == "plain_mention_without_shared_lines"
    assert "3 of them only moved or carried" in replace.attrs["why"]
    for number in (3, 4):
        link = links[number, 1]
        assert (link.rule, link.attrs["lineage"], link.attrs["lineage_moved"]) == (None, 3, 0)
    wrap = links[5, 1]
    assert (wrap.attrs["lineage"], wrap.attrs["lineage_moved"]) == (3, 3), wrap.attrs["why"]


def test_the_lineage_needed_grows_with_the_gap() -> None:
    config = ChainsConfig()
    assert lineage_backs(Lineage(1, "blame"), 30, config)
    assert not lineage_backs(Lineage(1, "blame", moved=1), 30, config)  # half a line
    assert lineage_backs(Lineage(2, "blame"), 200, config)  # 200 days: 1.7 lines
    assert not lineage_backs(Lineage(9, "blame", moved=9), 866, config)  # 4.5 of 7.2
    assert lineage_backs(Lineage(8, "blame"), 866, config)
    assert not lineage_backs(Lineage(), 1, config)
    # Lines of the older PR's tests weigh half, and only beside lines of its code (black #4222
    # rewrites one line of #3846's code and three of its tests, 158 days later: 1.3 needed).
    assert not lineage_backs(Lineage(0, "blame", tests=6), 30, config)
    assert not lineage_backs(Lineage(1, "blame"), 158, config)
    assert lineage_backs(Lineage(1, "blame", tests=3), 158, config)
    # Moves alone back nothing either (oxc #7351 moved two match arms of #7350 in a reorder).
    assert not lineage_backs(Lineage(2, "blame", moved=2), 10, config)
    assert lineage_backs(Lineage(2, "blame", moved=1), 10, config)


def test_strong_and_stack_wording_need_shared_code(engine: Engine) -> None:
    store = StoreBuilder(engine, rewrite_shared=False)
    for number in range(10, 15):
        store.pr(number, ["calc/shell.py"])
    store.ref(11, 10, "follow_up", evidence="Follow up to #10")  # a parallel change of the file
    # Stacked to merge in order: a branch on top of a sibling it shares no code with (rolldown
    # #9893, "Stacked on #9892.", removes another plugin than #9892 does).
    store.ref(12, 10, "follow_up", evidence="Stacked on #10, which adds the table.")
    store.ref(13, 10, "follow_up", evidence="Follow up to #10")
    _set_patch(store, 13, _diff("calc/shell.py", ["value_0 = 0"], CORE[:1]))
    store.ref(14, 10, "mention", evidence="The changes in #10 caused an overflow in debug builds.")
    store.pr(15, ["calc/shell.py"])
    store.ref(15, 10, "follow_up", evidence="Follow up to #10")  # edits only #10's comment
    for number in (18, 20, 22):
        store.pr(number, ["calc/shell.py"])
    for number, named, words, path in (
        # Split-off wording said by the newer PR of one merged before: a leftover (tokio's
        # "Extracted from #1152"); said by the older PR of the newer, a stack needing code.
        (16, 10, "Extracted from #10.", "calc/shell.py"),
        (17, 18, "Split out of #18 so that it can land first.", "calc/shell.py"),
        # The PR merged first saying it exists for the other keeps the link on its words alone.
        (19, 20, "This is a prerequisite for #20.", "calc/shell.py"),
        # Regression wording in the PR merged first names a bug of a branch still open (xarray
        # #10741, "Fixes regression from #10726"): no fix of the other's merged code.
        (21, 22, "Fixes a regression from #22.", "calc/other.py"),
        (23, 22, "Fixes a regression from #22.", "calc/other.py"),
    ):
        store.pr(number, [path])
        store.ref(number, named, "mention", evidence=words)
    _set_patch(store, 10, _diff("calc/shell.py", [*CORE, "# the table is read once per run"]))
    _set_patch(
        store, 15, _diff("calc/shell.py", ["# read lazily"], ["# the table is read once per run"])
    )
    store.write()
    links = _decisions(engine)
    assert links[11, 10].rule == links[14, 10].rule == "wording_without_shared_code"
    assert links[16, 10].rule == links[18, 17].rule == "wording_without_shared_code"
    assert links[12, 10].rule == "wording_without_shared_code" and links[13, 10].rule is None
    assert links[20, 19].rule is None
    assert links[22, 21].rule == "too_little_file_overlap" and links[23, 22].rule is None
    # A comment of the older PR the newer one edits is weak, but some, shared code.
    assert (links[15, 10].rule, links[15, 10].attrs["lineage"]) == (None, 0)
    assert "edits 1 line(s) the older one added that hold no code" in links[15, 10].attrs["why"]
    # Stack wording alone keeps its links when stack_needs_code is off (split-off wording of a
    # PR merged before still does not), and no wording needs code with strong_needs_code off.
    lenient = _decisions(engine, stack_needs_code=False)
    assert lenient[12, 10].rule is None and lenient[18, 17].rule is None
    assert lenient[16, 10].rule == "wording_without_shared_code"
    assert _decisions(engine, strong_needs_code=False)[11, 10].rule is None


def test_strong_wording_and_code_hold_a_link_over_the_gap_for_a_year(engine: Engine) -> None:
    store = StoreBuilder(engine, rewrite_shared=False)
    store.pr(30, ["calc/core.py"], day=1)
    _set_patch(store, 30, _diff("calc/core.py", CORE))
    rewrite = _diff("calc/core.py", ["value_0 = 0"], CORE[:1])  # one of #30's lines
    # 200 days on, one rewritten line alone is too little (1.7 needed), and so is the wording
    # alone; both together hold. Past a year they do not; nor does the older PR's wording.
    # Numbers follow opening order (a PR is opened before any later-numbered one merges).
    for number, day, words, diff in (
        (31, 200, "Follow-up to #30: the first value starts at zero.", rewrite),
        (36, 500, "Follow-up to #30: the first value starts at zero.", rewrite),
        (33, 200, "Follow-up to #30: parse lazily.", _diff("calc/core.py", ["lazy = True"])),
        (34, 200, "See #30.", rewrite),
    ):
        store.pr(number, ["calc/core.py"], day=day)
        store.ref(number, 30, "mention", evidence=words)
        _set_patch(store, number, diff)
    store.pr(35, ["calc/core.py"], day=200)
    store.ref(30, 35, "mention", evidence="Follow-up in #35.")
    _set_patch(store, 35, rewrite)
    store.write()
    links = _decisions(engine)
    assert (links[31, 30].rule, links[31, 30].attrs["lineage"]) == (None, 1)
    assert links[31, 30].attrs["gap_days"] > ChainsConfig().max_gap_days
    assert links[36, 30].rule == links[33, 30].rule == links[35, 30].rule == "gap_too_long"
    assert links[34, 30].rule == "plain_mention_without_shared_lines"
    assert _decisions(engine, strong_code_max_gap_days=0)[31, 30].rule == "gap_too_long"


def test_two_rewritten_lines_back_a_named_link_at_any_age(engine: Engine) -> None:
    store = StoreBuilder(engine, rewrite_shared=False)
    store.pr(60, ["calc/core.py"], day=1)
    _set_patch(store, 60, _diff("calc/core.py", CORE))
    # Three years on (the gap alone would ask for 9.1 lines): #61 and #63 rewrite two of #60's
    # lines, #62 one; #63 is linked only through an issue both name.
    for number, rewritten in ((61, 2), (62, 1), (63, 2)):
        store.pr(number, ["calc/core.py"], day=1100)
        _set_patch(
            store,
            number,
            _diff(
                "calc/core.py",
                [f"value_{i} = parse_headers(text, limit={i + 10})" for i in range(rewritten)],
                CORE[:rewritten],
            ),
        )
    store.ref(61, 60, "mention", evidence="The limits #60 set are too low for large headers.")
    store.ref(62, 60, "mention", evidence="The limits #60 set are too low for large headers.")
    store.ref(
        63, 60, "issue_mediated", evidence="#63 fixes #9, which #60 also refers to", via_issue=9
    )
    store.write()
    links = _decisions(engine)
    assert (links[61, 60].rule, links[61, 60].attrs["lineage"]) == (None, 2)
    assert links[61, 60].attrs["gap_days"] > 1000
    assert links[62, 60].rule == "plain_mention_without_shared_lines"
    assert links[63, 60].rule is None
    # Without the bound, the need grows with the gap and both are dropped.
    unbounded = _decisions(engine, lineage_max_lines=0)
    assert unbounded[61, 60].rule == "plain_mention_without_shared_lines"
    assert unbounded[63, 60].rule == "issue_only_uncorroborated"


def test_code_written_back_backs_a_link_as_rewritten_code_does(engine: Engine) -> None:
    store = StoreBuilder(engine, rewrite_shared=False)
    store.pr(40, ["calc/core.py"], day=1)
    _set_patch(store, 40, _diff("calc/core.py", ["values = table()"], CORE[:4]))  # removes 4
    # A plain mention, a shared issue: #41 writes back three of the lines #40 removed, #42 two
    # (one common line comes back by chance), #44 three again but two years on: more than
    # lineage_max_lines (2), though the gap alone would ask for 5.8.
    for number, day, back in ((41, 10, 3), (42, 10, 2), (44, 700, 3)):
        store.pr(number, ["calc/core.py"], day=day)
        store.ref(number, 40, "mention", evidence="Brings back what #40 dropped.")
        _set_patch(store, number, _diff("calc/core.py", CORE[:back]))
    store.pr(43, ["calc/core.py"], day=10)
    store.ref(
        43, 40, "issue_mediated", evidence="#43 fixes #7, which #40 also refers to", via_issue=7
    )
    _set_patch(store, 43, _diff("calc/core.py", CORE[:3]))
    store.write()
    links = _decisions(engine)
    assert links[41, 40].rule is None and links[41, 40].attrs["lineage"] == 0
    assert "writes back 3 line(s)" in links[41, 40].attrs["why"]
    assert links[42, 40].rule == "plain_mention_without_shared_lines"
    assert links[44, 40].rule is None and links[44, 40].attrs["gap_days"] > 690
    unbounded = _decisions(engine, lineage_max_lines=0)
    assert unbounded[44, 40].rule == "plain_mention_without_shared_lines"
    assert links[43, 40].rule is None
    assert "corroborated by the newer PR writing back lines" in links[43, 40].attrs["why"]


def test_a_link_through_an_umbrella_issue_stands_on_code_alone(engine: Engine) -> None:
    store = StoreBuilder(engine, rewrite_shared=False)
    store.pr(50, ["calc/core.py"], day=1)
    _set_patch(store, 50, _diff("calc/core.py", CORE))
    # Issue #300 tracks a series of six PRs: an umbrella. #51 rewrites one of #50's lines, the
    # others change the same file elsewhere.
    for number in range(51, 56):
        store.pr(number, ["calc/core.py"], day=number - 45)
        store.ref(number, 50, "issue_mediated", via_issue=300, found_in="issue")
        _set_patch(store, number, _diff("calc/core.py", [f"step_{number} = {number}"]))
    _set_patch(store, 51, _diff("calc/core.py", ["value_0 = 0"], CORE[:1]))
    store.write()
    links = _decisions(engine)
    assert links[51, 50].rule is None and links[51, 50].attrs["lineage"] == 1
    assert {links[n, 50].rule for n in range(52, 56)} == {"issue_only_uncorroborated"}
    ignored = _decisions(engine, umbrella_links_with_code=False)
    assert {ignored[n, 50].rule for n in range(51, 56)} == {"umbrella_issue"}


def test_lines_and_words_the_rules_read() -> None:
    assert not substantive("use crate::shell::Progress;") and not substantive("// TODO: later")
    assert not substantive("pub(crate) mod hyperlink;") and not substantive('"""Docs."""')
    assert substantive("#[derive(Debug, Clone)]") and substantive("*self.count += 1;")
    assert stacked_wording("This is split out from #26349 so it can land first.", 26349)
    assert stacked_wording("Part 2 of the parser work; requires #12.", 12)
    assert not stacked_wording("I need features that require push to a registry, e.g. #12.", 12)
    assert not stacked_wording("Follow-up to #1: the calculator also needs products.", 1)
    assert stacked_wording("After #13918 has landed, negation became easy.", 13918)
    assert stacked_wording("It reuses the abstraction added in #26622.", 26622)
    # Only the sentence holding the reference counts.
    assert not stacked_wording("Follow up to #5. This is stacked on nothing.", 5)
