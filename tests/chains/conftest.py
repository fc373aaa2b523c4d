"""The chain builds of these tests keep their commit-graphs (`ChainsConfig.commit_graph_dir`'s
default, under `$XDG_CACHE_HOME`) in the test run's own directory, not the user's cache."""

from __future__ import annotations

import pytest


@pytest.fixture(autouse=True)
def _own_cache(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.getbasetemp() / "xdg-cache"))
