"""The reverse phase's view of the sandbox: every unlocker runs from the stage's start state.

Facts and edits see the pre-fix repository (earlier edits applied before a later one, so several
edits to one file line up); validations see the reproduction scripts and every edit applied.
The sandbox is put back to the start after each run, so nothing one node does leaks into another.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from prchain.environments.protocol import Environment
from prchain.p2t.graph import Node
from prchain.p2t.patches import touched_files
from prchain.p2t.unlock import Runner, Unreplayable

GOLD_FILE = "/tmp/p2t-gold.patch"


@dataclass
class Workspace:
    env: Environment
    runner: Runner
    start: str = ""  # snapshot id of the stage start
    _gold_files: dict[str, str | None] | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        if not self.start:
            self.start = self.env.snapshot()

    def observe(self, node: Node, context: Sequence[Node]) -> str:
        """The node's real observation; Unreplayable when its action cannot run as written."""
        try:
            self._prepare(node, context)
            return self.runner.run(node.unlocker.action, node.extra)
        finally:
            self.env.restore(self.start)

    def _prepare(self, node: Node, context: Sequence[Node]) -> None:
        if node.node_type == "validation":
            setup = [n for n in context if n.node_type in ("reproduce_script", "code_edit")]
        elif node.node_type == "code_edit":
            setup = [n for n in context if n.node_type == "code_edit"]
        else:
            return
        for other in setup:
            try:
                self.runner.run(other.unlocker.action, other.extra)
            except Unreplayable:
                continue  # that node is judged on its own

    def gold_files(self, code_patch: str) -> dict[str, str | None]:
        """Each file the gold code change touches, as it reads after the change (None: deleted)."""
        if self._gold_files is None:
            try:
                self.env.write_file(GOLD_FILE, code_patch.rstrip("\n") + "\n")  # git needs it
                applied = self.env.execute(f"git apply --whitespace=nowarn {GOLD_FILE}")
                if applied.exit_code != 0:
                    raise Unreplayable(f"the gold patch does not apply: {applied.output[:200]}")
                self._gold_files = {p: self._read(p) for p in touched_files(code_patch)}
            finally:
                self.env.restore(self.start)
        return self._gold_files

    def edited_files(self, edits: Sequence[Node]) -> tuple[dict[str, str | None], list[Node]]:
        """Files after applying the edits in order, and the edits that did not apply."""
        failed = []
        try:
            for edit in edits:
                try:
                    self.runner.run(edit.unlocker.action, edit.extra)
                except Unreplayable:
                    failed.append(edit)
            paths = {e.extra.get("path") or e.unlocker.action.partition(" ")[2] for e in edits}
            return {p: self._read(p) for p in paths}, failed
        finally:
            self.env.restore(self.start)

    def _read(self, path: str) -> str | None:
        try:
            return self.env.read_file(path)
        except FileNotFoundError:
            return None
