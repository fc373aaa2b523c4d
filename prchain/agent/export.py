"""Kept trajectories → SFT-ready JSONL: one line per chain with `messages`, `tools` and `metadata`.

Messages are OpenAI chat messages (assistant `tool_calls`, `tool` results with `tool_call_id`, judge
feedback as user turns). Never exported: gold patches, judge scores and internals, format-error
turns, and PRM guidance unless asked for. Every string is scanned for token-like secrets, which
are redacted; any message (tool outputs included) that shows a line of a gold patch of the chain
or a hidden test name drops the trajectory (prchain.agent.leakscan has the rules).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, select

from prchain.agent.choices import SCAFFOLDS, KeepPolicyName, KeepSignal
from prchain.agent.config import LEAK_MIN_CHARS
from prchain.agent.keep import decide, refuse_tests_alone, stage_passes
from prchain.agent.leakscan import GoldStage, Guard, chain_guard
from prchain.agent.scaffold import scaffold_of
from prchain.agent.tools import TOOL_SCHEMAS
from prchain.core.files import atomic_output
from prchain.core.secrets import Redactor
from prchain.store import rollouts as stored
from prchain.store.db import session_scope
from prchain.store.environments import fail_to_pass
from prchain.store.models import Chain, ChainStage, PullRequest, Repo
from prchain.store.rollouts import RolloutRow, StageRow, StepRow

FORMAT_VERSION = "prchain.trajectory/2"  # /2: every row says `success` and `truncated`
# How the agent loop words a stretch of work a budget ended (prchain/agent/loop.py: _limit_reached);
# a stage that ended so is `truncated` in the row's metadata.
TRUNCATION = re.compile(r"(stage|chain) (step|token) budget spent|context window exceeded")
EXPORTED_KINDS = ("system", "query", "assistant", "tool", "feedback")

_CALL = {
    "type": "object",
    "additionalProperties": False,
    "required": ["id", "type", "function"],
    "properties": {
        "id": {"type": "string", "minLength": 1},
        "type": {"const": "function"},
        "function": {
            "type": "object",
            "additionalProperties": False,
            "required": ["name", "arguments"],
            "properties": {"name": {"type": "string"}, "arguments": {"type": "string"}},
        },
    },
}
_MESSAGE = {
    "type": "object",
    "additionalProperties": False,
    "required": ["role", "content"],
    "properties": {
        "role": {"enum": ["system", "user", "assistant", "tool"]},
        "content": {"type": "string"},
        "tool_calls": {"type": "array", "items": _CALL},
        "tool_call_id": {"type": "string"},
        "name": {"type": "string"},
        "reasoning_content": {"type": "string"},  # only with --keep-reasoning
    },
}
TRAJECTORY_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "additionalProperties": False,
    "required": ["messages", "tools", "metadata"],
    "properties": {
        "messages": {"type": "array", "minItems": 3, "items": _MESSAGE},
        "tools": {"type": "array", "items": {"type": "object", "required": ["type", "function"]}},
        "metadata": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "format_version": {"const": FORMAT_VERSION},
                "rollout_id": {"type": "integer"},
                "source": {"enum": ["agent", "p2t"]},
                "chain_id": {"type": "integer"},
                "repo": {"type": "string"},
                "pr_numbers": {"type": "array", "items": {"type": "integer"}},
                "stage_scores": {"type": "array", "items": {"type": "number"}},
                "n_stages": {"type": "integer"},
                "kept_stages": {"type": "integer", "minimum": 1},
                "keep_policy": {"type": "string"},
                "conflict_policy": {"type": "string"},
                "action_format": {"type": "string"},
                "scaffold": {"enum": list(SCAFFOLDS)},
                "prm_variant": {"type": "string"},
                "models": {"type": "object", "additionalProperties": {"type": "string"}},
                "config_json": {"type": "string"},
                "prompt_tokens": {"type": "integer"},
                "completion_tokens": {"type": "integer"},
                "trajectory_tokens": {"type": "integer"},
                "agent_steps": {"type": "integer"},
                "tool_calls": {"type": "integer"},
                "cost_usd": {"type": "number"},
                "redactions": {"type": "integer"},
                "prompt_hash": {"type": "string"},
                "tool_schema_hash": {"type": "string"},
                "success": {"type": "boolean"},
                "truncated": {"type": "boolean"},
                "truncation_reason": {"type": "string"},
            },
            "required": [
                "format_version",
                "rollout_id",
                "source",
                "chain_id",
                "repo",
                "pr_numbers",
                "stage_scores",
                "kept_stages",
                "models",
                "trajectory_tokens",
                "tool_calls",
                "success",
                "truncated",
            ],
        },
    },
}


@dataclass
class ExportSummary:
    path: Path
    written: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    redactions: int = 0
    tool_calls: int = 0
    tokens: int = 0


def export_message(
    message: dict[str, Any], redact: Redactor, keep_reasoning: bool = False
) -> dict[str, Any]:
    """One message in the exported shape: string content always, call fields only where they belong."""
    out: dict[str, Any] = {"role": message["role"], "content": redact(message.get("content") or "")}
    if keep_reasoning and message["role"] == "assistant" and message.get("reasoning_content"):
        out["reasoning_content"] = redact(message["reasoning_content"])
    if message["role"] == "assistant" and message.get("tool_calls"):
        out["tool_calls"] = [
            {
                "id": c["id"],
                "type": "function",
                "function": {
                    "name": c["function"]["name"],
                    "arguments": redact(c["function"].get("arguments") or "{}"),
                },
            }
            for c in message["tool_calls"]
        ]
    if message["role"] == "tool":
        out["tool_call_id"] = message["tool_call_id"]
        out["name"] = message.get("name") or ""
    return out


def load_guard(session: Any, stages: list[ChainStage], min_chars: int) -> Guard:
    """What no message of a rollout of this chain may show (prchain.agent.leakscan): every
    stage's gold lines, earlier and later ones alike, and its hidden test names."""
    verified = fail_to_pass(session, [s.id for s in stages])
    gold = [
        GoldStage(s.gold_patch or "", s.gold_test_patch or "", tuple(verified.get(s.id) or ()))
        for s in stages
    ]
    return chain_guard(gold, min_chars)


