"""The one module that touches the docker SDK: images, containers, exec with bounded output.

Every call that can fail turns the SDK's exceptions into prchain's typed errors, so the rest of
`prchain/environments/` never imports `docker`.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import secrets
import socket
import tarfile
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO

import docker
from docker.errors import APIError, BuildError, DockerException, ImageNotFound, NotFound
from docker.types import Mount
from requests.exceptions import ConnectionError as RequestsConnectionError
from requests.exceptions import ReadTimeout

from prchain.core.errors import (
    BuildFailed,
    CommandTooLong,
    ContainerDied,
    EnvironmentFailure,
    ExecOutputLost,
    NoShellInImage,
    UserNotInImage,
)
from prchain.environments.exec_stream import (
    NONCE_VAR,
    TRAILER_ROOM,
    Bounded,
    close,
    frames,
    not_started,
    reader,
    wrapped,
)

MANAGED_LABEL = "prchain.managed"
log = logging.getLogger(__name__)

READ_ATTEMPTS = 3  # an exec whose output was lost runs again only if it is a read (idempotent)


class StorageQuotaUnsupported(EnvironmentFailure):
    """The engine's storage driver cannot bound a container's writable layer (--storage-opt size)."""

    hint = "set environment.disk_cap=tmpfs (or auto), which bounds the sandbox with tmpfs mounts"


def _build_failed(tag: str, message: str, log: str, log_path: Path | None) -> BuildFailed:
    from prchain.environments.buildlog import diagnose

    if log_path is not None:
        log_path.write_text(log)
    found = diagnose(log or message)
    where = f"; log: {log_path}" if log_path is not None else ""
    return BuildFailed(
        f"docker build of {tag} failed ({found.kind}): {found.root}{where}",
        hint=found.hint,
        kind=found.kind,
        log=log,
    )


@dataclass(frozen=True)
class RawExec:
    """What one `docker exec` gave back, before the environment turns it into an ExecResult."""

    output: bytes
    exit_code: int
    seconds: float
    dropped: int = 0  # bytes dropped from the middle of the output
    head: int = 0  # output[:head] came before the dropped bytes, output[head:] after


@dataclass(frozen=True)
class _Exec:
    """One exec's command and how it runs: what each wrapped run of it starts again."""

    container_id: str
    argv: list[str]
    user: str
    workdir: str
    env: dict[str, str]
    stdin: bytes | None


@dataclass(frozen=True)
class ImageInfo:
    """What prchain reads of an image: its content digest (the id, which save and load keep)."""

    id: str
    tags: list[str]
    size: int  # bytes of all its layers
    parent: str  # the image it was built from ("" when unknown, e.g. after a load)
    layers: list[str]  # the diff ids of its layers, bottom first


@dataclass(frozen=True)
class ContainerSpec:
    image: str
    name: str
    labels: dict[str, str]
    environment: dict[str, str]
    user: str = "root"
    network: bool = False
    cpus: float = 1.0
    memory: str = "2g"
    pids_limit: int = 256
    cap_add: list[str] = field(default_factory=list)
    read_only: bool = False  # the image's filesystem; writable places come from the two below
    tmpfs: dict[str, str] = field(default_factory=dict)  # path → mount options (size=…)
    volumes: list[str] = field(default_factory=list)  # paths that get an anonymous volume
    storage_opt: dict[str, str] = field(default_factory=dict)  # e.g. {"size": "2g"}
    # Build sandboxes only: host paths or named volumes → (target, "ro"|"rw"), and a network
    # mode other than bridge/none (e.g. host, to reach an index on the host's 127.0.0.1).
    binds: dict[str, tuple[str, str]] = field(default_factory=dict)
    network_mode: str = ""


# The loopback's IPv6 address in an offline container's own network namespace.
_LOOPBACK_V6 = {"net.ipv6.conf.lo.disable_ipv6": "0"}
# An offline container's host name, and the loopback address it resolves to, as on a Debian
# machine: Docker writes a container's name into /etc/hosts only with an address on a network.
OFFLINE_HOSTNAME = "sandbox"
OFFLINE_HOST_ADDRESS = "127.0.1.1"


def connect() -> docker.DockerClient:
    """A client for the local engine; a clear error when no engine answers."""
    try:
        client = docker.from_env(timeout=300)
        client.ping()
        return client
    except DockerException as exc:
        raise EnvironmentFailure(f"cannot reach the Docker engine: {exc}") from None


