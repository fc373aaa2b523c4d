"""`prchain rollout --dry-run`: the calls, tokens and cost the pending rollouts would take.

With rollouts in the store, the mean policy calls per stage and the mean tokens per call are
taken from them; without, an assumed mid-sized run (half the stage step budget, a context of a few
thousand tokens) stands in, and the table says so.
"""

from __future__ import annotations

from sqlalchemy import Engine, select

from prchain.agent.config import AgentConfig
from prchain.agent.judge import judge_prompt
from prchain.agent.loop import CHARS_PER_TOKEN
from prchain.agent.tasks import pending_chains
from prchain.llm.config import LLMConfig
from prchain.llm.estimate import RoleEstimate, estimate_role
from prchain.store.db import session_scope
from prchain.store.llm_calls import rollout_calls
from prchain.store.models import ChainStage
from prchain.store.rollouts import stage_count

ASSUMED_POLICY_PROMPT = 8_000  # tokens per policy call when the store has no history
ASSUMED_POLICY_COMPLETION = 300
ASSUMED_JUDGE_COMPLETION = 150


def plan_rollouts(
    agent: AgentConfig,
    llm: LLMConfig,
    engine: Engine,
    chain_ids: tuple[int, ...] | list[int] = (),
    limit: int | None = None,
    redo: tuple[int, ...] | list[int] = (),
) -> list[RoleEstimate]:
    todo = pending_chains(engine, chain_ids, limit, redo=redo)
    with session_scope(engine) as session:
        rows = (
            session.execute(
                select(ChainStage.query, ChainStage.gold_patch).where(ChainStage.chain_id.in_(todo))
            ).all()
            if todo
            else []
        )
        stages = len(rows)
        done_stages = stage_count(session)
        policy_calls = rollout_calls(session, "policy")
    per_stage = policy_calls / done_stages if done_stages else agent.max_steps_per_stage / 2
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
            prompt_tokens=sum(judge_prompt_tokens(query or "", gold) for query, gold in rows),
            completion_per_call=ASSUMED_JUDGE_COMPLETION,
        ),
    ]


def judge_prompt_tokens(query: str, gold_patch: str) -> int:
    """The judge's prompt for a stage, rendered with its real query and gold patch and, standing
    in for the agent's patch, one of the same size (a long gold patch makes a long prompt)."""
    return len(judge_prompt(query, gold_patch, gold_patch)) // CHARS_PER_TOKEN
