"""`prchain rollout --dry-run`: the calls, tokens and cost the pending rollouts would take.

With rollouts in the store, the mean policy calls per stage and the mean tokens per call are
taken from them; without, an assumed mid-sized run (half the stage step budget, a context of a few
thousand tokens) stands in, and the table says so.
"""

from __future__ import annotations

from sqlalchemy import Engine, func, select

from prchain.agent.config import AgentConfig
from prchain.agent.tasks import pending_chains
from prchain.llm.config import LLMConfig
from prchain.llm.estimate import RoleEstimate, estimate_role
from sql.db import session_scope
from sql.models import ChainStage, LLMCall, RolloutStage

ASSUMED_POLICY_PROMPT = 8_000  # tokens per policy call when the store has no history
ASSUMED_POLICY_COMPLETION = 300
ASSUMED_JUDGE_PROMPT = 3_000
ASSUMED_JUDGE_COMPLETION = 150


def plan_rollouts(
    agent: AgentConfig,
    llm: LLMConfig,
    engine: Engine,
    chain_ids: tuple[int, ...] | list[int] = (),
    limit: int | None = None,
) -> list[RoleEstimate]:
    todo = pending_chains(engine, chain_ids, limit)
    with session_scope(engine) as session:
        stages = (
            session.scalar(select(func.count()).where(ChainStage.chain_id.in_(todo))) or 0
            if todo
            else 0
        )
        done_stages = session.scalar(select(func.count()).select_from(RolloutStage)) or 0
        policy_calls = session.scalar(
            select(func.count()).where(LLMCall.role == "policy", LLMCall.rollout_id.is_not(None))
        )
    per_stage = (policy_calls or 0) / done_stages if done_stages else agent.max_steps_per_stage / 2
    return [
        estimate_role(
            llm,
            engine,
            "policy",
            round(per_stage * stages),
            completion_per_call=ASSUMED_POLICY_COMPLETION,
            prompt_per_call=ASSUMED_POLICY_PROMPT,
        ),
        estimate_role(
            llm,
            engine,
            "judge",
            stages,
            completion_per_call=ASSUMED_JUDGE_COMPLETION,
            prompt_per_call=ASSUMED_JUDGE_PROMPT,
        ),
    ]
