"""Configuration of P2T curation: the reverse phase (graph) and the forward phase (windows)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from prchain.p2t.choices import (
    EtaMode,
    FallbackMode,
    LenMode,
    OutOfOrderMode,
    PickMode,
    PrefilterMode,
)

DEFAULT_TEMPERATURES = {
    "p2t_proposer": 0.4,
    "p2t_critic": 0.4,
    "p2t_seed": 0.6,
    "p2t_curator": 0.2,
    "p2t_claim_judge": 0.2,
    "p2t_verifier": 0.0,
}


class P2TConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # -- reverse phase ---------------------------------------------------------------------------
    max_rounds: int = Field(6, ge=1, description="Proposer/critic rounds at most (T_max).")
    empty_rounds_to_stop: int = Field(
        2, ge=1, description="Stop after this many rounds in a row where the proposer adds nothing."
    )
    max_tool_calls_per_round: int = Field(
        40, ge=1, description="Sandbox tool calls one role may make in one round."
    )
    schema_retries: int = Field(
        2,
        ge=0,
        description="Re-asks after a reply that is not the role's JSON; then the round is dropped.",
    )
    max_observation_chars: int = Field(
        4000, ge=200, description="An unlocker's stored observation is cut to this many characters."
    )
    unlocker_timeout: float = Field(60.0, gt=0, description="Seconds one unlocker may run.")
    # -- forward phase ---------------------------------------------------------------------------
    window: int = Field(10, ge=1, description="Steps per candidate continuation (n).")
    commit: int = Field(
        5,
        ge=1,
        description="Steps committed from the chosen candidate (δ; the worked example uses 4).",
    )
    seeds: int = Field(2, ge=1, description="Blinded seeds per window (K).")
    mutate: bool = Field(True, description="Let the curator write one mutated step per seed.")
    eta: float = Field(0.5, ge=0, description="Efficiency floor η (see eta_mode).")
    eta_mode: EtaMode = Field("const", description="const: η; frontier_scaled: η·max(1,|A|).")
    ooo_mode: OutOfOrderMode = Field(
        "drop", description="drop: keep the in-order part of a step; strict: zero the step."
    )
    len_mode: LenMode = Field("response_tokens", description="What Len counts.")
    fallback: FallbackMode = Field(
        "seed", description="Nothing above the floor: best pure seed (seed) or best of the pool."
    )
    pick: PickMode = Field(
        "shortest", description="shortest above the floor, or random (ablation)."
    )
    groundedness_gate: bool = Field(
        True, description="Check mutated steps (entities + claim judge); off is the ablation."
    )
    pareto_filter: bool = Field(
        True, description="Select among the non-dominated candidates (Eff up, Len down) only."
    )
    prefilter: PrefilterMode = Field(
        "entities",
        description="Ask the establishment verifier only about nodes the step could have "
        "surfaced (entities), or about every pending node after every step (none).",
    )
    max_steps: int = Field(100, ge=1, description="Steps of a curated stage before it gives up.")
    workers: int = Field(
        1, ge=1, description="Chains curated in parallel, each in its own sandbox (--workers)."
    )
    seed_random: int = Field(0, description="Seed of the random pick ablation.")
    temperatures: dict[str, float] = Field(
        default_factory=lambda: dict(DEFAULT_TEMPERATURES),
        description="Sampling temperature per P2T role, used unless llm.temperature sets one.",
    )