class DockerClient:
    """Thin wrapper over the SDK with only the operations prchain needs."""

    def __init__(self, client: docker.DockerClient | None = None) -> None:
        self._client = client or connect()
        self.api = self._client.api

    # ---- images -------------------------------------------------------------------------------

    def image_id(self, name: str) -> str | None:
        try:
            return str(self._client.images.get(name).id)
        except ImageNotFound:
            return None
        except APIError as exc:
            raise EnvironmentFailure(f"cannot inspect image {name}: {exc}") from None

    def image_size(self, name: str) -> int:
        """An image's size in bytes, its shared layers counted in (0: no such image)."""
        try:
            return int(self.api.inspect_image(name).get("Size") or 0)
        except ImageNotFound:
            return 0
        except APIError as exc:
            raise EnvironmentFailure(f"cannot inspect image {name}: {exc}") from None

    def pull(self, name: str) -> str | None:
        """Try a registry once; None when it cannot be reached or has no such image."""
        try:
            return str(self._client.images.pull(name).id)
        except DockerException:
            return None

    def import_tar(self, stream: Iterable[bytes] | Any, name: str, labels: dict[str, str]) -> str:
        """`docker import` of a root filesystem tarball (a file object or an iterable of bytes)."""
        repo, _, tag = name.rpartition(":") if ":" in name.split("/")[-1] else (name, "", "latest")
        changes = [f"LABEL {k}={v}" for k, v in labels.items()] + ['CMD ["/bin/bash"]']
        try:
            self.api.import_image_from_stream(stream, repository=repo, tag=tag, changes=changes)
        except DockerException as exc:
            raise EnvironmentFailure(f"docker import of {name} failed: {exc}") from None
        found = self.image_id(name)
        if found is None:
            raise EnvironmentFailure(f"docker import of {name} produced no image")
        return found

    def build(
        self,
        context: str,
        tag: str,
        labels: dict[str, str],
        network: bool = True,
        log_path: Path | None = None,
    ) -> tuple[str, str]:
        """`docker build` of a directory holding a Dockerfile; returns (image id, build log).

        The log is written to `log_path` whether the build succeeds or not; a failed build raises
        BuildFailed whose kind and hint come from the log (prchain.environments.buildlog), so a package
        that cannot be resolved is not reported as an engine that cannot be reached."""
        lines: list[str] = []
        try:
            image, logs = self._client.images.build(
                path=context,
                tag=tag,
                labels=labels,
                rm=True,
                forcerm=True,
                network_mode=None if network else "none",
            )
            lines += [str(entry.get("stream", "")) for entry in logs]
        except BuildError as exc:
            lines += [str(entry.get("stream", entry.get("error", ""))) for entry in exc.build_log]
            raise _build_failed(tag, str(exc.msg), "".join(lines), log_path) from None
        except APIError as exc:  # the engine answered: e.g. a FROM image it does not have
            raise _build_failed(tag, str(exc), "".join(lines) + str(exc), log_path) from None
        except DockerException as exc:
            raise EnvironmentFailure(f"docker build of {tag} failed: {exc}") from None
        text = "".join(lines)
        if log_path is not None:
            log_path.write_text(text)
        return str(image.id), text

    def image_ancestors(self, ref: str) -> list[str]:
        """The ids of `ref` and of every image it was built from (the classic builder's Parent
        chain); an image other images are built from must not lose its tag to a cleanup."""
        chain: list[str] = []
        current = ref
        while current and len(chain) < 1000:
            try:
                found = self.api.inspect_image(current)
            except (NotFound, ImageNotFound):
                break
            except APIError as exc:
                raise EnvironmentFailure(f"cannot inspect image {current}: {exc}") from None
            chain.append(str(found["Id"]))
            current = str(found.get("Parent") or "")
        return chain

    def image_info(self, ref: str) -> ImageInfo | None:
        """Id, tags, size, parent and layers of an image; None when the engine has none such."""
        try:
            found = self.api.inspect_image(ref)
        except (NotFound, ImageNotFound):
            return None
        except APIError as exc:
            raise EnvironmentFailure(f"cannot inspect image {ref}: {exc}") from None
        return ImageInfo(
            str(found["Id"]),
            [str(t) for t in found.get("RepoTags") or ()],
            int(found.get("Size") or 0),
            str(found.get("Parent") or ""),
            [str(layer) for layer in (found.get("RootFS") or {}).get("Layers") or ()],
        )

    def save_images(self, names: list[str], write: Callable[[bytes], object]) -> int:
        """`docker save` of several images as one archive (a layer they share is in it once),
        streamed to `write`; returns the bytes written."""
        try:
            res = self.api._get(self.api._url("/images/get"), params={"names": names}, stream=True)
            self.api._raise_for_status(res)
            written = 0
            for chunk in self.api._stream_raw_result(res, 1 << 21, False):
                write(chunk)
                written += len(chunk)
        except DockerException as exc:
            raise EnvironmentFailure(f"docker save of {', '.join(names)} failed: {exc}") from None
        return written

    def top_layer(self, name: str) -> bytes:
        """The filesystem diff the last layer of image `name` adds (a tar, as `docker save` holds
        it): what its last build step wrote."""
        archive = io.BytesIO()
        self.save_images([name], archive.write)
        archive.seek(0)
        with tarfile.open(fileobj=archive) as saved:
            manifest = saved.extractfile("manifest.json")
            layers = json.loads(manifest.read())[0]["Layers"] if manifest else []
            member = saved.extractfile(layers[-1]) if layers else None
            if member is None:
                raise EnvironmentFailure(f"docker save of {name} holds no layer")
            return member.read()

    def push(self, name: str) -> str:
        """`docker push` of a tagged image to the registry its name starts with; the digest the
        registry gave its manifest ("" if it said none)."""
        repo, _, tag = name.rpartition(":") if ":" in name.split("/")[-1] else (name, "", "latest")
        digest = ""
        try:
            for message in self.api.push(repo, tag=tag, stream=True, decode=True):
                if "error" in message:
                    raise EnvironmentFailure(f"docker push of {name} failed: {message['error']}")
                digest = str((message.get("aux") or {}).get("Digest") or digest)
        except DockerException as exc:
            raise EnvironmentFailure(f"docker push of {name} failed: {exc}") from None
        return digest

    def load_images(self, archive: BinaryIO | Iterable[bytes]) -> list[str]:
        """`docker load` of an archive (plain or gzip-compressed tar, a file or a stream of
        chunks, sent as it is read); the names (or ids) loaded."""
        loaded: list[str] = []
        try:
            for message in self.api.load_image(archive):
                if "error" in message:
                    raise EnvironmentFailure(f"docker load failed: {message['error']}")
                said = str(message.get("stream", "")).strip()
                for prefix in ("Loaded image: ", "Loaded image ID: "):
                    if said.startswith(prefix):
                        loaded.append(said[len(prefix) :])
        except DockerException as exc:
            raise EnvironmentFailure(f"docker load failed: {exc}") from None
        return loaded

    def tag(self, image_id: str, name: str) -> None:
        repo, _, tag = name.rpartition(":") if ":" in name.split("/")[-1] else (name, "", "latest")
        self._client.images.get(image_id).tag(repo, tag)

    def images(self, labels: dict[str, str]) -> list[dict[str, Any]]:
        """Managed images as plain dicts: id, tags, labels, size, created (ISO, UTC).

        One list call, no inspection per image: the SDK's `images.list` inspects each image it
        listed, and fails when another process removes one in between."""
        found = self.api.images(filters={"label": [f"{k}={v}" for k, v in labels.items()]})
        return [
            {
                "id": img["Id"],
                "tags": [t for t in img.get("RepoTags") or () if t != "<none>:<none>"],
                "labels": img.get("Labels") or {},
                "size": img.get("Size", 0),
                "created": datetime.fromtimestamp(img.get("Created", 0), UTC).strftime(
                    "%Y-%m-%dT%H:%M:%SZ"
                ),
            }
            for img in found
        ]

    def image_labels(self, ref: str) -> dict[str, str]:
        """The labels of an image ({} when it has none or does not exist)."""
        try:
            found = self.api.inspect_image(ref)
        except (NotFound, ImageNotFound):
            return {}
        return dict((found.get("Config") or {}).get("Labels") or {})

    def image_in_use(self, image_id: str) -> bool:
        """Whether any container (running or not) was created from this image."""
        return bool(self.api.containers(all=True, quiet=True, filters={"ancestor": image_id}))

    def remove_image(self, ref: str) -> bool:
        try:
            self._client.images.remove(ref, force=False, noprune=False)
            return True
        except (NotFound, ImageNotFound):
            return False
        except APIError:  # still used by a container, or by another tag: keep it
            return False

    def remove_volume(self, name: str) -> bool:
        try:
            self._client.volumes.get(name).remove(force=True)
            return True
        except NotFound:
            return False
        except APIError:  # still mounted by a container: keep it
            return False

    def volume_sizes(self) -> dict[str, int]:
        """Each volume's bytes as the engine counts them (`docker system df`; -1: not counted)."""
        volumes = self._client.df().get("Volumes") or []
        return {v["Name"]: int((v.get("UsageData") or {}).get("Size", -1)) for v in volumes}

    # ---- containers ---------------------------------------------------------------------------

    def run(self, spec: ContainerSpec) -> str:
        """Start a detached, locked-down container that idles until it is execed into.

        An offline container runs as on a developer's machine, still with no way out: its
        loopback's `::1` is up (Docker leaves IPv6 off in a `none` namespace), for suites that
        serve and connect on `::1` such as c-ares' mock DNS servers; and its host name resolves
        to a loopback address, for code that asks the address of its own host (Java's
        `InetAddress.getLocalHost()`, which nacos's tests reach through its `InetUtils`). An
        engine that refuses the sysctl (a host without IPv6) starts the container without it."""
        offline = not spec.network_mode and not spec.network
        try:
            return self._run(spec, _LOOPBACK_V6 if offline else {}, offline)
        except EnvironmentFailure as exc:
            if offline and "sysctl" in str(exc).lower():
                return self._run(spec, {}, offline)
            raise

    def _run(self, spec: ContainerSpec, sysctls: dict[str, str], offline: bool) -> str:
        mounts = [Mount(target=path, source=None, type="volume") for path in spec.volumes]
        mounts += [
            Mount(
                target=target,
                source=source,
                type="bind" if source.startswith("/") else "volume",
                read_only=mode == "ro",
            )
            for source, (target, mode) in spec.binds.items()
        ]
        try:
            container = self._client.containers.run(
                spec.image,
                ["sleep", "infinity"],
                name=spec.name,
                detach=True,
                labels=spec.labels,
                environment=spec.environment,
                user=spec.user,
                init=True,
                network_mode=spec.network_mode or ("bridge" if spec.network else "none"),
                nano_cpus=int(spec.cpus * 1e9),
                mem_limit=spec.memory,
                memswap_limit=spec.memory,
                pids_limit=spec.pids_limit,
                cap_drop=["ALL"],
                cap_add=spec.cap_add or None,
                security_opt=["no-new-privileges"],
                working_dir="/",
                read_only=spec.read_only,
                tmpfs=spec.tmpfs or None,
                mounts=mounts or None,
                storage_opt=spec.storage_opt or None,
                sysctls=sysctls or None,
                hostname=OFFLINE_HOSTNAME if offline else None,
                extra_hosts={OFFLINE_HOSTNAME: OFFLINE_HOST_ADDRESS} if offline else None,
            )
        except DockerException as exc:
            if spec.storage_opt and "storage-opt" in str(
                exc
            ):  # refused at create: nothing to remove
                raise StorageQuotaUnsupported(
                    f"the engine cannot limit a container's disk: {exc}"
                ) from None
            raise EnvironmentFailure(f"cannot start a container from {spec.image}: {exc}") from None
        return str(container.id)

    def containers(self, labels: dict[str, str]) -> list[dict[str, Any]]:
        # The plain list call, not containers.list(): that inspects each container afterwards and
        # fails when one goes away in between, which on a shared engine happens all the time.
        found = self._client.api.containers(
            all=True, filters={"label": [f"{k}={v}" for k, v in labels.items()]}
        )
        return [
            {
                "id": c["Id"],
                "name": (c.get("Names") or ["/"])[0].lstrip("/"),
                "status": c.get("State", ""),
                "labels": c.get("Labels") or {},
            }
            for c in found
        ]

    def remove_container(self, container_id: str) -> bool:
        try:
            self._client.containers.get(container_id).remove(force=True, v=True)
            return True
        except NotFound:
            return False
        except APIError as exc:
            if exc.status_code == 409:  # removal already in progress
                return False
            raise EnvironmentFailure(
                f"cannot remove container {container_id[:12]}: {exc}"
            ) from None

    def is_running(self, container_id: str) -> bool:
        try:
            return bool(self.api.inspect_container(container_id)["State"]["Running"])
        except NotFound:
            return False

    def run_to_end(
        self,
        image: str,
        argv: list[str],
        *,
        name: str,
        labels: dict[str, str],
        environment: dict[str, str],
        binds: dict[str, tuple[str, str]],
        network_mode: str,
        timeout: float,
        on_start: Callable[[str], None] | None = None,
    ) -> tuple[str, int, str]:
        """Run argv as root in a new container until it ends (builds: network on, binds of host
        files, named volumes as caches); returns (container id, exit code or -1 on timeout, log).
        The container is left for the caller to commit or remove."""
        # Mounts, not `volumes=`: the latter also declares image volumes, which a commit would keep.
        mounts = [
            Mount(
                target=target,
                source=source,
                type="bind" if source.startswith("/") else "volume",
                read_only=mode == "ro",
            )
            for source, (target, mode) in binds.items()
        ]
        try:
            container = self._client.containers.run(
                image,
                argv,
                name=name,
                detach=True,
                labels=labels,
                environment=environment,
                user="root",
                network_mode=network_mode,
                mounts=mounts,
            )
        except DockerException as exc:
            raise EnvironmentFailure(
                f"cannot start a build container from {image}: {exc}"
            ) from None
        if on_start is not None:  # e.g. registered for removal should we be stopped meanwhile
            on_start(str(container.id))
        try:
            code = int(container.wait(timeout=timeout).get("StatusCode", -1))
        except (ReadTimeout, RequestsConnectionError):  # the build ran past its time
            container.kill()
            code = -1
        log = container.logs(stdout=True, stderr=True).decode("utf-8", errors="replace")
        return str(container.id), code, log

    def commit_image(
        self, container_id: str, name: str, labels: dict[str, str], changes: list[str]
    ) -> str:
        """`docker commit` with labels and Dockerfile-style changes (ENV, CMD, WORKDIR)."""
        repo, _, tag = name.rpartition(":") if ":" in name.split("/")[-1] else (name, "", "latest")
        lines = [*(f"LABEL {k}={v}" for k, v in labels.items()), *changes]
        image = self._client.containers.get(container_id).commit(
            repository=repo, tag=tag, changes=lines
        )
        return str(image.id)

    def commit(self, container_id: str, repository: str, tag: str) -> str:
        image = self._client.containers.get(container_id).commit(repository=repository, tag=tag)
        return str(image.id)

    # ---- exec and files -----------------------------------------------------------------------

    def exec(
        self,
        container_id: str,
        argv: list[str],
        *,
        user: str,
        workdir: str,
        env: dict[str, str],
        limit: int,
        deadline: float | None = None,
        stdin: bytes | None = None,
        idempotent: bool = False,
    ) -> RawExec:
        """Run argv in the container; keep head and tail of the output within `limit` bytes.

        `deadline` is a host-side guard (seconds) for a stream that stays open after the in-container
        timeout fired (e.g. a daemon that escaped the process group): we stop reading then.
        `stdin` is written to the command's standard input, which is then closed: the one channel
        that reaches any directory (a tmpfs too) without trusting a path the agent could redirect.

        An output that did not arrive whole (no trailer, though the command ended by itself) is
        never handed back: a read (`idempotent`) runs again, up to READ_ATTEMPTS times; any other
        command ran, so it is not repeated and ExecOutputLost says so. The exit code is always
        the engine's, never the trailer's. When the engine could not start the wrapper at all,
        nothing ran and nothing will: at once, NoShellInImage (an image without `sh`) or
        UserNotInImage (`user` is not in the image).
        """
        call = _Exec(container_id, argv, user, workdir, env, stdin)
        attempts = READ_ATTEMPTS if idempotent else 1
        for attempt in range(1, attempts + 1):
            raw = self._exec_once(call, limit, deadline)
            if raw is not None:
                return raw
            log.warning("exec output lost (attempt %d of %d): %s", attempt, attempts, argv[:3])
        what = " ".join(argv)[:120]
        raise ExecOutputLost(
            f"the output of `{what}` in container {container_id[:12]} did not arrive whole"
            + (f" in {attempts} runs" if idempotent else "; it ran once and is not run again")
        )

    def _exec_once(self, call: _Exec, limit: int, deadline: float | None) -> RawExec | None:
        """One wrapped run; None when its output is provably incomplete."""
        start, nonce = time.monotonic(), secrets.token_hex(16)
        exec_id, sock = self._start(call, nonce)
        buffer = Bounded(limit, TRAILER_ROOM)
        finished = self._drain(frames(reader(sock)), buffer, deadline, lambda: close(sock))
        code = self._exit_code(call.container_id, exec_id, finished)
        whole = buffer.strip_trailer(nonce)
        buffer.settle()
        output = bytes(buffer.head + buffer.tail)
        # A wrapper killed by a signal (the memory limit, a deadline) prints no trailer: the output
        # is what it is. One that exited by itself always printed it, so without it bytes are lost.
        if finished and not whole and 0 <= code < 128:
            self._raise_if_not_started(call, code, output)
            return None
        return RawExec(output, code, time.monotonic() - start, buffer.dropped, len(buffer.head))

    def _start(self, call: _Exec, nonce: str) -> tuple[str, Any]:
        """Create and start the wrapped exec; its stream's socket, with `stdin` sent and closed."""
        container_id, stdin = call.container_id, call.stdin
        try:
            exec_id = self.api.exec_create(
                container_id,
                wrapped(call.argv),
                user=call.user,
                workdir=call.workdir,
                environment={**call.env, NONCE_VAR: nonce},
                stdin=stdin is not None,
            )["Id"]
            sock = self.api.exec_start(exec_id, socket=True)
        except NotFound:
            raise ContainerDied(f"container {container_id[:12]} is gone") from None
        except APIError as exc:
            self._raise_if_dead(container_id, exc)
            raise EnvironmentFailure(f"docker exec failed: {exc}") from None
        raw = getattr(sock, "_sock", sock)
        raw.settimeout(None)  # a quiet command is no error; `deadline` bounds the wait
        if stdin is not None:
            raw.sendall(stdin)
            raw.shutdown(socket.SHUT_WR)
        return str(exec_id), sock

    def _exit_code(self, container_id: str, exec_id: str, finished: bool) -> int:
        try:
            code = self.api.exec_inspect(exec_id).get("ExitCode") if finished else None
        except NotFound:
            raise ContainerDied(f"container {container_id[:12]} is gone") from None
        if code is None or code in (-1, 137):  # killed: the command, or the whole container?
            self._raise_if_dead(container_id, None)
            code = 137 if code is None else code
        return int(code)

    @staticmethod
    def _drain(
        stream: Iterator[bytes], buffer: Bounded, deadline: float | None, stop: Callable[[], None]
    ) -> bool:
        """Feed the stream to the buffer until it ends or `deadline` passes; whether it ended."""

        def pump() -> None:
            with contextlib.suppress(DockerException, OSError, ValueError):  # broken, or closed
                for chunk in stream:
                    buffer.feed(chunk)

        pumping = threading.Thread(target=pump, daemon=True)
        pumping.start()
        pumping.join(deadline)
        finished = not pumping.is_alive()
        stop()  # wakes a pump still waiting, so nothing feeds the buffer once we read it
        pumping.join(5)
        return finished

    def _raise_if_dead(self, container_id: str, exc: Exception | None) -> None:
        if not self.is_running(container_id):
            raise ContainerDied(f"container {container_id[:12]} is not running") from exc

    def _raise_if_not_started(self, call: _Exec, code: int, output: bytes) -> None:
        """A missing trailer with the engine's own message (exit 126/127, or 1 for an argument
        list too long) in place of the output: the wrapper never started, so no output was lost
        and no rerun can help."""
        found = not_started(output) if code in (1, 126, 127) else None
        if found is None:
            return
        why, said = found
        if why == "too long":
            size = sum(len(arg.encode()) for arg in call.argv)
            raise CommandTooLong(
                f"the engine could not start a command of {size:,} bytes in container "
                f"{call.container_id[:12]}: {said}"
            )
        try:
            image = str(self.api.inspect_container(call.container_id)["Config"]["Image"])
        except NotFound:
            image = "?"
        where = f"(container {call.container_id[:12]}: {said})"
        if why == "no user":
            raise UserNotInImage(
                f"image {image} has no user {call.user}, which an exec was to run as {where}"
            )
        raise NoShellInImage(
            f"image {image} has no POSIX shell at /bin/sh, which prchain's exec needs {where}"
        )
