"""Configuration of the LLM client shared by every role."""

from pydantic import BaseModel, ConfigDict, Field, PositiveInt

ROLES = (
    "query_constructor",
    "overview",
    "link_vetter",
    "policy",
    "judge",
    "prm",
    "p2t_proposer",
    "p2t_critic",
    "p2t_seed",
    "p2t_curator",
    "p2t_claim_judge",
    "p2t_verifier",
    "env_setup",
)


DEFAULT_SERVER_TEMPERATURE = 0.7  # what most servers use when a request names no temperature
MAX_RETRY_TEMPERATURE = 1.0


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
    max_tokens: dict[str, PositiveInt] = Field(
        default_factory=dict,
        description="Longest reply per role, in tokens (the request's max_tokens), e.g. "
        "{policy: 2048, judge: 512}; unset leaves it to the server.",
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
    retry_temperature_step: float = Field(
        0.2,
        ge=0,
        description="Added to the temperature on each retry after a format error, so a retry is "
        "not the same request again (from 0.7 when the role's temperature is unset; capped at 1).",
    )
    budget_usd: float | None = Field(
        None, gt=0, description="Stop a run before the LLM call that would spend more (USD)."
    )
    budget_tokens: int | None = Field(
        None, gt=0, description="Stop a run before the LLM call that would use more tokens."
    )
    timeout_seconds: float = Field(120.0, gt=0, description="Timeout of one request.")
    cache: bool = Field(True, description="Reuse a stored response for an identical request.")
    prices: dict[str, Price] = Field(
        default_factory=dict,
        description="Price per model name; the key `*` prices any model not listed.",
    )

    def model_for(self, role: str) -> str:
        return self.models.get(role, self.default_model)

    def temperature_for(self, role: str, attempt: int = 0) -> float | None:
        """None leaves the temperature to the server's default; a retry raises it a step."""
        base = self.temperature.get(role)
        if attempt == 0 or self.retry_temperature_step == 0:
            return base
        start = DEFAULT_SERVER_TEMPERATURE if base is None else base
        return round(min(MAX_RETRY_TEMPERATURE, start + attempt * self.retry_temperature_step), 3)
