"""What a run is expected to cost before it starts (`--dry-run`): calls, tokens and USD per role.

Token sizes come from the store's history of the same role when there is one (mean tokens per
paid call), else from the caller's own estimate; prices from the configured price table.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Engine

from prchain.llm.config import LLMConfig
from prchain.llm.pricing import cost_usd
from prchain.store.llm_calls import History, LLMCalls


@dataclass(frozen=True)
class RoleEstimate:
    role: str
    model: str
    calls: int
    prompt_tokens: int
    completion_tokens: int
    cost_usd: float
    basis: str  # where the token sizes came from


def role_history(engine: Engine, role: str) -> History:
    """Mean tokens of the role's paid, successful calls in the store."""
    return LLMCalls(engine).history(role)


def estimate_role(
    llm: LLMConfig,
    engine: Engine,
    role: str,
    calls: int,
    *,
    prompt_tokens: int | None = None,
    completion_per_call: int,
    prompt_per_call: int = 0,
) -> RoleEstimate:
    """`calls` calls of `role`; `prompt_tokens` (a total measured from the real prompts) wins over
    history, history wins over the `*_per_call` fallbacks."""
    history = role_history(engine, role)
    if history.calls:
        completion = round(history.mean_completion * calls)
        basis = f"history ({history.calls} calls)"
        prompt = prompt_tokens if prompt_tokens is not None else round(history.mean_prompt * calls)
    else:
        completion = completion_per_call * calls
        basis = "no history: assumed sizes"
        prompt = prompt_tokens if prompt_tokens is not None else prompt_per_call * calls
    if prompt_tokens is not None:
        basis += ", prompts measured"
    model = llm.model_for(role)
    usd = cost_usd(llm.prices, model, prompt, completion)
    return RoleEstimate(role, model, calls, prompt, completion, usd, basis)
