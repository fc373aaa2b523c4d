"""The GraphQL queries the GitHub source sends, and the turning of their answers into records.

One page of pull requests carries almost everything a PR record needs: body, commits with
messages, files, comments, reviews, closing issues and timeline cross-references. So 50 PRs cost
one request.

The shapes are chosen for GitHub's point cost (see `prchain/miner/points.py`), not only for the request
count:
- Each connection nested in a PR costs one request per PR on the page.
- A connection nested two deep costs one request per (PR × review). Review comments nested inside
  reviews were ~1,000 of the ~1,300 requests of a 50-PR page.
- So review comments come in a follow-up query, by review id (`nodes(ids:)`), only for pages that
  have reviews.
- Inner connections that overflow their first page are fetched afterwards, one connection at a
  time.

Every query also asks for `rateLimit { cost remaining resetAt }`, so the miner paces itself on
points and reports them. Texts only; no HTTP here.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from prchain.miner.source import (
    CommentRecord,
    CommitRecord,
    FileRecord,
    IssueRecord,
    PRRecord,
    TimelineLink,
)

PAGE_INFO = "pageInfo { hasNextPage endCursor }"
RATE_LIMIT = "rateLimit { cost remaining resetAt }"
REPO_REF = "repository { nameWithOwner }"

# Selections of the connections nested in a pull request: (first page size, node fields).
# Sizes keep one 100-PR page under GitHub's 500,000-node limit and its query timeout.
PR_CONNECTIONS: dict[str, tuple[int, str]] = {
    "files": (100, "path additions deletions changeType"),
    "commits": (100, "commit { oid message authoredDate author { name user { login } } }"),
    "comments": (50, "databaseId body createdAt author { login }"),
    "reviews": (20, "id databaseId body state submittedAt author { login }"),
    "closingIssuesReferences": (10, "number " + REPO_REF),
    "timelineItems": (
        25,
        "__typename ... on CrossReferencedEvent { willCloseTarget source { __typename "
        "... on PullRequest { number "
        + REPO_REF
        + " } ... on Issue { number "
        + REPO_REF
        + " } } }",
    ),
}
CONNECTION_ARGS = {"timelineItems": "itemTypes: [CROSS_REFERENCED_EVENT]"}
REVIEW_COMMENT_FIELDS = "databaseId body createdAt path author { login }"


def _connection(name: str, first: int, after: str | None = None) -> str:
    size, fields = PR_CONNECTIONS[name]
    args = (
        [f"first: {first or size}"]
        + ([f"after: {after}"] if after else [])
        + ([CONNECTION_ARGS[name]] if name in CONNECTION_ARGS else [])
    )
    return f"{name}({', '.join(args)}) {{ totalCount {PAGE_INFO} nodes {{ {fields} }} }}"


PR_FIELDS = (
    "fragment PRFields on PullRequest { number title body state createdAt updatedAt mergedAt closedAt "
    "author { login } baseRefName baseRefOid headRefName headRefOid mergeCommit { oid } additions deletions "
    + " ".join(_connection(name, 0) for name in PR_CONNECTIONS)
    + " }"
)

PR_PAGE_QUERY = (
    "query PullRequestPage($owner: String!, $name: String!, $first: Int!, $after: String) { "
    "repository(owner: $owner, name: $name) { pullRequests(first: $first, after: $after, "
    "orderBy: {field: UPDATED_AT, direction: ASC}) { totalCount "
    + PAGE_INFO
    + " nodes { ...PRFields } } } "
    + RATE_LIMIT
    + " } "
    + PR_FIELDS
)

# Incremental runs: newest changes first, numbers only, until we pass the cursor...
PR_RECENT_QUERY = (
    "query RecentPullRequests($owner: String!, $name: String!, $after: String) { "
    "repository(owner: $owner, name: $name) { pullRequests(first: 100, after: $after, "
    "orderBy: {field: UPDATED_AT, direction: DESC}) { "
    + PAGE_INFO
    + " nodes { number updatedAt } } } "
    + RATE_LIMIT
    + " }"
)


def pr_batch_query(numbers: list[int]) -> str:
    """...then those PRs in full, many per request through aliases."""
    fields = " ".join(f"pr{n}: pullRequest(number: {n}) {{ ...PRFields }}" for n in numbers)
    return (
        "query PullRequestBatch($owner: String!, $name: String!) { "
        f"repository(owner: $owner, name: $name) {{ {fields} }} {RATE_LIMIT} }} " + PR_FIELDS
    )


def connection_query(name: str) -> str:
    """The rest of one overflowing connection of one PR."""
    return (
        f"query PullRequest_{name}($owner: String!, $name: String!, $number: Int!, $after: String) {{ "
        "repository(owner: $owner, name: $name) { pullRequest(number: $number) { "
        + _connection(name, 100, "$after")
        + " } } "
        + RATE_LIMIT
        + " }"
    )


REVIEW_COMMENTS_QUERY = (
    "query ReviewComments($ids: [ID!]!) { nodes(ids: $ids) { ... on PullRequestReview { id "
    f"comments(first: 100) {{ {PAGE_INFO} nodes {{ {REVIEW_COMMENT_FIELDS} }} }} }} }} {RATE_LIMIT} }}"
)
"""The first 100 comments of up to 100 reviews: under a list field, not a connection, one request."""
REVIEWS_PER_QUERY = 100

MORE_REVIEW_COMMENTS_QUERY = (
    "query MoreReviewComments($id: ID!, $after: String) { node(id: $id) { "
    "... on PullRequestReview { "
    f"comments(first: 100, after: $after) {{ {PAGE_INFO} nodes {{ {REVIEW_COMMENT_FIELDS} }} }} }} }} "
    f"{RATE_LIMIT} }}"
)

ISSUE_PAGE_QUERY = (
    "query IssuePage($owner: String!, $name: String!, $after: String, $since: DateTime) { "
    "repository(owner: $owner, name: $name) { issues(first: 100, after: $after, filterBy: {since: $since}, "
    "orderBy: {field: UPDATED_AT, direction: ASC}) { "
    + PAGE_INFO
    + " nodes { number title body state createdAt updatedAt closedAt author { login } } } } "
    + RATE_LIMIT
    + " }"
)


# ---------------------------------------------------------------- answers → records


def parse_time(value: str | None) -> datetime | None:
    """GitHub's ISO 8601 (with Z) → naive UTC."""
    if not value:
        return None
    return datetime.fromisoformat(value.replace("Z", "+00:00")).astimezone(UTC).replace(tzinfo=None)


