"""Which earlier era image an era image may grow on (`build._not_to_grow_on`): one in the engine,
of the plan's lineage (toolchain layer and image variables), with room for another layer. Images
are imported from tiny tarballs under a test-unique name and removed afterwards."""

from __future__ import annotations

import io
import tarfile
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from prchain.environments.eras.build import LINEAGE_LABEL, _not_to_grow_on

pytestmark = pytest.mark.docker
NAME = f"prchain-test-grow-{uuid.uuid4().hex[:8]}/era"


def _tar() -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        info = tarfile.TarInfo("content.txt")
        info.size = 2
        tar.addfile(info, io.BytesIO(b"ok"))
    return buffer.getvalue()


@pytest.fixture
def images(docker_client: Any) -> Iterator[list[str]]:
    made: list[str] = []
    yield made
    for tag in made:
        docker_client.remove_image(tag)


def test_an_era_grows_only_on_an_image_of_its_lineage(
    docker_client: Any, images: list[str]
) -> None:
    ours, theirs = f"{NAME}:ours", f"{NAME}:theirs"
    for tag, lineage in ((ours, "rustc-1.85"), (theirs, "rustc-1.78")):
        docker_client.import_tar(iter([_tar()]), tag, {LINEAGE_LABEL: lineage})
        images.append(tag)
    assert _not_to_grow_on(docker_client, ours, "rustc-1.85") == ""
    assert _not_to_grow_on(docker_client, theirs, "rustc-1.85") == "has another toolchain or ENV"
    assert _not_to_grow_on(docker_client, f"{NAME}:gone", "x") == "is not in the engine"
