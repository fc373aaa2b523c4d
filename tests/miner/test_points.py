"""GraphQL point costs: GitHub's documented rule (checked against its own worked examples), every
query the miner sends validated against GitHub's public schema, and the fake charging by the rule."""

from __future__ import annotations

import gzip
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import requests
from graphql import GraphQLSchema, build_schema, parse, validate

from prchain.miner import graphql as gq
from prchain.miner.points import NODE_LIMIT, query_cost
from tests.support.fake_github import FakeGithub
from tests.support.fake_github_data import FakeRepo

DATA = Path(__file__).resolve().parents[1] / "data"
VECTORS = json.loads((DATA / "graphql-points-vectors.json").read_text())["vectors"]


@pytest.mark.parametrize("vector", VECTORS, ids=[v["id"] for v in VECTORS])
def test_documented_examples(vector: dict[str, Any]) -> None:
    cost = query_cost(vector["query"])
    assert (cost.requests, cost.points, cost.nodes) == (
        vector["requests"],
        vector["points"],
        vector["nodes"],
    )


def test_points_round_half_up_and_never_drop_below_one() -> None:
    assert query_cost("query { viewer { login } }").points == 1
    page = (
        "query { viewer { repositories(first: 50) { nodes { issues(first: 1) { totalCount } } } } }"
    )
    assert query_cost(page).requests == 51 and query_cost(page).points == 1
    # 1 + 149 = 150 requests: 1.5 rounds up to 2 (round() would give 2 too; 250 would give 2, not 3).
    half = "query { viewer { repositories(first: 100) { nodes { a: issues(first: 1) { totalCount } b: issues(first: 1) { totalCount } } } } }"
    assert query_cost(half).requests == 201 and query_cost(half).points == 2


def test_variables_defaults_aliases_and_fragments_count() -> None:
    query = (
        'query Q($n: Int = 30) { repository(owner: "o", name: "r") { '
        "a: pullRequests(first: $n) { nodes { ...F } } b: pullRequests(last: 2) { nodes { ...F } } } } "
        "fragment F on PullRequest { files(first: 10) { nodes { path } } }"
    )
    default = query_cost(query)
    assert (default.requests, default.nodes) == (1 + 30 + 1 + 2, 30 + 300 + 2 + 20)
    assert query_cost(query, {"n": 50}).requests == 1 + 50 + 1 + 2


# ---------------------------------------------------------------- the miner's own queries


def miner_queries() -> dict[str, str]:
    queries = {
        "PR page": gq.PR_PAGE_QUERY,
        "recent PRs": gq.PR_RECENT_QUERY,
        "PR batch": gq.pr_batch_query([1, 2, 3]),
        "review comments": gq.REVIEW_COMMENTS_QUERY,
        "more review comments": gq.MORE_REVIEW_COMMENTS_QUERY,
        "issue page": gq.ISSUE_PAGE_QUERY,
    }
    queries.update({f"more {name}": gq.connection_query(name) for name in gq.PR_CONNECTIONS})
    return queries


@cache
def github_schema() -> GraphQLSchema:
    # octokit/graphql-schema's copy of GitHub's public schema (schema.graphql, 2025-02-27). GitHub's
    # schema breaks two of graphql-core's own rules (two EnterpriseOwnerInfo fields are declared
    # twice; some implementations deprecate fields their interface does not), so it is taken as
    # valid: the check here is our queries against it, not the schema itself.
    sdl = gzip.decompress((DATA / "github-schema.graphql.gz").read_bytes()).decode()
    return build_schema(sdl, assume_valid_sdl=True, assume_valid=True)


@pytest.mark.parametrize("name", sorted(miner_queries()))
def test_every_miner_query_validates_against_githubs_schema(name: str) -> None:
    errors = validate(github_schema(), parse(miner_queries()[name]))
    assert errors == [], [e.message for e in errors]


def test_the_pr_page_costs_three_points_per_fifty_prs() -> None:
    page = query_cost(gq.PR_PAGE_QUERY, {"owner": "o", "name": "r", "first": 50})
    # pullRequests once, then six connections per PR and none nested deeper.
    assert page.requests == 1 + 6 * 50 and page.points == 3
    assert page.nodes < NODE_LIMIT
    assert query_cost(gq.REVIEW_COMMENTS_QUERY, {"ids": ["x"] * 100}).points == 1


# ---------------------------------------------------------------- the fake charges by the rule


def _post(
    fake: FakeGithub, query: str, variables: dict[str, Any] | None = None
) -> requests.Response:
    return requests.post(
        f"{fake.url}/graphql",
        json={"query": query, "variables": variables or {}},
        headers={"Authorization": "bearer ghp_fake_token_1"},
        timeout=10,
    )


def test_the_fake_charges_points_and_reports_them(
    fake_github: FakeGithub, generated_repo: FakeRepo
) -> None:
    owner, name = generated_repo.full_name.split("/")
    variables = {"owner": owner, "name": name, "first": 50}
    first = _post(fake_github, gq.PR_PAGE_QUERY, variables)
    second = _post(fake_github, gq.PR_PAGE_QUERY, variables)
    assert first.json()["data"]["rateLimit"]["cost"] == 3
    used = [int(r.headers["x-ratelimit-used"]) for r in (first, second)]
    assert used[1] - used[0] == 3
    assert second.json()["data"]["rateLimit"]["remaining"] == int(
        second.headers["x-ratelimit-remaining"]
    )


def test_the_fake_refuses_a_query_over_the_node_limit(fake_github: FakeGithub) -> None:
    heavy = (
        "query { viewer { repositories(first: 100) { nodes { issues(first: 100) { nodes { "
        "comments(first: 100) { nodes { body } } } } } } } }"
    )
    reply = _post(fake_github, heavy).json()
    assert reply["errors"][0]["type"] == "MAX_NODE_LIMIT_EXCEEDED"
    assert "1,010,100" in reply["errors"][0]["message"] and "data" not in reply
