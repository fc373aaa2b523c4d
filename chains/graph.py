"""The reference graph: merged PRs with a usable patch, and an edge pr_i → pr_(i-1) when pr_i builds on pr_(i-1).

Loaded with a handful of bulk queries (PRs, files, PR-to-PR references) so it scales to 100k PRs.
An edge needs a reference in either text (the newer PR names the older one, or a later comment on
the older one names the newer), the older PR merged before the newer was created, and, where a clone
is at hand, the older merge commit in the newer base's history.
"""

from __future__ import annotations

import bisect
import math
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Any, NamedTuple

import networkx as nx
from sqlalchemy import Connection, Engine, select

from chains.ancestry import AncestryOracle
from chains.carriers import carried_counts
from chains.config import ChainsConfig
from chains.cues import (
    EVIDENCE_CLASSES,
    SPLIT_OFF,
    EvidenceClass,
    analogy,
    classify,
    landed_subject,
    prepares,
    reference_sentence,
    regression_wording,
    stacked_on,
    stacked_wording,
)
from chains.filters import FilterReport, apply_filters, counts_as_substance, rejection
from chains.lines import Lineage, LineOracle, Lines
from chains.patches import is_test_path
from chains.reverts import mark_pushed_reverts, sha_reverts, title_reverts
from chains.symbols import SymbolOracle, Symbols
from miner.refs import retype
from miner.subjects import is_merge
from sql.models import PRFile, PullRequest, Reference, Repo

EVIDENCE_CHARS = 240
# Reference types that link two PRs through an issue (`_issue_wording`).
THROUGH_ISSUE = frozenset({"issue_mediated", "issue_analogy", "issue_prepares"})
MAX_EVIDENCE = 4
# Texts written while a PR was open: a mention there of a PR merged later is a forward-looking link.
AUTHORED_BEFORE_MERGE = frozenset({"title", "body", "commit", "branch"})
# Tie-break between references of equal weight: the more specific class decides the edge.
EVIDENCE_ORDER = ("revert", "strong", "medium", "issue_only", "parallel")
assert set(EVIDENCE_ORDER) == set(EVIDENCE_CLASSES)


@dataclass
class PRNode:
    id: int
    repo_id: int
    number: int
    title: str
    author: str | None
    created_at: datetime | None  # when it was opened (or at the latest: `opened_by`)
    merged_at: datetime
    base_sha: str | None
    merge_sha: str | None
    lines: int
    files: frozenset[str] = frozenset()
    code_lines: int = 0  # changed lines outside tests, fixtures, config and docs (substance)
    carried: int = 0  # earlier PRs whose commits it brings: a branch sync (chains/carriers.py)
    # When a revert pushed without a PR undid it (chains/reverts.py).
    reverted_at: datetime | None = None

    @property
    def opened(self) -> datetime:
        return self.created_at or self.merged_at


@dataclass
class RefRow:
    src: int
    dst: int
    type: str
    found_in: str
    via_issue: int
    evidence: str
    number: int | None = None  # the number as written (the target's), to find it in the evidence
    repo_id: int = 0  # the referring PR's repository


@dataclass
class LinkDecision:
    """One candidate link and what the link rules made of it (rule None: kept as an edge)."""

    newer: int
    older: int
    repo_id: int
    rule: str | None
    attrs: dict[str, Any]


@dataclass
class GraphReport:
    """What happened while building the graph, for the build summary."""

    nodes: int = 0
    edges: int = 0
    references: int = 0
    filtered: FilterReport = field(default_factory=FilterReport)
    dropped: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    links: list[LinkDecision] = field(default_factory=list)  # every candidate link, kept or not
    lineage_blames: int = 0  # git blame processes run for line lineage


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter)


def load_nodes(engine: Engine) -> dict[int, PRNode]:
    """Every merged PR with an `ok` patch, its files attached; two queries.

    `lines` counts the non-test files' changed lines when the files are known (snapshots and
    fixtures make many real PRs look huge; the size limit is about the code an agent must write);
    `code_lines` also leaves out config, docs and presentation (the substance a chain is measured
    by, `chains.filters.counts_as_substance`).
    Where the source knows no opening before the merge, `created_at` is the first merge of a PR
    numbered after it (`opened_by`).
    """
    pr = PullRequest
    query = select(
        pr.id,
        pr.repo_id,
        pr.number,
        pr.title,
        pr.author,
        pr.created_at,
        pr.merged_at,
        pr.base_sha,
        pr.merge_commit_sha,
        pr.additions,
        pr.deletions,
    ).where(pr.merged_at.is_not(None), pr.patch_status == "ok")
    files: dict[int, set[str]] = defaultdict(set)
    code_lines: dict[int, int] = defaultdict(int)
    substance: dict[int, int] = defaultdict(int)
    with engine.connect() as conn:
        nodes = {
            # merged_at is filtered non-null
            row[0]: PRNode(*row[:9], lines=(row[9] or 0) + (row[10] or 0))  # type: ignore[arg-type]
            for row in conn.execute(query)
        }
        for pr_id, path, added, deleted in conn.execute(
            select(PRFile.pr_id, PRFile.path, PRFile.additions, PRFile.deletions)
        ):
            if pr_id in nodes:
                files[pr_id].add(path)
                changed = (added or 0) + (deleted or 0)
                code_lines[pr_id] += 0 if is_test_path(path) else changed
                substance[pr_id] += changed if counts_as_substance(path) else 0
        merged = {pr_id: (node.number, node.merged_at) for pr_id, node in nodes.items()}
        for pr_id, count in carried_counts(conn, merged).items():
            nodes[pr_id].carried = count
        merges = conn.execute(
            select(pr.repo_id, pr.number, pr.merged_at, pr.merge_commit_sha, pr.base_sha).where(
                pr.merged_at.is_not(None)
            )
        ).all()
        latest = opened_by((r, n, at) for r, n, at, _m, _b in merges if at is not None)
    for node in nodes.values():
        # Only where the source knows no opening before the merge: a squash merge's author date
        # is the merge's. A branch's first commit tells when its code was written, which the
        # gap measures (delta-rs #1434 was opened 3 days after #1430 merged, and written
        # anew 114 days on).
        bound = latest.get((node.repo_id, node.number))
        if bound is not None and (node.created_at or node.merged_at) >= node.merged_at:
            node.created_at = bound
    for pr_id, paths in files.items():
        nodes[pr_id].files = frozenset(paths)
        nodes[pr_id].lines = code_lines[pr_id]
        nodes[pr_id].code_lines = substance[pr_id]
    land_in_order(nodes, {(r, m): (at, b) for r, _n, at, m, b in merges if m and at})
    return nodes


