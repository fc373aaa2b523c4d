"""The reference graph: merged PRs with a usable patch, and an edge pr_i → pr_(i-1) when pr_i builds on pr_(i-1).

Loaded with a handful of bulk queries (PRs, files, PR-to-PR references) so it scales to 100k PRs.
An edge needs a reference in either text (the newer PR names the older one, or a later comment on
the older one names the newer), the older PR merged before the newer was created, and, where a clone
is at hand, the older merge commit in the newer base's history.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import networkx as nx
from sqlalchemy import Engine, select

from chains.ancestry import AncestryOracle
from chains.config import ChainsConfig
from chains.cues import mention_cue
from chains.filters import FilterReport, apply_filters
from chains.patches import is_test_path
from sql.models import PRFile, PullRequest, Reference, Repo

EVIDENCE_CHARS = 240
MAX_EVIDENCE = 4
# Texts written while a PR was open: a mention there of a PR merged later is a forward-looking link.
AUTHORED_BEFORE_MERGE = frozenset({"title", "body", "commit"})


@dataclass
class PRNode:
    id: int
    repo_id: int
    number: int
    title: str
    author: str | None
    created_at: datetime | None
    merged_at: datetime
    base_sha: str | None
    merge_sha: str | None
    lines: int
    files: frozenset[str] = frozenset()

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


@dataclass
class GraphReport:
    """What happened while building the graph, for the build summary."""

    nodes: int = 0
    edges: int = 0
    references: int = 0
    filtered: FilterReport = field(default_factory=FilterReport)
    dropped: dict[str, int] = field(default_factory=lambda: defaultdict(int))


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    inter = len(a & b)
    return inter / (len(a) + len(b) - inter)


def load_nodes(engine: Engine) -> dict[int, PRNode]:
    """Every merged PR with an `ok` patch, its files attached; two queries.

    `lines` counts the non-test files' changed lines when the files are known (snapshots and
    fixtures make many real PRs look huge; the size limit is about the code an agent must write).
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
                code_lines[pr_id] += 0 if is_test_path(path) else (added or 0) + (deleted or 0)
    for pr_id, paths in files.items():
        nodes[pr_id].files = frozenset(paths)
        nodes[pr_id].lines = code_lines[pr_id]
    return nodes


