"""Configuration of the stage-wise sandbox."""

from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field

ConflictPolicy = Literal["strict", "oracle", "partial"]
"""When the carried patch Δ_(t-1) does not apply on B_t: stop the chain, reset to the gold end state
of stage t-1, or apply what applies and record the rejects."""
CONFLICT_POLICIES: tuple[str, ...] = get_args(ConflictPolicy)

DiskCap = Literal["auto", "storage-opt", "tmpfs", "off"]
"""How a sandbox's disk is bounded: a size limit on the container's writable layer (storage-opt;
needs overlay2 on xfs with pquota, or btrfs/zfs), a read-only image with size-limited tmpfs mounts
for every place the agent can write (tmpfs), the first that this engine supports (auto), or not at
all (off)."""
DISK_CAPS: tuple[str, ...] = get_args(DiskCap)


class EnvironmentConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    backend: str = Field(default="docker", description="Environment backend.")
    base_image: str = Field(
        default="prchain/base:bookworm",
        description="Image with python3 and git; built locally if missing.",
    )
    base_suite: str = Field(
        default="bookworm",
        description="Debian suite debootstrap uses when prchain builds the base image.",
    )
    base_packages: list[str] = Field(
        default_factory=lambda: ["python3", "python3-pytest", "git", "ca-certificates"],
        description="Debian packages of a locally built base image (debootstrap --include).",
    )
    debian_mirror: str = Field(
        default="http://deb.debian.org/debian", description="Mirror debootstrap downloads from."
    )
    install_commands: dict[str, list[str]] = Field(
        default_factory=dict,
        description="Per repo (owner/name), shell commands baked into its image.",
    )
    build_ca_bundle: str = Field(
        default="/etc/ssl/certs/ca-certificates.crt",
        description="Host CA bundle the install commands trust while the image is built (for "
        "networks that re-sign TLS); removed from the image afterwards. Empty: use the image's own.",
    )
    conflict_policy: ConflictPolicy = Field(
        default="strict", description="strict | oracle | partial when the carried patch conflicts."
    )
    network: bool = Field(
        default=False, description="Give the sandbox network access (off by default)."
    )
    cpus: float = Field(default=1.0, gt=0, description="CPU limit of a sandbox.")
    memory: str = Field(
        default="2g", description="Memory limit of a sandbox (swap is not added on top)."
    )
    pids_limit: int = Field(
        default=256, ge=16, description="Process-count limit (contains fork bombs)."
    )
    command_timeout: float = Field(
        default=120.0, gt=0, description="Seconds before a command is killed."
    )
    max_output_bytes: int = Field(
        default=20_000, ge=256, description="Output past this is truncated with a marker."
    )
    max_report_bytes: int = Field(
        default=64_000_000,
        ge=1024,
        description="A clean room's test report past this many bytes is an error, never read: "
        "root keeps this much of it and discards the rest as it streams by.",
    )
    test_command: dict[str, str] = Field(
        default_factory=dict, description="Optional per-repo test command."
    )
    test_timeout: float = Field(
        default=900.0, gt=0, description="Seconds before a stage's test command is killed."
    )
    disk_cap: DiskCap = Field(
        default="auto",
        description="auto | storage-opt | tmpfs | off: how the sandbox disk is bounded.",
    )
    disk_limit: str = Field(
        default="2g",
        description="Writable space of a sandbox: the writable layer's size (storage-opt), or the "
        "tmpfs at /work holding the repository (tmpfs; counts against `memory`).",
    )
    scratch_limit: str = Field(
        # A compiled project builds there (cargo's target directory is in /tmp): tokio-rs/bytes'
        # tests and doctests of 2023 take 280 MB. The pages written count against `memory`,
        # which bounds them all; this only caps one place.
        default="1g",
        description="tmpfs only: size of each of /tmp and the agent's home (counts against `memory`).",
    )
    max_diff_bytes: int = Field(
        default=2_000_000,
        ge=1024,
        description="A stage or cumulative diff past this many bytes is replaced by a diffstat "
        "summary, and the stage ends with that as its reason.",
    )
    log_dir: str = Field(default="data/env-logs", description="Where image build logs are kept.")