def land_in_order(
    nodes: dict[int, PRNode], landed: dict[tuple[int, str], tuple[datetime, str | None]]
) -> None:
    """Order merges stamped with the same second the way they landed, a microsecond apart.

    A stack merged at once (Graphite, a merge queue, a script) lands its PRs within one second,
    and git keeps no finer time: which of two such PRs is the later one was a coin toss, so a
    PR stacked on another could be read as the one underneath (qdrant #9777, which uses the
    `FileNotFound` #9763 added, both stamped 09:17:00), and a revert as the reverted. The history
    tells: each PR of a stack is merged onto the one before, so a PR lands after every PR of the
    same second that its base reaches back through (merge → that merge's base → …). `landed`
    maps (repo id, merge sha) to (merged at, base sha) for every merged PR. PRs the history does
    not order stay as they were."""
    seconds: dict[tuple[int, datetime], int] = defaultdict(int)
    for node in nodes.values():
        seconds[(node.repo_id, node.merged_at)] += 1
    for node in nodes.values():
        at = node.merged_at
        below, sha = 0, node.base_sha
        # A stack is a line: it never holds more PRs than merged in that second.
        while sha and below < seconds[(node.repo_id, at)] - 1:
            merged_at, sha = landed.get((node.repo_id, sha), (None, None))
            if merged_at != at:
                break
            below += 1
        node.merged_at = at + timedelta(microseconds=below)


def opened_by(merges: Iterable[tuple[int, int, datetime]]) -> dict[tuple[int, int], datetime]:
    """(repo id, number) → the latest time that PR can have been opened, from (repo id, number,
    merged at) of every merged PR. GitHub numbers PRs and issues in the order they are opened, so
    a PR was open before any PR numbered after it merged. The git source does not know when a
    squash-merged PR was opened (it takes the merge's time), and without this bound two PRs worked
    on at once read as one opened after the other merged (iceberg-go #467, opened before #468 and
    merged after it).

    A PR numbered after another but merged more than `FOREIGN_NUMBERING` before it is taken to be
    of another numbering: histories carry the PRs of the repository they moved from or split off
    (rust-bindgen's crabtw-era #280 merged 251 days before the servo-era #276 was opened;
    datafusion-ballista's history holds arrow-datafusion's PRs)."""
    by_repo: dict[int, list[tuple[int, datetime]]] = defaultdict(list)
    for repo_id, number, merged in merges:
        by_repo[repo_id].append((number, merged))
    latest: dict[tuple[int, int], datetime] = {}
    for repo_id, rows in by_repo.items():
        later: list[datetime] = []  # merges of the PRs numbered at or after this one, in order
        for number, merged in sorted(rows, reverse=True):
            bisect.insort(later, merged)
            latest[(repo_id, number)] = later[bisect.bisect_left(later, merged - FOREIGN_NUMBERING)]
    return latest


def load_references(engine: Engine) -> list[RefRow]:
    """Every reference that resolved to a PR of the store (direct or through an issue). A mention
    is read again with today's rules (`miner.refs.retype`): a store mined before a wording was
    known ('fix: revert "… (#12)"', "revert #5 #12") needs no new mining. A reference in the
    subject of a merge among a PR's commits is left out: merging the main branch into a PR's
    branch names the PRs it brings along, not ones the PR builds on (pyo3 #160's "Merge #154
    and #155 changed with `syn13`")."""
    ref = Reference
    query = select(
        ref.src_pr_id,
        ref.target_pr_id,
        ref.type,
        ref.found_in,
        ref.via_issue,
        ref.evidence,
        ref.target_number,
        ref.repo_id,
    ).where(ref.target_pr_id.is_not(None), ref.src_pr_id != ref.target_pr_id)
    with engine.connect() as conn:
        rows = [
            RefRow(a, b or 0, _fresh_type(t, e, n), f, v or 0, (e or "")[:EVIDENCE_CHARS], n, r)
            for a, b, t, f, v, e, n, r in conn.execute(query)
            # A merge inside a PR's commits names the PR or branch it brings in: no reference.
            if not (f == "commit" and is_merge(e or ""))
        ]
        rows = _without_landed_subjects(conn, rows)
        said = _issue_mentions(conn) if any(r.type == "issue_mediated" for r in rows) else {}
    return [_issue_wording(r, said) for r in rows]


def _without_landed_subjects(conn: Connection, rows: list[RefRow]) -> list[RefRow]:
    """`rows` less the references that are the subject of the PR they name as it landed,
    "Title (#N)": a list of the commits a branch took in from the main branch, copied into a
    squash message or a sync commit (tauri #1331's feature branch lists `dev`'s "Fix extremely
    slow dev builds caused by … (#1395)"). A stacked branch lists its base's commits before the
    base lands, without the number."""

    def ends_with_number(r: RefRow) -> bool:  # the cheap test first: "… (#N)"
        return r.number is not None and r.evidence.endswith(f"(#{r.number})")

    landed = {r.dst for r in rows if ends_with_number(r)}
    if not landed:
        return rows
    query = select(PullRequest.id, PullRequest.title).where(PullRequest.id.in_(landed))
    titles = dict(conn.execute(query).all())
    return [
        r
        for r in rows
        if not (
            ends_with_number(r) and landed_subject(r.evidence, titles.get(r.dst) or "", r.number)
        )
    ]


