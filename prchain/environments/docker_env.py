"""DockerEnvironment: one locked-down container per chain, stage by stage (B_t ⊕ Δ_(t−1)).

The agent's commands run as the unprivileged `agent` user in /work/repo with no network, bounded
CPU, memory, processes and disk, and an explicit minimal environment (nothing of the host's). Git
bookkeeping (prchain/environments/carry.py) runs through the same exec channel, split between root (the
mirror and the gold patches, never the agent's files) and the agent (its own repository); see
docs/sandbox.md.
"""

from __future__ import annotations

import functools
import posixpath
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Self

from prchain.core.errors import CommandTooLong, ConfigError, EnvironmentFailure
from prchain.environments import absent, carry, cleanup
from prchain.environments.clean_room import DockerCleanRoom
from prchain.environments.config import EnvironmentConfig
from prchain.environments.docker_client import (
    DockerClient,
    RawExec,
)
from prchain.environments.images import Notify, RepoImage, ensure_repo_image
from prchain.environments.protocol import ExecResult, StageSpec, Transition, capped_diff
from prchain.environments.run import INTERNAL_LIMIT, run_command
from prchain.environments.sandbox_spec import AGENT, AGENT_ENV, container_spec, run_sandbox
from prchain.environments.stage_entry import (
    ENTRY_HUNKS,
    ENTRY_PROPAGATE,
    ENTRY_REPLAY,
    ENTRY_REVERT,
    carried_paths,
    gold_archive,
    patch_paths,
    reverted_part,
    transition_from,
)


