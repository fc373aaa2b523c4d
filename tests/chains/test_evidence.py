"""Evidence classes, reverts, issue-only corroboration and the gap rule, each with its recorded reason."""

from __future__ import annotations

from sqlalchemy import Engine

from prchain.chains.building.build import build_chains
from prchain.chains.building.graph import load_graph
from prchain.chains.config import ChainsConfig
from prchain.chains.reading.cues import classify, prepares
from prchain.chains.views.sample import rewritten_lines
from tests.support.chain_store import StoreBuilder


def _graph(engine: Engine, **overrides: object):
    graph, _nodes, report = load_graph(engine, ChainsConfig(**overrides))
    return graph, report


def _rewrite(
    store: StoreBuilder, older: int, newer: int, lines: int = 1, rewritten: int | None = None
) -> None:
    """Give `older` a patch adding `lines` lines to core.py and `newer` one rewriting the first
    `rewritten` of them (all by default)."""
    head = "diff --git a/core.py b/core.py\n--- a/core.py\n+++ b/core.py\n"
    added = [f"PARSER_{i} = build_parser(config, {i})" for i in range(lines)]
    store.patches[older - 1]["diff"] = (
        head + f"@@ -1 +1,{lines + 1} @@\n x = 1\n" + "".join(f"+{a}\n" for a in added)
    )
    changed = added[: lines if rewritten is None else rewritten]
    store.patches[newer - 1]["diff"] = (
        head
        + f"@@ -1,{len(changed) + 1} +1,{len(changed) + 1} @@\n x = 1\n"
        + "".join(f"-{a}\n" for a in changed)
        + "".join(f"+{a[:-1]}, strict=True)\n" for a in changed)
    )


def test_each_wording_gets_its_class() -> None:
    assert classify("follow_up", "Follow-up to #12", 12)[0] == "strong"
    assert classify("fixes", "Fixes #12", 12)[0] == "strong"
    assert classify("mention", "This regressed in #12.", 12)[0] == "strong"
    # Round 38's plain mentions that said more: beets #96 "Addition to pull request #92", beets
    # #5815 "done mainly to prepare for" #5787; "in addition to" is a sibling's aside.
    assert classify("mention", "Addition to pull request #12 (lastgenre)", 12)[0] == "strong"
    prepare = "This is done mainly to prepare for #12, see also #9"
    assert classify("mention", prepare, 12)[0] == "strong" and prepares(prepare, 12)
    assert classify("mention", "In addition to #12, this adds a flag.", 12)[0] == "medium"
    assert classify("mention", "This extends #12 to lambdas", 12)[0] == "strong"
    assert classify("mention", "See #12.", 12)[0] == "medium"
    for parallel in (
        "Related: | - #12",
        "As in #12, we skip stubs",
        "Same as #12 but for sets",
        "Same basic approach as #12.",
        "Similar approach to #12",
        "This fix is independent of #12.",
    ):
        assert classify("mention", parallel, 12)[0] == "parallel", parallel
    assert (
        classify("issue_mediated", "#3 fixes #9, which #12 also refers to", 12)[0] == "issue_only"
    )
    assert classify("reverts", 'Revert "Add x (#12)"', 12)[0] == "revert"
    # The same change for another target, said right after the number (tokio, black).
    assert classify("mention", "Equivalent as #12, but for the MultiThread scheduler", 12)[0] == (
        "parallel"
    )
    assert classify("follow_up", "A follow up to #12 but for line ranges", 12)[0] == "parallel"
    assert classify("fixes", "Fixes #12 but for Windows only", 12)[0] == "strong"
    assert classify("follow_up", "Follow-up to #12; but for now the flag stays", 12)[0] == "strong"
    # "Related to #N" says no more than a plain mention (meilisearch #3538 fixes what a review
    # comment of #3524 it is "related to" pointed out); a "Related:" list names siblings, and a
    # hyphenated "cost-related" is no wording about #N at all.
    assert classify("mention", "Related to #12.", 12)[0] == "medium"
    assert classify("mention", "Related PRs: #12", 12)[0] == "parallel"
    assert classify("mention", "A cost-related change, see #12", 12)[0] == "medium"
    # Analogy wording about another number does not taint this one.
    assert classify("mention", "Similar to #11; the bug was introduced in #12", 12)[0] == "strong"
    # Words nearer the number that say it broke something govern it (temporal #6182); analogy
    # wording still wins when it is the nearer.
    fix = "Fix metrics to use endpoint name instead of ID (regression from #12)"
    assert classify("mention", fix, 12)[0] == "strong"
    assert classify("mention", "A regression fix in the same way as #12", 12)[0] == "parallel"