def _issue_mentions(conn: Connection) -> dict[tuple[int, int], list[tuple[str, str]]]:
    """(PR id, issue number) → the type and evidence of each reference of the PR to the issue."""
    query = select(
        Reference.src_pr_id, Reference.target_number, Reference.type, Reference.evidence
    ).where(Reference.target_pr_id.is_(None), Reference.target_kind.in_(("issue", "unknown")))
    said: dict[tuple[int, int], list[tuple[str, str]]] = defaultdict(list)
    for src, number, kind, evidence in conn.execute(query):
        said[(src, number)].append((kind, evidence or ""))
    return said


def _issue_wording(ref: RefRow, said: dict[tuple[int, int], list[tuple[str, str]]]) -> RefRow:
    """An issue-mediated link read again with what each PR says of the shared issue:
    - one names it only by analogy ("Similar to #7609", an issue the other PR fixed): siblings;
      an `issue_analogy` reference, classed parallel;
    - one says it prepares it ("Groundwork for #6966", which the other fixes): the other builds
      on it; an `issue_prepares` reference from the preparing PR, classed strong, which may link
      two PRs open at once (`_stacked`).
    Either takes that PR's sentence as its evidence."""
    if ref.type != "issue_mediated":
        return ref
    number = ref.via_issue
    for end, other in ((ref.src, ref.dst), (ref.dst, ref.src)):
        refs = said.get((end, number), [])
        if refs and all(kind == "mention" and analogy(text, number) for kind, text in refs):
            sentence = reference_sentence(refs[0][1], number)[:EVIDENCE_CHARS]
            return replace(ref, type="issue_analogy", evidence=sentence, number=number)
        ready = [text for _kind, text in refs if prepares(text, number)]
        if ready:
            sentence = reference_sentence(ready[0], number)[:EVIDENCE_CHARS]
            return replace(
                ref, src=end, dst=other, type="issue_prepares", evidence=sentence, number=number
            )
    return ref


def _fresh_type(kind: str, evidence: str | None, number: int | None) -> str:
    return (retype(evidence or "", number) or kind) if kind == "mention" else kind


def with_unresolved_reverts(
    engine: Engine, nodes: dict[int, PRNode], refs: list[RefRow]
) -> list[RefRow]:
    """`refs` plus the reverts named by a commit of the reverted PR's branch, or only by the
    reverted PR's title (chains/reverts.py)."""
    known = [(r.src, r.dst) for r in refs if r.type == "reverts"]
    found = sha_reverts(engine, nodes, known)
    found += title_reverts(nodes, known + [(f.reverter, f.reverted) for f in found])
    return refs + [
        RefRow(
            f.reverter,
            f.reverted,
            "reverts",
            f.found_in,
            0,
            f.evidence[:EVIDENCE_CHARS],
            None,
            f.repo_id,
        )
        for f in found
    ]


def load_repos(engine: Engine) -> dict[int, tuple[str, str | None, str | None]]:
    """repo id → (full_name, clone_path, default_branch)."""
    with engine.connect() as conn:
        rows = conn.execute(select(Repo.id, Repo.full_name, Repo.clone_path, Repo.default_branch))
        return {rid: (name, path, branch) for rid, name, path, branch in rows}


def umbrella_issues(refs: Iterable[RefRow], max_fanout: int) -> set[int]:
    """Issues that mediate links among more than `max_fanout` PRs: tracking issues, not one piece of work."""
    members: dict[int, set[int]] = defaultdict(set)
    for ref in refs:
        if ref.type in THROUGH_ISSUE and ref.via_issue:
            members[ref.via_issue].update((ref.src, ref.dst))
    return {issue for issue, prs in members.items() if len(prs) > max_fanout}


def _read_umbrella(ref: RefRow, config: ChainsConfig) -> bool:
    """Whether a link only through an umbrella issue goes on to the link rules, where, issue-only,
    it needs code evidence: a tracking issue gathers a series, and the PRs of a series that rewrite
    each other's lines build on each other (clap #314 fixes a crash in the `create_error` #312
    added the day before, both under one umbrella issue). Analogy and preparation through it say
    nothing of two PRs in particular."""
    return (
        ref.type == "issue_mediated"
        and config.umbrella_links_with_code
        and config.corroborate_issue_only
    )


# How much earlier than a PR a later-numbered one may merge and still be of the same numbering
# (`opened_by`). A PR open longer is rare: where no other numbering is mixed in, the bound moves
# 99 % of openings back by under 80 days (arrow-adbc 57, arrow-go 64, ruff 65, wasmtime 78).
FOREIGN_NUMBERING = timedelta(days=180)
# The rule of two PRs open at once neither of which builds on the other.
OPEN_AT_ONCE = "not_merged_before_created"


def orient(a: PRNode, b: PRNode) -> tuple[PRNode, PRNode] | None:
    """(newer, older) when one was merged before the other was opened; None for overlapping lifetimes."""
    if b.merged_at < a.opened:
        return a, b
    if a.merged_at < b.opened:
        return b, a
    return None


def _stacked(ref: RefRow, a: PRNode, b: PRNode) -> tuple[PRNode, PRNode] | None:
    """(newer, older) of two PRs open at once when the one merged later says it is stacked on the
    other ("Based on #N"), or the one merged first says it prepares the other ("Groundwork for
    #N"): the later one was opened on top of its base, and merged after it."""
    later, earlier = (a, b) if a.merged_at > b.merged_at else (b, a)
    if ref.type == "issue_mediated":
        return None
    if ref.src == later.id and stacked_on(ref.evidence, ref.number):
        return later, earlier
    if ref.src == earlier.id and prepares(ref.evidence, ref.number):
        return later, earlier
    return None


