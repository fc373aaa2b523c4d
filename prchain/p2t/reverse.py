"""The reverse phase: a proposer adds nodes, a critic prunes or revises them, until a fixed point.

Round t: the proposer (tools, gold patch, tests, current nodes, last feedback) returns new nodes;
each is run in the sandbox and stores its real output. The deterministic hard checks (checks.py)
prune first; the critic model then judges what is left (leakage, compound claims, duplicates,
widths) and writes one sentence of feedback per remaining gap. Stop when the node set no longer
changes, when the proposer adds nothing for `empty_rounds_to_stop` rounds, or after `max_rounds`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prchain.agent.tools import ToolBox
from prchain.environments.protocol import Environment
from prchain.llm.prompts import render
from prchain.llm.protocol import ChatLLM
from prchain.p2t import checks
from prchain.p2t.choices import HARD_CHECKS, NODE_TYPES, VERDICTS
from prchain.p2t.config import P2TConfig
from prchain.p2t.graph import (
    ISSUE_ACTION,
    Node,
    ProcessGraph,
    Unlocker,
    build_graph,
    canonical_hash,
)
from prchain.p2t.patches import split_patch
from prchain.p2t.roles import RoleCall, as_json
from prchain.p2t.unlock import Runner
from prchain.p2t.workspace import Workspace

PROMPTS = Path(__file__).with_name("prompts")
EXTRA_FIELDS = ("content", "run", "old_str", "new_str", "path")
LEAK_MIN_CHARS = 12  # an added gold line this long, quoted in a statement, is a leak


@dataclass(frozen=True)
class Pruned:
    node: Node
    check: str
    reason: str
    round: int


@dataclass
class ReverseResult:
    graph: ProcessGraph
    rounds: int
    stop_reason: str
    pruned: list[Pruned] = field(default_factory=list)
    feedback: list[str] = field(default_factory=list)
    missing_artifacts: list[str] = field(default_factory=list)


def node_from_reply(data: dict[str, Any]) -> Node:
    """A proposed node; the observation is left empty until the sandbox runs the action."""
    node_type = data["node_type"]
    if node_type not in NODE_TYPES:
        raise ValueError(f"node_type must be one of {', '.join(NODE_TYPES)}, got {node_type!r}")
    action = data.get("action") or (data.get("unlocker") or {}).get("action")
    if not isinstance(action, str) or not str(data.get("statement", "")).strip():
        raise ValueError("every node needs a statement and an action string")
    extra = {k: str(data[k]) for k in EXTRA_FIELDS if data.get(k) is not None}
    fact_kind = data.get("fact_kind") if node_type == "fact" else None
    return Node(
        str(data["id"]), node_type, str(data["statement"]), Unlocker(action, ""), fact_kind, extra
    )


def parse_proposal(data: dict[str, Any]) -> list[Node]:
    nodes = data["nodes"]
    if not isinstance(nodes, list):
        raise ValueError('"nodes" must be a list')
    return [node_from_reply(n) for n in nodes]


@dataclass(frozen=True)
class CriticVerdict:
    id: str
    verdict: str
    check: str
    reason: str
    patched: Node | None


def parse_review(data: dict[str, Any]) -> tuple[list[CriticVerdict], list[str]]:
    verdicts = []
    for item in data.get("verdicts", []):
        verdict = item["verdict"]
        if verdict not in VERDICTS:
            raise ValueError(f"verdict must be one of {', '.join(VERDICTS)}, got {verdict!r}")
        patched = item.get("patched_node")
        if verdict == "revise" and not isinstance(patched, dict):
            raise ValueError("a revise verdict needs the whole patched_node")
        verdicts.append(
            CriticVerdict(
                str(item["id"]),
                verdict,
                str(item.get("check", "")),
                str(item.get("reason", "")),
                node_from_reply({"id": item["id"], **patched})
                if verdict == "revise" and patched
                else None,
            )
        )
    feedback = [str(f) for f in data.get("feedback", [])]
    return verdicts, feedback


def issue_node(query: str) -> Node:
    return Node("f0", "fact", "The task as stated.", Unlocker(ISSUE_ACTION, query), "static")


@dataclass
class ReversePhase:
    """Builds one stage's graph in a sandbox already entered at that stage."""

    llm: ChatLLM
    env: Environment
    config: P2TConfig
    query: str
    gold_patch: str
    on_round: Callable[[int, list[Node], list[Pruned]], None] | None = None

    def __post_init__(self) -> None:
        self.code_patch, self.test_patch = split_patch(self.gold_patch)
        runner = Runner(
            self.env, self.query, self.config.unlocker_timeout, self.config.max_observation_chars
        )
        self.ws = Workspace(self.env, runner)
        self.gold_added = checks.added_lines(self.code_patch, LEAK_MIN_CHARS)
        self.pruned: list[Pruned] = []

    def run(self) -> ReverseResult:
        nodes, feedback = [issue_node(self.query)], list[str]()
        empty, reason, round_ = 0, "max_rounds", 0
        for round_ in range(1, self.config.max_rounds + 1):
            before = {canonical_hash(n) for n in nodes}
            proposed = self._propose(nodes, feedback)
            empty = empty + 1 if not proposed else 0
            nodes, feedback = self._review(nodes, proposed, round_)
            if self.on_round is not None:
                self.on_round(round_, nodes, self.pruned)
            if {canonical_hash(n) for n in nodes} == before:
                reason = "unchanged"
                break
            if empty >= self.config.empty_rounds_to_stop:
                reason = "nothing_added"
                break
        kinds = {n.node_type for n in nodes}
        missing = [k for k in NODE_TYPES[1:] if k not in kinds]
        return ReverseResult(build_graph(nodes), round_, reason, self.pruned, feedback, missing)

    # -- proposer ---------------------------------------------------------------------------------

    def _role(self, role: str) -> RoleCall:
        toolbox = ToolBox(
            self.env,
            command_timeout=self.config.unlocker_timeout,
            max_chars=self.config.max_observation_chars,
        )
        return RoleCall(
            self.llm,
            role,
            self.config.schema_retries,
            toolbox,
            self.config.max_tool_calls_per_round,
        )

    def _prompt_vars(self, nodes: Sequence[Node]) -> dict[str, Any]:
        return {
            "query": self.query,
            "code_patch": self.code_patch,
            "test_patch": self.test_patch or "(none)",
            "nodes": as_json([n.to_dict() for n in nodes]),
            "node_types": NODE_TYPES,
        }

    def _propose(self, nodes: list[Node], feedback: list[str]) -> list[Node]:
        variables = self._prompt_vars(nodes)
        system = render(PROMPTS, "proposer_system.j2", **variables)
        user = render(PROMPTS, "proposer_user.j2", feedback=feedback, **variables)
        try:
            proposed = self._role("p2t_proposer").ask(system, user, parse_proposal) or []
        finally:
            self.env.restore(self.ws.start)  # whatever the proposer did while looking around
        taken = {n.id for n in nodes}
        unique = []
        for node in proposed:
            if node.id in taken:
                node = Node(
                    f"{node.id}_{len(taken)}",
                    node.node_type,
                    node.statement,
                    node.unlocker,
                    node.fact_kind,
                    node.extra,
                )
            taken.add(node.id)
            unique.append(node)
        return unique

    # -- critic -----------------------------------------------------------------------------------

    def _review(
        self, nodes: list[Node], proposed: list[Node], round_: int
    ) -> tuple[list[Node], list[str]]:
        alive = list(nodes)
        for node in proposed:
            checked = self._checked(node, alive, round_)
            if checked is not None:
                alive.append(checked)
        alive, feedback = self._structural(alive, round_)
        if len(alive) > 1:
            alive, critic_feedback = self._critic(alive, round_)
            feedback += critic_feedback
            alive, more = self._structural(alive, round_)
            feedback += more
        return alive, feedback

    def _checked(self, node: Node, context: list[Node], round_: int) -> Node | None:
        """A node with its real observation if it passes the per-node hard checks, else None."""
        failure = checks.static_failure(node, self.gold_added)
        if failure is None:
            ran = checks.run_node(self.ws, node, context)
            if isinstance(ran, checks.Failure):
                failure = ran
            else:
                node = ran
                failure = checks.rerun_failure(self.ws, node, context)
        if failure is not None:
            self.pruned.append(Pruned(node, failure.check, failure.reason, round_))
            return None
        return node

    def _structural(self, alive: list[Node], round_: int) -> tuple[list[Node], list[str]]:
        drift, feedback = checks.edit_drift(self.ws, alive, self.code_patch)
        failures = drift + checks.premature(
            [n for n in alive if n.id not in {f.node_id for f in drift}]
        )
        by_id = {f.node_id: f for f in failures}
        for node in alive:
            if node.id in by_id:
                self.pruned.append(
                    Pruned(node, by_id[node.id].check, by_id[node.id].reason, round_)
                )
        feedback += [f"{f.check}: {f.reason} ({f.node_id})." for f in failures]
        return [n for n in alive if n.id not in by_id], feedback

    def _critic(self, alive: list[Node], round_: int) -> tuple[list[Node], list[str]]:
        variables = self._prompt_vars(alive)
        system = render(PROMPTS, "critic_system.j2", **variables)
        user = render(PROMPTS, "critic_user.j2", **variables)
        try:
            review = self._role("p2t_critic").ask(system, user, parse_review)
        finally:
            self.env.restore(self.ws.start)
        if review is None:
            return alive, []  # the round's review is dropped; nodes stand as they are
        verdicts, feedback = review
        by_id = {v.id: v for v in verdicts}
        kept: list[Node] = []
        for node in alive:
            verdict = by_id.get(node.id)
            if node.unlocker.action == ISSUE_ACTION or verdict is None or verdict.verdict == "keep":
                kept.append(node)
            elif verdict.verdict == "prune":
                check = verdict.check if verdict.check in HARD_CHECKS else "critic"
                self.pruned.append(Pruned(node, check, verdict.reason, round_))
            elif verdict.patched is not None:
                revised = self._checked(verdict.patched, kept, round_)
                if revised is not None:
                    kept.append(revised)
        return kept, feedback
