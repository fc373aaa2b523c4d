"""The sandbox container as Docker is asked for it: the agent's minimal environment, root's few
capabilities, the network, CPU, memory and process limits, and the disk bounded one of three ways
(learning, with disk_cap=auto, whether the engine can bound a writable layer)."""

from __future__ import annotations

import re
import secrets
from collections.abc import Callable
from dataclasses import replace

from prchain.environments import carry, cleanup
from prchain.environments.config import EnvironmentConfig
from prchain.environments.docker_client import ContainerSpec, DockerClient, StorageQuotaUnsupported
from prchain.environments.eras.python import own_points

AGENT = "agent"
AGENT_ENV = {
    "HOME": "/home/agent",
    "USER": AGENT,
    "LOGNAME": AGENT,
    # last: the console scripts of the stage's own tree (a Python project's, own_points.py)
    "PATH": f"/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin:{own_points.BIN}",
    "LANG": "C.UTF-8",
    "TERM": "dumb",
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "PYTHONDONTWRITEBYTECODE": "1",
}
# Root needs these to fill a tmpfs sandbox from its seed at start and to end the agent's processes
# at each stage entry; the agent (a non-root uid) has no effective capability at all.
ROOT_CAPS = ["CHOWN", "DAC_OVERRIDE", "FOWNER", "KILL"]
# A clean room's root also drops each test command to the tester itself (no agent ever runs there,
# and the tester keeps no capability: changing to a non-zero uid clears them), and its tracer
# starts a Rust test as the tester and follows it alone (clean_room.RUN_EACH).
ROOM_CAPS = [*ROOT_CAPS, "SETUID", "SETGID", "SYS_PTRACE"]
# With disk_cap=tmpfs the image is read-only; these are the only places anyone can write.
ROOT_STATE_VOLUME = carry.STATE_ROOT  # root's public store and private worktree, not the agent's


# Test suites that skip what would not fit in memory ask /proc/meminfo, which shows the host's,
# not the sandbox's limit: numpy's `requires_memory` (and scipy's `check_free_memory`) read these
# first. numpy's test_huge_vectordot (2024) asked for 18 GB, saw the host's 20 free, and its 8.6 GB
# array killed the whole hidden-test run of a stage at the 6g limit.
MEMORY_ENV = ("NPY_AVAILABLE_MEM", "SCIPY_AVAILABLE_MEM")


def memory_env(memory: str) -> dict[str, str]:
    """What a sandbox of `memory` (Docker's "6g", "512m") tells the suites that ask how much they
    have, in the binary units Docker means."""
    found = re.fullmatch(r"(\d+(?:\.\d+)?)\s*([kmgt]?)b?", memory.strip().lower())
    if found is None:
        return {}
    number, unit = found.groups()
    return dict.fromkeys(MEMORY_ENV, f"{number} {unit.upper()}iB" if unit else f"{number} B")


def container_spec(
    config: EnvironmentConfig,
    repo: str,
    extra_labels: dict[str, str],
    image: str,
    disk_mode: str,
    kind: str = "sandbox",
) -> ContainerSpec:
    """A container of `image` for `repo`, its disk bounded the `disk_mode` way (storage-opt: the
    writable layer; tmpfs: a read-only image with bounded scratch mounts; off: not at all)."""
    labels = {
        **cleanup.owner_labels(),
        "prchain.kind": kind,
        "prchain.repo": repo,
        **extra_labels,
    }
    slug = "".join(c if c.isalnum() else "-" for c in repo.lower())[:40]
    spec = ContainerSpec(
        image=image,
        name=f"prchain-{slug}-{secrets.token_hex(4)}",
        labels=labels,
        environment={
            "HOME": "/home/agent",
            "LANG": "C.UTF-8",
            "PATH": AGENT_ENV["PATH"],
            **memory_env(config.memory),
        },
        user="root",
        network=config.network,
        cpus=config.cpus,
        memory=config.memory,
        pids_limit=config.pids_limit,
        cap_add=ROOM_CAPS if kind == "clean-room" else ROOT_CAPS,
    )
    if disk_mode == "storage-opt":
        return replace(spec, storage_opt={"size": config.disk_limit})
    if disk_mode == "tmpfs":
        scratch = config.scratch_limit
        tmpfs = {
            "/work": f"size={config.disk_limit},mode=0755,exec",
            "/tmp": f"size={scratch},mode=1777,exec",
            "/home/agent": f"size={scratch},mode=0755,exec",
        }
        return replace(spec, read_only=True, tmpfs=tmpfs, volumes=[ROOT_STATE_VOLUME])
    return spec


# Whether this engine can bound a writable layer; learnt by the first sandbox (disk_cap=auto).
_quota_supported: bool | None = None


def run_sandbox(
    client: DockerClient, disk_cap: str, spec: Callable[[str, str], ContainerSpec], kind: str
) -> tuple[str, str]:
    """Start a container of `spec(disk_mode, kind)`; its id and the disk mode it got. With
    disk_cap=auto, storage-opt until the engine says it cannot bound a layer, then tmpfs."""
    global _quota_supported
    cleanup.watch(client)
    mode = disk_cap
    if mode == "auto":
        mode = "tmpfs" if _quota_supported is False else "storage-opt"
    try:
        container = client.run(spec(mode, kind))
    except StorageQuotaUnsupported:
        if disk_cap != "auto":
            raise
        _quota_supported, mode = False, "tmpfs"
        container = client.run(spec(mode, kind))
    if mode == "storage-opt":
        _quota_supported = True
    return container, mode