def _caught_up(
    a: PRNode,
    b: PRNode,
    config: ChainsConfig,
    lines: LineOracle | None,
    symbols: SymbolOracle | None = None,
) -> tuple[PRNode, PRNode] | None:
    """(newer, older) of two PRs open at once when the one merged later was finished on top of
    the other's merge: its own branch holds that merge (it took in the main branch after the
    other landed: pyo3 #1794, branched before #1777 merged, uses the FFI names #1777 added), or,
    with no branch to read (a squash merge), its patch shows it: it rewrites `caught_up_lines` of
    the other's lines, or its code uses `min_symbols` names the other brought in (iceberg-go
    #467, opened first, calls #468's `GeneratePartitionFieldName`). A line or two kept through a
    rebase is not enough: parallel PRs share such glue (arrow-nanoarrow #340 and #353)."""
    later, earlier = (a, b) if a.merged_at > b.merged_at else (b, a)
    if lines is None:
        return None
    if lines.branch_holds(later, earlier):
        return later, earlier
    if config.caught_up_lines <= 0:
        return None
    if lines.lineage(later, earlier, blame=True).weight >= config.caught_up_lines:
        return later, earlier
    if symbols is None or config.min_symbols <= 0:
        return None
    return (later, earlier) if symbols.used(later, earlier) >= config.min_symbols else None


def _group_references(
    refs: list[RefRow],
    nodes: dict[int, PRNode],
    config: ChainsConfig,
    report: GraphReport,
    every: dict[int, PRNode],
    lines: LineOracle | None = None,
    symbols: SymbolOracle | None = None,
) -> dict[tuple[int, int], list[RefRow]]:
    """References grouped by the (newer, older) pair they link; pairs that cannot be edges are counted.

    Counts are of links (unordered PR pairs), each under the first rule that rules it out; each
    ruled-out link is also recorded with its references (`every`: all PRs, to orient it by time).
    """
    umbrellas = umbrella_issues(refs, config.max_issue_fanout)
    pairs: dict[tuple[int, int], list[RefRow]] = defaultdict(list)
    ruled_out: dict[frozenset[int], tuple[str, list[RefRow]]] = {}
    for ref in refs:
        a, b = nodes.get(ref.src), nodes.get(ref.dst)
        key = frozenset((ref.src, ref.dst))
        if a is None or b is None:
            rule = "pr_filtered_or_not_mined"
        elif a.repo_id != b.repo_id:
            rule = "cross_repo"
        elif (
            ref.type in THROUGH_ISSUE
            and ref.via_issue in umbrellas
            and not _read_umbrella(ref, config)
        ):
            rule = "umbrella_issue"
        elif (
            pair := orient(a, b) or _stacked(ref, a, b) or _caught_up(a, b, config, lines, symbols)
        ) is None:
            rule = OPEN_AT_ONCE
        else:
            pairs[(pair[0].id, pair[1].id)].append(ref)
            continue
        ruled_out.setdefault(key, (rule, []))[1].append(ref)
    linked = {frozenset(pair) for pair in pairs}
    for key, (rule, group) in ruled_out.items():
        if key not in linked:
            report.dropped[rule] += 1
            report.links.append(_ruled_out(group, rule, every, config))
    return pairs


def _ruled_out(
    group: list[RefRow], rule: str, every: dict[int, PRNode], config: ChainsConfig
) -> LinkDecision:
    """The record of a link no edge rule got to judge, oriented by merge time when both are known."""
    ref = group[0]
    newer, older = ref.src, ref.dst
    a, b = every.get(newer), every.get(older)
    if a is not None and b is not None and a.merged_at < b.merged_at:
        newer, older = older, newer
    judged = [classify(r.type, r.evidence, r.number) for r in group]
    attrs: dict[str, Any] = {
        "evidence_class": judged[0][0],
        "cue": judged[0][1],
        "why": f"{rule}: no edge rule judged this pair{_unusable_ends(ref, every, config)}"
        + (_open_at_once(every.get(newer), every.get(older)) if rule == OPEN_AT_ONCE else ""),
        "evidence": _evidence_rows([(r, cls) for r, (cls, _) in zip(group, judged, strict=True)]),
    }
    return LinkDecision(newer, older, ref.repo_id, rule, attrs)


def _open_at_once(newer: PRNode | None, older: PRNode | None) -> str:
    """Why two PRs open at once are no edge, for the record."""
    if newer is None or older is None:
        return ""
    return (
        f" (#{newer.number} was opened before #{older.number} merged, and neither its branch nor"
        f" its patch shows it was finished on top of #{older.number})"
    )


def _unusable_ends(ref: RefRow, every: dict[int, PRNode], config: ChainsConfig) -> str:
    """Which end of a link is no stage and why ('' for other rules' pairs), for the record."""
    found = []
    for pr in (ref.src, ref.dst):
        node = every.get(pr)
        if node is None:
            name = f"#{ref.number}" if pr == ref.dst and ref.number else "the referring PR"
            found.append(f"{name} is not mined, not merged or has no usable patch")
        elif reason := rejection(node, config.filters, set()):
            found.append(f"#{node.number} is filtered ({reason})")
    return f" ({'; '.join(found)})" if found else ""


def _evidence_rows(refs: list[tuple[RefRow, str]]) -> list[dict[str, Any]]:
    return [
        {
            "type": ref.type,
            "class": cls,
            "found_in": ref.found_in,
            "via_issue": ref.via_issue,
            "text": ref.evidence,
        }
        for ref, cls in refs[:MAX_EVIDENCE]
    ]


# Lines written back that count as code evidence: one common line comes back by chance (clippy
# #8313 restored one line #8280 had removed, and built on nothing of it).
MIN_RESTORED = 3


def _restored(lineage: Lineage) -> int:
    """The written-back lines that count as code evidence (0 under `MIN_RESTORED`)."""
    return lineage.restored if lineage.restored >= MIN_RESTORED else 0


# Drops that line lineage overrides; only these pairs are worth a git blame.
LINEAGE_CAN_RESCUE = frozenset(
    {
        "issue_only_uncorroborated",
        "plain_mention_without_shared_lines",
        "too_little_file_overlap",
        "gap_too_long",
        "wording_without_shared_code",
        "parallel_wording",
    }
)
# Drops that symbol use (the newer PR's code uses names the older PR introduced) overrides.
SYMBOLS_CAN_RESCUE = frozenset(
    {
        "issue_only_uncorroborated",
        "too_little_file_overlap",
        "plain_mention_without_shared_lines",
        "gap_too_long",
        "wording_without_shared_code",
    }
)


