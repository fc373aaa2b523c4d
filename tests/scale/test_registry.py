"""A registry that cannot be reached costs a build, never a run: `fetch` says the image is absent,
and a push that fails is one error naming the registry, with no tag of it left in the engine."""

from __future__ import annotations

import socket
import uuid
from typing import Any

import pytest

from prchain.app.registry import fetch, publish
from prchain.core.errors import PrchainError

pytestmark = [pytest.mark.docker]


def _closed_port() -> int:
    with socket.socket() as s:  # bound, then closed: nothing listens there
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_an_unreachable_registry_means_absent_and_a_failed_push_says_so(
    docker_client: Any, base_image: str
) -> None:
    registry = f"127.0.0.1:{_closed_port()}/registry-test-{uuid.uuid4().hex[:8]}"
    absent = f"registry-test-{uuid.uuid4().hex[:8]}/none:1"
    assert fetch(None, absent) is False
    assert fetch(registry, absent) is False and docker_client.image_id(absent) is None
    assert fetch(registry, base_image) is True  # present here: no registry asked
    with pytest.raises(PrchainError, match=f"docker push of {registry}/"):
        publish(registry, base_image)
    assert docker_client.image_info(base_image) is not None
    assert not [t for t in docker_client.image_info(base_image).tags if t.startswith(registry)]
