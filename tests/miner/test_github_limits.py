"""Rate limits, faults and token rotation: every fault the fake GitHub plays is survived or typed."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from prchain.core.errors import MissingCredentials, RateLimited, ServiceUnavailable
from prchain.miner.github import GithubSource
from prchain.miner.limits import OK, PRIMARY, SECONDARY, SERVER, classify
from prchain.miner.tokens import TokenPool
from tests.support.fake_github import FakeGithub
from tests.support.fake_github_data import FakeRepo
from tests.support.github_fixtures import FAKE_TOKEN, SECOND_TOKEN, github_config


def mine(
    fake: FakeGithub, repo: FakeRepo, tmp_path: Path, **fields: object
) -> tuple[GithubSource, list[int]]:
    fake.add_repo(repo)
    source = GithubSource(
        github_config(fake, repo, **fields), repo.full_name, str(tmp_path / "clones")
    )
    return source, [r.number for r in source.pull_requests(None)]


@pytest.fixture
def baseline(fake_github: FakeGithub, chain_github_repo: FakeRepo, tmp_path: Path) -> int:
    """Requests an undisturbed run of the chain repo costs."""
    source, numbers = mine(fake_github, chain_github_repo, tmp_path / "first")
    assert sorted(numbers) == [1, 2, 3, 4]
    fake_github.reset_counts()
    return source.requests_made()


@pytest.mark.parametrize(
    ("kind", "words"),
    [
        ("secondary", "secondary rate limit"),  # 403 + Retry-After
        ("secondary_html", "secondary rate limit"),  # 403 abuse HTML page, no Retry-After
        ("too_many", "secondary rate limit"),  # 429 + Retry-After
        ("bad_gateway", "server error"),  # 502 HTML
        ("graphql_timeout", "server error"),  # 200 with data null and a "timeout" error
        ("primary", "primary rate limit"),  # quota gone until a reset a second ahead
    ],
)
def test_each_fault_is_waited_out(
    fake_github: FakeGithub,
    chain_github_repo: FakeRepo,
    tmp_path: Path,
    baseline: int,
    caplog: pytest.LogCaptureFixture,
    kind: str,
    words: str,
) -> None:
    fake_github.inject(kind, path="/graphql", reset_in=1.0)
    with caplog.at_level(logging.WARNING, logger="prchain.miner.github"):
        source, numbers = mine(fake_github, chain_github_repo, tmp_path)
    assert sorted(numbers) == [1, 2, 3, 4]
    assert source.requests_made() == baseline + 1 == fake_github.total
    assert words in caplog.text and "waiting" in caplog.text


def test_rest_faults_are_retried_too(
    fake_github: FakeGithub, chain_github_repo: FakeRepo, tmp_path: Path, baseline: int
) -> None:
    fake_github.inject("bad_gateway", path="/repos/")
    fake_github.inject("too_many", path="/repos/")
    source, numbers = mine(fake_github, chain_github_repo, tmp_path)
    assert len(numbers) == 4 and source.requests_made() == baseline + 2
    assert fake_github.counts["GET /repos/{owner}/{repo}"] == 3


def test_server_errors_past_the_budget_raise(
    fake_github: FakeGithub, chain_github_repo: FakeRepo, tmp_path: Path
) -> None:
    fake_github.inject("bad_gateway", path="/graphql", times=10)
    with pytest.raises(ServiceUnavailable, match="after 2 retries"):
        mine(fake_github, chain_github_repo, tmp_path, max_retries=2, page_size=5)
    assert (
        fake_github.counts["POST /graphql"] == 3
    )  # the first try and two retries; 5 PRs is the smallest page


def test_a_page_that_keeps_timing_out_is_fetched_smaller(
    fake_github: FakeGithub,
    generated_repo: FakeRepo,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    fake_github.inject(
        "graphql_timeout", path="/graphql", times=3
    )  # the first try and both retries of page 1
    with caplog.at_level(logging.WARNING, logger="prchain.miner.github"):
        _, numbers = mine(fake_github, generated_repo, tmp_path, max_retries=2, page_size=50)
    assert len(numbers) == len(set(numbers)) == 120
    assert "retrying it with 25 PRs" in caplog.text


def test_secondary_limits_past_the_budget_raise(
    fake_github: FakeGithub, chain_github_repo: FakeRepo, tmp_path: Path
) -> None:
    fake_github.inject("secondary_html", path="/graphql", times=10)
    with pytest.raises(RateLimited):
        mine(fake_github, chain_github_repo, tmp_path, max_retries=1)
    assert fake_github.counts["POST /graphql"] == 2


def test_exhausted_quota_waits_for_the_reset(
    fake_github: FakeGithub,
    generated_repo: FakeRepo,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    # A 50-PR page costs 3 points, its reviews' comments 1: after those, 1 point is left.
    fake_github.set_quota(FAKE_TOKEN, remaining=5, resource="graphql", reset_in=1.5)
    with caplog.at_level(logging.WARNING, logger="prchain.miner.github"):
        source, numbers = mine(fake_github, generated_repo, tmp_path, page_size=50)
    assert len(numbers) == 120
    assert "primary rate limit (graphql) reached on all 1 token(s)" in caplog.text
    # The pool saw 1 point remaining and paced itself on the next page's 3 points, so no request
    # was spent on a refusal: 1 REST lookup, 3 pages + 3 review-comment queries + 2 overflows, and
    # 1 REST patch fallback.
    assert source.requests_made() == fake_github.total == 1 + 8 + 1


def test_tokens_rotate_before_waiting(
    fake_github: FakeGithub,
    generated_repo: FakeRepo,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", f"{FAKE_TOKEN}, {SECOND_TOKEN}")
    fake_github.inject("primary", path="/graphql", reset_in=3600)
    with caplog.at_level(logging.WARNING, logger="prchain.miner.github"):
        _, numbers = mine(fake_github, generated_repo, tmp_path, max_wait_seconds=5)
    assert len(numbers) == 120
    assert fake_github.by_token[SECOND_TOKEN] >= 6  # every GraphQL request after the refusal
    assert "token #1 is out of graphql quota; switching to token #2" in caplog.text
    assert FAKE_TOKEN not in caplog.text and SECOND_TOKEN not in caplog.text


def test_a_reset_too_far_away_raises(
    fake_github: FakeGithub, chain_github_repo: FakeRepo, tmp_path: Path
) -> None:
    fake_github.set_quota(FAKE_TOKEN, remaining=0, resource="graphql", reset_in=3600)
    with pytest.raises(RateLimited, match="out of graphql quota"):
        mine(fake_github, chain_github_repo, tmp_path, max_wait_seconds=5)


# ---------------------------------------------------------------- the rules themselves


def test_classify_follows_githubs_documented_rules() -> None:
    assert classify(200, {}, {"data": {}}).kind == OK
    secondary = classify(403, {"retry-after": "30", "x-ratelimit-remaining": "0"}, {"message": "x"})
    assert secondary.kind == SECONDARY and secondary.retry_after == 30
    primary = classify(
        403,
        {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "1700000000"},
        {"message": "API rate limit exceeded"},
    )
    assert primary.kind == PRIMARY and primary.reset_at == 1700000000
    assert classify(429, {"x-ratelimit-remaining": "10"}, None).kind == SECONDARY
    assert classify(403, {}, {"data": "<html>abuse detection mechanism</html>"}).kind == SECONDARY
    assert classify(403, {}, {"message": "Resource not accessible by integration"}).kind == "failed"
    assert (
        classify(
            200, {"x-ratelimit-reset": "5"}, {"errors": [{"type": "RATE_LIMITED", "message": "m"}]}
        ).kind
        == PRIMARY
    )
    assert (
        classify(
            200, {}, {"data": None, "errors": [{"message": "Something went wrong ... timeout"}]}
        ).kind
        == SERVER
    )
    assert classify(504, {}, {"data": "<html>"}).kind == SERVER


def test_token_pool(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GH_TOKENS", " a , b ,,")
    pool = TokenPool.from_env("GH_TOKENS")
    assert pool.tokens == ["a", "b"] and pool.pick("core", now=0) == (0, 0.0)
    pool.exhaust(0, "core", reset_at=100)
    assert pool.pick("core", now=50) == (1, 0.0) and pool.pick("graphql", now=50) == (1, 0.0)
    pool.observe(1, "core", {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "80"})
    assert pool.pick("core", now=50) == (None, 30.0)
    assert pool.pick("core", now=90) == (1, 0.0)
    monkeypatch.setenv("GH_TOKENS", " , ")
    with pytest.raises(MissingCredentials, match="export GH_TOKENS"):
        TokenPool.from_env("GH_TOKENS")