@dataclass
class Judged:
    """One reference with its evidence class, weight and the words that decided the class."""

    ref: RefRow
    cls: EvidenceClass
    cue: str
    strength: int


def judge_reference(ref: RefRow, newer: PRNode, config: ChainsConfig) -> Judged:
    cls, cue = classify(ref.type, ref.evidence, ref.number)
    strength = config.evidence_weights.get(cls, 0)
    if cls == "revert" and not config.revert_links:
        strength = 0
    # Written by the older PR while it was open, about the newer one: a vaguer, forward link.
    if strength and ref.src != newer.id and ref.found_in in AUTHORED_BEFORE_MERGE:
        strength = max(strength - config.flipped_penalty, 1)
    return Judged(ref, cls, cue, strength)


def _best(judged: list[Judged]) -> Judged:
    """The reference that decides the edge: strongest first; analogy wording vetoes a weaker one."""
    ranked = sorted(
        judged, key=lambda j: (-j.strength, EVIDENCE_ORDER.index(j.cls), j.ref.found_in)
    )
    top = ranked[0]
    if top.cls not in ("strong", "revert"):
        parallel = [j for j in ranked if j.cls == "parallel"]
        if parallel:
            return parallel[0]
    return top


def _describe(best: Judged, writer: int) -> str:
    text = best.ref.evidence if len(best.ref.evidence) <= 90 else best.ref.evidence[:87] + "..."
    return f"{best.cls}: {best.cue} ({best.ref.type} in the {best.ref.found_in} of #{writer}: '{text}')"


class Undone(NamedTuple):
    """When a PR was reverted, and by which PR (None: a revert pushed without one)."""

    at: datetime
    by: PRNode | None = None


def revert_times(refs: Iterable[RefRow], nodes: dict[int, PRNode]) -> dict[int, Undone]:
    """PR id → when a later PR reverting it merged, or a revert without a PR was pushed (the
    earliest such revert)."""
    found = {pr: Undone(n.reverted_at) for pr, n in nodes.items() if n.reverted_at is not None}
    for ref in refs:
        a, b = nodes.get(ref.src), nodes.get(ref.dst)
        if ref.type == "reverts" and a is not None and b is not None:
            reverter, reverted = (a, b) if b.merged_at <= a.merged_at else (b, a)
            _note_revert(found, reverted.id, reverter)
    return found


def _note_revert(found: dict[int, Undone], reverted: int, reverter: PRNode) -> None:
    if reverted not in found or reverter.merged_at < found[reverted].at:
        found[reverted] = Undone(reverter.merged_at, reverter)


def _reverted_before(undone: Undone | None, newer: PRNode) -> bool:
    """Whether the older PR was reverted before the newer one merged: the newer PR's base (the
    main branch at its merge) no longer holds the older change, whenever the newer PR was opened
    (tokio #4373, opened before #4377 merged, merged after #4394 reverted #4377; it builds on
    the re-land #4395). A re-submission keeps its commits' old dates (serde #316, "Re-opening of
    #302 after bust merge", dated before the revert #314 it was branched after)."""
    return undone is not None and undone.at < newer.merged_at


def assess_edge(
    refs: list[RefRow],
    newer: PRNode,
    older: PRNode,
    config: ChainsConfig,
    lines: LineOracle | None = None,
    reverted_at: dict[int, Undone] | None = None,
    symbols: SymbolOracle | None = None,
) -> tuple[str | None, dict[str, Any]]:
    """(drop rule or None, edge attributes with `why`): every decision about one pair of PRs."""
    judged = [judge_reference(r, newer, config) for r in refs]
    best = _best(judged)
    if best.cls != "revert" and _reverted_before((reverted_at or {}).get(older.id), newer):
        # The older change was reverted before the newer PR merged: its base does not hold it
        # (a re-land builds on the revert, not on the original).
        return "older_reverted_before", _settled_attrs(judged, best, newer, older)
    if best.cls != "revert" and lines is not None and lines.repeats(newer, older):
        return "repeats_older", _settled_attrs(judged, best, newer, older, REPEATS)
    overlap = round(jaccard(newer.files, older.files), 4)
    gap = (newer.opened - older.merged_at).total_seconds() / 86400
    lineage = Lineage()
    attrs: dict[str, Any] = {
        "types": sorted({r.type for r in refs}),
        "evidence_class": best.cls,
        "cue": best.cue,
        "strength": 0 if best.cls == "parallel" else best.strength,
        "overlap": overlap,
        "gap_days": round(gap, 1),
        "lineage": lineage.lines,
        "lineage_via": lineage.via,
    }
    attrs["weight"] = attrs["strength"] + config.overlap_weight * overlap
    writer = newer.number if best.ref.src == newer.id else older.number
    why = _describe(best, writer)
    rule = _link_rule(best, attrs, newer, older, config)
    # git blame runs only where lineage could change the decision; elsewhere the patches tell
    # (cheaply) whether the newer PR rewrites the older one's lines, for the record.
    if lines is not None:
        lineage = lines.lineage(newer, older, blame=_needs_blame(rule, lines, newer, older))
        attrs["lineage"], attrs["lineage_via"] = lineage.lines, lineage.via
        attrs["lineage_moved"], attrs["lineage_touched"] = lineage.moved, lineage.touched
        attrs["lineage_restored"], attrs["lineage_tests"] = lineage.restored, lineage.tests
        attrs["lineage_test_code"] = lineage.test_code
        attrs["lineage_whole"], attrs["lineage_inserted"] = lineage.whole, lineage.inserted
        if rule in LINEAGE_CAN_RESCUE:
            rule = _link_rule(best, attrs, newer, older, config)
    rule = _with_symbols(rule, best, attrs, newer, older, config, symbols)
    if best.cls == "issue_only" and rule is None and config.corroborate_issue_only:
        backing = _corroboration(
            lineage,
            lineage_backs(lineage, gap, config),
            symbols_back(attrs, config),
            tests_back(lineage, gap, config),
        )
        why += f"; corroborated by {backing}"
    if lineage.lines:
        why += f"; the newer PR changes {lineage.lines} line(s) the older one added ({lineage.via})"
        if lineage.moved:
            why += f", {lineage.moved} of them only moved or carried"
        if lineage.whole:
            why += ", all the code the older PR wrote"
    if lineage.inserted:
        why += (
            f"; the newer PR adds code inside {lineage.inserted} place(s) of the older one's code"
        )
    if lineage.tests:
        why += f"; it changes {lineage.tests} line(s) of the older PR's tests"
        if lineage.test_code != lineage.tests:
            why += f" ({lineage.test_code} of them test code)"
    if attrs.get("symbols"):
        why += f"; the newer PR's code uses {attrs['symbols']} name(s) the older one introduced"
        if attrs.get("symbol_names"):
            why += f" ({', '.join(attrs.pop('symbol_names')[:5])})"
    if lineage.restored:
        why += f"; the newer PR writes back {lineage.restored} line(s) the older one removed"
    if not lineage.lines and lineage.touched:
        why += (
            f"; the newer PR edits {lineage.touched} import or comment line(s) the older one added"
        )
    attrs["why"] = f"{why}; file overlap {overlap:.2f}; opened {gap:.0f} days after the older merge"
    ranked = sorted(judged, key=lambda j: -j.strength)
    attrs["evidence"] = _evidence_rows([(j.ref, j.cls) for j in ranked])
    return rule, attrs


