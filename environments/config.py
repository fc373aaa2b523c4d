"""Configuration of the stage-wise sandbox."""

from pydantic import BaseModel, ConfigDict, Field


class EnvironmentConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    backend: str = Field("docker", description="Environment backend.")
    base_image: str = Field("prchain/base:bookworm", description="Image with python3 and git; built locally if missing.")
    install_commands: dict[str, list[str]] = Field(
        default_factory=dict, description="Per repo (owner/name), shell commands baked into its image."
    )
    conflict_policy: str = Field("strict", description="strict | oracle | partial when the carried patch conflicts.")
    network: bool = Field(False, description="Give the sandbox network access (off by default).")
    cpus: float = Field(1.0, gt=0, description="CPU limit of a sandbox.")
    memory: str = Field("2g", description="Memory limit of a sandbox.")
    pids_limit: int = Field(256, ge=16, description="Process-count limit (contains fork bombs).")
    command_timeout: float = Field(120.0, gt=0, description="Seconds before a command is killed.")
    max_output_bytes: int = Field(20_000, ge=256, description="Output past this is truncated with a marker.")
    test_command: dict[str, str] = Field(default_factory=dict, description="Optional per-repo test command.")
