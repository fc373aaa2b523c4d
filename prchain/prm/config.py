"""Configuration of the process reward model (SWE-PRM)."""

from pydantic import BaseModel, ConfigDict, Field, field_validator

from prchain.core.errors import UnknownName
from prchain.prm.variants import get_variant


class PRMConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    variant: str | None = Field(
        None,
        description="PRM variant (S, C, CG, D, DN, DG, DNG, DR; any case); none or unset disables it.",
    )
    every: int = Field(5, ge=1, description="Invoke the PRM every n agent steps.")
    window: int = Field(8, ge=1, description="Serialize the last k steps for the PRM.")
    keep_in_export: bool = Field(
        False, description="Keep PRM guidance messages in exported trajectories."
    )
    max_parse_retries: int = Field(
        2,
        ge=0,
        description="Re-asks after a malformed PRM reply; then the call is recorded invalid_output and skipped.",
    )
    max_observation_chars: int = Field(
        2000,
        ge=100,
        description="Each observation in the PRM's window is cut to this many characters (head and tail).",
    )
    inject_when_on_track: bool = Field(
        False,
        description="Also inject guidance when the PRM finds the window on track with no error detected "
        "(off: a clean window leaves the agent's context untouched).",
    )

    @field_validator("variant")
    @classmethod
    def _known_variant(cls, value: str | None) -> str | None:
        """A typo fails when the config loads, before any rollout starts."""
        if value is None or value.strip().lower() in ("", "none"):
            return None
        try:
            return get_variant(value.strip()).name
        except UnknownName as exc:
            raise ValueError(str(exc)) from None