def _with_symbols(
    rule: str | None,
    best: Judged,
    attrs: dict[str, Any],
    newer: PRNode,
    older: PRNode,
    config: ChainsConfig,
    symbols: SymbolOracle | None,
) -> str | None:
    """The decision once symbol use is known; it is measured only where it may rescue the link
    (one git grep per older PR, cached)."""
    if symbols is None or rule not in SYMBOLS_CAN_RESCUE:
        return rule
    attrs["symbols"] = symbols.used(newer, older)
    if not attrs["symbols"]:
        return rule
    if isinstance(symbols, Symbols):
        attrs["symbol_names"] = symbols.shared(newer, older)
    return _link_rule(best, attrs, newer, older, config)


def symbols_back(attrs: dict[str, Any], config: ChainsConfig) -> bool:
    """Whether the newer PR's use of names the older one introduced backs the link on its own:
    `min_symbols` names per `max_gap_days` between the PRs (at least one period), as for line
    lineage: a function added two years ago is everybody's by now."""
    if config.min_symbols <= 0 or not attrs.get("symbols", 0):
        return False
    periods = max(1.0, attrs["gap_days"] / config.max_gap_days)
    return attrs["symbols"] >= math.ceil(config.min_symbols * periods)


def _needs_blame(rule: str | None, lines: LineOracle, newer: PRNode, older: PRNode) -> bool:
    """Whether git blame may change this pair's decision. Strong wording needs only some code
    evidence, so where the patches already show a rewritten line, blame is not asked; parallel
    wording yields only to many rewritten lines, so blame runs only where the patches show some."""
    if rule == "wording_without_shared_code":
        return not lines.lineage(newer, older, blame=False).lines
    if rule == "parallel_wording":
        return lines.lineage(newer, older, blame=False).lines > 0
    return rule in LINEAGE_CAN_RESCUE


REVERTED = "the older PR was reverted before the newer one merged"
REPEATS = "the newer PR makes the older one's change again (a re-submission or re-application)"


def _settled_attrs(
    judged: list[Judged], best: Judged, newer: PRNode, older: PRNode, reason: str = REVERTED
) -> dict[str, Any]:
    """The record of a link settled before its lineage is read: the older PR was reverted, or the
    newer one makes its change again (`reason`)."""
    gap = (newer.opened - older.merged_at).total_seconds() / 86400
    writer = newer.number if best.ref.src == newer.id else older.number
    return {
        "types": sorted({j.ref.type for j in judged}),
        "evidence_class": best.cls,
        "cue": best.cue,
        "strength": best.strength,
        "overlap": round(jaccard(newer.files, older.files), 4),
        "gap_days": round(gap, 1),
        "lineage": 0,
        "lineage_via": "",
        "why": f"{_describe(best, writer)}; {reason}",
        "evidence": _evidence_rows([(j.ref, j.cls) for j in judged]),
    }


def _link_rule(
    best: Judged, attrs: dict[str, Any], newer: PRNode, older: PRNode, config: ChainsConfig
) -> str | None:
    """The first link rule this pair fails, or None when it is an edge.

    Line lineage (the newer PR rewrites lines the older one added) is the strongest evidence there
    is: it backs a plain mention or an issue-only link, and the overlap and gap rules, which only
    guess at shared code, apply where it is absent."""
    if best.cls == "parallel":
        return None if _lineage_beats_parallel(attrs, config) else "parallel_wording"
    if best.cls == "revert" and not config.revert_links:
        return "revert_links_off"
    if attrs["strength"] <= 0:
        return "zero_weight"
    lineage = Lineage(
        attrs["lineage"],
        attrs["lineage_via"],
        attrs.get("lineage_moved", 0),
        attrs.get("lineage_touched", 0),
        tests=attrs.get("lineage_tests", 0),
        test_code=attrs.get("lineage_test_code", 0),
        restored=attrs.get("lineage_restored", 0),
        whole=attrs.get("lineage_whole", False),
        inserted=attrs.get("lineage_inserted", 0),
    )
    backed = (
        lineage_backs(lineage, attrs["gap_days"], config)
        or symbols_back(attrs, config)
        or tests_back(lineage, attrs["gap_days"], config)
    )
    said_by_newer = best.ref.src == newer.id
    needs_backing = best.cls == "issue_only" and config.corroborate_issue_only
    if needs_backing and not backed:
        return "issue_only_uncorroborated"
    if best.cls == "medium" and config.medium_needs_lines and not backed:
        return "plain_mention_without_shared_lines"
    if backed or _regression_fix(best, attrs, config, said_by_newer):
        return None
    if attrs["overlap"] < config.min_overlap_by_strength.get(attrs["strength"], 0.0):
        return "too_little_file_overlap"
    if attrs["gap_days"] > config.max_gap_days and not _strong_with_code(
        best, attrs, lineage, config, said_by_newer
    ):
        return "gap_too_long"
    if _wording_only(best, attrs, lineage, config, said_by_newer):
        return "wording_without_shared_code"
    return None