def test_classes_decide_edges_and_every_kept_edge_says_why(engine: Engine) -> None:
    store = StoreBuilder(engine)
    for n in range(1, 13):
        store.pr(n, ["core.py", f"f{n}.py"])
    _rewrite(store, older=3, newer=4, lines=3)
    _rewrite(store, older=11, newer=12, lines=3, rewritten=1)
    store.ref(2, 1, "follow_up", evidence="Follow-up to #1")
    store.ref(4, 3, "mention", evidence="See #3 for the parser.")  # and rewrites #3's 3 lines
    store.ref(10, 9, "mention", evidence="See #9 for the parser.")  # changes nothing #9 added
    # One of #11's three lines rewritten: a sibling's contact as often as a dependency.
    store.ref(12, 11, "mention", evidence="See #11 for the parser.")
    store.ref(6, 5, "mention", evidence="Related: | - #5")
    store.ref(6, 5, "mention", found_in="comment", evidence="cf. #5")  # vetoed by the analogy
    store.ref(8, 7, "mention", evidence="Same as #7, but for dict literals.")
    store.write()
    graph, report = _graph(engine)
    pid = store.pr_id
    assert set(graph.edges) == {(pid(2), pid(1)), (pid(4), pid(3))}
    strong, medium = graph[pid(2)][pid(1)], graph[pid(4)][pid(3)]
    assert (strong["evidence_class"], strong["strength"]) == ("strong", 3)
    assert (medium["evidence_class"], medium["strength"]) == ("medium", 2)
    assert strong["why"].startswith("strong: follow-up wording (follow_up in the body of #2")
    assert "file overlap 0.33" in strong["why"]
    assert report.dropped["parallel_wording"] == 2
    assert report.dropped["plain_mention_without_shared_lines"] == 1
    assert "the newer PR changes 3 line(s) the older one added (patch)" in medium["why"]
    assert report.dropped["plain_mention_little_contact"] == 1
    assert (pid(12), pid(11)) in _graph(engine, plain_mention_min_contact=1)[0].edges


def test_issue_only_links_need_code_evidence(engine: Engine) -> None:
    store = StoreBuilder(engine)
    store.pr(1, ["core.py"], author="ada")
    store.pr(2, ["core.py"], author="ada")  # same author, shared file, no shared lines: dropped
    store.pr(3, ["core.py"], author="bob")
    store.pr(4, ["core.py"], author="cy")  # other author, shared file, no shared lines: dropped
    store.pr(5, ["core.py"], author="dee")
    store.pr(6, ["core.py"], author="eve")  # rewrites a line #5 added: corroborated
    _rewrite(store, older=5, newer=6)
    for newer, older, issue in ((2, 1, 10), (4, 3, 11), (6, 5, 12)):
        store.ref(newer, older, "issue_mediated", via_issue=issue, found_in="issue")
    store.write()
    graph, report = _graph(engine)
    pid = store.pr_id
    assert set(graph.edges) == {(pid(6), pid(5))}
    assert "changing lines the older one added" in graph[pid(6)][pid(5)]["why"]
    assert report.dropped["issue_only_uncorroborated"] == 2
    loose, _ = _graph(engine, corroborate_issue_only=False)
    assert {(pid(2), pid(1)), (pid(4), pid(3))} <= set(loose.edges)