Forbidden = Callable[[Any, RolloutRow], list[str]]
"""Strings no exported message of a rollout may contain (e.g. a curated trajectory's hidden test
names and process-graph statements); supplied by the layer that knows them."""


def any_message_shows(messages: list[dict[str, Any]], forbidden: list[str]) -> str | None:
    for m in messages:
        texts = [m["content"]] + [c["function"]["arguments"] for c in m.get("tool_calls", [])]
        for text in texts:
            hit = next((f for f in forbidden if f and f in text), None)
            if hit is not None:
                return hit
    return None


def build_record(
    session: Any,
    rollout: RolloutRow,
    *,
    min_score: float,
    keep: KeepPolicyName,
    keep_prm: bool,
    leak_min_chars: int = LEAK_MIN_CHARS,
    forbidden: Forbidden | None = None,
    keep_reasoning: bool = False,
    keep_on: KeepSignal = "judge",
) -> tuple[dict[str, Any] | None, str]:
    """(the JSONL record or None, why it was skipped)."""
    chain = session.get(Chain, rollout.chain_id)
    stages = stored.stages(session, rollout.id)
    passed = [stage_passes(s.score, s.tests_passed, min_score, keep_on) for s in stages]
    kept = decide(keep, passed, chain.length, min_score).kept_stages
    if not kept:
        return (
            None,
            f"below min score ({keep})"
            if keep_on == "judge"
            else f"not passed ({keep}, {keep_on})",
        )
    kinds = EXPORTED_KINDS + (("prm",) if keep_prm else ())
    steps = stored.steps(session, rollout.id, through=kept, kinds=kinds)
    redact = Redactor()
    messages = [export_message(step.message, redact, keep_reasoning) for step in steps]
    chain_stages = list(
        session.execute(
            select(ChainStage, PullRequest.number)
            .join(PullRequest, PullRequest.id == ChainStage.pr_id)
            .where(ChainStage.chain_id == chain.id)
            .order_by(ChainStage.idx)
        )
    )
    guard = load_guard(session, [stage for stage, _ in chain_stages], leak_min_chars)
    if (leak := guard.first_leak(messages, [step.stage_idx for step in steps])) is not None:
        return None, leak
    if forbidden is not None and any_message_shows(messages, forbidden(session, rollout)):
        return None, "a message shows oracle text (hidden test name or graph statement)"
    metadata = _metadata(
        session, rollout, chain, steps, stages[:kept], [n for _, n in chain_stages][:kept]
    )
    metadata["config_json"] = redact(metadata["config_json"])
    metadata["redactions"] = redact.count
    return {
        "messages": messages,
        "tools": scaffold_tools(metadata["scaffold"]),
        "metadata": metadata,
    }, ""


