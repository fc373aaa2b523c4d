"""`prchain queries build --dry-run`: the calls, tokens and cost the pending queries would take.

The prompt of every pending stage and overview is rendered for real and measured; completion sizes
come from the store's history of the role (or a typical query's size when there is none).
"""

from __future__ import annotations

from sqlalchemy import Engine

from prchain.chains.config import ChainsConfig
from prchain.chains.writers.queries import (
    OVERVIEW_ROLE,
    QUERY_ROLE,
    load_pending,
    overview_prompt,
    query_prompt,
)
from prchain.chains.writers.textclean import estimate_tokens
from prchain.llm.config import LLMConfig
from prchain.llm.estimate import RoleEstimate, estimate_role

QUERY_COMPLETION_TOKENS = 120  # three or four sentences of prose


def plan_queries(
    config: ChainsConfig, llm: LLMConfig, engine: Engine, chain_ids: list[int] | None = None
) -> list[RoleEstimate]:
    """One estimate per role, for one attempt per stage and overview (retries come on top)."""
    chains = load_pending(engine, chain_ids)
    prompts = [
        query_prompt(chain, stage, config)
        for chain in chains
        for stage in chain.stages
        if stage.query is None
    ]
    overviews = [overview_prompt(chain) for chain in chains if chain.needs_overview]
    return [
        estimate_role(
            llm,
            engine,
            role,
            len(texts),
            prompt_tokens=sum(estimate_tokens(text) for text in texts),
            completion_per_call=QUERY_COMPLETION_TOKENS,
        )
        for role, texts in ((QUERY_ROLE, prompts), (OVERVIEW_ROLE, overviews))
    ]
