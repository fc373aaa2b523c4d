"""Docker objects the test suite did not make, which it must leave exactly as they were.

At the start of every session that reaches an engine, `foreign_docker_objects` (autouse, session
scope; loaded by tests/conftest.py) makes:
- an image and a container that carry no prchain label at all (someone else's work), and
- a user's own prchain objects from another store: two images of a repository no test uses (an
  older and a newer recipe) and a sandbox container whose owner process is gone.
Only the last two are reachable by prchain's cleanups at all: an unscoped `env prune` would take
the older image and an unscoped `env gc` the orphan container. At the end of the session, after
every test, each object must still exist with the same id, or the run fails. Then the fixture
removes them (they are this session's own).
"""

from __future__ import annotations

import io
import os
import socket
import subprocess
import tarfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

SENTINEL_LABEL = "prchain-test.sentinel"  # not a prchain label: marks what this fixture made


@dataclass
class Sentinels:
    tag: str
    images: dict[str, str] = field(default_factory=dict)  # tag → id
    containers: dict[str, str] = field(default_factory=dict)  # name → id


def _tar(content: str) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        data = content.encode()
        info = tarfile.TarInfo("sentinel.txt")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def _dead_pid() -> int:
    """A pid whose process has exited (a reused pid still fails the start-time check)."""
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


def create(client: Any, tag: str) -> Sentinels:
    """The foreign objects described above, named after `tag` so runs sharing an engine differ."""
    made = Sentinels(tag)
    foreign = f"prchain-test-foreign/image:{tag}"
    made.images[foreign] = client.import_tar(iter([_tar(f"foreign {tag}")]), foreign, {})
    for age in ("old", "new"):  # import order makes "old" the older one
        name = f"prchain/repo-someone-elses:{tag}-{age}"
        labels = {
            "prchain.managed": "1",
            "prchain.kind": "repo",
            "prchain.repo": f"someone/elses-{tag}",
            "prchain.recipe": f"{tag}-{age}",
            SENTINEL_LABEL: tag,
        }
        made.images[name] = client.import_tar(iter([_tar(f"{age} {tag}")]), name, labels)
    owners = {
        f"prchain-test-foreign-{tag}": {SENTINEL_LABEL: tag},
        f"prchain-test-orphan-{tag}": {
            "prchain.managed": "1",
            "prchain.kind": "sandbox",
            "prchain.owner_pid": str(_dead_pid()),
            "prchain.owner_start": "1",
            "prchain.owner_host": socket.gethostname(),
            SENTINEL_LABEL: tag,
        },
    }
    for name, labels in owners.items():
        created = client.api.create_container(
            made.images[foreign], ["/nonexistent"], name=name, labels=labels
        )
        made.containers[name] = str(created["Id"])
    return made


def missing(client: Any, made: Sentinels) -> list[str]:
    """The objects that are gone or no longer what they were (a tag moved to another image)."""
    gone = [tag for tag, image in made.images.items() if client.image_id(tag) != image]
    present = {c["id"] for c in client.containers({SENTINEL_LABEL: made.tag})}
    gone += [name for name, cid in made.containers.items() if cid not in present]
    return gone


def remove(client: Any, made: Sentinels) -> None:
    for cid in made.containers.values():
        client.remove_container(cid)
    for tag in reversed(list(made.images)):
        client.remove_image(tag)


def _client_or_none() -> Any:
    from prchain.core.errors import EnvironmentFailure
    from prchain.environments.docker_client import DockerClient

    try:
        return DockerClient()
    except EnvironmentFailure:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
            raise
        return None  # no engine here: no Docker test runs, nothing to guard


@pytest.fixture(scope="session", autouse=True)
def foreign_docker_objects() -> Iterator[Sentinels | None]:
    client = _client_or_none()
    if client is None:
        yield None
        return
    made = create(client, f"s{os.getpid()}-{uuid.uuid4().hex[:8]}")
    try:
        yield made
    finally:
        gone = missing(client, made)
        remove(client, made)
    if gone:
        pytest.fail(
            "the test suite removed or changed Docker objects it did not create: " + ", ".join(gone)
        )
