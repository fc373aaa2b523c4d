"""DockerEnvironment: one locked-down container per chain, stage by stage (B_t ⊕ Δ_(t−1)).

The agent's commands run as the unprivileged `agent` user in /work/repo with no network, bounded
CPU, memory, processes and disk, and an explicit minimal environment (nothing of the host's). Git
bookkeeping (environments/carry.py) runs through the same exec channel, split between root (the
mirror and the gold patches, never the agent's files) and the agent (its own repository); see
docs/sandbox.md.
"""

from __future__ import annotations

import io
import posixpath
import secrets
import tarfile
import time
from dataclasses import replace
from typing import ClassVar, Self

from environments import carry, cleanup
from environments.config import EnvironmentConfig
from environments.docker_client import (
    ContainerSpec,
    DockerClient,
    RawExec,
    StorageQuotaUnsupported,
)
from environments.images import Notify, RepoImage, ensure_repo_image
from environments.protocol import ExecResult, StageSpec, Transition, capped_diff
from prchain.core.errors import ConfigError, EnvironmentFailure

AGENT = "agent"
AGENT_ENV = {
    "HOME": "/home/agent",
    "USER": AGENT,
    "LOGNAME": AGENT,
    "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "LANG": "C.UTF-8",
    "TERM": "dumb",
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "PYTHONDONTWRITEBYTECODE": "1",
}
INTERNAL_LIMIT = 1 << 30  # bookkeeping output (diffs, files) is never truncated below this
# `timeout` leads a process group of its own; once the command ends (or is killed) the whole group
# goes too, so nothing it left in the background (a fork bomb, a stray server) outlives it.
# A process that wants to outlive its command has to leave the group (`setsid`).
RUN_COMMAND = """
timeout -s KILL "$1" bash -c "$2" </dev/null & pid=$!
wait "$pid" 2>/dev/null; rc=$?
kill -KILL -- "-$pid" 2>/dev/null
exit "$rc"
"""
# Root needs these to fill a tmpfs sandbox from its seed at start and to end the agent's processes
# at each stage entry; the agent (a non-root uid) has no effective capability at all.
ROOT_CAPS = ["CHOWN", "DAC_OVERRIDE", "FOWNER", "KILL"]
# With disk_cap=tmpfs the image is read-only; these are the only places anyone can write.
ROOT_STATE_VOLUME = carry.STATE_ROOT  # root's public store and private worktree, not the agent's


