"""The fake GitHub itself, checked with the real PyGithub client: it must look like GitHub."""

from __future__ import annotations

import pytest
from github import Auth, BadCredentialsException, Github, GithubException, UnknownObjectException

from prchain.miner import graphql as gq
from tests.support.fake_github import FakeGithub
from tests.support.fake_github_data import FakeRepo
from tests.support.fake_graphql import decode_cursor
from tests.support.github_fixtures import FAKE_TOKEN


@pytest.fixture
def gh(fake_github: FakeGithub, generated_repo: FakeRepo) -> Github:
    fake_github.add_repo(generated_repo)
    return Github(
        base_url=fake_github.url,
        auth=Auth.Token(FAKE_TOKEN),
        retry=None,
        per_page=30,
        seconds_between_requests=None,
        seconds_between_writes=None,
    )


def test_rest_pulls_paginate_with_link_headers(
    gh: Github, fake_github: FakeGithub, generated_repo: FakeRepo
) -> None:
    repo = gh.get_repo("acme/widgets")
    assert repo.default_branch == "main" and repo.full_name == "acme/widgets"
    assert (
        repo.get_pulls(state="all").totalCount == 120
    )  # read from rel="last" of a per_page=1 request
    pulls = repo.get_pulls(state="all", sort="updated", direction="asc")
    numbers = [p.number for p in pulls]
    assert numbers == sorted(
        generated_repo.prs, key=lambda n: (generated_repo.prs[n].updated_at, n)
    )
    assert (
        fake_github.counts["GET /repos/{owner}/{repo}/pulls"] == 1 + 4
    )  # 120 at 30 a page, via rel="next"
    first = repo.get_pull(21)
    assert first.merged and first.merge_commit_sha == generated_repo.prs[21].merge_sha
    assert [f.filename for f in first.get_files()] == [f.path for f in generated_repo.prs[21].files]


def test_rest_issues_list_prs_too(gh: Github, generated_repo: FakeRepo) -> None:
    items = list(gh.get_repo("acme/widgets").get_issues(state="all"))
    assert len(items) == len(generated_repo.prs) + len(generated_repo.issues)
    assert {i.number for i in items if i.pull_request is None} == set(generated_repo.issues)


def test_rate_limit_headers_on_every_response(gh: Github, fake_github: FakeGithub) -> None:
    gh.get_repo("acme/widgets")
    remaining, limit = gh.rate_limiting
    assert (remaining, limit) == (4999, 5000) and gh.rate_limiting_resettime > 0
    assert gh.get_rate_limit().resources.core.limit == 5000


def test_graphql_pages_with_keyset_cursors(gh: Github, generated_repo: FakeRepo) -> None:
    variables = {"owner": "acme", "name": "widgets", "first": 100, "after": None}
    _, data = gh.requester.graphql_query(gq.PR_PAGE_QUERY, variables)
    conn = data["data"]["repository"]["pullRequests"]
    assert len(conn["nodes"]) == 100 and conn["pageInfo"]["hasNextPage"]
    last = conn["nodes"][-1]
    assert decode_cursor(conn["pageInfo"]["endCursor"]) == [last["updatedAt"], last["number"]]
    _, rest = gh.requester.graphql_query(
        gq.PR_PAGE_QUERY, {**variables, "after": conn["pageInfo"]["endCursor"]}
    )
    assert len(rest["data"]["repository"]["pullRequests"]["nodes"]) == 20


def test_graphql_rejects_what_github_rejects(gh: Github) -> None:
    with pytest.raises(GithubException) as caught:
        gh.requester.graphql_query(
            'query { repository(owner: "acme", name: "widgets") { nope } }', {}
        )
    assert "Field 'nope' doesn't exist on type 'Repository'" in str(caught.value.data)
    with pytest.raises(GithubException) as caught:
        gh.requester.graphql_query(
            '{ repository(owner: "acme", name: "widgets") { pullRequests(first: 101) { totalCount } } }',
            {},
        )
    assert "exceeds the `first` limit of 100" in str(caught.value.data)
    with pytest.raises(UnknownObjectException):
        gh.requester.graphql_query(gq.ISSUE_PAGE_QUERY, {"owner": "acme", "name": "missing"})


def test_unknown_repo_bad_token_and_unknown_route(fake_github: FakeGithub, gh: Github) -> None:
    with pytest.raises(UnknownObjectException):
        gh.get_repo("acme/missing")
    intruder = Github(base_url=fake_github.url, auth=Auth.Token("ghp_wrong"), retry=None)
    with pytest.raises(BadCredentialsException):
        intruder.get_repo("acme/widgets")
    status, _, _ = gh.requester.requestJson("GET", "/repos/acme/widgets/nothing-here")
    assert status == 404
    assert fake_github.counts["GET /repos/{owner}/{repo}"] == 2


def test_oversized_diffs_are_refused_like_github(gh: Github, fake_github: FakeGithub) -> None:
    fake_github.diff_max_bytes = 1000
    status, _, body = gh.requester.requestJson(
        "GET", "/repos/acme/widgets/pulls/4", headers={"Accept": "application/vnd.github.v3.diff"}
    )
    assert status == 406 and "diff exceeded" in body
    status, _, body = gh.requester.requestJson(
        "GET", "/repos/acme/widgets/pulls/1", headers={"Accept": "application/vnd.github.v3.diff"}
    )
    assert status == 200 and body.startswith("diff --git a/pkg/mod_1.py")