def test_an_issue_named_only_by_analogy_joins_no_pr_to_its_fixer(engine: Engine) -> None:
    """rust-clippy #7791 ("Similar to #7609") and #7621, which fixed #7609: sibling ports, linked
    through the issue and the names both define; the analogy makes them parallel."""
    store = StoreBuilder(engine)
    for n in range(1, 5):
        store.pr(n, ["core.py"])
    _rewrite(store, older=1, newer=2)
    _rewrite(store, older=3, newer=4)
    for fixer, referrer, issue, said in (
        (1, 2, 40, "Similar to #40, this gives reasons for types."),
        (3, 4, 41, "This finishes #41 for types."),
    ):
        store.issue_ref(fixer, issue, f"Fixes #{issue}", type="fixes")
        store.issue_ref(referrer, issue, said)
        store.ref(fixer, referrer, "issue_mediated", via_issue=issue, found_in="issue")
    store.write()
    graph, report = _graph(engine)
    pid = store.pr_id
    assert set(graph.edges) == {(pid(4), pid(3))}
    assert report.dropped["parallel_wording"] == 1
    dropped = next(d for d in report.links if d.older == pid(1))
    assert dropped.rule == "parallel_wording"
    assert "the shared issue #40 named by analogy 'Similar to'" in dropped.attrs["why"]


def test_after_rebasing_is_no_dependency_wording() -> None:
    # helix #2434: "integrate changes from #2676 after rebasing" carries #2676 forward, no more.
    assert classify("mention", "Integrate changes from #12 after rebasing.", 12)[0] == "medium"
    assert classify("mention", "Integrate changes from #12 after a rebase.", 12)[0] == "medium"
    assert classify("mention", "Only possible after #12 cleaned up the parser.", 12)[0] == "strong"


def _cache_history(
    engine: Engine, revert_title: str, revert_type: str, again: tuple[int, str, str]
) -> StoreBuilder:
    """#1 adds a cache, #2 (titled `revert_title`, referring to #1 as `revert_type`) reverts it,
    #3 adds it again and refers to `again` = (PR, type, evidence)."""
    store = StoreBuilder(engine)
    store.pr(1, ["core.py"], title="Add a cache")
    store.pr(2, ["core.py"], title=revert_title)
    store.pr(3, ["core.py"], title="Add a cache, again")
    store.ref(2, 1, revert_type, found_in="title", evidence=revert_title)
    store.ref(3, again[0], again[1], evidence=again[2])
    store.write()
    return store


def test_a_revert_links_the_reverting_pr_to_the_reverted_one(engine: Engine) -> None:
    relands = (2, "follow_up", "Re-lands #2's revert with the fix")
    store = _cache_history(engine, 'Revert "Add a cache (#1)"', "reverts", relands)
    graph, _ = _graph(engine)
    pid = store.pr_id
    edge = graph[pid(2)][pid(1)]
    assert (edge["evidence_class"], edge["strength"]) == ("revert", 3)
    summary = build_chains(ChainsConfig(revert_stages=True), engine)
    assert dict(summary.by_length) == {3: 1}
    # By default a revert inside a chain is no stage: "A, revert A, A again" leaves no chain.
    assert build_chains(ChainsConfig(), engine).chains_dropped["revert_stage"] == 1
    off, report = _graph(engine, revert_links=False)
    assert (pid(2), pid(1)) not in off.edges and report.dropped["revert_links_off"] == 1


def test_a_mention_mined_before_its_wording_was_known_is_read_again(engine: Engine) -> None:
    """A store mined before conventional-commit revert titles were known holds them as mentions;
    the builder reads them with today's rules, so a later attempt no longer builds on #1."""
    follows = (1, "follow_up", "Follow-up to #1, with the fix")
    store = _cache_history(engine, 'fix: revert "Add a cache (#1)"', "mention", follows)
    graph, report = _graph(engine)
    pid = store.pr_id
    assert graph[pid(2)][pid(1)]["evidence_class"] == "revert"
    assert report.dropped["older_reverted_before"] == 1


