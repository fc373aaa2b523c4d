"""Computed edges: entity first-surfacing and artifact order, never a cycle."""

from __future__ import annotations

from prchain.p2t.graph import (
    ISSUE_ACTION,
    Node,
    ProcessGraph,
    Unlocker,
    build_graph,
    canonical_hash,
    frontier,
)

ISSUE = "describe_security_group_rules ignores its group-id filter"


def fact(node_id: str, action: str, observation: str) -> Node:
    return Node(node_id, "fact", f"claim {node_id}", Unlocker(action, observation), "static")


def test_entity_and_artifact_edges() -> None:
    nodes = [
        fact("f1", ISSUE_ACTION, ISSUE),
        fact(
            "f2",
            "BASH(grep -rn describe_security_group_rules moto/)",
            "moto/ec2/responses/security_groups.py:197: filters = self._get_param('Filter')",
        ),
        fact(
            "f3",
            "VIEW(moto/ec2/responses/security_groups.py, 180-200)",
            "186 def describe_security_groups",
        ),
        fact(
            "f4", "BASH(grep -rn _get_param moto/core/responses.py)", "def _get_param(self, name)"
        ),
        Node("plan", "fix_plan", "use the helper", Unlocker("THINK<plan>", "")),
        Node("an", "issue_analysis", "root cause", Unlocker("THINK<why>", "")),
        Node(
            "edit",
            "code_edit",
            "swap",
            Unlocker("STR_REPLACE(moto/ec2/responses/security_groups.py, a, b)", ""),
        ),
    ]
    graph = build_graph(nodes)
    assert {("f1", "f2"), ("f2", "f3"), ("f2", "f4")} <= graph.edges
    assert {("an", "plan"), ("an", "edit"), ("plan", "edit")} <= graph.edges
    assert ("f2", "edit") in graph.edges  # the edit names the file f2's grep surfaced
    assert frontier(graph, set()) == {"f1", "an"}
    assert frontier(graph, {"f1"}) == {"f2", "an"}


def test_cycles_are_broken() -> None:
    # The edit is proposed first and surfaces a name the plan's action uses (edit → plan), while
    # the artifact order wants plan → edit: the later-proposed child's edge wins, the other goes.
    edit = Node("edit", "code_edit", "swap", Unlocker("STR_REPLACE(a.py, x, y)", "alpha_name"))
    plan = Node("plan", "fix_plan", "plan", Unlocker("THINK<use alpha_name>", ""))
    graph = build_graph([edit, plan])
    assert len(graph.edges) == 1


def test_round_trip_and_hash() -> None:
    graph = build_graph([fact("f1", ISSUE_ACTION, ISSUE)])
    assert ProcessGraph.from_dict(graph.to_dict()) == graph
    n1 = fact("x", "VIEW(a.py, 1-2)", "")
    n2 = Node("y", "fact", "  CLAIM   x ", Unlocker("other", ""), "static")
    assert canonical_hash(n1) == canonical_hash(n2)
    assert len(graph.to_networkx().nodes) == 1
