"""The reference graph over hand-built stores: which references become edges, and why others do not."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine

from prchain.chains.building.graph import load_graph
from prchain.chains.config import ChainsConfig
from prchain.chains.reading.cues import mention_cue
from prchain.chains.reading.paths import is_doc_path, is_lockfile
from prchain.chains.rules.filters import is_bot
from prchain.dev.repos import make_chain_repo
from tests.support.chain_store import StoreBuilder


def _graph(engine: Engine, **overrides: object):
    graph, nodes, report = load_graph(engine, ChainsConfig(**overrides))
    return graph, report


def test_edges_point_from_newer_to_older_with_strength_and_overlap(engine: Engine) -> None:
    store = StoreBuilder(engine)
    a, b, c = (
        store.pr(1, ["calc/ops.py"]),
        store.pr(2, ["calc/ops.py", "calc/x.py"]),
        store.pr(3, ["calc/ops.py"]),
    )
    store.ref(2, 1, "follow_up", evidence="Follow-up to #1")
    store.ref(3, 2, "fixes", evidence="Fixes #2")
    store.ref(3, 2, "mention", found_in="comment", evidence="as #2 introduced")
    store.write()
    graph, report = _graph(engine)
    assert set(graph.edges) == {(b, a), (c, b)}
    edge = graph[c][b]
    assert edge["types"] == ["fixes", "mention"]
    assert edge["strength"] == 3
    assert edge["overlap"] == 0.5
    assert edge["evidence"][0]["text"] == "Fixes #2"
    assert report.nodes == 3 and report.edges == 2


def test_a_reference_from_the_older_pr_is_oriented_by_time(engine: Engine) -> None:
    store = StoreBuilder(engine)
    store.pr(1, ["a.py"])
    store.pr(2, ["a.py"])
    # #1 was merged before #2 was opened, yet #1's later comment names #2: still #2 builds on #1.
    store.ref(1, 2, "mention", found_in="comment", evidence="this regressed in #2")
    store.write()
    graph, _ = _graph(engine)
    assert list(graph.edges) == [(store.pr_id(2), store.pr_id(1))]


def test_overlapping_lifetimes_give_no_edge(engine: Engine) -> None:
    store = StoreBuilder(engine)
    store.pr(1, ["a.py"], day=5, created_day=1)
    store.pr(2, ["a.py"], day=6, created_day=2)  # opened before #1 merged
    store.ref(2, 1, "follow_up")
    store.write()
    graph, report = _graph(engine)
    assert graph.number_of_edges() == 0
    assert report.dropped["not_merged_before_created"] == 1


def test_a_pr_stacked_on_an_open_one_links_to_it(engine: Engine) -> None:
    """clippy's "parsing revamp part 4/N", based on part 3 while both were open."""
    store = StoreBuilder(engine)
    store.pr(1, ["a.py"], day=5, created_day=1)
    store.pr(2, ["a.py"], day=6, created_day=2)  # opened before #1 merged, on top of it
    store.pr(3, ["b.py"], day=7, created_day=3)
    store.pr(4, ["c.py"], day=8, created_day=4)
    store.pr(5, ["c.py"], day=9, created_day=4)  # opened with #4, which prepares it
    store.pr(6, ["c.py"], day=10, created_day=5)
    store.ref(2, 1, "follow_up", evidence="Based on #1. Part 4 of the parser revamp")
    store.pr(9, ["e.py"], day=13, created_day=7)
    store.pr(10, ["e.py"], day=14, created_day=7)  # opened before #9, rebased on it (wgpu #907)
    store.ref(10, 9, evidence="Should be merged first: #9")
    # Said by the PR merged first, stacking wording orients nothing ...
    store.ref(1, 3, evidence="Depends on #3")
    store.ref(4, 6, evidence="See #6 for the rest.")
    # ... but saying it prepares the other does (rust-analyzer #7021, "Groundwork for #6966").
    store.ref(4, 5, evidence="Groundwork for #5.")
    # ... or the issue the other fixes (rust-analyzer #7021, "Groundwork for #6966", and #7030).
    store.pr(7, ["d.py"], day=11, created_day=6)
    store.pr(8, ["d.py"], day=12, created_day=6)
    store.issue_ref(7, 90, "Groundwork for #90")
    store.issue_ref(8, 90, "Fixes #90", type="fixes")
    store.ref(8, 7, "issue_mediated", via_issue=90, found_in="issue")
    store.write()
    graph, report = _graph(engine)
    pid = store.pr_id
    assert set(graph.edges) == {
        (pid(2), pid(1)),
        (pid(5), pid(4)),
        (pid(8), pid(7)),
        (pid(10), pid(9)),
    }
    assert graph[pid(8)][pid(7)]["cue"] == "prepares the shared issue #90"
    assert report.dropped["not_merged_before_created"] == 2


