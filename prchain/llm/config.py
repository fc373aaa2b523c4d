"""Configuration of the LLM client shared by every role."""

from pydantic import BaseModel, ConfigDict, Field

ROLES = (
    "query_constructor",
    "overview",
    "policy",
    "judge",
    "prm",
    "p2t_proposer",
    "p2t_critic",
    "p2t_seed",
    "p2t_curator",
    "p2t_claim_judge",
    "p2t_verifier",
)


class Price(BaseModel):
    model_config = ConfigDict(extra="forbid")

    prompt_per_million: float = Field(0.0, ge=0, description="USD per million prompt tokens.")
    completion_per_million: float = Field(
        0.0, ge=0, description="USD per million completion tokens."
    )


class LLMConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    base_url_env: str = Field(
        "OPENAI_BASE_URL", description="Environment variable with the server URL."
    )
    api_key_env: str = Field("OPENAI_API_KEY", description="Environment variable with the API key.")
    default_model: str = Field(
        "gpt-4o-mini", description="Model for any role not named in `models`."
    )
    models: dict[str, str] = Field(
        default_factory=dict, description="Model per role, e.g. {judge: gpt-4o}."
    )
    endpoints: dict[str, str] = Field(
        default_factory=dict,
        description="Optional base URL per role (e.g. the PRM on another server).",
    )
    temperature: dict[str, float] = Field(
        default_factory=dict, description="Sampling temperature per role."
    )
    workers: int = Field(4, ge=1, description="Concurrent requests.")
    max_retries: int = Field(
        4, ge=0, description="Retries on 429, 5xx, timeouts and malformed output."
    )
    retry_backoff_seconds: float = Field(
        1.0,
        ge=0,
        description="First wait before a retry; doubles each time (with jitter), up to the max.",
    )
    retry_backoff_max_seconds: float = Field(
        30.0,
        ge=0,
        description="Longest wait between retries, also the cap on a server's Retry-After.",
    )
    timeout_seconds: float = Field(120.0, gt=0, description="Timeout of one request.")
    cache: bool = Field(True, description="Reuse a stored response for an identical request.")
    prices: dict[str, Price] = Field(
        default_factory=dict,
        description="Price per model name; the key `*` prices any model not listed.",
    )

    def model_for(self, role: str) -> str:
        return self.models.get(role, self.default_model)

    def temperature_for(self, role: str) -> float | None:
        """None leaves the temperature to the server's default."""
        return self.temperature.get(role)
