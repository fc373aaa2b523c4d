"""The reference graph: merged PRs with a usable patch, and an edge pr_i → pr_(i-1) when pr_i builds on pr_(i-1).

Built from the PRs and references `prchain.chains.evidence.loading` reads in a handful of bulk queries; each
candidate link is judged by `prchain.chains.rules.link_rules`.
An edge needs a reference in either text (the newer PR names the older one, or a later comment on
the older one names the newer), the older PR merged before the newer was created, and, where a clone
is at hand, the older merge commit in the newer base's history.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import replace

import networkx as nx
from sqlalchemy import Engine

from prchain.chains.building.report import GraphReport
from prchain.chains.building.vetted import Verdicts, apply_verdicts, load_verdicts
from prchain.chains.config import ChainsConfig
from prchain.chains.evidence.ancestry import AncestryOracle
from prchain.chains.evidence.kept import KeptEvidence
from prchain.chains.evidence.lines import LineOracle, Lines
from prchain.chains.evidence.loading import (
    load_nodes,
    load_references,
    load_repos,
    umbrella_issues,
    with_unresolved_reverts,
)
from prchain.chains.evidence.nodes import THROUGH_ISSUE, PRNode, RefRow
from prchain.chains.evidence.reverts import mark_pushed_reverts
from prchain.chains.evidence.symbols import SymbolOracle, Symbols
from prchain.chains.reading.cues import classify, prepares, stacked_on
from prchain.chains.record import LinkEvidence
from prchain.chains.rulebook import RuleName
from prchain.chains.rules.codelinks import code_link_repos, code_references
from prchain.chains.rules.decisions import LinkDecision
from prchain.chains.rules.filters import apply_filters, rejection
from prchain.chains.rules.link_rules import Undone, assess_edge, evidence_rows
from prchain.core.commit_graph import CommitGraphs, default_cache_dir


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


# The rule of two PRs open at once neither of which builds on the other.
OPEN_AT_ONCE: RuleName = "not_merged_before_created"


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
    ruled_out: dict[frozenset[int], tuple[RuleName, list[RefRow]]] = {}
    rule: RuleName
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
    group: list[RefRow], rule: RuleName, every: dict[int, PRNode], config: ChainsConfig
) -> LinkDecision:
    """The record of a link no edge rule got to judge, oriented by merge time when both are known."""
    ref = group[0]
    newer, older = ref.src, ref.dst
    a, b = every.get(newer), every.get(older)
    if a is not None and b is not None and a.merged_at < b.merged_at:
        newer, older = older, newer
    judged = [classify(r.type, r.evidence, r.number) for r in group]
    attrs: LinkEvidence = {
        "evidence_class": judged[0][0],
        "cue": judged[0][1],
        "why": f"{rule}: no edge rule judged this pair{_unusable_ends(ref, every, config)}"
        + (_open_at_once(every.get(newer), every.get(older)) if rule == OPEN_AT_ONCE else ""),
        "evidence": evidence_rows([(r, cls) for r, (cls, _) in zip(group, judged, strict=True)]),
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
) -> dict[tuple[int, int], LinkEvidence]:
    candidates: dict[tuple[int, int], LinkEvidence] = {}
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
    verdicts: Verdicts | None = None,
) -> tuple[nx.DiGraph, GraphReport]:
    """The filtered reference graph; edges point from the newer PR to the one it builds on.

    The link vetter's `verdicts` (`chains vet`) take away the kept links it rejected and add back
    the rescuable drops it judged dependent, then the links of PRs it called thin stages, before
    the ancestry check.

    The PR records ride along as `graph.graph["prs"]` (id → PRNode) rather than as node attributes,
    which would cost a dict per node.
    """
    report = GraphReport(references=len(refs))
    kept, report.filtered = apply_filters(nodes, refs, config.filters)
    if isinstance(lines, Lines | KeptEvidence) and config.lineage_workers != 1:
        # A dry pass finds the blames the real one will ask for; they run at once, then the real
        # pass (in the same order as ever) reads them, so no decision changes.
        # So are the names each older PR brought in: one walk of the history per clone, not one
        # `git grep` per older PR (`Symbols.prefetch`).
        planner = lines.planner()
        if isinstance(planner, KeptEvidence) and symbols is lines:
            _candidate_edges(refs, nodes, kept, config, GraphReport(), planner, planner)
            lines.prefetch_names(planner.planned_names)
        else:
            _candidate_edges(refs, nodes, kept, config, GraphReport(), planner, symbols)
        lines.prefetch(planner.planned, config.lineage_workers)
    candidates = _candidate_edges(refs, nodes, kept, config, report, lines, symbols)
    if verdicts:
        apply_verdicts(candidates, report, verdicts, config, nodes)
    if config.check_ancestry and repos:
        oracle = AncestryOracle(repos, config.ancestry_fallback_limit)
        failing = set(oracle.failing(candidates, nodes))
        for pair in failing:
            del candidates[pair]
            report.dropped["not_an_ancestor"] += 1
        for link in report.links:
            if link.rule is None and (link.newer, link.older) in failing:
                link.rule = "not_an_ancestor"
                report.rescued -= "rescued_from" in link.attrs
    graph = nx.DiGraph(prs=nodes)
    graph.add_nodes_from(kept)
    graph.add_edges_from((a, b, attrs) for (a, b), attrs in candidates.items())
    report.nodes, report.edges = graph.number_of_nodes(), graph.number_of_edges()
    return graph, report


def load_graph(
    engine: Engine, config: ChainsConfig
) -> tuple[nx.DiGraph, dict[int, PRNode], GraphReport]:
    """Load the store's PRs, references and vetter verdicts and build the graph (nodes also
    returned unfiltered)."""
    nodes = load_nodes(engine)
    repos = load_repos(engine)
    clones = {rid: path for rid, (_name, path, _branch) in repos.items()}
    # Each pair's evidence is asked of git once and kept (`prchain.chains.evidence.kept`).
    graphs = CommitGraphs(
        (config.commit_graph_dir or default_cache_dir()) if config.commit_graphs else None
    )
    kept = KeptEvidence(engine, Lines(engine, clones, graphs), Symbols(engine, clones))
    refs = with_unresolved_reverts(engine, nodes, load_references(engine))
    mark_pushed_reverts(engine, nodes, repos)
    found_in_code: list[RefRow] = []
    # `auto` decides on the references among PRs that can be stages (release bots' are none).
    stageable = apply_filters(nodes, refs, config.filters)[0] if config.code_links else set()
    in_code = code_link_repos(nodes, refs, config, stageable)
    if in_code:
        stageable = {pr for pr in stageable if nodes[pr].repo_id in in_code}
        found_in_code = code_references(engine, nodes, stageable, refs, config.code_link_min_lines)
    verdicts = load_verdicts(engine)
    graph, report = build_graph(nodes, refs + found_in_code, config, repos, kept, kept, verdicts)
    report.code_references = len(found_in_code)
    report.lineage_blames = kept.blame_calls
    report.commit_graphs_failed = graphs.failed
    kept.save()
    report.evidence_kept, report.evidence_new = kept.hits, kept.saved
    return graph, nodes, report
