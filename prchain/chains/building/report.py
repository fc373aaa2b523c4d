"""What a graph build did, for the build summary."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field

from prchain.chains.rules.decisions import LinkDecision
from prchain.chains.rules.filters import FilterReport


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
    # clones git blamed without a commit-graph because git could not write one (`CommitGraphs`)
    commit_graphs_failed: int = 0
    rescued: int = 0  # links the rules dropped and the link vetter judged dependent
    code_references: int = (
        0  # candidate links found in code (`prchain.chains.rules.codelinks`), of `references`
    )
    evidence_kept: int = (
        0  # answers of git and the lexers read from the store (`prchain.chains.evidence.kept`)
    )
    evidence_new: int = 0  # answers computed by this build and kept