def _strong_with_code(
    best: Judged, attrs: dict[str, Any], lineage: Lineage, config: ChainsConfig, said_by_newer: bool
) -> bool:
    """Whether the newer PR's own strong wording and some code evidence (a rewritten line, a used
    name) hold the link over the gap, up to `strong_code_max_gap_days`: either alone is too little
    after months, together they tell a follow-up (wasm-tools #2466, "a follow-up to #2306, which
    added support for tag imports", iterates #2306's `tag_imports` 186 days on)."""
    if best.cls != "strong" or not said_by_newer:
        return False
    if attrs["gap_days"] > config.strong_code_max_gap_days:
        return False
    return lineage.weight >= 1 or attrs.get("symbols", 0) > 0


def _lineage_beats_parallel(attrs: dict[str, Any], config: ChainsConfig) -> bool:
    """Analogy or list wording ("see also #N") loses to many rewritten lines: a PR rewriting
    dozens of the older one's lines builds on it whatever its description lists it under."""
    need = config.parallel_lineage_lines
    return need > 0 and attrs["lineage"] - attrs.get("lineage_moved", 0) / 2 >= need


def _regression_fix(
    best: Judged, attrs: dict[str, Any], config: ChainsConfig, said_by_newer: bool
) -> bool:
    """A fix of a regression the older PR caused ("in #N I broke X", "regressed in #N"). Soon
    after it, the fix may touch another file, yet it repairs the older PR's behaviour. Later, it
    must share a file with the older PR: a regression stays in the code until someone notices
    (pydantic #3201, "Small regression in #2231", 232 days on), so the gap rule does not apply.
    Only the newer PR can fix what the older one broke: the same words in the PR merged first
    name a bug of a branch still open (xarray #10741, "Fixes regression from #10726")."""
    strong = best.cls == "strong" and said_by_newer
    words = regression_wording(best.ref.evidence, best.ref.number) if strong else ""
    if not words:
        return False
    gap = attrs["gap_days"]
    if gap <= config.regression_gap_days:
        return True
    # Months on, "introduced in #N" tells a feature's history as often as a bug's (ruff #10891:
    # "the control-flow graph which was first introduced in #5384 and removed in #9463").
    late = not words.lower().startswith("introduced")
    return late and attrs["overlap"] > 0 and gap <= config.regression_max_gap_days


def lineage_backs(lineage: Lineage, gap_days: float, config: ChainsConfig) -> bool:
    """Whether line lineage is enough to back a link on its own (over the gap, overlap and
    issue-only rules): `lineage_lines_per_gap` per `max_gap_days` between the PRs (at least one
    period), a moved line counting half, and never more than `lineage_max_lines`: the reference
    already says the two PRs are related, and two rewritten lines of the older PR's code confirm
    it at any age, while a single line is as often a shared hot spot. Rewriting all the code the
    older PR wrote backs it within `whole_change_max_gap_days`, however few lines that is (rust-analyzer
    #17813 rewrote #15864's one-line fix 270 days on). Code lines the older PR removed and the
    newer one writes back, from `MIN_RESTORED` on, count as rewritten ones: the newer PR takes
    back part of the older one (numpy #6717, "Readd fallback CBLAS detection", of #6183)."""
    restored = _restored(lineage)
    if not lineage.lines and not lineage.inserted and not restored:
        return False
    if lineage.whole and lineage.weight and gap_days <= config.whole_change_max_gap_days:
        return True
    need = config.lineage_lines_per_gap * max(1.0, gap_days / config.max_gap_days)
    if config.lineage_max_lines > 0:
        need = min(need, config.lineage_max_lines)
    return lineage.weight + restored >= need


def tests_back(lineage: Lineage, gap_days: float, config: ChainsConfig) -> bool:
    """Whether the newer PR rewrites enough of the older one's tests to back the link on its own:
    `test_lines_per_gap` per `max_gap_days` between the PRs (at least one period). Tests say what
    the older PR promised; a PR that changes them changes that behaviour (arrow-adbc #403 renames
    #381's TLS tests and adds cases for the options #381 implemented; lancedb #3016 changes the
    output of #3013's `__getitems__` and rewrites its 21 lines of tests). A line or two is as
    often a sibling adding its case beside the older one's."""
    if config.test_lines_per_gap <= 0 or not lineage.test_code:
        return False
    need = config.test_lines_per_gap * max(1.0, gap_days / config.max_gap_days)
    return lineage.test_code >= need


def _wording_only(
    best: Judged,
    attrs: dict[str, Any],
    lineage: Lineage,
    config: ChainsConfig,
    said_by_newer: bool,
) -> bool:
    """A strong-wording link with no code evidence at all: the newer PR changes none of the older
    one's lines, writes back none it removed (a re-land after a revert does) and uses none of its
    symbols ("follow up to #N" for a parallel change, "#N caused an overflow" for a fix
    elsewhere). Stack wording needs the same unless `stack_needs_code` is off: a branch is
    stacked to merge in order as often as to build on its base (xarray #9418, "Stacks on #9417,
    merge that first", swaps annotations #9417 never wrote; rolldown #9893 and #9895, each
    "Stacked on" a sibling that removes another plugin). The exception is the older PR saying it
    prepares the newer one (wasmtime #8721, "primarily to unblock #8715"). With it off, split-off
    wording still needs code when the newer PR says it of the older (tokio: "Extracted from
    #1152", said of a PR merged before, is a side change left over)."""
    if best.cls != "strong" or not config.strong_needs_code:
        return False
    if lineage.weight or lineage.touched or _restored(lineage) or attrs.get("symbols", 0):
        return False
    if config.stack_needs_code:
        # Only the PR merged first saying it exists for the other ("a prerequisite for #N", "to
        # unblock #N") keeps the link on its words: it was written for that PR.
        return said_by_newer or not prepares(best.ref.evidence, best.ref.number)
    words = stacked_wording(best.ref.evidence, best.ref.number)
    if words and said_by_newer and SPLIT_OFF.fullmatch(words):
        return True
    return not words


