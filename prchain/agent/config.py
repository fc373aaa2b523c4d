"""Configuration of the agent loop, the judge and the keep policy."""

from pydantic import BaseModel, ConfigDict, Field, field_validator

from prchain.agent.choices import ActionFormat, KeepPolicyName, KeepSignal, Scaffold

LEAK_MIN_CHARS = 6


class AgentConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @field_validator("keep_on")
    @classmethod
    def _tests_alone_refused(cls, value: KeepSignal) -> KeepSignal:
        from prchain.agent.keep import refuse_tests_alone

        refuse_tests_alone(value)
        return value

    scaffold: Scaffold = Field(
        "builtin",
        description="The agent that works each stage: builtin (prchain's loop and tools) or "
        "mini-swe-agent (its prompts, bash tool and step, in the same sandbox and prchain's client; "
        "pip install 'prchain[mini]').",
    )
    mini_config: str = Field(
        "mini.yaml",
        description="mini-swe-agent only: one of its built-in configs (mini.yaml, "
        "benchmarks/swebench.yaml, ...) or a path to a YAML file of that shape; its `agent` "
        "templates and `model` templates are used, its limits are prchain's (max_steps_*, "
        "max_tokens_*).",
    )
    action_format: ActionFormat = Field(
        "tools", description="tools (native tool calling) or text (one fenced command per reply)."
    )
    max_steps_per_stage: int = Field(
        60, ge=1, description="Agent steps allowed in one stage (refinements included)."
    )
    max_steps_per_chain: int = Field(250, ge=1, description="Agent steps allowed across a chain.")
    max_tokens_per_stage: int = Field(
        4_000_000,
        ge=1,
        description="Policy tokens billed in one stage (prompt+completion summed over its calls).",
    )
    max_tokens_per_chain: int = Field(
        10_000_000,
        ge=1,
        description="Policy tokens billed across a chain (a ~85k-token, 116-call trajectory bills ~5M).",
    )
    context_window: int = Field(
        128_000, ge=1024, description="Model context; a conversation beyond it ends the stage."
    )
    max_observation_chars: int = Field(
        10_000, ge=256, description="Tool output past this is truncated with a marker."
    )
    command_timeout: float = Field(
        120.0, gt=0, description="Seconds a `bash` tool call may run before it is killed."
    )
    max_format_errors: int = Field(
        3, ge=1, description="Consecutive replies without a usable action before the stage ends."
    )
    max_repeated_failures: int = Field(
        3,
        ge=2,
        description="The same failing action (or a prompt placeholder) this many times in a row "
        "ends the stage; the model is told once, one repetition before.",
    )
    judge_threshold: float = Field(0.8, ge=0, le=1, description="Stage score needed to pass.")
    max_refinements: int = Field(
        3, ge=0, description="Judge-feedback rounds after the first submission."
    )
    max_judge_prompt_tokens: int = Field(
        60_000,
        ge=1000,
        description="Judge prompts estimated past this many tokens are not sent; the stage fails "
        "with that as its reason (bounds the judge's cost per call).",
    )
    judge_retries: int = Field(
        2, ge=0, description="Re-asks of the judge after malformed or leaking output."
    )
    leak_min_chars: int = Field(
        LEAK_MIN_CHARS,
        ge=1,
        description="Gold-patch lines with at least this many non-space characters (and a word "
        "other than return/else/None/...) may not appear verbatim in judge comments or prompts.",
    )
    keep_policy: KeepPolicyName = Field(
        "all", description="all (every stage passes) or prefix (longest passing prefix)."
    )
    keep_on: KeepSignal = Field(
        "judge",
        description="What passes a stage: judge (score >= judge_threshold) or both (judge and "
        "verified hidden tests agree). tests (the hidden tests alone) is refused: the agent's code "
        "runs inside the test process.",
    )
    workers: int = Field(
        1, ge=1, description="Chains rolled out in parallel, each in its own sandbox."
    )
    lease_heartbeat_seconds: float = Field(
        10.0, gt=0, description="How often a runner refreshes the lease of the chain it works on."
    )
    lease_timeout_seconds: float = Field(
        120.0,
        gt=0,
        description="A chain lease not refreshed for this long belongs to a dead runner and is "
        "taken over (keep it well above the heartbeat and any clock skew between hosts).",
    )
    lease_wait_seconds: float = Field(
        15.0,
        ge=0,
        description="How long a runner waits for a lease held by a process of this host that is "
        "on its way out (a Ray worker whose node was just removed) before calling the chain busy.",
    )
