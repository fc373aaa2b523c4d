"""Which pending nodes a step could plausibly have established, so the verifier is asked only
about those (it was ~90% of a curated stage's cost when asked about every pending node after every
step of every candidate).

A step extends the transcript by one assistant message and its tool outputs. A verifier that did
not find node v established before the step can only find it now because of what the step added,
so the step is checked against v cheaply first:

- tool type (the paper's action-match half E1 of Est): an edit node (`STR_REPLACE`, `CREATE`
  unlocker) needs a step that can change a file (an editor edit, or a shell command);
- entity overlap: the step's reasoning, call arguments or tool output must name one of the
  entities of v's unlocker action or statement (a path, a dotted or qualified name, an identifier
  that looks like code, an error type, a line number, a long number). A node with no entity at
  all cannot be filtered this way and is always asked about.

Two cases see more than the new step: the first step of a stage's first window (earlier stages'
transcript may already show a node), and nodes an earlier window's committed candidate surfaced
before their parents (blocked then, creditable now). Those are asked about as before; the forward
phase passes them in as `forced`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from prchain.p2t.entities import action_entities, check_entities, prose_entities
from prchain.p2t.graph import Node
from prchain.p2t.roles_forward import StepRec

EDIT_ACTIONS = ("STR_REPLACE", "CREATE")
EDITOR_WRITES = frozenset({"str_replace", "create", "insert", "undo_edit"})
SHELLS = frozenset({"bash"})


def node_entities(node: Node) -> frozenset[str]:
    """What a step must mention to possibly establish `node`."""
    return frozenset(action_entities(node.unlocker.action) | prose_entities(node.statement))


def step_text(step: StepRec) -> str:
    """Everything the step added to the transcript: reasoning, call arguments, tool outputs."""
    parts = [str(step.assistant.get("content") or "")]
    for call in step.assistant.get("tool_calls") or []:
        function = call.get("function", call)
        parts.append(str(function.get("arguments") or ""))
    parts += [str(m.get("content") or "") for m in step.tools]
    return "\n".join(parts)


def can_edit(step: StepRec) -> bool:
    for call in step.assistant.get("tool_calls") or []:
        function = call.get("function", call)
        name = function.get("name", "")
        if name in SHELLS:
            return True
        try:
            args = json.loads(function.get("arguments") or "{}")
        except json.JSONDecodeError:
            args = {}
        if isinstance(args, dict) and args.get("command") in EDITOR_WRITES:
            return True
    return False


@dataclass
class Prefilter:
    """Counts what it let through and held back; `entities` off asks about every node."""

    enabled: bool = True
    asked: int = 0
    skipped: int = 0
    _keys: dict[str, frozenset[str]] = field(default_factory=dict, repr=False)

    def select(self, pending: list[Node], step: StepRec, forced: frozenset[str]) -> list[Node]:
        if not self.enabled:
            chosen = pending
        else:
            text = step_text(step)
            chosen = [n for n in pending if n.id in forced or self._plausible(n, step, text)]
        self.asked += len(chosen)
        self.skipped += len(pending) - len(chosen)
        return chosen

    def _plausible(self, node: Node, step: StepRec, text: str) -> bool:
        if node.unlocker.action.startswith(EDIT_ACTIONS) and not can_edit(step):
            return False
        keys = self._keys.get(node.id)
        if keys is None:
            keys = self._keys[node.id] = node_entities(node)
        if not keys:
            return True
        return len(check_entities(keys, [text]).missing) < len(keys)