class DockerEnvironment:
    """The Docker implementation of prchain.environments.protocol.Environment."""

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
        self.image: RepoImage | None = None  # the repository's default image, once needed
        self._layers: dict[str, str] = {}  # era image → the sandbox image built on it
        self.container_id: str | None = None
        self.running_image = ""  # the tag the current container runs
        self.stage: int | None = None
        self.stage_base = ""
        self.stage_start = ""
        self.transitions: list[Transition] = []
        # replayed stage → C_t's difference from B_t as made (root's REPLAYED_PATCH): a clean room
        # or a new container makes the same C_t from it without the agent's earlier work
        self.replayed: dict[int, bytes] = {}
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
        """Start the chain's container on its first stage's image (idempotent)."""
        if self.container_id:
            return self
        first = self.stages[min(self.stages)] if self.stages else None
        return self._start(self._image_for(first))

    def _start(self, image: str) -> Self:
        self.container_id = self._run_container(image)
        self.running_image = image
        cleanup.register(self.container_id, self.close)
        self._root(carry.INIT_ROOT, "seed" if self.disk_mode == "tmpfs" else "")
        self._checked(carry.INIT_AGENT, what="initialising the agent's repository")
        self._uid = self._agent_uid()
        return self

    def _agent_uid(self) -> int:
        said = self._root("id -u agent", idempotent=True).output.strip()
        if not said.isdigit():
            raise EnvironmentFailure(f"the sandbox did not say the agent's uid: {said!r}")
        return int(said)

    def _sandbox_on(self, image: str) -> str:
        """A stage's image as a sandbox: an era image (dependencies only) gets the sandbox layer
        (agent user, root-only mirror, seed) on top, built once per era image and clone state."""
        if self.client.image_labels(image).get("prchain.kind") == "repo":
            return image  # already a sandbox image
        layered = self._layers.get(image)
        if layered is None:
            layered = ensure_repo_image(
                self.client,
                self.config,
                self.repo,
                self.clone_path,
                self._notify,
                base_image=image,
                commands=[],
            ).tag
            self._layers[image] = layered
        return layered

    def _image_for(self, spec: StageSpec | None) -> str:
        """The stage's era image, else the repository's default image (built if its recipe is new)."""
        if spec is not None and spec.image:
            if not self.client.image_id(spec.image):
                raise EnvironmentFailure(
                    f"stage {spec.idx}'s image {spec.image} is not in the Docker engine",
                    hint="`prchain env setup` builds the images the chains' stages need",
                )
            return self._sandbox_on(spec.image)
        if self.image is None:
            self.image = ensure_repo_image(
                self.client, self.config, self.repo, self.clone_path, self._notify
            )
        return self.image.tag

    def _run_container(self, image: str, kind: str = "sandbox") -> str:
        spec = functools.partial(container_spec, self.config, self.repo, self.labels, image)
        container, self.disk_mode = run_sandbox(self.client, self.config.disk_cap, spec, kind)
        return container

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
        container: str | None = None,
        idempotent: bool = False,
    ) -> RawExec:
        """One bookkeeping exec; `idempotent` (a read, a rewrite of the same bytes) may run again
        should its output be lost (DockerClient.exec)."""
        if container is None and not self.container_id:
            self.start()
        target = container or self.container_id
        assert target
        argv = ["bash", "-c", script, "prchain", *args]
        # Root starts in its own directory with its own environment: never in a place, or with a
        # HOME, the agent can write to. Bookkeeping starts in / too: the agent may remove its tree.
        return self.client.exec(
            target,
            argv,
            user=user,
            workdir="/",
            env=carry.ROOT_ENV if user == "root" else {**AGENT_ENV, **(env or {})},
            limit=INTERNAL_LIMIT,
            deadline=600,
            stdin=stdin,
            idempotent=idempotent,
        )

    def _checked(
        self,
        script: str,
        *args: str,
        user: str = AGENT,
        what: str = "",
        stdin: bytes | None = None,
        container: str | None = None,
        idempotent: bool = False,
    ) -> str:
        raw = self._run(
            script,
            *args,
            user=user,
            env=carry.BOOKKEEPING_ENV,
            stdin=stdin,
            container=container,
            idempotent=idempotent,
        )
        text = raw.output.decode("utf-8", "replace")
        if raw.exit_code != 0:
            raise EnvironmentFailure(
                f"{what or 'sandbox bookkeeping'} failed (exit {raw.exit_code}): {text[-1500:]}"
            )
        return text

    def _root(
        self, script: str, *args: str, stdin: bytes | None = None, idempotent: bool = False
    ) -> ExecResult:
        text = self._checked(script, *args, user="root", stdin=stdin, idempotent=idempotent)
        return ExecResult(text, 0)

    # ---- the agent's interface ------------------------------------------------------------------

    def execute(self, command: str, timeout: float | None = None) -> ExecResult:
        """Run a shell command as the agent in /work/repo; killed (with its children) at the timeout.
        A command longer than the kernel takes as one argument did not run: the agent reads that
        as a shell would say it (exit 126), and the rollout goes on."""
        if not self.container_id:
            self.start()
        assert self.container_id
        try:
            return run_command(
                self.client,
                self.container_id,
                command,
                user=AGENT,
                workdir=carry.WORKDIR,
                env=AGENT_ENV,
                timeout=timeout or self.config.command_timeout,
                max_output=self.config.max_output_bytes,
            )
        except CommandTooLong:
            size = len(command.encode())
            said = (
                f"bash: argument list too long: this command is {size:,} bytes, more than one "
                "command can carry (128 KiB); nothing ran. Write large content in parts: "
                "several smaller commands, or the editor."
            )
            return ExecResult(said, 126)

    def _abs(self, path: str) -> str:
        return posixpath.normpath(posixpath.join(carry.WORKDIR, path))

    def read_file(self, path: str) -> str:
        """A file's text as the agent sees it; FileNotFoundError when missing, IsADirectoryError on a dir."""
        target = self._abs(path)
        script = 'test -e "$1" || exit 3; test -d "$1" && exit 4; cat -- "$1"'
        raw = self._run(script, target, user=AGENT, idempotent=True)
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
        raw = self._run(
            script, self._abs(path), user=AGENT, stdin=content.encode(), idempotent=True
        )
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
        raw = self._run(
            carry.DIFF_AGAINST,
            origin,
            str(cap),
            user=AGENT,
            env=carry.BOOKKEEPING_ENV,
            idempotent=True,  # its index is a throwaway copy; the worktree is only read
        )
        head, _, body = raw.output.partition(b"\n")
        if raw.exit_code != 0 or raw.dropped or not head.startswith(b"SIZE "):
            said = raw.output[-1500:].decode("utf-8", "replace")
            raise EnvironmentFailure(f"diff failed (exit {raw.exit_code}): {said}")
        return int(head.split()[1]), body

    def end_agent_processes(self) -> None:
        self._root(carry.END_AGENT, idempotent=True)

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
            self._checked(carry.SNAPSHOT_INFO, snapshot, what="restore", idempotent=True)
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
        """The stage's test command (its era's, else the repo's configured one) in the current state,
        as the agent; None when there is none."""
        spec = self.stages.get(self.stage) if self.stage is not None else None
        command = (spec.test_command if spec else "") or self.config.test_command.get(self.repo)
        if not command:
            return None
        result = self.execute(command, timeout=self.config.test_timeout)
        if self.stage is not None:
            self.test_results[self.stage] = result
        return result

    # ---- carry-forward ----------------------------------------------------------------------------

    def enter_stage(self, t: int) -> Transition:
        """Check out B_t, revert g_1..g_(t-1) (newest first), 3-way-apply Δ so far, or by the
        stage's fallback entry; see docs/architecture.md, "Carry-forward"."""
        if t not in self.stages:
            raise ConfigError(f"stage {t} is not one of this chain's stages {sorted(self.stages)}")
        missing = [j for j in range(1, t) if j not in self.stages]
        if missing:
            raise ConfigError(
                f"stage {t} needs the gold patches of stages {missing}, which were not given"
            )
        started = time.monotonic()
        spec = self.stages[t]
        follows = self.stage == t - 1 and t > 1
        carried = self._move_to(self._image_for(spec))
        # A replayed stage entered after the one before it folds Δ_(t−1) into C_t (root); the
        # agent then carries nothing more onto it.
        folds = spec.entry == ENTRY_REPLAY and follows
        delta = None
        if folds:
            delta = carried if carried is not None else self._delta_here()
        report = carry.TransitionReport()
        carry.parse_stage_base(self._stage_base(t, delta=delta), report)
        if folds:
            carried, prev = None, ""
        else:
            prev = "-" if carried is not None else self.stage_base
        carry.parse_transition(
            self._checked(
                carry.TRANSITION,
                str(t),
                report.stage_base,
                self.config.conflict_policy,
                prev,
                spec.entry,
                what=f"entering stage {t}",
                stdin=carried,
            ),
            report,
        )
        if folds:
            report.delta_bytes = len(delta or b"")
        self.stage, self.stage_base, self.stage_start = t, report.stage_base, report.stage_start
        transition = transition_from(
            spec,
            report,
            self.config.conflict_policy,
            self.running_image,
            time.monotonic() - started,
        )
        if spec.setup_command and not transition.stopped:
            transition.setup_error = self._setup(spec)
        self.transitions.append(transition)
        return transition

    def _move_to(self, image: str) -> bytes | None:
        """Start on `image`, or move to a new container of it when another image runs; returns the
        carried Δ (bytes) after a move, None when the container stays."""
        if self.container_id and image == self.running_image:
            return None
        carried = self._delta_here()
        self.close()
        self.stage, self.stage_base, self.stage_start = None, "", ""
        self._start(image)
        return carried

    def _delta_here(self) -> bytes:
        """Δ of the stage this container is in (its processes ended first), b"" before any."""
        if not self.container_id or self.stage is None:
            return b""
        self.end_agent_processes()
        return self.cumulative_patch()

    def _stage_base(self, t: int, container: str | None = None, delta: bytes | None = None) -> str:
        """Root: end the agent's processes, fetch B_t, make C_t by the stage's entry (revert
        g_(t−1) … g_1, or propagate F_t from C_(t−1), made first where this container lacks it;
        or replay `delta`, Δ_(t−1), against history, or C_t as made before where `delta` is None),
        publish C_t."""
        spec = self.stages[t]
        if spec.entry == ENTRY_REPLAY and t > 1:
            return self._replayed_base(t, container, delta)
        propagated = None
        if spec.entry == ENTRY_PROPAGATE and t > 1:
            golds: list[int] = []
            reverts: dict[int, str] = {}
            earlier = [self.stages[j].gold_patch for j in range(1, t)]
            propagated = (t, carried_paths(earlier))
        else:
            reverts = {j: reverted_part(self.stages[j].gold_patch) for j in range(t - 1, 0, -1)}
            golds = [j for j, patch in reverts.items() if patch.strip()]
        whole, pack = self._whole_and_pack(t)
        feed = bool(golds or pack or propagated)
        entry = spec.entry if propagated or spec.entry == ENTRY_HUNKS else ENTRY_REVERT
        args = (str(t), whole.sha, "1" if feed else "0", entry, *map(str, golds))
        stdin = gold_archive({j: reverts[j] for j in golds}, pack, propagated) if feed else None
        return self._made_base(t, args, stdin, container)

    def _made_base(
        self, t: int, args: tuple[str, ...], stdin: bytes | None, container: str | None
    ) -> str:
        """Root's STAGE_BASE with `args`; where this container has no C_(t−1) yet (a propagated
        or replayed stage in a new container), C_(t−1) is made first and STAGE_BASE runs again."""
        raw = self._run(carry.STAGE_BASE, *args, user="root", env=carry.BOOKKEEPING_ENV,
                        stdin=stdin, container=container)  # fmt: skip
        if raw.exit_code == carry.NO_PREVIOUS_BASE:
            self._stage_base(t - 1, container)
            raw = self._run(carry.STAGE_BASE, *args, user="root", env=carry.BOOKKEEPING_ENV,
                            stdin=stdin, container=container)  # fmt: skip
        text = raw.output.decode("utf-8", "replace")
        if raw.exit_code != 0:
            raise EnvironmentFailure(
                f"ending the agent's processes and preparing stage {t} from B_{t} failed "
                f"(exit {raw.exit_code}): {text[-1500:]}"
            )
        return text

    def _replayed_base(self, t: int, container: str | None, delta: bytes | None) -> str:
        """C_t of a replayed stage (carry.STAGE_BASE, `replay`): from Δ_(t−1) where given, else
        as made before (`self.replayed`), else as if the agent had changed nothing."""
        given = self.replayed.get(t) if delta is None else None
        # H_(t−1) is B_(t−1) with g_(t−1) as the revert sees history (Go's module files as B_t
        # has them): gold-(t−1).patch, sent even where that part is empty (no file is left over)
        golds = {} if given is not None else {t - 1: reverted_part(self.stages[t - 1].gold_patch)}
        files = {f"given-{t}.patch": given} if given is not None else {"delta.patch": delta or b""}
        whole, pack = self._whole_and_pack(t)
        args = (str(t), whole.sha, "1", ENTRY_REPLAY, self.stages[t - 1].base_sha)
        text = self._made_base(t, args, gold_archive(golds, pack, extra=files), container)
        if given is None:
            made = self._run(carry.REPLAYED_PATCH, str(t), user="root", container=container,
                             idempotent=True)  # fmt: skip
            if made.exit_code != 0 or made.dropped:
                raise EnvironmentFailure(f"reading stage {t}'s replayed base failed")
            self.replayed[t] = made.output
        return text

    def _whole_and_pack(self, t: int) -> tuple[absent.WholeBase, bytes]:
        """B_t as `_whole_base` gives it, and the pack of its stand-in where one is needed."""
        whole = self._whole_base(t)
        return whole, absent.pack(self.clone_path, whole.sha) if whole.stands_in else b""

    def _whole_base(self, t: int) -> absent.WholeBase:
        """B_t as the host's clone gives it whole: itself, or a stand-in without the files whose
        blobs the clone lacks, which the image's mirror lacks too. With no clone (`tasks eval`),
        B_t as the image's mirror holds it."""
        base = self.stages[t].base_sha
        return (
            absent.whole_base(self.clone_path, base)
            if self.clone_path
            else absent.WholeBase(base, base)
        )

    def _setup(self, spec: StageSpec) -> str:
        """Run the stage's setup command as the agent; '' when it succeeded, else what went wrong.
        What it leaves untracked is excluded from the diffs; tracked files it changes are named."""
        result = self.execute(spec.setup_command, timeout=self.config.test_timeout)
        touched = self._checked(carry.SETUP_DONE, what="recording the setup command's files")
        problems = []
        if result.exit_code != 0:
            problems.append(f"exit {result.exit_code}: {result.output.strip()[-500:]}")
        if touched.strip():
            problems.append("it changed tracked files: " + ", ".join(touched.split()[:10]))
        return (
            f"stage {spec.idx}: the setup command failed ({'; '.join(problems)})"
            if problems
            else ""
        )

    # ---- hidden tests -----------------------------------------------------------------------------

    def base_file(self, path: str) -> bytes | None:
        """A file of the current stage base C_t as published (read by root), None when absent."""
        if not self.stage_base:
            return None
        raw = self._run(carry.BASE_FILE, self.stage_base, path, user="root", idempotent=True)
        if raw.exit_code == 3:
            return None
        if raw.exit_code != 0 or raw.dropped:
            raise EnvironmentFailure(
                f"reading {path} of the stage base failed (exit {raw.exit_code})"
            )
        return raw.output

    @contextmanager
    def clean_room(
        self, base_files: Sequence[str] = (), test_side: Callable[[str], bool] | None = None
    ) -> Iterator[DockerCleanRoom]:
        """A fresh container of the current stage's image, where no agent process ever ran, holding
        the stage base C_t with `base_files` and the `test_side` paths earlier gold patches touched
        taken from B_t, owned by the tester; removed afterwards."""
        if self.stage is None:
            raise EnvironmentFailure("clean_room() before any stage was entered")
        t = self.stage
        earlier = {p for j in range(1, t) for p in patch_paths(self.stages[j].gold_patch)}
        from_base = sorted(set(base_files) | {p for p in earlier if test_side and test_side(p)})
        container = self._run_container(self._room_image(self.stages[t]), kind="clean-room")
        cleanup.register(
            container, lambda: None if self.client.remove_container(container) else None
        )
        try:
            seed = "seed" if self.disk_mode == "tmpfs" else ""
            self._checked(carry.INIT_ROOT, seed, user="root", container=container)
            self._stage_base(t, container)
            self._checked(
                carry.ROOM_TREE,
                self._whole_base(t).sha,
                *from_base,
                user="root",
                what="building the clean room's tree",
                container=container,
            )
            room = DockerCleanRoom(
                self.client,
                container,
                self.config,
                self.stages[t].setup_command,
                plugins=self._own_plugins(t),
            )
            room.prepare()
            yield room
        finally:
            cleanup.unregister(container)
            self._remove(container)

    def _room_image(self, spec: StageSpec) -> str:
        """The image of the stage's clean rooms: the running one, or, when its hidden side adds
        requirements to its era's, the era image holding them under the same sandbox layer."""
        if not spec.room_image:
            return self.running_image
        if not self.client.image_id(spec.room_image):
            raise EnvironmentFailure(
                f"stage {spec.idx}'s room image {spec.room_image} is not in the Docker engine",
                hint="`prchain tests verify` builds it (the era image with what the stage's "
                "hidden side adds); `tasks images load` brings an exported task's",
            )
        return self._sandbox_on(spec.room_image)

    def _own_plugins(self, t: int) -> tuple[str, ...]:
        """The pytest plugins the project declares at B_t, read from the clone on the host; with no
        clone (`tasks eval` of an exported task), from the stage base root published in the image."""
        from prchain.environments.eras.manifests import Snapshot, snapshot
        from prchain.environments.eras.python.seal import PLUGIN_MANIFESTS, project_plugins

        base = self.stages[t].base_sha
        if self.clone_path:
            return project_plugins(snapshot(self.clone_path, base))
        files = {}
        for path in PLUGIN_MANIFESTS:
            raw = self.base_file(path)
            if raw is not None:
                files[path] = raw.decode(errors="replace")
        return project_plugins(Snapshot(base, datetime.now(UTC), files))

    def _remove(self, container: str) -> None:
        self.client.remove_container(container)