def test_weak_and_parallel_mentions_are_dropped(engine: Engine) -> None:
    store = StoreBuilder(engine)
    for n in range(1, 7):
        store.pr(n, ["core.py", f"f{n}.py"] if n < 5 else [f"only{n}.py"])
    store.ref(2, 1, "mention", evidence="Similar to #1, but for lambdas")  # parallel work
    store.ref(3, 2, "mention", evidence="introduced in #2")  # cue: builds on it
    store.ref(4, 3, "mention", evidence="#3.")  # plain mention (medium), overlap 1/3: kept
    store.ref(6, 5, "follow_up", evidence="Follow-up to #5")  # no shared file at all
    store.write()
    # Changed-line evidence for plain mentions is tested in test_evidence.py.
    graph, report = _graph(engine, medium_needs_lines=False)
    pid = store.pr_id
    assert set(graph.edges) == {(pid(3), pid(2)), (pid(4), pid(3))}
    assert graph[pid(3)][pid(2)]["strength"] == 3  # dependency wording: strong
    assert graph[pid(4)][pid(3)]["strength"] == 2
    assert report.dropped["parallel_wording"] == 1
    assert report.dropped["too_little_file_overlap"] == 1


def test_issue_mediated_links_and_umbrella_issues(engine: Engine) -> None:
    store = StoreBuilder(engine)
    for n in range(1, 9):
        store.pr(n, ["core.py"])
    store.ref(
        2,
        1,
        "issue_mediated",
        via_issue=100,
        found_in="issue",
        evidence="#2 fixes #100, which #1 also refers to",
    )
    for n in range(4, 9):  # issue 200 links six PRs: a tracking issue
        store.ref(n, 3, "issue_mediated", via_issue=200, found_in="issue")
    store.write()
    # Corroboration of issue-only links by code is tested in test_evidence.py.
    graph, report = _graph(engine, corroborate_issue_only=False)
    assert list(graph.edges) == [(store.pr_id(2), store.pr_id(1))]
    assert report.dropped["umbrella_issue"] == 5


def test_filters_remove_bots_releases_syncs_docs_lockfiles_reverted_and_huge(
    engine: Engine,
) -> None:
    store = StoreBuilder(engine)
    store.pr(1, ["calc/a.py"])
    store.pr(2, ["calc/a.py"], author="renovate[bot]")
    store.pr(3, ["docs/guide.md", "README.md"])
    store.pr(4, ["Cargo.lock"])
    store.pr(5, ["calc/a.py"])
    store.pr(6, ["calc/a.py"])  # reverts #5
    store.pr(7, ["calc/big.py"])
    store.files[-1]["additions"] = 5000
    store.pr(8, ["calc/a.py", "tests/snapshots/big.snap"])
    store.files[-1]["additions"] = 5000  # test data does not count towards the size limit
    # A release by a maintainer (oxc's "release(apps): oxlint v1.29.0"): no bot, still no stage.
    store.pr(9, ["Cargo.toml", "calc/a.py"], title="release(apps): oxlint v1.29.0")
    store.pr(10, ["calc/a.py"], title="Release the lock before the write")
    # Release bookkeeping worded around the version (arrow-rs, pydantic), and backports: the change
    # is another PR's again (pytest's backport bot, a backport branch's merge, pydantic's "v1.7 patch").
    store.pr(11, ["calc/a.py", "CHANGELOG.md"], title="Prepare for 8.0.0 release: Update CHANGELOG")
    store.pr(12, ["calc/a.py"], title="[8.3.x] Fix the parser on empty input (#5)")
    store.pr(13, ["calc/a.py"], title="Merge pull request #13 from ada/backport-5")
    store.pr(14, ["calc/a.py"], title="v1.7 patch (currently v1.7.3)")
    store.pr(15, ["calc/a.py"], title="Include `backports.strenum` in `deprecated-imports`")
    store.pr(16, ["calc/a.py"], title="Fix 1.2 parsing in the changelog reader")
    # A sync with an upstream on a timer (incubator-gluten's 777 daily version updates), and a
    # fix that only speaks of one.
    store.pr(17, ["calc/a.py"], title="[GLUTEN-1632][CH]Daily Update Clickhouse Version (20250405)")
    store.pr(18, ["calc/a.py"], title="Fix the daily update of the cache")
    # Upgrades by shape, whoever wrote them; an upgrade of the code's own is no bump.
    store.pr(19, ["calc/a.py"], title="fix(deps): Update module golang.org/x/net to v0.23.0")
    store.pr(20, ["calc/a.py"], title="Bump serde from 1.0.1 to 1.0.2", author="Ada")
    store.pr(21, ["calc/a.py"], title="Update the parser to the v2 grammar")
    store.ref(6, 5, "reverts", evidence="Revert #5")
    store.write()
    graph, report = _graph(engine, filters={"skip_reverted": True})
    assert sorted(graph) == [store.pr_id(n) for n in (1, 6, 8, 10, 15, 16, 18, 21)]
    assert dict(report.filtered.removed) == {
        "bot": 1,
        "docs_only": 1,
        "lockfile_only": 1,
        "reverted": 1,
        "patch_too_large": 1,
        "release": 2,
        "backport": 3,
        "scheduled_sync": 1,
        "dependency_bump": 2,
    }
    graph, _ = _graph(
        engine,
        filters={
            "skip_bots": False,
            "skip_reverted": False,
            "skip_releases": False,
            "skip_backports": False,
            "skip_scheduled": False,
            "skip_dependency_bumps": False,
            "max_patch_lines": 10_000,
        },
    )
    assert all(store.pr_id(n) in graph for n in (2, 5, 7, 9, 11, 12, 13, 14, 17, 19, 20))


