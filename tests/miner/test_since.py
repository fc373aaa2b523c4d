"""`mine --since DATE` bounds one run without moving the full-history cursor (issue 16, finding 3).

Before the fix a bounded run stored its cursor, so a later plain run started after the date and
the older PRs were never fetched.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from sqlalchemy import Engine, func, select

from prchain.dev.repos import make_chain_repo
from prchain.miner.config import MinerConfig
from prchain.miner.mine import mine
from prchain.store.models import Issue, PullRequest
from tests.support.fake_github import FakeGithub
from tests.support.fake_github_data import FakeRepo
from tests.support.github_fixtures import github_config


def _count(engine: Engine, model: type[PullRequest] | type[Issue]) -> int:
    with engine.connect() as connection:
        return int(connection.scalar(select(func.count()).select_from(model)) or 0)


def test_git_since_run_then_plain_run_gets_everything(engine: Engine, tmp_path: Path) -> None:
    repo = make_chain_repo(tmp_path / "calc")
    config = MinerConfig(source="git")
    bounded = mine(config, engine, [str(repo.path)], since="2024-01-04")
    assert bounded.repos[0].prs_new == 2 and _count(engine, PullRequest) == 2
    plain = mine(config, engine, [str(repo.path)])
    assert _count(engine, PullRequest) == len(repo.prs) == 4
    assert plain.repos[0].prs_new == 2  # the older two, which the bounded run skipped


def test_github_since_run_then_plain_run_gets_everything(
    engine: Engine, fake_github: FakeGithub, generated_repo: FakeRepo, tmp_path: Path
) -> None:
    fake_github.add_repo(generated_repo)
    config = MinerConfig(source="github", github=github_config(fake_github, generated_repo))
    stamps = sorted(pr.updated_at for pr in generated_repo.prs.values())
    since = stamps[-5]
    mine(config, engine, [generated_repo.full_name], clone_dir=str(tmp_path), since=since)
    assert _count(engine, PullRequest) == 5
    bounded_issues = _count(engine, Issue)
    mine(config, engine, [generated_repo.full_name], clone_dir=str(tmp_path))
    assert _count(engine, PullRequest) == len(generated_repo.prs)
    assert _count(engine, Issue) > bounded_issues
    # The cursor the plain run stored now covers the whole history: a third run fetches no PR.
    again = mine(config, engine, [generated_repo.full_name], clone_dir=str(tmp_path))
    assert again.repos[0].prs_new == 0


def test_since_accepts_a_datetime(engine: Engine, tmp_path: Path) -> None:
    repo = make_chain_repo(tmp_path / "calc")
    mine(MinerConfig(source="git"), engine, [str(repo.path)], since=datetime(2030, 1, 1))
    assert _count(engine, PullRequest) == 0
    mine(MinerConfig(source="git"), engine, [str(repo.path)])
    assert _count(engine, PullRequest) == 4
