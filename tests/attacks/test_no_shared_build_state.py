"""Issue 52, class 3 (acceptance 4): build state never crosses a repository.

Repository A's build (its backend runs as root) writes wherever it can, its download cache
included. A toolchain layer is shared by every repository that asks for the same one, so it must
be built from no repository's state: before the fix it was built with the cache volume of whichever
repository asked first, and repository B's image then held what A's backend had planted."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from prchain.dev.repos import git

pytestmark = [pytest.mark.docker, pytest.mark.slow]

RUN = uuid.uuid4().hex[:8]
REPO_A, REPO_B = f"seal-{RUN}/poisoner", f"seal-{RUN}/victim"
POISON = f"POISON{RUN}"
# A's build backend: everything writable it can reach, the cache above all.
PLANT = (
    f"for d in $UV_CACHE_DIR /opt/prchain /tmp /var/tmp; do echo {POISON} > $d/planted 2>/dev/null;"
    " done; true"
)
# A toolchain step that reads whatever its cache holds (a cached wheel, a cached interpreter).
TOOLCHAIN = [f"cat $UV_CACHE_DIR/planted > /opt/toolchain-{RUN} 2>/dev/null || true"]


def _tiny_repo(path: Path) -> tuple[Path, str]:
    if path.exists():
        return path, git(path, "rev-parse", "HEAD").strip()
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    (path / "README.md").write_text("tiny\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "start", date="2024-01-01T00:00:00Z")
    return path, git(path, "rev-parse", "HEAD").strip()


@pytest.fixture(scope="module")
def builds(docker_client: Any, base_image: str) -> Iterator[Any]:
    from prchain.environments.config import EnvironmentConfig
    from prchain.environments.eras.build import cache_volume
    from prchain.environments.eras.config import ErasConfig

    eras = ErasConfig(
        suites={"bookworm": "3.11"}, extra_base_packages=[], cache_volume=f"prchain-seal-{RUN}"
    )
    yield EnvironmentConfig(), eras
    for repo in (REPO_A, REPO_B):
        for kind in ("era", "repo"):
            for image in docker_client.images({"prchain.repo": repo, "prchain.kind": kind}):
                for tag in image["tags"]:
                    docker_client.remove_image(tag)
        docker_client.remove_volume(cache_volume(eras, repo))
    for image in docker_client.images({"prchain.kind": "toolchain"}):
        if any(f"toolchain-{RUN}" in step for step in _history(docker_client, image["id"])):
            for tag in image["tags"]:
                docker_client.remove_image(tag)


def _history(docker_client: Any, image_id: str) -> list[str]:
    raw = docker_client.api.history(image_id)
    return [str(step.get("CreatedBy", "")) for step in raw]


def _build(
    client: Any, builds: Any, tmp: Path, repo: str, commands: list[str], toolchain: list[str]
) -> Any:
    from prchain.environments.eras.build import ensure_era_image
    from prchain.environments.eras.ecosystems import Plan

    env, eras = builds
    clone, sha = _tiny_repo(tmp / repo.replace("/", "-"))
    plan = Plan(
        "python", "bookworm", "3.11", "2024-01-01T00:00:00Z", commands, "true", toolchain=toolchain
    )
    built = ensure_era_image(
        client, env, eras, repo=repo, clone=clone, sha=sha, plan=plan, era_key="e", notify=print
    )
    assert built.image_id, built.log[-2000:]
    return built


def _read(client: Any, image: str, path: str) -> str:
    from prchain.environments.docker_client import ContainerSpec

    spec = ContainerSpec(
        image=image,
        name=f"prchain-seal-read-{uuid.uuid4().hex[:6]}",
        labels={"prchain.test": RUN},
        environment={},
    )
    container = client.run(spec)
    try:
        raw = client.exec(
            container,
            ["sh", "-c", f"cat {path} 2>/dev/null; true"],
            user="root",
            workdir="/",
            env={},
            limit=1 << 16,
        )
        return raw.output.decode()
    finally:
        client.remove_container(container)


def test_a_repositorys_build_state_never_reaches_another_repositorys_image(
    docker_client: Any, builds: Any, tmp_path: Path
) -> None:
    _build(docker_client, builds, tmp_path, REPO_A, [PLANT], [])  # A's backend plants
    _build(docker_client, builds, tmp_path, REPO_A, ["true"], TOOLCHAIN)  # A asks for the layer
    victim = _build(docker_client, builds, tmp_path, REPO_B, ["true"], TOOLCHAIN)  # B shares it
    assert POISON not in _read(docker_client, victim.tag, f"/opt/toolchain-{RUN}")
    for place in ("/opt/prchain/planted", "/tmp/planted", "/var/tmp/planted"):
        assert POISON not in _read(docker_client, victim.tag, place)


# Acceptance 4: what a second repository's image holds, and what a check run in it says, are the
# same whether or not the poisoner built first (the toolchain layer built again in between).
REPO_A2, REPO_B2 = f"seal-{RUN}/poisoner2", f"seal-{RUN}/victim2"
TOOLCHAIN2 = [f"cat $UV_CACHE_DIR/planted > /opt/toolchain2-{RUN} 2>/dev/null || true"]
VICTIM = [f"ls -A $UV_CACHE_DIR > /opt/victim-{RUN}; cat /tmp/planted >> /opt/victim-{RUN} || true"]
# Every file of the places a build writes (not /etc: Docker mounts the container's own hosts
# files there), with its content's digest; then the victim's check and its exit status.
FINGERPRINT = (
    "find /opt /usr/local /root /tmp /var/tmp -xdev -type f -print0 2>/dev/null | sort -z | "
    "xargs -0 -r sha256sum; "
    f"test ! -s /opt/toolchain2-{RUN} && test ! -s /opt/victim-{RUN}; echo verdict $?"
)


def _remove_images(client: Any, repo: str, marker: str) -> None:
    for image in client.images({"prchain.repo": repo, "prchain.kind": "era"}):
        for tag in image["tags"]:
            client.remove_image(tag)
    for image in client.images({"prchain.kind": "toolchain"}):
        if any(marker in step for step in _history(client, image["id"])):
            for tag in image["tags"]:
                client.remove_image(tag)


def test_the_second_repositorys_image_and_verdict_are_those_of_a_build_without_the_first(
    docker_client: Any, builds: Any, tmp_path: Path
) -> None:
    from prchain.environments.eras.build import cache_volume

    alone = _build(docker_client, builds, tmp_path, REPO_B2, VICTIM, TOOLCHAIN2)
    expected = _read_all(docker_client, alone.tag)
    assert expected.endswith("verdict 0\n") and f"/opt/victim-{RUN}" in expected, expected
    _remove_images(docker_client, REPO_B2, f"toolchain2-{RUN}")  # a world without it
    try:
        _build(docker_client, builds, tmp_path, REPO_A2, [PLANT], [])  # A's backend plants
        _build(docker_client, builds, tmp_path, REPO_A2, ["true"], TOOLCHAIN2)  # A asks first
        after = _build(docker_client, builds, tmp_path, REPO_B2, VICTIM, TOOLCHAIN2)
        assert _read_all(docker_client, after.tag) == expected
    finally:
        for repo in (REPO_A2, REPO_B2):
            _remove_images(docker_client, repo, f"toolchain2-{RUN}")
            docker_client.remove_volume(cache_volume(builds[1], repo))


def _read_all(client: Any, image: str) -> str:
    from prchain.environments.docker_client import ContainerSpec

    spec = ContainerSpec(
        image=image,
        name=f"prchain-seal-read-{uuid.uuid4().hex[:6]}",
        labels={"prchain.test": RUN},
        environment={},
    )
    container = client.run(spec)
    try:
        raw = client.exec(
            container, ["sh", "-c", FINGERPRINT], user="root", workdir="/", env={}, limit=1 << 24
        )
        return raw.output.decode()
    finally:
        client.remove_container(container)
