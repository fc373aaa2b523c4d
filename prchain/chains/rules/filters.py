"""Which PRs may be a chain stage: no bots, no releases, no docs-only or lockfile-only work, nothing reverted,
nothing huge."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from prchain.chains.config import ChainFilters
from prchain.chains.reading.paths import is_doc_path, is_lockfile

if TYPE_CHECKING:
    from prchain.chains.evidence.nodes import PRNode

BOT_NAMES = frozenset(
    {
        "dependabot",
        "dependabot-preview",
        "renovate",
        "renovate-bot",
        "github-actions",
        "pre-commit-ci",
        "mergify",
        "greenkeeper",
        "snyk-bot",
        "imgbot",
        "allcontributors",
    }
)


class _Ref(Protocol):
    src: int
    dst: int
    type: str


@dataclass
class FilterReport:
    """How many PRs each filter removed (a PR is counted under the first filter it fails)."""

    removed: Counter[str] = field(default_factory=Counter)


def is_bot(author: str | None) -> bool:
    if not author:
        return False
    name = author.lower().strip()
    # A git source knows the author by name only: cloudquery's release PRs are "CloudQuery Bot"'s.
    return name.endswith(("[bot]", "-bot", " bot")) or name in BOT_NAMES


def chain_code_lines(pr_ids: Iterable[int], nodes: Mapping[int, PRNode]) -> int:
    """Changed lines of code over the chain's PRs (tests, fixtures, config, docs and presentation
    not counted)."""
    return sum(nodes[pr].code_lines for pr in pr_ids)


# A release PR's title: the conventional `release:` type, or "release"/"version" and a version
# number ("Release crates v0.13.2", "axum: Version 0.4.4", "Prepare release 2.1"), or a bare version;
# work in progress said first ("WIP Release 0.53.0": streamlit #954, round 37).
RELEASE_TITLE = re.compile(
    r"^\s*(?:\[?wip\]?:?\s+|draft:?\s+)?(?:release(?:\([^)]*\))?!?:|chore\(release\)!?:"
    r"|(?:[\w()./-]+:\s+)?(?:prepare\s+(?:for\s+)?)?(?:release|version)(?:\s+[\w./-]+)?\s+v?\d+(?:\.\d+)+\b"
    r"|v?\d+\.\d+\.\d+\s*$)",
    re.I,
)
# Release bookkeeping worded around the version: "Prepare for 8.0.0 release", "Prepare for release
# of 14.0.0", "Preparing for v1.8", "Backport changelog from 0.19.4", "Prepare changelog for 0.20".
# Or around no version at all: restic's "Prepare patch release" (#5098, round 38: thin for both
# judges), "Prepare the next release"; not "Prepare release workflow for signing".
RELEASE_CHORE = re.compile(
    r"^\s*(?:[\w()./-]+:\s+)?prepar(?:e|es|ing|ations?)\b.*\bv?\d+\.\d+"
    r"|^\s*(?:[\w()./-]+:\s+)?prepar(?:e|es|ing)\s+(?:(?:for|the|a|an)\s+)*"
    r"(?:(?:patch|minor|major|bugfix|point|new|next)\s+)?release(?:\s+(?:of|for|notes)\b.*)?"
    r"\s*[.!]?\s*$"
    r"|\bchangelog\b\W+(?:\w+\W+){0,2}v?\d+\.\d+",
    re.I,
)
# A backport or cherry-pick re-applies a change already made elsewhere: pytest's "[8.3.x] Fix …"
# bot PRs, "Merge pull request #6919 from nicoddemus/backport-6914", pydantic's "v1.7 patch".
BACKPORT_TITLE = re.compile(
    r"^\s*\[v?\d+(?:\.(?:\d+|x))+\]"
    r"|\bback-?port(?:s|ed)?\b(?![.\w])|\bcherry[- ]?pick(?:s|ed)?\b"
    r"|^\s*v?\d+\.\d+(?:\.(?:\d+|x))?\s+(?:patch|fixes|backports?)\b",
    re.I,
)

# A sync on a timer: incubator-gluten's 777 "[GLUTEN-1632][CH]Daily Update Clickhouse Version
# (20250405)", wasmtime's "Daily update of wasm-smith". Tags and a conventional type may lead.
SCHEDULED_TITLE = re.compile(
    r"^\s*(?:\[[^\]]*\]\s*|[\w()./-]+:\s+)*(?:daily|nightly|weekly)\s+(?:update|sync|bump|upgrade)\b",
    re.I,
)


# A dependency moved to a newer version, by a bot or by hand, named by its shape: a conventional
# `deps` scope (renovate's "fix(deps): Update module google.golang.org/api to v0.293.0",
# cloudquery's 1,000s), "Bump serde from 1.0.1 to 1.0.2", "Update Rust crate clap to v4.5.1",
# "Bump the cargo group with 3 updates", or a vendored copy synced ("Sync vendored typeshed
# stubs", IPython's "Update bundled copy of pexpect to 3.3", #6088 after #5687's 3.2: round 35).
# Two such PRs in a row link by file overlap and nothing else: round 30's cloudquery
# chain of two SDK upgrades was judged `not`. A scope may stand apart from its type and name
# several packages (lit's "feat (localize-tools): upgrade parse5 to 7.x", #4168: round 38, thin).
DEPENDENCY_TITLE = re.compile(
    r"^\s*(?:\[[^\]]*\]\s*)*(?:\w+\((?:deps|deps-dev|dependencies)\)!?:"
    r"|(?:[\w./-]+\s*(?:\([^)\n]*\))?!?:\s+)?(?:bump|update|upgrade)s?\s+(?:the\s+\S+\s+group\b"
    r"|(?:(?:dependency|module|package|crate|rust\s+crate|npm\s+package|go\s+module|action)\s+)?"
    r"[\w@./-]+\s+(?:from\s+v?[\w.+-]+\s+)?to\s+v?\d[\w.+-]*\s*(?:\(#\d+\))?\s*$)"
    r"|(?:[\w()./-]+:\s+)?(?:sync(?:s|ed|ing)?|updat(?:e|es|ed|ing)|upgrad(?:e|es|ed|ing)"
    r"|bump(?:s|ed|ing)?)\s+(?:the\s+)?(?:vendored|bundled)\b)",
    re.I,
)


def is_dependency_bump(title: str) -> bool:
    return DEPENDENCY_TITLE.match(title or "") is not None


def is_release(title: str) -> bool:
    title = title or ""
    return RELEASE_TITLE.match(title) is not None or RELEASE_CHORE.search(title) is not None


def is_backport(title: str) -> bool:
    return BACKPORT_TITLE.search(title or "") is not None


def is_scheduled(title: str) -> bool:
    return SCHEDULED_TITLE.match(title or "") is not None


def reverted_prs(refs: Iterable[_Ref], nodes: Mapping[int, PRNode]) -> set[int]:
    """PRs a later PR reverts (the reverting PR is the newer one of the pair), or a revert pushed
    without a PR undid."""
    reverted = {node.id for node in nodes.values() if node.reverted_at is not None}
    for ref in refs:
        if ref.type != "reverts" or ref.src not in nodes or ref.dst not in nodes:
            continue
        src, dst = nodes[ref.src], nodes[ref.dst]
        reverted.add(dst.id if dst.merged_at <= src.merged_at else src.id)
    return reverted


def rejection(node: PRNode, filters: ChainFilters, reverted: set[int]) -> str | None:
    """The first filter this PR fails, or None when it may be a stage."""
    # The shape first, so that a bot's releases and upgrades are counted as what they are.
    if filters.skip_releases and is_release(node.title):
        return "release"
    if filters.skip_dependency_bumps and is_dependency_bump(node.title):
        return "dependency_bump"
    if filters.skip_bots and is_bot(node.author):
        return "bot"
    if filters.skip_reverted and node.id in reverted:
        return "reverted"
    if filters.skip_carriers and node.carried:
        return "carries_other_prs"
    if filters.skip_backports and is_backport(node.title):
        return "backport"
    if filters.skip_scheduled and is_scheduled(node.title):
        return "scheduled_sync"
    if node.lines > filters.max_patch_lines:
        return "patch_too_large"
    if node.files and filters.skip_lockfile_only and all(is_lockfile(p) for p in node.files):
        return "lockfile_only"
    if node.files and filters.skip_docs_only and all(is_doc_path(p) for p in node.files):
        return "docs_only"
    return None


def apply_filters(
    nodes: Mapping[int, PRNode], refs: Iterable[_Ref], filters: ChainFilters
) -> tuple[set[int], FilterReport]:
    """The ids of PRs that pass every filter, and what each filter removed."""
    report = FilterReport()
    reverted = reverted_prs(refs, nodes) if filters.skip_reverted else set()
    kept: set[int] = set()
    for node in nodes.values():
        reason = rejection(node, filters, reverted)
        if reason:
            report.removed[reason] += 1
        else:
            kept.add(node.id)
    return kept, report