def _corroboration(lineage: Lineage, by_lines: bool, by_symbols: bool, by_tests: bool) -> str:
    """What backs an issue-only link besides the issue ('' when nothing does). Only code and the
    older PR's tests: two PRs of one author on one issue are as often a fix and an unrelated later
    attempt (mypy: "#1645 isn't fixed by this") as a fix and its follow-up."""
    if by_lines and not lineage.weight:
        return "the newer PR writing back lines the older one removed"
    if by_lines:
        return "the newer PR changing lines the older one added"
    if by_symbols:
        return "the newer PR's code using names the older one introduced"
    if by_tests:
        return "the newer PR changing the older one's tests"
    return ""


def _undoing_pairs(
    groups: dict[tuple[int, int], list[RefRow]],
    nodes: dict[int, PRNode],
    lines: LineOracle | None,
) -> set[tuple[int, int]]:
    """Referring pairs whose newer PR's patch turns the older one's around, while no reference
    says it reverts: a revert in all but its wording. Undoing a revert is a re-land, no revert:
    pairs whose older PR reverts another are left as they are."""
    if lines is None:
        return set()
    said = {pair for pair, group in groups.items() if any(r.type == "reverts" for r in group)}
    found = {
        (new_id, old_id)
        for (new_id, old_id) in groups
        if (new_id, old_id) not in said and lines.undoes(nodes[new_id], nodes[old_id])
    }
    reverters = {new_id for new_id, _ in said | found}
    return {(new_id, old_id) for new_id, old_id in found if old_id not in reverters}


def _as_revert(ref: RefRow) -> RefRow:
    """A reference of a pair whose patches show a revert, read as one."""
    return replace(
        ref, type="reverts", evidence=f"{ref.evidence} [its patch undoes the older one's]"
    )


def _candidate_edges(
    refs: list[RefRow],
    nodes: dict[int, PRNode],
    kept: set[int],
    config: ChainsConfig,
    report: GraphReport,
    lines: LineOracle | None,
    symbols: SymbolOracle | None = None,
) -> dict[tuple[int, int], dict[str, Any]]:
    candidates: dict[tuple[int, int], dict[str, Any]] = {}
    kept_nodes = {i: nodes[i] for i in kept}
    groups = _group_references(refs, kept_nodes, config, report, nodes, lines, symbols)
    undone = _undoing_pairs(groups, nodes, lines)
    reverted_at = revert_times(refs, nodes)
    for new_id, old_id in undone:
        _note_revert(reverted_at, old_id, nodes[new_id])
    for (new_id, old_id), group in groups.items():
        if (new_id, old_id) in undone:
            group = [_as_revert(ref) for ref in group]
        rule, attrs = assess_edge(
            group, nodes[new_id], nodes[old_id], config, lines, reverted_at, symbols
        )
        report.links.append(LinkDecision(new_id, old_id, nodes[new_id].repo_id, rule, attrs))
        if rule:
            report.dropped[rule] += 1
        else:
            candidates[(new_id, old_id)] = attrs
    return candidates


def build_graph(
    nodes: dict[int, PRNode],
    refs: list[RefRow],
    config: ChainsConfig,
    repos: dict[int, tuple[str, str | None, str | None]] | None = None,
    lines: LineOracle | None = None,
    symbols: SymbolOracle | None = None,
) -> tuple[nx.DiGraph, GraphReport]:
    """The filtered reference graph; edges point from the newer PR to the one it builds on.

    The PR records ride along as `graph.graph["prs"]` (id → PRNode) rather than as node attributes,
    which would cost a dict per node.
    """
    report = GraphReport(references=len(refs))
    kept, report.filtered = apply_filters(nodes, refs, config.filters)
    if isinstance(lines, Lines) and config.lineage_workers != 1:
        # A dry pass finds the blames the real one will ask for; they run at once, then the real
        # pass (in the same order as ever) reads them, so no decision changes.
        planner = lines.planner()
        _candidate_edges(refs, nodes, kept, config, GraphReport(), planner, symbols)
        lines.prefetch(planner.planned, config.lineage_workers)
    candidates = _candidate_edges(refs, nodes, kept, config, report, lines, symbols)
    if config.check_ancestry and repos:
        oracle = AncestryOracle(repos, config.ancestry_fallback_limit)
        failing = set(oracle.failing(candidates, nodes))
        for pair in failing:
            del candidates[pair]
            report.dropped["not_an_ancestor"] += 1
        for link in report.links:
            if link.rule is None and (link.newer, link.older) in failing:
                link.rule = "not_an_ancestor"
    graph = nx.DiGraph(prs=nodes)
    graph.add_nodes_from(kept)
    graph.add_edges_from((a, b, attrs) for (a, b), attrs in candidates.items())
    report.nodes, report.edges = graph.number_of_nodes(), graph.number_of_edges()
    return graph, report


def load_graph(
    engine: Engine, config: ChainsConfig
) -> tuple[nx.DiGraph, dict[int, PRNode], GraphReport]:
    """Load the store's PRs and references and build the graph (nodes also returned unfiltered)."""
    nodes = load_nodes(engine)
    repos = load_repos(engine)
    clones = {rid: path for rid, (_name, path, _branch) in repos.items()}
    lines = Lines(engine, clones)
    refs = with_unresolved_reverts(engine, nodes, load_references(engine))
    mark_pushed_reverts(engine, nodes, repos)
    graph, report = build_graph(nodes, refs, config, repos, lines, Symbols(engine, clones))
    report.lineage_blames = lines.blame_calls
    return graph, nodes, report