def test_a_branch_sync_that_carries_other_prs_is_no_stage(engine: Engine) -> None:
    """pytest's "Merge master into features": its commits are #1's and #2's, and its texts repeat
    their references; a PR stacked on #1 brings #1's commit too, but carries only that one."""
    store = StoreBuilder(engine)
    store.pr(1, ["calc/a.py"])
    store.pr(2, ["calc/b.py"])
    store.pr(3, ["calc/a.py", "calc/b.py"], title="Merge master into features")
    store.pr(4, ["calc/a.py"], title="Build on the parser")
    store.pr(5, ["calc/c.py"], title="Merge main into features")  # one PR's commits: not a sync
    store.commit(1, "a1")
    store.commit(2, "b1")
    store.commit(2, "b2", "Merge pull request #9 from ada/b")  # an unmined PR merged on the branch
    for sha in ("a1", "b1", "b2"):
        store.commit(3, sha)
    store.commit(3, "c1", "Merge branch 'master' into features")
    store.commit(4, "a1")
    store.commit(4, "d1")
    store.commit(5, "a1")
    store.commit(5, "e1")
    store.ref(3, 1, evidence="Fixes #1 again")  # the carried PR's text, repeated by the sync
    store.ref(4, 1, "follow_up", evidence="Follow-up to #1")
    # bors's rollup: the rolled-up PRs were never merged apart, so their commits are its own first,
    # but it merges them itself.
    store.pr(6, ["calc/d.py"], title="Rollup of 2 pull requests")
    for n, sha in enumerate(("f1", "f2", "f3", "f4", "f5")):
        store.commit(6, sha, f"Work {n}")
    store.commit(6, "f6", "Rollup merge of #11 - ada:parser, r=bob")
    store.commit(6, "f7", "Rollup merge of #12 - eve:lexer, r=bob")
    # meilisearch's release PRs bring `stable` into `main` with the bors merges made on it.
    store.pr(7, ["calc/e.py"], title="v0.27.0: bring `stable` into `main`")
    store.commit(7, "g1", "Merge #21\n\n21: Fix the update loop r=ada a=bob")
    store.commit(7, "g2", "Auto merge of #22 - eve:fix, r=bob")
    store.commit(7, "g3", "Update the version")
    store.write()
    graph, report = _graph(engine)
    assert store.pr_id(3) not in graph and store.pr_id(4) in graph and store.pr_id(5) in graph
    assert store.pr_id(6) not in graph and store.pr_id(7) not in graph
    assert report.filtered.removed["carries_other_prs"] == 3
    assert (store.pr_id(4), store.pr_id(1)) in graph.edges, report.dropped
    graph, _ = _graph(engine, filters={"skip_carriers": False})
    assert store.pr_id(3) in graph


