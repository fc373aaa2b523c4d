"""Configuration of chain selection and query construction."""

from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from prchain.chains.reading.cues import EvidenceClass
from prchain.chains.rulebook import DEFAULT_VET_RESCUE, VET_RESCUABLE, RuleName

StrategyName = Literal["semantic", "thread", "temporal", "single"]
"""The chain strategies `prchain/chains/building/strategies.py` registers (a test keeps the two equal)."""
STRATEGY_NAMES: tuple[str, ...] = get_args(StrategyName)

ProfileName = Literal["precise", "paper"]
"""Named settings of the link rules and the strategy (`PROFILES`, docs/chains.md "Profiles")."""
PROFILE_NAMES: tuple[str, ...] = get_args(ProfileName)

# What each profile sets, where the config does not set the field itself. `precise` is the
# defaults: links only where code backs the wording, chains as feature threads. `paper` is the seed paper's
# reference topology: every referenced pair whose ends are stages is a link (no code evidence,
# file overlap, gap or corroboration asked; analogy and list wording stay no link), chains as
# feature threads. The stage-base check stays on in both: it is what the sandbox can enter.
PROFILES: dict[ProfileName, dict[str, Any]] = {
    "precise": {},
    "paper": {
        "strategy": "thread",
        "code_links": False,
        "corroborate_issue_only": False,
        "medium_needs_lines": False,
        "plain_mention_min_contact": 0,
        "strong_needs_code": False,
        "stack_needs_code": False,
        "corroboration_signs": 0,
        "min_overlap_by_strength": {},
        "max_gap_days": 365.0,
    },
}

VetKeep = Literal["dependent", "borderline"]
"""The weakest verdict of the link vetter a build keeps a link at (prchain/chains/writers/vet.py)."""
VET_KEEPS: tuple[str, ...] = get_args(VetKeep)

VetScope = Literal["chains", "all", "weak"]
"""Which kept links `chains vet` asks about: those in chains, every one, or those without strong
wording."""
VET_SCOPES: tuple[str, ...] = get_args(VetScope)

DropKind = Literal["link", "stage"]
"""Why a stored link was dropped: a link rule judged the pair, or an end is no usable stage."""
DROP_KINDS: tuple[str, ...] = get_args(DropKind)

DEFAULT_EVIDENCE_WEIGHTS: dict[EvidenceClass, int] = {
    "strong": 3,  # follow-up / extends / fix-of-regression wording
    "revert": 3,  # the newer PR reverts the older (see revert_links)
    "medium": 2,  # a plain mention
    "issue_only": 1,  # both PRs refer to one issue; kept only with corroboration
    "parallel": 0,  # analogy or list wording: siblings, never an edge
    "code": 2,  # no text: the newer PR rewrites code the older one wrote (prchain.chains.rules.codelinks)
}


class ChainFilters(BaseModel):
    model_config = ConfigDict(extra="forbid")

    skip_bots: bool = Field(
        True, description="Drop PRs authored by bots (dependabot, renovate, *[bot])."
    )
    skip_docs_only: bool = Field(True, description="Drop PRs touching only documentation.")
    skip_lockfile_only: bool = Field(True, description="Drop PRs touching only lock files.")
    skip_carriers: bool = Field(
        True,
        description="Drop PRs that bring other PRs' commits: branch syncs and release merges "
        "('Merge master into features').",
    )
    skip_releases: bool = Field(
        True,
        description="Drop release PRs, known by their title ('Release crates v0.13.2', "
        "'release(apps): oxlint v1.29.0', 'axum: Version 0.4.4'): a version bump and a "
        "changelog whose every entry reads as a mention.",
    )
    skip_dependency_bumps: bool = Field(
        True,
        description="Drop dependency upgrades and vendored syncs, known by their title "
        "('fix(deps): Update module google.golang.org/api to v0.293.0', 'Bump serde from 1.0.1 "
        "to 1.0.2', 'Sync vendored typeshed stubs'), whoever wrote them: a version moved, with "
        "the glue that needs, not a change made for a task.",
    )
    skip_backports: bool = Field(
        True,
        description="Drop backports and cherry-picks, known by their title ('[8.3.x] Fix …', "
        "'Backport #6914', 'v1.7 patch'): the change is another PR's, applied again to a "
        "maintenance branch, so as a stage it would repeat that PR.",
    )
    skip_scheduled: bool = Field(
        True,
        description="Drop scheduled syncs with an upstream, known by their title ('[GLUTEN-1632][CH]Daily "
        "Update Clickhouse Version (20250405)', 'Daily update of wasm-smith'): a version pin moved "
        "to the upstream's newest on a timer, with the glue that needs, not a change made for a task.",
    )
    skip_reverted: bool = Field(
        False,
        description="Drop PRs that a later PR reverted (off by default: with chains.revert_links a "
        "revert is a stage of its own, built on the PR it reverts).",
    )
    max_patch_lines: int = Field(
        2000,
        ge=1,
        description="Drop PRs whose code patch (test files and fixtures not counted) changes more lines.",
    )


class DecontamConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    sources: list[str] = Field(
        default_factory=list,
        description="SWE-bench-style instance sets whose PRs no chain may contain: a local JSONL, "
        "JSON or parquet path, or a Hugging Face hub name (needs the network).",
    )
    split: str = Field("test", description="Split read from hub datasets.")
    threshold: float = Field(
        0.8,
        gt=0,
        le=1,
        description="Estimated Jaccard similarity of normalised changed lines from which a stage's "
        "gold patch counts as a near-duplicate of an instance patch.",
    )
    num_perm: int = Field(128, ge=16, description="MinHash permutations.")


class ChainsConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    profile: ProfileName = Field(
        "precise",
        description="Named settings (PROFILES): `precise`, prchain's precision-first link rules "
        "and feature-thread chains (the defaults); `paper`, the seed paper's reference topology (every "
        "referenced pair whose ends are stages) with feature-thread chains. A field set in the "
        "config or with --set wins over the profile.",
    )
    strategy: StrategyName = Field(
        "thread",
        description="Chain strategy: thread (each stage builds on some earlier stage of its chain; "
        "the default since stages are entered by replay: on the seed's five repositories mined "
        "from git, 611 stages and 17 % of chains with three or more, against 594 and 10 % as "
        "paths), semantic (each stage builds on the one before), temporal or single.",
    )
    min_len: int = Field(2, ge=1, description="Shortest chain kept.")
    max_len: int = Field(5, ge=1, description="Longest chain kept (the paper uses 5).")
    filters: ChainFilters = Field(default_factory=ChainFilters)
    evidence_weights: dict[EvidenceClass, int] = Field(
        default_factory=lambda: dict(DEFAULT_EVIDENCE_WEIGHTS),
        description="Weight of each evidence class (strong, revert, medium, issue_only, parallel); an "
        "edge takes its strongest reference, a weight of 0 is never an edge. Analogy or list wording "
        "vetoes an edge unless a strong or revert reference backs it.",
    )
    revert_links: bool = Field(
        True, description="A revert is an edge from the reverting PR to the PR it reverts."
    )
    corroborate_issue_only: bool = Field(
        True,
        description="An edge resting only on a shared issue needs code evidence: the newer PR "
        "changes lines the older one added, or uses names it introduced; else it is dropped.",
    )
    # `auto` since round 32 (docs/chains.md): a history whose commit messages name no PRs makes
    # chains only this way; one whose messages do keeps the paper's reference-linked chains and
    # their cost (code links multiply a cold build's git and lexing).
    code_links: bool | Literal["auto"] = Field(
        "auto",
        description="Look for links in code as well as in words: a pair of PRs no text names, "
        "where the newer one removes code_link_min_lines lines of code the older one wrote, is a "
        "candidate link of evidence class `code`, kept only where it has code_link_min_contact "
        "points of contact with the older PR's code and both ends are stages. `auto` looks in the "
        "code of a repository whose PRs name other PRs less often than code_links_auto_below a "
        "PR; false keeps only the links a text names (the paper's reference-linked chains).",
    )
    code_links_auto_below: float = Field(
        0.05,
        ge=0,
        description="With code_links `auto`: a repository whose PRs name other PRs (directly, "
        "not through an issue) fewer times than this per PR gets code links. Round 32: the "
        "histories merged without PR names read 0 to 0.048 a PR, those that name them 0.05 to "
        "0.29 (ruff 0.43).",
    )
    code_link_min_lines: int = Field(
        3,
        ge=1,
        description="Lines of the older PR's code the newer one must remove (by the patches) for "
        "a code link to be a candidate.",
    )
    code_link_min_contact: int = Field(
        5,
        ge=0,
        description="Points of contact a code link needs per max_gap_days between the PRs: lines "
        "of the older PR's code the newer one rewrites (not only moves), places where it adds "
        "code inside that code, and names the older PR introduced that its code uses. Round 31's "
        "judged code links with fewer were 6 of the 12 not strictly dependent, 3 of the 39 "
        "dependent.",
    )
    code_link_min_share: float = Field(
        0.05,
        ge=0,
        le=1,
        description="A code link's points of contact must be at least this share of the newer "
        "PR's lines of code: below it the newer PR is its own task (a sweep, a rewrite) that "
        "happens to pass through the older one's code.",
    )
    code_link_focus_share: float = Field(
        0.15,
        ge=0,
        le=1,
        description="A code link no vetter judged dependent needs its points of contact to reach "
        "this share of the newer PR's lines of code, and the older PR to have touched "
        "code_link_focus_files of the newer one's files; else it is dropped as "
        "`code_link_incidental`: a change of its own (a sweep, a migration, a refactor) that "
        "passes through the older PR's code. `chains vet` asks about those drops. Round 33: 9 "
        "of the 11 code links judged not strictly dependent, 7 of the 28 dependent.",
    )
    code_link_focus_files: float = Field(
        0.25,
        ge=0,
        le=1,
        description="The share of the newer PR's files the older PR touched that a code link no "
        "vetter judged dependent needs (code_link_focus_share).",
    )
    corroboration_signs: int = Field(
        3,
        ge=0,
        le=4,
        description="Signs a link no text calls a dependency (nor a revert) and no vetter judged "
        "dependent needs that its newer PR works on the older one's code, of four: "
        "corroboration_contact points of contact, those points corroboration_share of the newer "
        "PR's lines of code, file overlap corroboration_overlap, the newer PR's title naming a "
        "word the older one wrote (prchain/chains/rules/corroborate.py). Fewer: dropped as `uncorroborated`, "
        "and `chains vet` asks about it. Rounds 36 to 41, 304 judged links (in sample): kept "
        "58%, strictly dependent 93.8% and 94.9% (84% and 86% before); rounds 42 to 46, held "
        "out: 90.2% and 91.3% of 275 chains (83.3% and 84.7% of 438 without it), 34% fewer "
        "chains without a vetter, none fewer with one. 0 turns it off.",
    )
    corroboration_contact: int = Field(
        12, ge=0, description="Points of contact that make the contact sign (corroboration_signs)."
    )
    corroboration_share: float = Field(
        0.3,
        ge=0,
        le=1,
        description="Share of the newer PR's lines of code its points of contact must reach for "
        "the focus sign (corroboration_signs).",
    )
    corroboration_overlap: float = Field(
        0.2,
        ge=0,
        le=1,
        description="File overlap (Jaccard) that makes the files sign (corroboration_signs).",
    )
    code_link_min_stage_lines: int = Field(
        15,
        ge=0,
        description="Fewest lines of code (as min_stage_code_lines counts them) each end of a code "
        "link must change: a code link is most often a short follow-up to the older PR (a revert, "
        "a mutex, a renamed case), a real dependency but no stage. Round 31: 12 of the 21 ends "
        "judged thin were under 15 lines, 1 of the 73 judged not thin.",
    )
    code_link_followup_lines: int = Field(
        50,
        ge=0,
        description="A code link's newer PR under this many lines of code that is also under a "
        "third (code_link_followup_ratio) of the older PR's is a follow-up fix of it, no stage "
        "of a chain through that link. 0 turns it off.",
    )
    code_link_followup_ratio: float = Field(
        3.0,
        ge=1,
        description="How many times the newer PR's lines of code the older PR's must be for the "
        "newer one to be a follow-up fix (code_link_followup_lines).",
    )
    medium_needs_lines: bool = Field(
        True,
        description="An edge resting on a plain mention (no wording either way) needs the newer PR to "
        "remove or rewrite a line the older PR added; sibling PRs that only mention each other rarely do.",
    )
    plain_mention_min_contact: int = Field(
        3,
        ge=0,
        description="Points of contact (as code_link_min_contact counts them, with the lines of "
        "the older PR's code written back and of its tests changed) an edge resting on a plain "
        "mention needs; fewer are dropped as `plain_mention_little_contact`. A PR that lists "
        "another among related ones and touches a line or two of it is most often a sibling "
        "(rounds 36 and 37: the 4 plain mentions with one or two were judged not or "
        "borderline, the 8 with three or more dependent). 0 turns it off.",
    )
    max_gap_days: float = Field(
        90.0,
        gt=0,
        description="Longest time from the older PR's merge to the newer PR's opening for an edge "
        "(the newer base drifts from the older end state; chosen from ruff's history, docs/chains.md).",
    )
    lineage_lines_per_gap: float = Field(
        0.75,
        ge=0,
        description="Line lineage needed to back a link over the gap, overlap and issue-only rules, per "
        "max_gap_days of time between the two PRs (at least one period): one rewritten line within the "
        "gap, two at 200 days and after, up to lineage_max_lines. Imports and comments do not "
        "count, a moved line counts half.",
    )
    lineage_max_lines: float = Field(
        2.0,
        ge=0,
        description="The most line lineage a link ever needs, however long the gap (0: no "
        "bound). A PR that names an older one and rewrites two of its lines builds on it years "
        "on as well (networkx #8586 reworks #3039's cut filter 2,817 days on; tokio #4867 "
        "removes #2448's broadcast closed flag after 835 days): of the 21 links the bound keeps "
        "on the hand checks' 30 histories, 16 were judged dependent, 3 borderline, 2 not.",
    )
    caught_up_lines: float = Field(
        2.0,
        ge=0,
        description="Of two PRs open at once, the one merged later builds on the other when its branch "
        "holds the other's merge, or, with no branch to read (a squash merge), when its patch rewrites "
        "this many of the other's lines or its code uses min_symbols names the other brought in "
        "(0: only the branch tells). One line is as often rebase glue between parallel PRs.",
    )
    test_lines_per_gap: float = Field(
        4.0,
        ge=0,
        description="Lines of the older PR's tests the newer PR rewrites that back a link on their own "
        "(over the gap, overlap, plain-mention, issue-only and wording-only rules), per max_gap_days "
        "between the two PRs (at least one period): a PR that changes what another's tests check "
        "changes that PR's behaviour. 0 turns it off; a line of tests always counts half beside a "
        "rewritten line of code.",
    )
    whole_change_max_gap_days: float = Field(
        365.0,
        ge=0,
        description="A newer PR that rewrites all the code the older PR wrote (tests, imports and "
        "comments left out), however few lines, has lineage enough up to this many days after it.",
    )
    min_symbols: int = Field(
        1,
        ge=0,
        description="Names (identifiers of 5+ characters, tests left out) that the older PR brought "
        "into the repository and the newer PR's added code uses, to back a link over the overlap, "
        "plain-mention and wording-only rules within max_gap_days (0 turns symbol use off).",
    )
    parallel_lineage_lines: int = Field(
        10,
        ge=0,
        description="Rewritten lines of the older PR (a moved line counts half) that outweigh analogy "
        "or list wording ('see also #N') and keep the link (0: list wording always drops it).",
    )
    regression_gap_days: float = Field(
        30.0,
        ge=0,
        description="A fix whose sentence says the older PR broke or regressed something ('in #N I "
        "broke X', 'regressed in #N') is kept without shared files when opened within this many days.",
    )
    regression_max_gap_days: float = Field(
        365.0,
        ge=0,
        description="Such a regression fix that shares a file with the older PR is kept up to this "
        "many days after it, over max_gap_days and without shared lines: a regression stays in the "
        "code until someone notices.",
    )
    strong_code_max_gap_days: float = Field(
        365.0,
        ge=0,
        description="Strong wording the newer PR says of the older ('follow-up to #N', 'builds on "
        "#N') together with some code evidence (a rewritten line or a used symbol of the older PR) "
        "keeps the link over max_gap_days up to this many days: staged work on a format or an API "
        "runs for months (wasm-tools #1780 continues #1364's migration 247 days on).",
    )
    strong_needs_code: bool = Field(
        True,
        description="A link resting on follow-up or fix wording needs code evidence too: the newer PR "
        "changes a line the older one added, or uses a symbol it introduced.",
    )
    stack_needs_code: bool = Field(
        True,
        description="Stack wording ('stacked on #N', 'requires #N', 'split out of #N') needs code "
        "evidence as well (with strong_needs_code): a branch is stacked on another to merge in order "
        "as often as to build on it. The PR merged first saying it prepares the other ('a "
        "prerequisite for #N', 'to unblock #N') is exempt. Off: stack wording alone keeps the link.",
    )
    min_chain_code_lines: int = Field(
        30,
        ge=0,
        description="Fewest changed lines of code (tests, fixtures, docs and config not counted) a "
        "whole chain must change (chosen from ruff's history, docs/chains.md).",
    )
    min_stage_source_lines: int = Field(
        20,
        ge=0,
        description="Fewest lines every stage of a chain must change in source files, as the "
        "miner counts them per file (added and removed alike; tests, docs, configuration and the "
        "rest min_stage_code_lines leaves out not counted). A smaller PR is a fix of a few lines, "
        "whatever its lexed count: of the stages judged in rounds 36 to 39 under 20 such lines, "
        "14 of 15 were thin, against 22% of all. Never more than min_chain_code_lines.",
    )
    min_stage_code_lines: int = Field(
        12,
        ge=0,
        description="Fewest changed lines of code every stage of a chain must change: lines holding "
        "code as a lexer reads them, a removed line counting half (comments, docstrings and blank "
        "lines not counted; tests, docs, CI, lock and config files, stylesheets, markup and shell "
        "scripts not counted). A PR under it is no stage of a chain of two or more, nor is one "
        "that writes no line of code and only deletes (a revert aside). "
        "Never more than min_chain_code_lines (setting that to 0 turns both off). In the blind hand "
        "checks of rounds 12 to 14, 7 of the 21 stages judged thin had 10 or 11 lines, and 3 of the "
        "281 judged not thin.",
    )
    revert_pairs: bool = Field(
        False,
        description="Keep chains whose last stage only reverts the one before ('A, revert A'); "
        "implies revert_stages.",
    )
    # Round 36: both judges called each revert stage thin (aiohttp #6143, httpx #423), as earlier
    # rounds called most straight reverts (go-chi #966, application-services #1165, okhttp #7343).
    revert_stages: bool = Field(
        False,
        description="Keep a stage that reverts the one before it inside a chain ('A, revert A, "
        "A again', labelled revert_reland). Off, a chain is cut at such a revert and keeps its "
        "longer side: undoing a change is no coding task.",
    )
    dedup_near_duplicates: bool = Field(
        True,
        description="Two chains sharing all but one PR are merged when their union is itself a "
        "chain, else the weaker is dropped.",
    )
    decontam: DecontamConfig = Field(default_factory=DecontamConfig)
    flipped_penalty: int = Field(
        1,
        ge=0,
        description="Strength taken off a reference written in the older PR's own title, body or "
        "commits about the newer one (it was still open then; the link is vaguer).",
    )
    min_overlap_by_strength: dict[int, float] = Field(
        default_factory=lambda: {1: 0.2, 2: 0.05, 3: 0.01},
        description="File overlap (Jaccard) an edge of each strength needs; strength 0 edges are never kept, "
        "strengths not listed need none. Even explicit links need a shared file: '#N' sometimes names an "
        "issue of a sibling repository that happens to share a number with one of ours.",
    )
    overlap_weight: float = Field(
        2.0, ge=0, description="Weight of file overlap beside strength in an edge's score."
    )
    max_issue_fanout: int = Field(
        4,
        ge=2,
        description="An issue that mediates links among more PRs than this is an umbrella issue: "
        "a link through it rests on nothing but code evidence (umbrella_links_with_code), or is "
        "ignored.",
    )
    umbrella_links_with_code: bool = Field(
        True,
        description="A link only through an umbrella issue is read as any issue-only link, kept "
        "when code backs it (with corroborate_issue_only: a rewritten line, a used name); off, or "
        "without corroborate_issue_only, such links are ignored (umbrella_issue).",
    )
    check_stage_bases: bool = Field(
        True,
        description="Where the repo's clone is at hand, keep of each chain only its longest run of "
        "stages whose base the sandbox can make: the earlier stages' gold patches revert cleanly "
        "(3-way) at the stage's base commit. A PR outside the chain that edited an earlier "
        "stage's lines in between makes the revert conflict, and the rollout would stop there.",
    )
    entry_fallback: Literal["none", "propagate", "hunks", "replay"] = Field(
        "replay",
        description="Where the earlier stages' gold patches do not revert at a stage's base, enter "
        "the stage by propagation instead (`propagate`): B_t with the files those patches touch as "
        "the previous stage base has them, the agent's own change carried onto it. Allowed only "
        "where every earlier stage was merged into B_t (nothing after B_t) and no outside PR "
        "changed, since the earlier stages, a file the stage's own gold patch touches. Or by hunks "
        "(`hunks`): only the hunks of those patches reverted that revert, the others kept as B_t "
        "has them, and where the agent's carried change meets a kept hunk, B_t's lines taken. "
        "Allowed only where every earlier stage was merged into B_t, every failed revert failed "
        "by hunks only, and no line the stage's own gold patch changes lies in a kept hunk. Or by "
        "replay (`replay`): B_t itself, the agent's earlier work carried as its difference from "
        "history (B_(t−1) with g_(t−1)), B_t's lines kept where history rewrote lines the agent "
        "wrote otherwise; allowed where every earlier stage was merged into B_t, and every stage "
        "after a replayed one is replayed. Each "
        "stage's entry is stored (chain_stages.entry) and used by rollouts, `tests verify` and "
        "`tasks eval`. `none`: such a stage ends the chain (stage_base_refused). `replay` is the "
        "default: on the seed paper's repositories mined from git it enters 2.3 to 4.2 times the "
        "stages `hunks` does, and a gold agent starts every replayed stage at B_t exactly, the "
        'state `tests verify` checks (docs/evaluation-log.md, "Entry by replay").',
    )
    lend_tests: bool = Field(
        True,
        description="Where the repo's clone is at hand, a stage whose PR changes no test file "
        "borrows the tests of the nearest later stage of its chain that changes some: its test "
        "patch is the diff from its base to that stage's merge commit, limited to those files "
        "(chain_stages.tests_from names the lender). `tests verify` requires only the borrowed "
        "tests that fail at the base and pass with the stage's own gold patch. Off: such a stage "
        "can only be judged.",
    )
    check_ancestry: bool = Field(
        True,
        description="Where the repo's clone is at hand, require pr_(i-1)'s merge commit to be an "
        "ancestor of pr_i's base commit.",
    )
    ancestry_fallback_limit: int = Field(
        2000,
        ge=0,
        description="Edges off the first-parent history checked one by one with git merge-base; "
        "beyond this they are kept unchecked.",
    )
    lineage_workers: int = Field(
        0,
        ge=0,
        description="git blame processes run at once for line lineage (0: one per CPU; 1: one at "
        "a time). Decisions are the same whatever the number.",
    )
    commit_graphs: bool = Field(
        True,
        description="git blame for line lineage reads a commit-graph with changed-path Bloom "
        "filters of each clone, written into commit_graph_dir (never into the clone) on the "
        "first blame and again when the clone's branches move. Decisions are the same with or "
        "without; a third less of blame's CPU on ruff.",
    )
    commit_graph_dir: str = Field(
        "",
        description="Where the commit-graphs are kept, one directory per clone; empty: "
        "$PRCHAIN_CACHE_DIR/commit-graphs, else $XDG_CACHE_HOME/prchain/commit-graphs "
        "(~/.cache/prchain/commit-graphs).",
    )
    max_branching: int = Field(
        8, ge=1, description="Successors explored per PR in the path search, strongest first."
    )
    max_paths_per_start: int = Field(
        50, ge=1, description="Candidate paths emitted per starting PR (bounds dense graphs)."
    )
    temporal_window: int = Field(
        10,
        ge=1,
        description="temporal strategy: how many later merges to look through for the next PR "
        "touching an overlapping file.",
    )
    prune_stale: bool = Field(
        True,
        description="After a build, delete this strategy's chains the build no longer selects "
        "(chains that already have rollouts are kept).",
    )
    query_patch_tokens: int = Field(
        3000, ge=100, description="Token budget of the patch shown to the query writer."
    )
    query_max_attempts: int = Field(
        4, ge=1, description="Regenerations of a query that leaks an identifier."
    )
    vet_keep: VetKeep = Field(
        "dependent",
        description="Where `prchain chains vet` has judged a kept link, the build keeps it only "
        "at this verdict or a stronger one: `dependent` (strict) or `borderline` (some real "
        "contact). Links the vetter has not judged are decided by the rules alone.",
    )
    vet_scope: VetScope = Field(
        "chains",
        description="Which kept links `chains vet` asks the link_vetter model about: `chains`, "
        "those joining two stages of a chain (after a build drops rejected links, the new "
        "chains' links are asked about in turn, up to 5 rounds); `all`, every kept link (about 2.6 "
        "times as many over 102 histories; one round); `weak`, every kept link but those with "
        "strong dependency wording or a revert.",
    )
    vet_rescue: list[RuleName] = Field(
        default_factory=lambda: list(DEFAULT_VET_RESCUE),
        description="Link rules whose drops `prchain chains vet` also asks about. These rules "
        "guess at shared code from lines, names, file overlap or time, and miss dependencies "
        "the wording states and the lines do not show (a stack on another PR's new API, a fix "
        "after the code moved). A `dependent` verdict makes such a link an edge again; it must "
        "still pass the ancestry check. `plain_mention_without_shared_lines` may be added (its "
        "rescues were strictly dependent 3 times in 5 in round 29); `[]`: such drops stay drops "
        "and are not asked about.",
    )

    @field_validator("vet_rescue", mode="before")
    @classmethod
    def _vetter_can_lift(cls, rules: list[str]) -> list[str]:
        """Only the rules that guess at shared code may be put to the vetter (rulebook's
        `lifted_by`); the rest decide on facts a model's reading does not change."""
        wrong = [rule for rule in rules if rule not in VET_RESCUABLE]  # a typo too, said alike
        if wrong:
            raise ValueError(
                f"{wrong[0]} is no rule the vetter may lift; choose from {', '.join(VET_RESCUABLE)}"
            )
        return rules

    vet_thin: bool = Field(
        True,
        description="Where the link vetter called a PR of a link it judged too slight to teach "
        "as a stage (a cleanup, a bump with its adaptations, a rename through call sites, a few "
        "lines), the build takes every link of that PR out (rule `vetter_thin`), cutting its "
        "chains there. Rounds 36-38 of the hand check judged 13-28% of stages thin, and no size "
        "or shape of a change told them apart. `false`: the verdicts decide links only.",
    )
    vet_patch_tokens: int = Field(
        2500, ge=100, description="Token budget of each PR's diff shown to the link vetter."
    )

    @model_validator(mode="before")
    @classmethod
    def _apply_profile(cls, data: Any) -> Any:
        """Fill the fields the profile sets and the input leaves unset (explicit settings win)."""
        if not isinstance(data, dict) or data.get("profile") not in PROFILES:
            return data
        return {**PROFILES[data["profile"]], **data}

    @property
    def stage_minimum(self) -> int:
        """The per-stage minimum in force: no stage needs more than a whole chain does."""
        return min(self.min_stage_code_lines, self.min_chain_code_lines)

    @property
    def source_minimum(self) -> int:
        """The per-stage minimum of changed lines in source files in force (as `stage_minimum`)."""
        return min(self.min_stage_source_lines, self.min_chain_code_lines)
