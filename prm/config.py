"""Configuration of the process reward model (SWE-PRM)."""

from pydantic import BaseModel, ConfigDict, Field


class PRMConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    variant: str | None = Field(None, description="PRM variant (S, C, CG, D, DN, DG, DNG, DR); none disables it.")
    every: int = Field(5, ge=1, description="Invoke the PRM every n agent steps.")
    window: int = Field(8, ge=1, description="Serialize the last k steps for the PRM.")
    keep_in_export: bool = Field(False, description="Keep PRM guidance messages in exported trajectories.")
