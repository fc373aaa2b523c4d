"""pytest fixtures for the fake GitHub (loaded by tests/conftest.py as a plugin).

- `fake_github`: a started server (one per test, so faults and counters never leak between tests)
  with the token exported in GITHUB_TOKEN;
- `generated_repo`: a 120-PR history with every odd case, built once per session (read-only);
- `chain_github_repo`: `make_chain_repo`'s 3-PR chain served as acme/calc;
- `github_config(fake, **fields)`: a GithubConfig pointing at the server and its clone origins,
  with waits short enough for tests.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from prchain.dev.repos import make_chain_repo
from prchain.miner.config import GithubConfig
from tests.support.fake_github import FakeGithub
from tests.support.fake_github_data import FakeRepo, generate_repo, repo_from_chain

FAKE_TOKEN = "ghp_fake_token_1"
SECOND_TOKEN = "ghp_fake_token_2"
# PR numbers of the odd cases in `generated_repo` (numbers divisible by 5 are issues).
SPECIALS = {3: "binary", 4: "huge", 6: "latin1", 7: "missing", 8: "many"}
HUGE_BYTES = 300_000


def origin_root(repo: FakeRepo) -> str:
    """The directory holding <owner>/<name>: what clone_url_template points into."""
    return str(repo.git_path.parents[1])


def github_config(fake: FakeGithub, repo: FakeRepo | None = None, **fields: Any) -> GithubConfig:
    # file:// makes git transfer only reachable objects, as a network clone does (a plain path
    # would hard-link every object, even those no fetched ref reaches).
    template = (
        f"file://{origin_root(repo)}/{{full_name}}" if repo else "file:///nonexistent/{full_name}"
    )
    settings: dict[str, Any] = {
        "api_url": fake.url,
        "clone_url_template": template,
        "backoff_seconds": 0.05,
        "secondary_wait_seconds": 0.05,
        "max_retries": 3,
        "timeout_seconds": 10,
    }
    return GithubConfig(**{**settings, **fields})


@pytest.fixture
def fake_github(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGithub]:
    fake = FakeGithub(tokens=(FAKE_TOKEN, SECOND_TOKEN)).start()
    monkeypatch.setenv("GITHUB_TOKEN", FAKE_TOKEN)
    yield fake
    fake.stop()


@pytest.fixture(scope="session")
def generated_repo(tmp_path_factory: pytest.TempPathFactory) -> FakeRepo:
    root = tmp_path_factory.mktemp("origins")
    return generate_repo(root / "acme" / "widgets", 120, specials=SPECIALS, huge_bytes=HUGE_BYTES)


@pytest.fixture
def chain_github_repo(tmp_path: Path) -> FakeRepo:
    chain = make_chain_repo(tmp_path / "origins" / "acme" / "calc")
    return repo_from_chain(chain, "acme/calc")
