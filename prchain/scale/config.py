"""Configuration of where work runs (the `scale` section)."""

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

BackendName = Literal["local", "ray"]
BACKEND_NAMES: tuple[BackendName, ...] = ("local", "ray")


class ScaleConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    backend: BackendName = Field(
        "local", description="local: threads on this machine; ray: one Ray task per chain or repo."
    )
    ray_address: str | None = Field(
        None,
        description="Ray cluster to join ('auto', 'host:6379', 'ray://host:10001'); unset starts a "
        "Ray instance on this machine for the run.",
    )
    slot_resource: str = Field(
        "docker_slots",
        description="Custom Ray resource each node declares for its sandboxes "
        "(`ray start --resources '{\"docker_slots\": 4}'`); a rollout task takes one.",
    )
    local_slots: int | None = Field(
        None,
        ge=1,
        description="Sandboxes of a Ray instance prchain starts itself (default: the run's workers).",
    )
    task_cpus: float = Field(
        0.25,
        gt=0,
        description="CPUs Ray reserves per task; tasks mostly wait on the LLM and the sandbox.",
    )
    max_retries: int = Field(
        3,
        ge=0,
        description="Times Ray reruns a task whose worker or node died; the rerun resumes the chain "
        "from its last passed stage.",
    )
    registry: str | None = Field(
        None,
        description="Registry (host:port[/prefix]) `env setup` pushes each verified era image to, "
        "and from which any node that lacks an era image pulls it instead of building it again "
        "(`env setup`, `tests verify`); unset: every node builds what it lacks.",
    )
    forward_env: list[str] = Field(
        default_factory=list,
        description="Extra environment variables copied from the driver to every task (the LLM "
        "server, API key and GitHub token variables are always copied).",
    )