def test_ancestry_in_a_real_clone(engine: Engine, tmp_path: Path) -> None:
    repo = make_chain_repo(tmp_path / "calc")
    store = StoreBuilder(engine, clone_path=str(repo.path))
    for number, info in repo.prs.items():
        store.pr(number, ["calc/ops.py"], base_sha=info.base_sha, merge_commit_sha=info.merge_sha)
    store.ref(2, 1, "follow_up")
    store.ref(3, 2, "fixes")
    store.write()
    graph, report = _graph(engine)
    assert graph.number_of_edges() == 2
    # Pretend #3 branched off before #2 landed: #2's merge is then not in #3's base history.
    with engine.begin() as conn:
        from sqlalchemy import update

        from prchain.store.models import PullRequest

        conn.execute(
            update(PullRequest)
            .where(PullRequest.number == 3)
            .values(base_sha=repo.prs[1].merge_sha)
        )
    graph, report = _graph(engine)
    assert list(graph.edges) == [(store.pr_id(2), store.pr_id(1))]
    assert report.dropped["not_an_ancestor"] == 1
    graph, _ = _graph(engine, check_ancestry=False)
    assert graph.number_of_edges() == 2


def test_path_and_author_classifiers() -> None:
    assert (
        is_bot("dependabot[bot]")
        and is_bot("renovate")
        and not is_bot("Eric Botti")
        and not is_bot(None)
    )
    assert (
        is_doc_path("docs/api/index.rst")
        and is_doc_path("CHANGELOG.md")
        and not is_doc_path("requirements.txt")
    )
    assert not is_doc_path("src/doc_utils.py")
    assert is_lockfile("web/package-lock.json") and not is_lockfile("Cargo.toml")
    assert mention_cue("Like #5772, but for subscripts.") == "parallel"
    assert mention_cue("This is setup for #18996, which will") == "dependent"
    assert mention_cue("https://github.com/acme/calc/pull/12.") == "none"


def test_a_merge_among_a_prs_commits_names_prs_it_brings_along_not_ones_it_builds_on(
    engine: Engine,
) -> None:
    """pyo3 #160 merged master into its branch as "Merge #154 and #155 changed with `syn13`";
    a branch of a bors repository brings in its base's "Auto merge of #N" and a rollup's
    "Rollup merge of #N"."""
    store = StoreBuilder(engine)
    for number in (1, 2, 3, 4, 5):
        store.pr(number, ["derive/method.rs"])
    store.ref(3, 1, evidence="Merge #1 and #2 changed with syn13", found_in="commit")
    store.ref(3, 2, evidence="Merge pull request #2 from ada/spans", found_in="commit")
    store.ref(5, 1, evidence="Auto merge of #1 - ada:derive, r=bob", found_in="commit")
    store.ref(5, 2, evidence="Rollup merge of #2 - ada:spans, r=bob", found_in="commit")
    store.ref(4, 1, "follow_up", evidence="Follow-up to #1: port the derive.", found_in="commit")
    store.write()
    graph, report = _graph(engine)
    pid = store.pr_id
    assert set(graph.edges) == {(pid(4), pid(1))}
    assert report.references == 1


def test_a_landed_prs_commit_subject_copied_into_a_text_is_no_reference(engine: Engine) -> None:
    """tauri #1331's feature branch took in `dev` as one commit listing its PRs' subjects,
    "Fix extremely slow dev builds caused by … (#1395)"."""
    store = StoreBuilder(engine)
    title = "Fix slow builds caused by `embed` of assets"
    store.pr(1, ["build/assets.rs"], title=title)
    for number in (2, 3, 4):
        store.pr(number, ["build/assets.rs"])
    copy = "* Fix slow builds caused by  of assets (#1)"  # code spans are stored blanked
    store.ref(2, 1, evidence=f"Co-authored-by: Bot <bot@example.com> | {copy}", found_in="commit")
    store.ref(3, 1, "follow_up", evidence=f"Depends on: | {copy}")
    store.ref(4, 1, evidence="Fix slow builds caused by  of assets (#1), then cache them.")
    # The line above is another carried commit's body (zellij #1521 lists main's "sixel support
    # (#1557)" below "... now all depend on  only."): a sentence, no lead-in to the list.
    store.pr(5, ["build/assets.rs"])
    store.ref(5, 1, evidence=f"since , and now all depend on  only. | {copy}")
    store.write()
    graph, report = _graph(engine)
    pid = store.pr_id
    assert set(graph.edges) == {(pid(3), pid(1)), (pid(4), pid(1))}
    assert report.references == 2
