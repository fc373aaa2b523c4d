"""Limits of the LLM setup agent (role `env_setup`; its model is `llm.models.env_setup`)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class SetupAgentConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(
        default=True, description="Call the setup agent where the planner's recipe fails."
    )
    max_steps: int = Field(default=30, ge=1, description="Model replies per environment.")
    max_cost_usd: float = Field(
        default=0.50, gt=0, description="Spend on one environment before the agent is stopped."
    )
    command_timeout: float = Field(
        default=900.0, gt=0, description="Seconds one command may run in the build sandbox."
    )
    max_observation_chars: int = Field(
        default=8000, ge=500, description="Command output shown to the model (head and tail)."
    )
    max_format_errors: int = Field(
        default=3, ge=1, description="Replies in a row without a usable tool call before it stops."
    )
    memory: str = Field(default="4g", description="Memory of the build sandbox.")