def test_links_spanning_too_long_a_gap_are_dropped(engine: Engine) -> None:
    store = StoreBuilder(engine)
    store.pr(1, ["core.py"], day=1)
    store.pr(2, ["core.py"], day=40)
    store.pr(3, ["core.py"], day=500)  # past strong_code_max_gap_days, shared lines or not
    store.ref(2, 1, "follow_up")
    store.ref(3, 2, "follow_up")
    store.write()
    graph, report = _graph(engine, max_gap_days=90)
    assert list(graph.edges) == [(store.pr_id(2), store.pr_id(1))]
    assert graph[store.pr_id(2)][store.pr_id(1)]["gap_days"] == 38.5
    assert report.dropped["gap_too_long"] == 1


def test_chains_under_the_substance_threshold_are_dropped(engine: Engine) -> None:
    store = StoreBuilder(engine)
    store.pr(1, ["src/core.py"], lines=30)
    store.pr(2, ["src/core.py", "tests/test_core.py"], lines=30)
    store.pr(3, [".github/workflows/ci.yml", "pyproject.toml"], lines=40)  # config only
    store.pr(4, [".github/workflows/ci.yml", "docs/ci.md"], lines=40)
    store.pr(5, ["src/util.py"], lines=20)  # each stage has substance, the pair has too little
    store.pr(6, ["src/util.py"], lines=20)
    store.ref(2, 1, "follow_up")
    # CI files hold no code lines: the stage rule drops the pair before any link rule reads it.
    store.ref(4, 3, "depends_on", evidence="Stacked on #3")
    store.ref(6, 5, "follow_up")
    store.write()
    summary = build_chains(ChainsConfig(min_chain_code_lines=50), engine)
    assert dict(summary.by_length) == {2: 1}  # #1 ← #2: 60 lines of code; tests do not count
    assert summary.chains_dropped["below_substance"] == 1
    rules = {(r.rule, r.level): r for r in summary.rules()}
    assert (rules["below_substance", "chain"].chains, rules["below_substance", "chain"].links) == (
        1,
        1,
    )
    # #3 and #4 change no code at all: neither may be a stage, so their link goes with them.
    assert rules["stage_below_substance", "pr"].prs == 2
    assert rules["stage_below_substance", "link"].links == 1


def test_the_sample_shows_rewritten_lines_by_where_the_older_pr_wrote_them(engine: Engine) -> None:
    """rolldown #5604 → #5607: the sample listed, as rewritten, lines of a file #5604 never
    touched, because their text matched a line it wrote elsewhere."""
    store = StoreBuilder(engine)
    store.pr(1, ["core.py", "util.py"])
    store.pr(2, ["core.py", "other.py"])
    store.patches[0]["diff"] = (
        "diff --git a/core.py b/core.py\n--- a/core.py\n+++ b/core.py\n"
        "@@ -1 +1,2 @@\n x = 1\n+PARSER = build_parser(config)\n"
        "diff --git a/util.py b/util.py\n--- a/util.py\n+++ b/util.py\n"
        "@@ -1 +1,2 @@\n y = 2\n+return render(node, depth + 1)\n"
    )
    store.patches[1]["diff"] = (
        "diff --git a/core.py b/core.py\n--- a/core.py\n+++ b/core.py\n"
        "@@ -1,2 +1,2 @@\n x = 1\n-PARSER = build_parser(config)\n+PARSER = build_parser()\n"
        "diff --git a/other.py b/other.py\n--- a/other.py\n+++ b/other.py\n"
        "@@ -1,2 +1,1 @@\n z = 3\n-return render(node, depth + 1)\n"
    )
    store.write()
    assert rewritten_lines(engine, store.pr_id(2), store.pr_id(1)) == [
        "core.py: PARSER = build_parser(config)",
        "other.py: return render(node, depth + 1)  (written by the older PR in another file)",
    ]
