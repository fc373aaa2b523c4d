"""Drawing a process graph: plain text (one line per node, parents after the arrow) or a rich tree
(each node under its first parent; other parents named beside it). Order is topological."""

from __future__ import annotations

from typing import Any

from prchain.p2t.graph import Node, ProcessGraph


def topological(graph: ProcessGraph) -> list[Node]:
    import networkx as nx  # only the drawing commands load it

    order = {n.id: i for i, n in enumerate(graph.nodes)}
    ids = nx.lexicographical_topological_sort(graph.to_networkx(), key=lambda i: order[i])
    return [graph.node(i) for i in ids]


def label(node: Node) -> str:
    kind = f"{node.node_type}/{node.fact_kind}" if node.fact_kind else node.node_type
    return f"{node.id} [{kind}] {node.statement}"


def draw_text(graph: ProcessGraph) -> str:
    lines = []
    for node in topological(graph):
        parents = sorted(graph.parents(node.id))
        arrow = f"  <- {', '.join(parents)}" if parents else ""
        lines.append(f"{label(node)}{arrow}\n    {node.unlocker.action.splitlines()[0][:100]}")
    return "\n".join(lines)


def draw_tree(graph: ProcessGraph, title: str) -> Any:
    from rich.markup import escape
    from rich.tree import Tree

    root = Tree(escape(title))
    branches: dict[str, Any] = {}
    for node in topological(graph):
        parents = sorted(graph.parents(node.id), key=lambda p: [n.id for n in graph.nodes].index(p))
        holder = branches[parents[0]] if parents else root
        also = f" [dim](also after {', '.join(parents[1:])})[/]" if len(parents) > 1 else ""
        branches[node.id] = holder.add(escape(label(node)) + also)
    return root
