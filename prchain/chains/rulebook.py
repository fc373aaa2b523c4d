"""The link rules as one table: each rule's name, the phase that applies it, what it drops (a link,
or a PR as a stage), the evidence it reads and what may lift its drop.

`RuleName` is the closed set: a rule written anywhere else is a type error, and every set of rules
the build, the vetter and the CLI use (`STAGE_RULES`, `LINEAGE_CAN_RESCUE`, `SYMBOLS_CAN_RESCUE`,
`VET_RESCUABLE`, `RULE_NAMES`) is read off the table, as is the rule table of docs/chains.md
(`rule_table_markdown`; tests/chains/test_rulebook.py keeps the two equal). Adding a rule: a row
here, its check where its phase runs (docs/add-a-link-rule.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from prchain.chains.record import EvidenceField

RuleName = Literal[
    "pr_filtered_or_not_mined",
    "cross_repo",
    "umbrella_issue",
    "not_merged_before_created",
    "older_reverted_before",
    "repeats_older",
    "parallel_wording",
    "revert_links_off",
    "zero_weight",
    "issue_only_uncorroborated",
    "code_link_unbacked",
    "plain_mention_without_shared_lines",
    "plain_mention_little_contact",
    "too_little_file_overlap",
    "gap_too_long",
    "wording_without_shared_code",
    "vetter_rejected",
    "not_an_ancestor",
    "stage_below_substance",
    "code_link_thin_stage",
    "code_link_incidental",
    "uncorroborated",
    "vetter_thin",
]
"""Every rule a build may drop a link by, in the order the build applies them."""
RULE_NAMES: tuple[RuleName, ...] = get_args(RuleName)

Phase = Literal[
    "candidate", "pair", "vetter", "ancestry", "stage", "code_link", "corroboration", "vetter_stage"
]
"""Where a rule runs, in build order: which references can be links at all (`candidate`,
building/graph.py); one pair's evidence (`pair`, rules/link_rules.py); the vetter's stored verdicts
on kept links (`vetter`, building/vetted.py); git ancestry (`ancestry`, building/graph.py); each
end's substance (`stage`), links found in code (`code_link`) and corroboration
(`corroboration`), building/build.py; the vetter's thin stages (`vetter_stage`)."""
PHASES: tuple[Phase, ...] = get_args(Phase)

Lifter = Literal["lineage", "symbols", "vetter"]
"""What may undo a rule's drop: line lineage or symbol use found for the pair, or the link
vetter's `dependent` (`vet_rescue`)."""


@dataclass(frozen=True)
class Rule:
    """One link rule: its phase, what it drops, and the words of the docs table."""

    name: RuleName
    phase: Phase
    reads: str  # the evidence it reads, in words
    why: str
    example: str
    drops: Literal["link", "stage"] = "link"  # a stage rule says an end can be no stage
    lifted_by: frozenset[Lifter] = frozenset()
    vetted_by_default: bool = False  # in `vet_rescue`'s default
    # The fields of the link's record it reads (`prchain.chains.record.LinkEvidence`); none for
    # a rule that reads the PRs themselves (their times, files, substance) or git.
    fields: tuple[EvidenceField, ...] = ()


# A rule that only guesses at shared code yields to code found for the pair, and may be put to the
# vetter; one that weighs code already yields to more of it only.
CODE_SIGNS: frozenset[Lifter] = frozenset({"lineage", "symbols"})
ANY_SIGN: frozenset[Lifter] = CODE_SIGNS | {"vetter"}
# What a rule lifted by shared code reads: the pair's class, every line-lineage count and its
# symbols (and the days between the two PRs).
SIGNS: tuple[EvidenceField, ...] = (
    "evidence_class",
    "lineage",
    "lineage_moved",
    "lineage_inserted",
    "lineage_restored",
    "lineage_whole",
    "lineage_test_code",
    "symbols",
)
SIGNS_AND_GAP: tuple[EvidenceField, ...] = (*SIGNS, "gap_days")


def _rule(name: RuleName, phase: Phase, reads: str, why: str, example: str, **kw: object) -> Rule:
    return Rule(name, phase, reads, why, example, **kw)  # type: ignore[arg-type]