def load_references(engine: Engine) -> list[RefRow]:
    """Every reference that resolved to a PR of the store (direct or through an issue)."""
    ref = Reference
    query = select(
        ref.src_pr_id, ref.target_pr_id, ref.type, ref.found_in, ref.via_issue, ref.evidence
    ).where(ref.target_pr_id.is_not(None), ref.src_pr_id != ref.target_pr_id)
    with engine.connect() as conn:
        rows = conn.execute(query)
        return [
            RefRow(a, b or 0, t, f, v or 0, (e or "")[:EVIDENCE_CHARS]) for a, b, t, f, v, e in rows
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
        if ref.type == "issue_mediated" and ref.via_issue:
            members[ref.via_issue].update((ref.src, ref.dst))
    return {issue for issue, prs in members.items() if len(prs) > max_fanout}


def orient(a: PRNode, b: PRNode) -> tuple[PRNode, PRNode] | None:
    """(newer, older) when one was merged before the other was opened; None for overlapping lifetimes."""
    if b.merged_at < a.opened:
        return a, b
    if a.merged_at < b.opened:
        return b, a
    return None


def _group_references(
    refs: list[RefRow], nodes: dict[int, PRNode], config: ChainsConfig, report: GraphReport
) -> dict[tuple[int, int], list[RefRow]]:
    """References grouped by the (newer, older) pair they link; references that cannot be edges are counted."""
    umbrellas = umbrella_issues(refs, config.max_issue_fanout)
    pairs: dict[tuple[int, int], list[RefRow]] = defaultdict(list)
    for ref in refs:
        a, b = nodes.get(ref.src), nodes.get(ref.dst)
        if a is None or b is None:
            report.dropped["endpoint_not_a_node"] += 1
        elif a.repo_id != b.repo_id:
            report.dropped["cross_repo"] += 1
        elif ref.type == "issue_mediated" and ref.via_issue in umbrellas:
            report.dropped["umbrella_issue"] += 1
        elif (pair := orient(a, b)) is None:
            report.dropped["not_merged_before_created"] += 1
        else:
            pairs[(pair[0].id, pair[1].id)].append(ref)
    return pairs


def reference_strength(ref: RefRow, newer: PRNode, config: ChainsConfig) -> int:
    """How strongly one reference says the newer PR builds on the older one."""
    strength = config.type_strength.get(ref.type, 1)
    if ref.type == "mention":
        cue = mention_cue(ref.evidence)
        if cue == "parallel":
            return 0
        if cue == "dependent":  # the wording says so, whichever of the two PRs wrote it
            return max(strength, config.cued_mention_strength)
    if ref.src != newer.id and ref.found_in in AUTHORED_BEFORE_MERGE:
        strength -= config.flipped_penalty
    return max(strength, 0)


def edge_attributes(
    refs: list[RefRow], newer: PRNode, older: PRNode, config: ChainsConfig
) -> dict[str, Any]:
    types = sorted({r.type for r in refs})
    strength = max(reference_strength(r, newer, config) for r in refs)
    overlap = round(jaccard(newer.files, older.files), 4)
    return {
        "types": types,
        "strength": strength,
        "overlap": overlap,
        "weight": strength + config.overlap_weight * overlap,
    }


def evidence(refs: list[RefRow], newer: PRNode, config: ChainsConfig) -> list[dict[str, Any]]:
    """The strongest few references behind an edge, as shown by `chains show` and exported."""
    ranked = sorted(refs, key=lambda r: -reference_strength(r, newer, config))[:MAX_EVIDENCE]
    return [
        {"type": r.type, "found_in": r.found_in, "via_issue": r.via_issue, "text": r.evidence}
        for r in ranked
    ]


def _strong_enough(attrs: dict[str, Any], config: ChainsConfig) -> str | None:
    """The reason an edge is too weak to keep, or None."""
    if attrs["strength"] <= 0:
        return "parallel_or_vague_mention"
    if attrs["overlap"] < config.min_overlap_by_strength.get(attrs["strength"], 0.0):
        return f"strength_{attrs['strength']}_without_file_overlap"
    return None


def _candidate_edges(
    refs: list[RefRow],
    nodes: dict[int, PRNode],
    kept: set[int],
    config: ChainsConfig,
    report: GraphReport,
) -> dict[tuple[int, int], dict[str, Any]]:
    candidates: dict[tuple[int, int], dict[str, Any]] = {}
    for (new_id, old_id), group in _group_references(
        refs, {i: nodes[i] for i in kept}, config, report
    ).items():
        attrs = edge_attributes(group, nodes[new_id], nodes[old_id], config)
        reason = _strong_enough(attrs, config)
        if reason:
            report.dropped[reason] += 1
        else:
            attrs["evidence"] = evidence(group, nodes[new_id], config)
            candidates[(new_id, old_id)] = attrs
    return candidates


def build_graph(
    nodes: dict[int, PRNode],
    refs: list[RefRow],
    config: ChainsConfig,
    repos: dict[int, tuple[str, str | None, str | None]] | None = None,
) -> tuple[nx.DiGraph, GraphReport]:
    """The filtered reference graph; edges point from the newer PR to the one it builds on.

    The PR records ride along as `graph.graph["prs"]` (id → PRNode) rather than as node attributes,
    which would cost a dict per node.
    """
    report = GraphReport(references=len(refs))
    kept, report.filtered = apply_filters(nodes, refs, config.filters)
    candidates = _candidate_edges(refs, nodes, kept, config, report)
    if config.check_ancestry and repos:
        oracle = AncestryOracle(repos, config.ancestry_fallback_limit)
        for pair in list(oracle.failing(candidates, nodes)):
            del candidates[pair]
            report.dropped["not_an_ancestor"] += 1
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
    graph, report = build_graph(nodes, load_references(engine), config, load_repos(engine))
    return graph, nodes, report