def scaffold_tools(scaffold: str) -> list[dict[str, Any]]:
    """The tool schemas the scaffold's trajectories were made with."""
    if scaffold == "mini-swe-agent":
        from prchain.agent.mini import tool_schemas

        return tool_schemas()
    return TOOL_SCHEMAS


def _metadata(
    session: Any,
    rollout: RolloutRow,
    chain: Chain,
    steps: list[StepRow],
    stages: list[StageRow],
    pr_numbers: list[int],
) -> dict[str, Any]:
    assistant = [s for s in steps if s.kind == "assistant"]
    repo = session.get(Repo, chain.repo_id)
    return {
        "format_version": FORMAT_VERSION,
        "rollout_id": rollout.id,
        "source": rollout.source,
        "chain_id": chain.id,
        "repo": repo.full_name if repo else "",
        "pr_numbers": pr_numbers,
        "stage_scores": [float(s.score or 0.0) for s in stages],
        "n_stages": chain.length,
        "kept_stages": len(stages),
        "keep_policy": rollout.keep_policy,
        "conflict_policy": rollout.conflict_policy,
        "action_format": rollout.action_format,
        "scaffold": scaffold_of(rollout.config),
        "prm_variant": rollout.prm_variant or "",
        "models": {k: str(v or "") for k, v in rollout.models.items()},
        "config_json": json.dumps(
            rollout.config, sort_keys=True
        ),  # redacted by the caller like every string
        "prompt_tokens": sum(s.prompt_tokens for s in assistant),
        "completion_tokens": sum(s.completion_tokens for s in assistant),
        "trajectory_tokens": (assistant[-1].prompt_tokens + assistant[-1].completion_tokens)
        if assistant
        else 0,
        "agent_steps": len(assistant),
        "tool_calls": sum(len(s.message.get("tool_calls") or []) for s in assistant),
        "cost_usd": float(rollout.cost_usd),
        "prompt_hash": rollout.prompt_hash,
        "tool_schema_hash": rollout.tool_schema_hash,
        **outcome_flags(stages, chain.length),
    }


def outcome_flags(stages: list[StageRow], n_stages: int) -> dict[str, Any]:
    """`success`: the row's stages are the whole chain and each passed; `truncated`: a budget (steps,
    tokens, the context window) ended the agent's work in one of them, and which."""
    cut = next((s.reason for s in stages if s.reason and TRUNCATION.search(s.reason)), "")
    return {
        "success": len(stages) == n_stages and all(s.status == "passed" for s in stages),
        "truncated": bool(cut),
        "truncation_reason": cut or "",
    }


def export_trajectories(
    engine: Engine,
    out: str | Path,
    *,
    min_score: float = 0.8,
    keep: KeepPolicyName = "all",
    keep_prm: bool = False,
    leak_min_chars: int = LEAK_MIN_CHARS,
    forbidden: Forbidden | None = None,
    keep_on: KeepSignal = "judge",
) -> ExportSummary:
    """Write every finished rollout that passes the filter; the file is replaced atomically (and a
    target that is not a regular file is refused, see prchain.core.files). keep_on=tests is
    refused (prchain.agent.keep.refuse_tests_alone)."""
    refuse_tests_alone(keep_on)
    summary = ExportSummary(Path(out))
    with session_scope(engine) as session, atomic_output(summary.path) as handle:
        for rollout in stored.exportable(session):
            record, why = build_record(
                session,
                rollout,
                min_score=min_score,
                keep=keep,
                keep_prm=keep_prm,
                leak_min_chars=leak_min_chars,
                forbidden=forbidden,
                keep_on=keep_on,
            )
            if record is None:
                summary.skipped[why] += 1
                continue
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
            summary.written += 1
            summary.redactions += record["metadata"]["redactions"]
            summary.tool_calls += record["metadata"]["tool_calls"]
            summary.tokens += record["metadata"]["trajectory_tokens"]
    return summary


def validate_record(record: dict[str, Any]) -> None:
    """Raise jsonschema.ValidationError when a record does not match TRAJECTORY_SCHEMA."""
    import jsonschema  # a dev dependency: only tests and `prchain export --check` validate

    jsonschema.validate(record, TRAJECTORY_SCHEMA)
    ids = {c["id"] for m in record["messages"] for c in m.get("tool_calls", [])}
    orphans = [
        m["tool_call_id"]
        for m in record["messages"]
        if m["role"] == "tool" and m["tool_call_id"] not in ids
    ]
    if orphans:
        raise jsonschema.ValidationError(f"tool results without a matching call: {orphans}")
