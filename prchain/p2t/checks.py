"""The critic's hard checks that need no model: replay, re-run, artifact order, edit drift, and
gold lines quoted in a statement. Each failure names its check and says what to do next."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from prchain.p2t.choices import HardCheck
from prchain.p2t.graph import Node, Unlocker
from prchain.p2t.unlock import Action, Unreplayable, normalize_observation
from prchain.p2t.workspace import Workspace

ORACLE_WORDS = re.compile(
    r"\b(gold(en)?|reference (patch|change|solution)|test[_ ]patch|hidden tests?|oracle)\b", re.I
)
# An artifact needs an upstream artifact of the named kind (H4).
REQUIRES = {"code_edit": "fix_plan", "fix_plan": "issue_analysis", "validation": "code_edit"}


@dataclass(frozen=True)
class Failure:
    node_id: str
    check: HardCheck
    reason: str


def added_lines(code_patch: str, min_chars: int) -> list[str]:
    lines = []
    for line in code_patch.splitlines():
        if line.startswith("+") and not line.startswith("+++"):
            body = line[1:].strip()
            if len(body) >= min_chars:
                lines.append(body)
    return lines


def static_failure(node: Node, gold_added: Sequence[str]) -> Failure | None:
    """Checks on the node's text alone: taxonomy, placeholders, oracle references, quoted fix."""
    try:
        Action.parse(node.unlocker.action)
    except Unreplayable as exc:
        return Failure(node.id, "unreplayable", str(exc))
    if ORACLE_WORDS.search(node.unlocker.action):
        return Failure(
            node.id, "unreplayable", "the action refers to the reference change or tests"
        )
    if node.node_type == "fact" and any(line in node.statement for line in gold_added):
        return Failure(node.id, "patch_leakage", "the statement quotes a line the fix adds")
    return None


def run_node(ws: Workspace, node: Node, context: Sequence[Node]) -> Node | Failure:
    """The node with its real observation, or why it cannot be replayed."""
    try:
        observation = ws.observe(node, context)
    except Unreplayable as exc:
        return Failure(
            node.id, "unreplayable" if node.node_type != "code_edit" else "edit_drift", str(exc)
        )
    return Node(
        node.id,
        node.node_type,
        node.statement,
        Unlocker(node.unlocker.action, observation),
        node.fact_kind,
        node.extra,
    )


def rerun_failure(ws: Workspace, node: Node, context: Sequence[Node]) -> Failure | None:
    """H3: running the action again must print the same thing (timings and addresses aside)."""
    try:
        again = ws.observe(node, context)
    except Unreplayable as exc:
        return Failure(node.id, "unreplayable", str(exc))
    if normalize_observation(again) != normalize_observation(node.unlocker.observation):
        return Failure(node.id, "unverified", "running the action again printed something else")
    return None


def premature(nodes: Sequence[Node]) -> list[Failure]:
    """H4, to a fixed point: pruning a plan can make an edit premature in turn."""
    alive, failures = list(nodes), list[Failure]()
    while True:
        kinds = {n.node_type for n in alive}
        bad = [n for n in alive if n.node_type in REQUIRES and REQUIRES[n.node_type] not in kinds]
        if not bad:
            return failures
        failures += [
            Failure(n.id, "premature", f"a {n.node_type} needs a {REQUIRES[n.node_type]} first")
            for n in bad
        ]
        alive = [n for n in alive if n not in bad]


def edit_drift(
    ws: Workspace, nodes: Sequence[Node], code_patch: str
) -> tuple[list[Failure], list[str]]:
    """H6: edits must apply byte for byte and together rebuild the gold change.

    Returns the failing edits and feedback naming files the gold change touches that no edit does.
    """
    edits = [n for n in nodes if n.node_type == "code_edit"]
    if not edits or not code_patch.strip():
        return [], []
    gold = ws.gold_files(code_patch)
    result, failed = ws.edited_files(edits)
    failures = [
        Failure(e.id, "edit_drift", "old_str does not match the file byte for byte") for e in failed
    ]
    for edit in edits:
        path = edit.extra.get("path") or edit.unlocker.action.partition(" ")[2]
        if edit in failed:
            continue
        if path not in gold:
            failures.append(Failure(edit.id, "edit_drift", f"the fix does not touch {path}"))
        elif result.get(path) != gold[path]:
            failures.append(
                Failure(edit.id, "edit_drift", f"the edits leave {path} different from the fix")
            )
    edited = {e.extra.get("path") or e.unlocker.action.partition(" ")[2] for e in edits}
    missing = [p for p in gold if p not in edited]
    feedback = [
        f"No edit covers {p}: add a code_edit node for it, after the facts that locate the change."
        for p in missing
    ]
    return failures, feedback
