"""The chain builds of these tests keep their commit-graphs (`ChainsConfig.commit_graph_dir`'s
default, under `$XDG_CACHE_HOME`) in the test run's own directory, not the user's cache. Module
scope: a module's own fixtures build chains before any test's fixtures run, and autouse fixtures
come first in their scope."""

from __future__ import annotations

from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True, scope="module")
def _own_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "xdg-cache"))
        yield