RULES: tuple[Rule, ...] = (
    _rule(
        "pr_filtered_or_not_mined",
        "candidate",
        "each end's author, title, files and size (the PR filters above)",
        "an end that can be no stage: a bot's, a release's, a version bump's, a sync's",
        'cloudquery\'s 6,113 "chore(main): Release plugins-source-aws v8.0.0" by "CloudQuery Bot"',
        drops="stage",
    ),
    _rule(
        "cross_repo",
        "candidate",
        "the two PRs' repositories",
        "a chain lives in one repository",
        "a fork's PR naming the upstream's",
    ),
    _rule(
        "umbrella_issue",
        "candidate",
        "the shared issue's fan-out (`max_issue_fanout`)",
        "a tracking issue gathers a series, not dependencies",
        "clap #312 and #314 under one umbrella: judged on their code instead",
    ),
    _rule(
        "not_merged_before_created",
        "candidate",
        "opening and merge times; the later PR's branch, lineage and symbols",
        "the later PR must start from the earlier one's merge",
        "iceberg-go #467, opened before #468 merged, kept: it calls #468's `GeneratePartitionFieldName`",
    ),
    _rule(
        "older_reverted_before",
        "pair",
        "reverts by reference, branch commit, head branch, pushed revert or title",
        "the newer PR cannot build on what was undone",
        "tokio #4373 merged after #4394 reverted #4377",
        fields=("evidence_class",),
    ),
    _rule(
        "repeats_older",
        "pair",
        "both patches (80 % of their code lines)",
        "the same task twice",
        "serde #316 re-submits #302",
        fields=("evidence_class",),
    ),
    _rule(
        "parallel_wording",
        "pair",
        "the deciding sentence's wording",
        "analogy is sibling work, not dependency",
        'rust-clippy #7791, "Similar to #7609"',
        lifted_by=frozenset({"lineage"}),
        fields=("evidence_class", "lineage", "lineage_moved"),
    ),
    _rule(
        "revert_links_off",
        "pair",
        "revert evidence and `revert_links`",
        "a revert stage only where asked for",
        "any revert, with `revert_links: false`",
        fields=("evidence_class",),
    ),
    _rule(
        "zero_weight",
        "pair",
        "the deciding reference's weight (`evidence_weights`, less `flipped_penalty` for a reference the older PR wrote about the newer)",
        "a reference whose weight comes to nothing carries no link",
        "a plain mention the older PR made of the newer one, with `flipped_penalty: 2`",
        fields=("strength",),
    ),
    _rule(
        "issue_only_uncorroborated",
        "pair",
        "line lineage, symbol use, rewritten tests",
        "one issue, two unrelated attempts",
        "mypy: a fix and a later attempt on one issue",
        lifted_by=CODE_SIGNS,
        fields=SIGNS_AND_GAP,
    ),
    _rule(
        "code_link_unbacked",
        "pair",
        "git blame, insertions and symbol use, for a pair found in the patches only (`code_links`)",
        "a shared line of text is not yet shared code, nor are three or four",
        "gin #2368 \u2192 #2378 rewrites 3 lines of a loop #2368 had just synced",
        lifted_by=CODE_SIGNS,
        fields=(
            "evidence_class",
            "lineage",
            "lineage_moved",
            "lineage_inserted",
            "symbols",
            "gap_days",
        ),
    ),
    _rule(
        "plain_mention_without_shared_lines",
        "pair",
        "line lineage, symbol use, rewritten tests",
        "a mention alone says nothing of dependency",
        "sentry-python #6163 names #6159 and shares only `WeakMethod`",
        lifted_by=ANY_SIGN,
        fields=SIGNS_AND_GAP,
    ),
    _rule(
        "plain_mention_little_contact",
        "pair",
        "points of contact (rewritten lines, insertions, used names, lines written back, rewritten tests)",
        "a PR that lists a sibling and touches a line of it is no stage built on it",
        "redis #10329 lists #10309 among related PRs and rewrites one of its lines",
        lifted_by=ANY_SIGN,
        fields=SIGNS,
    ),
    _rule(
        "too_little_file_overlap",
        "pair",
        "file Jaccard by evidence weight",
        "no line lineage and almost no shared file",
        '"Follow-up to #5" in a PR touching none of #5\'s files',
        lifted_by=ANY_SIGN,
        vetted_by_default=True,
        fields=("strength", "overlap"),
    ),
    _rule(
        "gap_too_long",
        "pair",
        "days from the older merge to the newer opening",
        "after months a mention is history, not a base",
        "wasm-tools #2466 kept 186 days on: strong wording and #2306's `tag_imports`",
        lifted_by=ANY_SIGN,
        vetted_by_default=True,
        fields=("gap_days", "evidence_class", "lineage", "symbols"),
    ),
    _rule(
        "wording_without_shared_code",
        "pair",
        "strong or stack wording against code evidence",
        "a stack merges in order as often as it builds",
        'xarray #9418, "Stacks on #9417", swaps annotations #9417 never wrote',
        lifted_by=ANY_SIGN,
        vetted_by_default=True,
        fields=("evidence_class", "lineage", "lineage_touched", "lineage_restored", "symbols"),
    ),
    _rule(
        "vetter_rejected",
        "vetter",
        "the link vetter's stored verdict on a link the rules kept (`vet_keep`)",
        "a model that read both PRs and their diffs judged the newer one a task of its own",
        "`prchain chains links --rule vetter_rejected` shows each with the model's reason in `why`",
        fields=("vetted",),
    ),
    _rule(
        "not_an_ancestor",
        "ancestry",
        "git ancestry of the two merges",
        "the newer base must hold the older change",
        "an older merge on a branch the newer PR never had",
    ),
    _rule(
        "stage_below_substance",
        "stage",
        "each end's lexed lines of code, and its lines changed in source files (`min_stage_source_lines`)",
        "a stage must teach something",
        "wgpu #3576 changes doc comments only; gopass #74 threads a flag in 19 lines",
        drops="stage",
    ),
    _rule(
        "code_link_thin_stage",
        "code_link",
        "each end's lexed lines of code and the code link's points of contact",
        "a code link is most often a follow-up fix, or a task of its own passing through the older code",
        "raft #194 adds a flag to #189's code in 13 lines",
        fields=("evidence_class", "lineage", "lineage_moved", "lineage_inserted", "symbols"),
    ),
    _rule(
        "code_link_incidental",
        "code_link",
        "a code link's points of contact against the newer PR's lexed code, and the share of its files the older PR touched; lifted by the vetter's `dependent`",
        "a sweep, a migration or a feature of its own that rewrites a few of the older lines on its way is no dependency",
        "mockito #476 puts a singleton in place of `new ThreadSafeMockingProgress()` in 16 files, 3 of them #389's",
        lifted_by=frozenset({"vetter"}),
        vetted_by_default=True,
        fields=(
            "evidence_class",
            "lineage",
            "lineage_moved",
            "lineage_inserted",
            "symbols",
            "vetted",
        ),
    ),
    _rule(
        "uncorroborated",
        "corroboration",
        "four signs for a link no dependency wording or revert states: points of contact (`corroboration_contact`, 12), their share of the newer PR's lexed code (`corroboration_share`, 30%), file overlap (`corroboration_overlap`, 0.2), the newer PR's title naming a word the older PR wrote; needs `corroboration_signs` (3); lifted by the vetter's `dependent`",
        "one sign is met as often by a task of its own that meets the older code; several at once are what held on histories no rule was chosen on",
        'lz4 #519, "Faster decoding speed", threads its own argument beside #488\'s `dictCtx_directive`: 12 points of contact in files both change, but a small share of its code, and a title naming nothing #488 wrote',
        lifted_by=frozenset({"vetter"}),
        vetted_by_default=True,
        fields=(
            "evidence_class",
            "lineage",
            "lineage_moved",
            "lineage_inserted",
            "symbols",
            "overlap",
        ),
    ),
    _rule(
        "vetter_thin",
        "vetter_stage",
        "the link vetter's verdict that an end's change teaches too little to be a stage (`vet_thin`)",
        "a stage must teach something, and a reader sees what a line count cannot",
        "a feature-gate change of about ten lines",
    ),
)
STAGE_RULES: frozenset[RuleName] = frozenset(r.name for r in RULES if r.drops == "stage")
LINEAGE_CAN_RESCUE: frozenset[RuleName] = frozenset(
    r.name for r in RULES if "lineage" in r.lifted_by
)
SYMBOLS_CAN_RESCUE: frozenset[RuleName] = frozenset(
    r.name for r in RULES if "symbols" in r.lifted_by
)
VET_RESCUABLE: tuple[RuleName, ...] = tuple(r.name for r in RULES if "vetter" in r.lifted_by)
DEFAULT_VET_RESCUE: tuple[RuleName, ...] = tuple(r.name for r in RULES if r.vetted_by_default)


def rule_table_markdown() -> str:
    """The rule table of docs/chains.md, one row per rule in build order."""
    lines = [
        "| rule | phase | evidence it reads | why | example | lifted by |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for r in RULES:
        lifted = ", ".join(sorted(r.lifted_by)) or "-"
        fields = f" ({', '.join(f'`{f}`' for f in r.fields)})" if r.fields else ""
        reads = r.reads + fields
        lines.append(f"| `{r.name}` | {r.phase} | {reads} | {r.why} | {r.example} | {lifted} |")
    return "\n".join(lines) + "\n"
