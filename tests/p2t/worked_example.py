"""The paper's worked example (moto#6041) as a graph: 10 facts, 6 milestones, and the edge set
reconstructed in /work/notes/p2t-spec.md §5.2 (the paper states only some edges; the rest are the
minimal set that reproduces every number it reports)."""

from __future__ import annotations

from prchain.p2t.graph import Node, ProcessGraph, Unlocker

FACTS = ["f1", "f2", "f3", "f4", "f5", "f6", "f8", "f9", "f10", "f11"]
ARTIFACTS = {
    "repro1": "reproduce_script",
    "analysis": "issue_analysis",
    "plan": "fix_plan",
    "edit1": "code_edit",
    "val1": "validation",
    "val2": "validation",
}
EDGES = [
    ("f1", "repro1"),
    ("f1", "f2"),
    ("f1", "f11"),
    ("f2", "f3"),
    ("f2", "f5"),
    ("f2", "f8"),
    ("f3", "f4"),
    ("f3", "f10"),
    ("f8", "f9"),
    ("f4", "f6"),
    ("f5", "f6"),
    *[(u, "analysis") for u in ("repro1", "f3", "f5", "f6", "f9")],
    *[(u, "plan") for u in ("analysis", "f4", "f10")],
    ("plan", "edit1"),
    ("edit1", "val1"),
    ("repro1", "val1"),
    ("edit1", "val2"),
    ("f11", "val2"),
]


def moto_graph() -> ProcessGraph:
    nodes = [
        Node(f, "fact", f"claim {f}", Unlocker(f"VIEW({f})", f"obs {f}"), "static") for f in FACTS
    ]
    nodes += [
        Node(a, kind, f"artifact {a}", Unlocker(f"THINK<{a}>", f"obs {a}"))  # type: ignore[arg-type]
        for a, kind in ARTIFACTS.items()
    ]
    return ProcessGraph(tuple(nodes), frozenset(EDGES))


U22 = frozenset({"f1", "repro1", "f2"})
E = frozenset[str]()
SEED0 = [E, E, E, {"f8", "f9"}, E, E, E, E, E, E]
SEED1 = [E, {"f11"}, E, {"f5"}, E, E, E, E, E, E]
MUT0 = [E, E, {"f3"}, E, {"f4"}, E, {"f10"}, E, E, E]
MUT1_NATURAL = [E, E, {"f3"}, E, {"f8"}, {"f9"}, E, E, E, E]
MUT1_REPRO = [{"f8"}, {"f3"}, {"f9"}, E, E, E, E, E, E, E]
