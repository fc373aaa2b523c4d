"""What the report needs beyond the store's rows, worked out by the app layer.

The chain filters and edge rules do not write what they dropped, and the export does not record
what it skipped; `prchain.app.report` recomputes both with the run's config and hands them here.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class GraphFacts:
    """The reference graph as `chains build` would build it now."""

    filtered: dict[str, int] = field(default_factory=dict)  # PRs removed, by filter
    nodes: int = 0
    references: int = 0  # PR-to-PR references read
    edges: int = 0
    dropped: dict[str, int] = field(default_factory=dict)  # candidate edges dropped, by rule


@dataclass
class ExportFacts:
    """What `prchain export` would write now."""

    written: int = 0
    skipped: dict[str, int] = field(default_factory=dict)


@dataclass
class PipelineFacts:
    graph: GraphFacts | None = None  # None: not recomputed (report.funnel_graph off)
    export: ExportFacts | None = None
