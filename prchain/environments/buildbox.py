"""A build sandbox with checkpoints: run install steps as root, keep each step that worked as an
image (`docker commit`), and roll a failed step back to the last checkpoint.

This is where the LLM setup agent works (prchain/setup). The repository's tracked files at one
commit are copied into a container of the era's base image (to `src`: where the era build puts
them, so a recipe found here replays there); nothing else of the
repository (no history, no later commit) is there. Unlike an agent's sandbox, it reaches the
package registries: with `BoxSettings.egress` (what the setup agent gets) through a proxy that
admits only their host names and no address of the host or the LAN, the box itself having no
network (prchain/environments/egress.py); without it, on the given Docker network. Checkpoint images are
this sandbox's own and are removed when it closes.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Self

from prchain.core import git
from prchain.core.errors import EnvironmentFailure
from prchain.environments import cleanup
from prchain.environments.absent import whole_base
from prchain.environments.carry import WORKDIR
from prchain.environments.docker_client import ContainerSpec, DockerClient
from prchain.environments.egress import (
    INSIDE,
    JVM_VARIABLES,
    MAVEN_SETTINGS,
    START_RELAY,
    proxy_variables,
)

CHECKPOINTS = "prchain/setup-checkpoint"
# apt and pip as root need these (apt drops to the _apt user; pip chowns nothing but dpkg does).
BUILD_CAPS = ["CHOWN", "DAC_OVERRIDE", "FOWNER", "SETUID", "SETGID", "KILL", "FSETID"]
OUTPUT_LIMIT = 256_000
BUILD_ENV = {
    "HOME": "/root",
    "LANG": "C.UTF-8",
    "PATH": "/opt/venv/bin:/root/.local/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "DEBIAN_FRONTEND": "noninteractive",
    "PIP_DISABLE_PIP_VERSION_CHECK": "1",
}


@dataclass(frozen=True)
class StepResult:
    output: str
    exit_code: int
    seconds: float
    timed_out: bool = False

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


@dataclass(frozen=True)
class BoxSettings:
    """How the box's container is made, to match the build its recipes replay in."""

    src: str = WORKDIR  # where the tree goes and commands start
    binds: dict[str, tuple[str, str]] = field(default_factory=dict)  # tools and caches, not kept
    environment: dict[str, str] = field(default_factory=dict)  # over BUILD_ENV
    network_mode: str = ""  # e.g. "host"; "" = bridge
    # The host directory of an EgressProxy's socket: the box gets no network, only the registries
    # through the proxy (prchain/environments/egress.py). "" = `network_mode` as it is.
    egress: str = ""


@dataclass
class BuildBox:
    """One build sandbox. `run` a step; `checkpoint` after a step that worked; `rollback` to it."""

    client: DockerClient
    image: str  # the era's base image
    repo: str
    clone: Path
    sha: str
    labels: dict[str, str] = field(default_factory=dict)
    memory: str = "4g"
    cpus: float = 2.0
    network: bool = True
    settings: BoxSettings = field(default_factory=BoxSettings)
    container_id: str | None = None
    checkpoints: list[str] = field(default_factory=list)  # image ids, oldest first
    _run_id: str = field(default_factory=lambda: secrets.token_hex(4))

    def start(self) -> Self:
        self._launch(self.image)
        whole = whole_base(
            self.clone, self.sha
        )  # B_t, or its stand-in (`prchain.environments.absent`)
        archive = git.run(self.clone, "archive", "--format=tar", whole.sha).stdout
        src = self.settings.src
        copied = self.run(f"mkdir -p {src} && tar -x -C {src}", stdin=archive, workdir="/")
        if not copied.ok:
            raise EnvironmentFailure(f"cannot copy {self.repo}@{self.sha[:12]}: {copied.output}")
        self.checkpoint()
        return self

    def _launch(self, image: str) -> None:
        labels = {
            **cleanup.owner_labels(),
            "prchain.kind": "buildbox",
            "prchain.repo": self.repo,
            **self.labels,
        }
        egress = self.settings.egress
        binds = {**self.settings.binds, **({egress: (INSIDE, "ro")} if egress else {})}
        spec = ContainerSpec(
            image=image,
            name=f"prchain-build-{self._run_id}-{len(self.checkpoints)}",
            labels=labels,
            environment=self._env,
            user="root",
            network=self.network and not egress,
            network_mode=self.settings.network_mode if self.network and not egress else "",
            binds=binds,
            cpus=self.cpus,
            memory=self.memory,
            pids_limit=4096,
            cap_add=BUILD_CAPS,
        )
        cleanup.watch(self.client)
        self.container_id = self.client.run(spec)
        cleanup.register(self.container_id, self._remove_container)
        if egress:
            self.run(f"{START_RELAY}\n{MAVEN_SETTINGS}", timeout=30, workdir="/")

    @property
    def _env(self) -> dict[str, str]:
        proxy = {**proxy_variables(), **JVM_VARIABLES} if self.settings.egress else {}
        return {**BUILD_ENV, **self.settings.environment, **proxy}

    def run(
        self,
        command: str,
        *,
        timeout: float = 900,
        stdin: bytes | None = None,
        workdir: str | None = None,
    ) -> StepResult:
        """`command` under bash as root in the repository; output head and tail within bounds."""
        assert self.container_id, "start() the build box first"
        # The in-container timeout kills the whole step; the host-side deadline is a backstop.
        argv = ["timeout", "-k", "10", str(int(timeout)), "bash", "-c", command]
        raw = self.client.exec(
            self.container_id,
            argv,
            user="root",
            workdir=workdir or self.settings.src,
            env=self._env,
            limit=OUTPUT_LIMIT,
            deadline=timeout + 30,
            stdin=stdin,
        )
        text = raw.output.decode("utf-8", errors="replace")
        if raw.dropped:
            text = (
                text[: raw.head] + f"\n[... {raw.dropped} bytes omitted ...]\n" + text[raw.head :]
            )
        return StepResult(text, raw.exit_code, raw.seconds, timed_out=raw.exit_code == 124)

    def checkpoint(self) -> str:
        """Keep the container's state as an image: the point `rollback` returns to."""
        assert self.container_id
        tag = f"{self._run_id}-{len(self.checkpoints)}"
        image = self.client.commit(self.container_id, CHECKPOINTS, tag)
        self.checkpoints.append(image)
        return image

    def rollback(self) -> None:
        """Drop every change since the last checkpoint: a new container from that image."""
        if not self.checkpoints:
            raise EnvironmentFailure("no checkpoint to roll back to")
        self._remove_container()
        self._launch(self.checkpoints[-1])

    def _remove_container(self) -> None:
        container, self.container_id = self.container_id, None
        if container:
            cleanup.unregister(container)
            self.client.remove_container(container)

    def close(self) -> None:
        self._remove_container()
        for n in reversed(range(len(self.checkpoints))):
            self.client.remove_image(f"{CHECKPOINTS}:{self._run_id}-{n}")
        self.checkpoints.clear()

    def __enter__(self) -> Self:
        try:
            return self.start()
        except BaseException:
            self.close()
            raise

    def __exit__(self, *exc: object) -> None:
        self.close()
