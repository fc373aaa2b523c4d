"""A chain drawn as a graph: networkx lays the PRs out, plotly.js draws them in the page.

Nodes are the chain's PRs coloured by how the agent did on that stage; each edge is an arrow from
the newer PR to the one it builds on, labelled with its reference types (evidence on hover).
The figure is a plain dict (no graph-object validation): thousands of chain pages stay fast.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import networkx as nx

OUTCOME_COLOURS = {
    "passed": "#2ca02c",
    "failed": "#d62728",
    "stopped": "#ff7f0e",
    "running": "#1f77b4",
    "not rolled out": "#9e9e9e",
}


@dataclass
class GraphNode:
    pr_id: int
    stage: int
    number: int
    title: str
    outcome: str


def _positions(
    nodes: list[GraphNode], edges: list[dict[str, Any]]
) -> dict[int, tuple[float, float]]:
    graph = nx.DiGraph()
    for node in nodes:
        graph.add_node(node.pr_id, layer=node.stage)
    graph.add_edges_from((e["src"], e["dst"]) for e in edges if e.get("src") in graph)
    layout = nx.multipartite_layout(graph, subset_key="layer", align="vertical")
    # Alternate heights so an edge that skips a stage does not run through the PR between.
    return {n.pr_id: (float(layout[n.pr_id][0]), 0.12 * (n.stage % 2)) for n in nodes}


def _hover_evidence(edge: dict[str, Any]) -> str:
    items = [
        f"[{x.get('type')} in {x.get('found_in')}] {x.get('text', '')}"
        for x in edge.get("evidence", [])
    ]
    return "<br>".join(text[:160] for text in items) or "no evidence recorded"


def chain_figure(nodes: list[GraphNode], edges: list[dict[str, Any]]) -> dict[str, Any]:
    """The plotly figure spec (traces and layout)."""
    pos = _positions(nodes, edges)
    annotations: list[dict[str, Any]] = []
    mids_x, mids_y, mids_text = [], [], []
    for edge in edges:
        if edge.get("src") not in pos or edge.get("dst") not in pos:
            continue
        (x0, y0), (x1, y1) = pos[edge["src"]], pos[edge["dst"]]
        annotations.append(
            {
                "x": x1,
                "y": y1,
                "ax": x0,
                "ay": y0,
                "xref": "x",
                "yref": "y",
                "axref": "x",
                "ayref": "y",
                "showarrow": True,
                "arrowhead": 3,
                "arrowsize": 1.4,
                "arrowwidth": 1.6,
                "standoff": 16,
                "startstandoff": 16,
                "arrowcolor": "#555",
                "text": "",
            }
        )
        label = ", ".join(edge.get("types", [])) + f" · overlap {edge.get('overlap', 0):.2f}"
        annotations.append(
            {
                "x": (x0 + x1) / 2,
                "y": (y0 + y1) / 2 + 0.05,
                "xref": "x",
                "yref": "y",
                "showarrow": False,
                "text": label,
                "font": {"size": 11, "color": "#333"},
                "bgcolor": "rgba(255,255,255,0.85)",
            }
        )
        mids_x.append((x0 + x1) / 2)
        mids_y.append((y0 + y1) / 2)
        mids_text.append(_hover_evidence(edge))
    node_trace = {
        "type": "scatter",
        "mode": "markers+text",
        "hoverinfo": "text",
        "x": [pos[n.pr_id][0] for n in nodes],
        "y": [pos[n.pr_id][1] for n in nodes],
        "text": [f"#{n.number}" for n in nodes],
        "textposition": "bottom center",
        "hovertext": [
            f"stage {n.stage} · #{n.number} · {n.outcome}<br>{n.title[:90]}" for n in nodes
        ],
        "marker": {
            "size": 26,
            "color": [OUTCOME_COLOURS.get(n.outcome, "#9e9e9e") for n in nodes],
            "line": {"width": 1, "color": "#333"},
        },
    }
    edge_trace = {
        "type": "scatter",
        "mode": "markers",
        "x": mids_x,
        "y": mids_y,
        "hoverinfo": "text",
        "hovertext": mids_text,
        "marker": {"size": 14, "opacity": 0},
    }
    layout = {
        "height": 220,
        "margin": {"l": 10, "r": 10, "t": 10, "b": 10},
        "showlegend": False,
        "xaxis": {"visible": False, "range": [-1.25, 1.25]},
        "yaxis": {"visible": False, "range": [-0.2, 0.3]},
        "annotations": annotations,
        "plot_bgcolor": "white",
    }
    return {"data": [edge_trace, node_trace], "layout": layout}