def format_time(value: datetime) -> str:
    return value.replace(tzinfo=None).isoformat(timespec="seconds") + "Z"


def _login(node: dict[str, Any] | None) -> str | None:
    author = (node or {}).get("author")
    return author.get("login") if author else None


CHANGE_TYPES = {"ADDED": "added", "DELETED": "removed", "RENAMED": "renamed", "COPIED": "added"}


def file_record(node: dict[str, Any]) -> FileRecord:
    status = CHANGE_TYPES.get(node.get("changeType", ""), "modified")
    return FileRecord(node["path"], status, node.get("additions") or 0, node.get("deletions") or 0)


def commit_record(node: dict[str, Any]) -> CommitRecord:
    commit = node["commit"]
    author = commit.get("author") or {}
    login = (author.get("user") or {}).get("login") or author.get("name")
    return CommitRecord(
        commit["oid"], commit.get("message") or "", login, parse_time(commit.get("authoredDate"))
    )


def comment_record(node: dict[str, Any], kind: str = "comment") -> CommentRecord:
    created = node.get("createdAt") or node.get("submittedAt")
    external = f"{kind}:{node.get('databaseId')}"
    return CommentRecord(
        kind, external, node.get("body") or "", _login(node), parse_time(created), node.get("path")
    )


def link_records(pr: dict[str, Any]) -> list[TimelineLink]:
    links = [
        TimelineLink(
            "closing_issue",
            n["repository"]["nameWithOwner"],
            n["number"],
            "issue",
            "closing issue reference",
        )
        for n in pr["closingIssuesReferences"]["nodes"]
    ]
    for event in pr["timelineItems"]["nodes"]:
        source = event.get("source") or {}
        if event.get("__typename") != "CrossReferencedEvent" or "number" not in source:
            continue
        kind = "pr" if source.get("__typename") == "PullRequest" else "issue"
        repo = source["repository"]["nameWithOwner"]
        evidence = f"cross-referenced from {repo}#{source['number']}" + (
            " (will close)" if event.get("willCloseTarget") else ""
        )
        links.append(
            TimelineLink("cross_reference", repo, source["number"], kind, evidence, incoming=True)
        )
    return links


def review_records(pr: dict[str, Any]) -> list[CommentRecord]:
    out: list[CommentRecord] = []
    for review in pr["reviews"]["nodes"]:
        if review.get("body"):
            out.append(comment_record(review, "review"))
        comments = review.get("comments") or {"nodes": []}  # filled in by the follow-up query
        out.extend(comment_record(c, "review_comment") for c in comments["nodes"])
    return out


def pr_record(pr: dict[str, Any]) -> PRRecord:
    """A fully paginated PR node → PRRecord (the patch is filled in later, from the clone)."""
    return PRRecord(
        number=pr["number"],
        title=pr.get("title") or "",
        body=pr.get("body") or "",
        state=str(pr.get("state", "OPEN")).lower(),
        author=_login(pr),
        created_at=parse_time(pr.get("createdAt")),
        merged_at=parse_time(pr.get("mergedAt")),
        closed_at=parse_time(pr.get("closedAt")),
        updated_at=parse_time(pr.get("updatedAt")),
        base_ref=pr.get("baseRefName"),
        base_sha=pr.get("baseRefOid"),
        head_sha=pr.get("headRefOid"),
        head_ref=pr.get("headRefName"),
        merge_commit_sha=(pr.get("mergeCommit") or {}).get("oid"),
        additions=pr.get("additions") or 0,
        deletions=pr.get("deletions") or 0,
        files=[file_record(n) for n in pr["files"]["nodes"]],
        commits=[commit_record(n) for n in pr["commits"]["nodes"]],
        comments=[comment_record(n) for n in pr["comments"]["nodes"]] + review_records(pr),
        links=link_records(pr),
    )


def issue_record(node: dict[str, Any]) -> IssueRecord:
    return IssueRecord(
        number=node["number"],
        title=node.get("title") or "",
        body=node.get("body") or "",
        state=str(node.get("state", "OPEN")).lower(),
        author=_login(node),
        created_at=parse_time(node.get("createdAt")),
        closed_at=parse_time(node.get("closedAt")),
        updated_at=parse_time(node.get("updatedAt")),
    )
