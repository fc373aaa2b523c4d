"""What one trajectory page shows: every step in order, with the patch as it stood after it."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from prchain.report.optional import p2t_rows, p2t_stages
from prchain.report.patches import PatchPiece, step_piece
from prchain.store import rollouts as stored
from prchain.store.environments import TransitionRow, transitions
from prchain.store.models import ChainStage, PRMCall, PullRequest
from prchain.store.rollouts import JudgementRow, RolloutRow, StageRow, StepRow

StepCost = Callable[[str, int, int], float]  # (model, prompt tokens, completion tokens) → USD


@dataclass
class StepView:
    idx: int
    stage: int
    kind: str
    role: str
    content: str
    tool_calls: list[tuple[str, str]] = field(default_factory=list)  # (name, pretty arguments)
    tool_name: str = ""
    observation: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    judgement: JudgementRow | None = None  # the verdict on this submit


@dataclass
class StageView:
    idx: int
    number: int | None
    title: str
    stage: StageRow | None
    transition: TransitionRow | None
    steps: list[StepView] = field(default_factory=list)
    pieces: list[PatchPiece] = field(default_factory=list)
    start: PatchPiece | None = None  # the stored cumulative diff the stage began from
    prm_calls: list[PRMCall] = field(default_factory=list)


@dataclass
class TrajectoryPage:
    rollout: RolloutRow
    stages: list[StageView]
    p2t: list[tuple[str, list[str], list[list[Any]]]]
    curation: list[dict[str, Any]] = field(default_factory=list)  # p2t_stages rows

    @property
    def steps(self) -> int:
        return sum(len(s.steps) for s in self.stages)


def clip_middle(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    head, tail = limit * 2 // 3, limit // 3
    return f"{text[:head]}\n… [{len(text) - head - tail} characters not shown] …\n{text[-tail:]}"


def _pretty(arguments: str) -> str:
    try:
        return json.dumps(json.loads(arguments), indent=2, ensure_ascii=False)
    except (TypeError, json.JSONDecodeError):
        return str(arguments)


def _step_view(step: StepRow, model: str, cost: StepCost | None, max_chars: int) -> StepView:
    message = step.message or {}
    content = message.get("content") or ""
    view = StepView(
        step.idx,
        step.stage_idx,
        step.kind,
        str(message.get("role", "")),
        content if isinstance(content, str) else json.dumps(content),
        prompt_tokens=step.prompt_tokens,
        completion_tokens=step.completion_tokens,
    )
    for call in message.get("tool_calls") or []:
        function = call.get("function", {})
        view.tool_calls.append((function.get("name", "?"), _pretty(function.get("arguments", ""))))
    if step.kind == "tool":
        view.tool_name = (step.tool_call or {}).get("function", {}).get("name", "")
        view.observation = clip_middle(step.observation or view.content, max_chars)
    if cost is not None and (step.prompt_tokens or step.completion_tokens):
        view.cost_usd = cost(model, step.prompt_tokens, step.completion_tokens)
    return view


def _rows(session: Session, model: Any, rollout_id: int, *order: Any) -> list[Any]:
    return list(session.scalars(select(model).filter_by(rollout_id=rollout_id).order_by(*order)))


def _stage_heads(session: Session, rollout: RolloutRow) -> dict[int, StageView]:
    stages = {s.stage_idx: s for s in stored.stages(session, rollout.id)}
    moves = {t.stage_idx: t for t in transitions(session, rollout.id)}
    prs = session.execute(
        select(ChainStage.idx, PullRequest.number, PullRequest.title)
        .join(PullRequest, PullRequest.id == ChainStage.pr_id)
        .where(ChainStage.chain_id == rollout.chain_id)
    ).all()
    heads = {
        idx: StageView(idx, number, title, stages.get(idx), moves.get(idx))
        for idx, number, title in prs
    }
    for idx in stages.keys() - heads.keys():
        heads[idx] = StageView(idx, None, "", stages[idx], moves.get(idx))
    return heads


def trajectory_page(
    session: Session, rollout: RolloutRow, *, cost: StepCost | None, max_chars: int
) -> TrajectoryPage:
    heads = _stage_heads(session, rollout)
    verdicts = {(j.stage_idx, j.round): j for j in stored.judgements(session, rollout.id)}
    model = str((rollout.models or {}).get("policy") or "")
    submits: dict[int, int] = {}
    for step in stored.steps(session, rollout.id):
        view = _step_view(step, model, cost, max_chars)
        stage = heads.setdefault(step.stage_idx, StageView(step.stage_idx, None, "", None, None))
        stage.steps.append(view)
        if view.tool_name == "submit":
            n = submits.get(step.stage_idx, 0)
            view.judgement, submits[step.stage_idx] = verdicts.get((step.stage_idx, n)), n + 1
        piece = (
            step_piece(step.idx, step.tool_call, step.observation) if step.kind == "tool" else None
        )
        if piece is not None:
            stage.pieces.append(piece)
    for call in _rows(session, PRMCall, rollout.id, PRMCall.step_idx):
        if call.stage_idx in heads:
            heads[call.stage_idx].prm_calls.append(call)
    ordered = [heads[i] for i in sorted(heads)]
    for stage in ordered:
        if stage.stage is not None and stage.stage.finished_at is not None and stage.steps:
            stage.pieces.append(
                PatchPiece(stage.steps[-1].idx, stage.stage.cumulative_diff, exact=True)
            )
    previous = ""
    for stage in ordered:  # each stage begins from the cumulative diff the one before stored
        stage.start = PatchPiece(-1, previous, exact=True)
        previous = stage.stage.cumulative_diff if stage.stage is not None else previous
    return TrajectoryPage(
        rollout, ordered, p2t_rows(session, rollout.id), p2t_stages(session, rollout.id)
    )
