"""Which pending nodes a step could have established, so the establishment verifier is asked only
about those. Asked about every pending node after every step of every candidate, it was ~90% of a
curated stage's cost.

Establishment needs (E1) an action of the transcript that matches the node's unlocker and (E2) that
action's observation entailing the statement (the paper's §4.1 and App H). A step adds one action.
If the verifier did not find node v established before the step, the step can establish v only when
its own action matches v's unlocker: an earlier matching action with an entailing observation would
have established v already. So the prefilter is the paper's tool-type check, made concrete per
unlocker kind, with entity overlap deciding "the same target":

| unlocker | the step must |
|---|---|
| `VIEW path` | name the file (its path, or a recursive search over a folder holding it) |
| `BASH command` | run the same program (python/python3 alike; `python -m X` counts as X) on a shared entity (path, name, identifier), or run a command naming the command's file targets |
| `STR_REPLACE path`, `CREATE path` | edit (an editor write, or a shell command) and name the path |
| `THINK text` | say something (non-empty reasoning text) |

Only the step's calls and reasoning count, never its output: E1 is about the action. Two cases look
at more than the new step, and those nodes are asked about whatever the step did (`forced`): at a
candidate's first step in the stage's first window, the nodes any earlier action of the transcript
matches (earlier stages' work may already establish them); in later windows, the nodes an earlier
window's committed candidate surfaced before their parents (blocked then, creditable now).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from prchain.llm.protocol import Message
from prchain.p2t.entities import code_entities, normalize_path
from prchain.p2t.graph import Node
from prchain.p2t.roles_forward import StepRec

EDITOR_WRITES = frozenset({"str_replace", "create", "insert", "undo_edit"})
SHELL_TOOLS = frozenset({"bash"})
RECURSIVE = ("-r", "-R", "-rn", "-nr", "-rl", "-Rn", "-rni", "-rin")
SEARCHERS = frozenset({"grep", "rg", "ag", "git"})


@dataclass(frozen=True)
class StepAction:
    """What one step did, as the prefilter compares it with unlockers."""

    commands: tuple[str, ...]  # shell commands it ran
    viewed: frozenset[str]  # files the editor showed
    edited: frozenset[str]  # files the editor wrote
    said: bool  # it carries reasoning text

    @property
    def text(self) -> str:
        return "\n".join([*self.commands, *self.viewed, *self.edited])


def step_action(assistant: Message) -> StepAction:
    """The action of one assistant message (its tool calls and reasoning)."""
    commands: list[str] = []
    viewed: set[str] = set()
    edited: set[str] = set()
    for call in assistant.get("tool_calls") or []:
        function = call.get("function", call)
        args = _arguments(function.get("arguments"))
        if function.get("name") in SHELL_TOOLS:
            commands.append(str(args.get("command", "")))
        elif "path" in args:
            path = normalize_path(str(args["path"]))
            (edited if args.get("command") in EDITOR_WRITES else viewed).add(path)
    said = bool(str(assistant.get("content") or "").strip())
    return StepAction(tuple(commands), frozenset(viewed), frozenset(edited), said)


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    try:
        parsed = json.loads(raw or "{}")
    except json.JSONDecodeError:
        return {"command": str(raw)}
    return parsed if isinstance(parsed, dict) else {}


def program(command: str) -> str:
    """The program a shell command runs: `python3 -m pytest -q` → pytest, `/usr/bin/grep` → grep."""
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    words = [w for w in words if "=" not in w.split("/")[0]]  # leading VAR=value assignments
    if not words:
        return ""
    name = PurePosixPath(words[0]).name
    if name.startswith("python") and "-m" in words[:-1]:
        return words[words.index("-m") + 1]
    return "python" if name.startswith("python") else name


def _names_path(action: StepAction, path: str) -> bool:
    if path in action.viewed or path in action.edited:
        return True
    name = PurePosixPath(path).name
    for command in action.commands:
        if path in command or f" {name}" in command or f"/{name}" in command:
            return True
        if program(command) in SEARCHERS and any(flag in command.split() for flag in RECURSIVE):
            folders = [str(p) for p in PurePosixPath(path).parents if str(p) != "."]
            words = command.split()
            if any(f in words or f"{f}/" in words for f in folders) or words[-1] in (".", "./"):
                return True
    return False


@dataclass
class Prefilter:
    """Chooses the nodes to ask about and counts what it let through and held back."""

    enabled: bool = True
    asked: int = 0
    skipped: int = 0
    _targets: dict[str, tuple[str, str, frozenset[str]]] = field(default_factory=dict, repr=False)

    def select(self, pending: list[Node], step: StepRec, forced: frozenset[str]) -> list[Node]:
        if not self.enabled:
            chosen = pending
        else:
            action = step_action(step.assistant)
            chosen = [n for n in pending if n.id in forced or self.plausible(n, action)]
        self.asked += len(chosen)
        self.skipped += len(pending) - len(chosen)
        return chosen

    def seen_before(self, nodes: Sequence[Node], history: Sequence[Message]) -> frozenset[str]:
        """Nodes some action of `history` could have established (checked at a stage's first
        step, where the transcript so far was never checked against this stage's graph)."""
        if not self.enabled:
            return frozenset(n.id for n in nodes)
        actions = [step_action(m) for m in history if m.get("role") == "assistant"]
        return frozenset(n.id for n in nodes if any(self.plausible(n, a) for a in actions))

    def plausible(self, node: Node, action: StepAction) -> bool:
        tool, arg, entities = self._target(node)
        if tool == "THINK":
            return action.said
        if tool == "VIEW":
            return _names_path(action, normalize_path(arg.split(":")[0].strip()))
        if tool in ("STR_REPLACE", "CREATE"):
            path = normalize_path(arg.split()[0]) if arg else ""
            edits = bool(action.edited) or bool(action.commands)
            return edits and (not path or _names_path(action, path))
        if tool == "BASH":
            wanted = program(arg)
            same_program = any(program(c) == wanted for c in action.commands)
            shared = bool(entities & code_entities(action.text))
            return (same_program and (shared or not entities)) or any(
                _names_path(action, e) for e in entities if "/" in e
            )
        return True  # an unlocker this filter does not know: ask

    def _target(self, node: Node) -> tuple[str, str, frozenset[str]]:
        if node.id not in self._targets:
            tool, _, arg = node.unlocker.action.strip().partition(" ")
            entities = frozenset(code_entities(arg)) if tool == "BASH" else frozenset()
            self._targets[node.id] = (tool, arg.strip(), entities)
        return self._targets[node.id]