class DockerEnvironment:
    """The Docker implementation of environments.protocol.Environment."""

    # Whether this engine can bound a writable layer; learnt by the first sandbox (disk_cap=auto).
    _quota_supported: ClassVar[bool | None] = None

    def __init__(
        self,
        config: EnvironmentConfig,
        *,
        repo: str,
        clone_path: str,
        stages: list[StageSpec],
        labels: dict[str, str] | None = None,
        client: DockerClient | None = None,
        notify: Notify | None = None,
    ) -> None:
        self.config, self.repo, self.clone_path = config, repo, clone_path
        self.stages = {s.idx: s for s in stages}
        self.labels = dict(labels or {})
        self._client = client
        self._notify: Notify = notify or (lambda _msg: None)
        self.image: RepoImage | None = None
        self.container_id: str | None = None
        self.stage: int | None = None
        self.stage_base = ""
        self.stage_start = ""
        self.transitions: list[Transition] = []
        self.test_results: dict[int, ExecResult] = {}
        self._uid = 1000
        self.disk_mode = "off"  # how this sandbox's disk is bounded: storage-opt | tmpfs | off

    # ---- lifecycle --------------------------------------------------------------------------------

    @property
    def client(self) -> DockerClient:
        if self._client is None:
            self._client = DockerClient()
        return self._client

    def start(self) -> Self:
        """Build or reuse the repo image and start the chain's container (idempotent)."""
        if self.container_id:
            return self
        self.image = ensure_repo_image(
            self.client, self.config, self.repo, self.clone_path, self._notify
        )
        self.container_id = self._run_container(self.image.tag)
        cleanup.register(self.container_id, self.close)
        self._root(carry.INIT_ROOT, "seed" if self.disk_mode == "tmpfs" else "")
        self._checked(carry.INIT_AGENT, what="initialising the agent's repository")
        self._uid = int(self._root("id -u agent").output.strip())
        return self

    def _run_container(self, image: str) -> str:
        mode = self.config.disk_cap
        if mode == "auto":
            mode = "tmpfs" if DockerEnvironment._quota_supported is False else "storage-opt"
        try:
            container = self.client.run(self._spec(image, mode))
        except StorageQuotaUnsupported:
            if self.config.disk_cap != "auto":
                raise
            DockerEnvironment._quota_supported, mode = False, "tmpfs"
            container = self.client.run(self._spec(image, mode))
        if mode == "storage-opt":
            DockerEnvironment._quota_supported = True
        self.disk_mode = mode
        return container

    def _spec(self, image: str, disk_mode: str) -> ContainerSpec:
        labels = {
            **cleanup.owner_labels(),
            "prchain.kind": "sandbox",
            "prchain.repo": self.repo,
            **self.labels,
        }
        slug = "".join(c if c.isalnum() else "-" for c in self.repo.lower())[:40]
        spec = ContainerSpec(
            image=image,
            name=f"prchain-{slug}-{secrets.token_hex(4)}",
            labels=labels,
            environment={"HOME": "/home/agent", "LANG": "C.UTF-8", "PATH": AGENT_ENV["PATH"]},
            user="root",
            network=self.config.network,
            cpus=self.config.cpus,
            memory=self.config.memory,
            pids_limit=self.config.pids_limit,
            cap_add=ROOT_CAPS,
        )
        if disk_mode == "storage-opt":
            return replace(spec, storage_opt={"size": self.config.disk_limit})
        if disk_mode == "tmpfs":
            scratch = self.config.scratch_limit
            tmpfs = {
                "/work": f"size={self.config.disk_limit},mode=0755,exec",
                "/tmp": f"size={scratch},mode=1777,exec",
                "/home/agent": f"size={scratch},mode=0755,exec",
            }
            return replace(spec, read_only=True, tmpfs=tmpfs, volumes=[ROOT_STATE_VOLUME])
        return spec

    def close(self) -> None:
        container, self.container_id = self.container_id, None
        if container:
            cleanup.unregister(container)
            self.client.remove_container(container)

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- low-level exec ---------------------------------------------------------------------------

    def _run(
        self,
        script: str,
        *args: str,
        user: str,
        env: dict[str, str] | None = None,
        stdin: bytes | None = None,
    ) -> RawExec:
        if not self.container_id:
            self.start()
        assert self.container_id
        argv = ["bash", "-c", script, "prchain", *args]
        # Root starts in its own directory with its own environment: never in a place, or with a
        # HOME, the agent can write to.
        return self.client.exec(
            self.container_id,
            argv,
            user=user,
            workdir="/" if user == "root" else carry.WORKDIR,
            env=carry.ROOT_ENV if user == "root" else {**AGENT_ENV, **(env or {})},
            limit=INTERNAL_LIMIT,
            deadline=600,
            stdin=stdin,
        )

    def _checked(
        self,
        script: str,
        *args: str,
        user: str = AGENT,
        what: str = "",
        stdin: bytes | None = None,
    ) -> str:
        raw = self._run(script, *args, user=user, env=carry.BOOKKEEPING_ENV, stdin=stdin)
        text = raw.output.decode("utf-8", "replace")
        if raw.exit_code != 0:
            raise EnvironmentFailure(
                f"{what or 'sandbox bookkeeping'} failed (exit {raw.exit_code}): {text[-1500:]}"
            )
        return text

    def _root(self, script: str, *args: str, stdin: bytes | None = None) -> ExecResult:
        text = self._checked(script, *args, user="root", stdin=stdin)
        return ExecResult(text, 0)

    # ---- the agent's interface ------------------------------------------------------------------

    def execute(self, command: str, timeout: float | None = None) -> ExecResult:
        """Run a shell command as the agent in /work/repo; killed (with its children) at the timeout."""
        if not self.container_id:
            self.start()
        assert self.container_id
        limit = timeout or self.config.command_timeout
        argv = ["bash", "-c", RUN_COMMAND, "prchain", f"{limit:g}s", command]
        raw = self.client.exec(
            self.container_id,
            argv,
            user=AGENT,
            workdir=carry.WORKDIR,
            env=AGENT_ENV,
            limit=self.config.max_output_bytes,
            deadline=limit + 10,
        )
        timed_out = raw.exit_code in (124, 137) and raw.seconds >= limit - 0.05
        return ExecResult(
            _render(raw, limit if timed_out else None), raw.exit_code, timed_out, raw.dropped > 0
        )

    def _abs(self, path: str) -> str:
        return posixpath.normpath(posixpath.join(carry.WORKDIR, path))

    def read_file(self, path: str) -> str:
        """A file's text as the agent sees it; FileNotFoundError when missing, IsADirectoryError on a dir."""
        target = self._abs(path)
        script = 'test -e "$1" || exit 3; test -d "$1" && exit 4; cat -- "$1"'
        raw = self._run(script, target, user=AGENT)
        text = raw.output.decode("utf-8", "replace")
        if raw.exit_code == 3:
            raise FileNotFoundError(f"no such file in the sandbox: {path}")
        if raw.exit_code == 4:
            raise IsADirectoryError(f"is a directory: {path}")
        if raw.exit_code != 0:
            raise PermissionError(f"cannot read {path}: {text.strip()}")
        return text

    def write_file(self, path: str, content: str) -> None:
        """Write a file as the agent would (its permissions apply); parent directories are created."""
        script = 'mkdir -p -- "$(dirname -- "$1")" && cat > "$1"'
        raw = self._run(script, self._abs(path), user=AGENT, stdin=content.encode())
        if raw.exit_code != 0:
            raise PermissionError(
                f"cannot write {path}: {raw.output.decode('utf-8', 'replace').strip()}"
            )

    def diff(self) -> str:
        """The stage diff: everything the agent changed since this stage started (untracked files too).

        Past `max_diff_bytes` a diffstat stands in for it (see protocol.capped_diff)."""
        return self._diff_against(self.stage_start)

    def cumulative_diff(self) -> str:
        """Δ_t: the agent's change over all stages so far, against B_t − g_1 … − g_(t−1)."""
        return self._diff_against(self.stage_base)

    def cumulative_patch(self) -> bytes:
        """Δ_t byte for byte (`git diff --binary`, whatever its size): what a resume re-applies."""
        return self._raw_diff(self.stage_base, -1)[1] if self.stage_base else b""

    def _diff_against(self, origin: str) -> str:
        if not origin:
            return ""
        cap = self.config.max_diff_bytes
        size, body = self._raw_diff(origin, cap)
        text = body.decode("utf-8", "replace")
        return capped_diff(size, cap, text) if size > cap else text

    def _raw_diff(self, origin: str, cap: int) -> tuple[int, bytes]:
        """(the whole diff's size, the diff or, past `cap` when cap >= 0, its summary)."""
        raw = self._run(carry.DIFF_AGAINST, origin, str(cap), user=AGENT, env=carry.BOOKKEEPING_ENV)
        head, _, body = raw.output.partition(b"\n")
        if raw.exit_code != 0 or raw.dropped or not head.startswith(b"SIZE "):
            said = raw.output[-1500:].decode("utf-8", "replace")
            raise EnvironmentFailure(f"diff failed (exit {raw.exit_code}): {said}")
        return int(head.split()[1]), body

    def end_agent_processes(self) -> None:
        self._root(carry.END_AGENT)

    def snapshot(self) -> str:
        """Record the whole worktree (untracked files too) and the stage; returns an id for restore()."""
        if not self.stage_start:
            raise EnvironmentFailure("snapshot() before any stage was entered")
        text = self._checked(
            carry.SNAPSHOT, str(self.stage), self.stage_base, self.stage_start, what="snapshot"
        )
        return text.strip().splitlines()[-1]

    def restore(self, snapshot: str) -> None:
        """Put the worktree and the stage bookkeeping back to what snapshot() recorded."""
        info = carry.parse_snapshot_info(
            self._checked(carry.SNAPSHOT_INFO, snapshot, what="restore")
        )
        if not {"stage", "stage-base", "stage-start"} <= info.keys():
            raise EnvironmentFailure(f"{snapshot} is not a snapshot of this sandbox")
        self._checked(carry.RESTORE, info["stage-start"], snapshot, what="restore")
        self.stage, self.stage_base, self.stage_start = (
            int(info["stage"]),
            info["stage-base"],
            info["stage-start"],
        )

    def run_tests(self) -> ExecResult | None:
        """The repo's configured test command in the current state (None when none is configured)."""
        command = self.config.test_command.get(self.repo)
        if not command:
            return None
        result = self.execute(command, timeout=self.config.test_timeout)
        if self.stage is not None:
            self.test_results[self.stage] = result
        return result

    # ---- carry-forward ----------------------------------------------------------------------------

    def enter_stage(self, t: int) -> Transition:
        """Check out B_t, revert g_1..g_(t-1) (newest first), 3-way-apply Δ so far; see DESIGN.md."""
        if t not in self.stages:
            raise ConfigError(f"stage {t} is not one of this chain's stages {sorted(self.stages)}")
        missing = [j for j in range(1, t) if j not in self.stages]
        if missing:
            raise ConfigError(
                f"stage {t} needs the gold patches of stages {missing}, which were not given"
            )
        started = time.monotonic()
        spec = self.stages[t]
        report = carry.TransitionReport()
        golds = [j for j in range(t - 1, 0, -1) if self.stages[j].gold_patch.strip()]
        carry.parse_stage_base(
            self._checked(
                carry.STAGE_BASE,
                str(t),
                spec.base_sha,
                *map(str, golds),
                user="root",
                what=f"ending the agent's processes and preparing stage {t} from B_{t}",
                stdin=self._gold_archive(golds) if golds else None,
            ),
            report,
        )
        carry.parse_transition(
            self._checked(
                carry.TRANSITION,
                str(t),
                spec.base_sha,
                report.stage_base,
                self.config.conflict_policy,
                self.stage_base,
                what=f"entering stage {t}",
            ),
            report,
        )
        self.stage, self.stage_base, self.stage_start = t, report.stage_base, report.stage_start
        transition = self._transition(spec, report, time.monotonic() - started)
        self.transitions.append(transition)
        return transition

    def _gold_archive(self, golds: list[int]) -> bytes:
        """The gold patches as a tar for root's private directory (read by nobody else)."""
        blob = io.BytesIO()
        with tarfile.open(fileobj=blob, mode="w") as tar:
            for j in golds:
                patch = self.stages[j].gold_patch
                data = (patch if patch.endswith("\n") else patch + "\n").encode()
                info = tarfile.TarInfo(f"gold-{j}.patch")
                info.size, info.mode = len(data), 0o600
                tar.addfile(info, io.BytesIO(data))
        return blob.getvalue()

    def _transition(
        self, spec: StageSpec, report: carry.TransitionReport, seconds: float
    ) -> Transition:
        outcome = report.outcome
        # A gold patch that does not revert cleanly means the stage cannot start as specified.
        if report.revert_failed and self.config.conflict_policy == "strict":
            outcome = "conflict_stopped"
        elif report.revert_failed and outcome == "clean":
            outcome = "partial"
        return Transition(
            stage_idx=spec.idx,
            base_sha=spec.base_sha,
            policy=self.config.conflict_policy,
            outcome=outcome,
            reverted=report.reverted,
            applied=report.applied,
            rejected_hunks=report.rejects,
            seconds=seconds,
            revert_failed=report.revert_failed,
            revert_rejected_hunks=report.revert_rejects,
            revert_errors=report.revert_errors if report.revert_failed else "",
            carried_bytes=report.delta_bytes,
            stage_base=report.stage_base,
            stage_start=report.stage_start,
        )


def _render(raw: RawExec, killed_after: float | None) -> str:
    """Decode output; mark dropped bytes between head and tail, and a kill by timeout at the end."""
    text = raw.output[: raw.head].decode("utf-8", "replace")
    if raw.dropped:
        text += f"\n[... {raw.dropped} bytes of output truncated ...]\n"
    text += raw.output[raw.head :].decode("utf-8", "replace")
    if killed_after is not None:
        text += f"\n[command killed after {killed_after:g} s timeout]"
    elif raw.exit_code == 137:
        text += "\n[command killed (SIGKILL), e.g. for exceeding the sandbox's memory limit]"
    return text
