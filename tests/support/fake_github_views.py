"""How the fake GitHub shows its data: REST JSON payloads and GraphQL objects, shaped like GitHub's.

GraphQL objects are dicts whose connection fields are callables of the field's arguments, so the
engine in `fake_graphql` resolves only what a query asks for.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Any

from tests.support.fake_github_data import (
    FakeComment,
    FakeCommit,
    FakeIssue,
    FakePR,
    FakeRepo,
    FakeReview,
)
from tests.support.fake_graphql import GraphQLError, connection

Obj = dict[str, Any]


def iso(value: datetime | None) -> str | None:
    return value.isoformat(timespec="seconds") + "Z" if value else None


# ---------------------------------------------------------------- REST


def user_json(login: str) -> Obj:
    return {
        "login": login,
        "id": abs(hash(login)) % 10**7,
        "node_id": f"U_{login}",
        "type": "User",
        "site_admin": False,
        "avatar_url": f"https://avatars.githubusercontent.com/{login}",
        "html_url": f"https://github.com/{login}",
        "url": f"https://api.github.com/users/{login}",
    }


def repo_json(repo: FakeRepo, api: str) -> Obj:
    owner, name = repo.full_name.split("/")
    return {
        "id": repo.id,
        "node_id": f"R_{repo.id}",
        "name": name,
        "full_name": repo.full_name,
        "private": False,
        "owner": user_json(owner),
        "html_url": f"https://github.com/{repo.full_name}",
        "description": "A fake repository",
        "fork": False,
        "url": f"{api}/repos/{repo.full_name}",
        "clone_url": f"https://github.com/{repo.full_name}.git",
        "default_branch": repo.default_branch,
        "has_issues": True,
        "archived": False,
        "disabled": False,
        "open_issues_count": sum(i.state == "OPEN" for i in repo.issues.values()),
        "visibility": "public",
        "created_at": "2023-12-31T09:00:00Z",
        "updated_at": "2024-06-01T09:00:00Z",
        "pushed_at": "2024-06-01T09:00:00Z",
    }


def pr_json(repo: FakeRepo, pr: FakePR, api: str) -> Obj:
    url = f"{api}/repos/{repo.full_name}/pulls/{pr.number}"

    def branch(ref, sha):
        return {
            "label": f"acme:{ref}",
            "ref": ref,
            "sha": sha,
            "user": user_json(pr.author),  # noqa: E731
            "repo": repo_json(repo, api),
        }

    return {
        "url": url,
        "id": 10**6 + pr.number,
        "node_id": f"PR_{pr.number}",
        "number": pr.number,
        "html_url": f"https://github.com/{repo.full_name}/pull/{pr.number}",
        "diff_url": f"https://github.com/{repo.full_name}/pull/{pr.number}.diff",
        "state": "open" if pr.state == "OPEN" else "closed",
        "locked": False,
        "title": pr.title,
        "user": user_json(pr.author),
        "body": pr.body,
        "created_at": iso(pr.created_at),
        "updated_at": iso(pr.updated_at),
        "closed_at": iso(pr.closed_at),
        "merged_at": iso(pr.merged_at),
        "merge_commit_sha": pr.merge_sha,
        "draft": False,
        "head": branch(pr.head_ref or f"pr-{pr.number}", pr.head_sha),
        "base": branch(pr.base_ref, pr.base_sha),
        "merged": pr.state == "MERGED",
        "comments": len(pr.comments),
        "review_comments": sum(len(r.comments) for r in pr.reviews),
        "commits": len(pr.commits),
        "additions": pr.additions,
        "deletions": pr.deletions,
        "changed_files": len(pr.files),
        "issue_url": f"{api}/repos/{repo.full_name}/issues/{pr.number}",
    }


def issue_json(repo: FakeRepo, item: FakeIssue | FakePR, api: str) -> Obj:
    """The issues list shows PRs too, marked with a `pull_request` key, as GitHub does."""
    out = {
        "url": f"{api}/repos/{repo.full_name}/issues/{item.number}",
        "id": 2 * 10**6 + item.number,
        "node_id": f"I_{item.number}",
        "number": item.number,
        "title": item.title,
        "body": item.body,
        "user": user_json(item.author),
        "state": "open" if item.state == "OPEN" else "closed",
        "created_at": iso(item.created_at),
        "updated_at": iso(item.updated_at),
        "closed_at": iso(item.closed_at),
        "labels": [],
        "comments": len(getattr(item, "comments", [])),
    }
    if isinstance(item, FakePR):
        out["pull_request"] = {
            "url": f"{api}/repos/{repo.full_name}/pulls/{item.number}",
            "merged_at": iso(item.merged_at),
        }
    return out


def file_json(repo: FakeRepo, pr: FakePR, index: int) -> Obj:
    f = pr.files[index]
    status = {"ADDED": "added", "DELETED": "removed", "RENAMED": "renamed"}.get(
        f.change_type, "modified"
    )
    return {
        "sha": pr.head_sha,
        "filename": f.path,
        "status": status,
        "additions": f.additions,
        "deletions": f.deletions,
        "changes": f.additions + f.deletions,
        "blob_url": f"https://github.com/{repo.full_name}/blob/{pr.head_sha}/{f.path}",
    }


# ---------------------------------------------------------------- GraphQL


def actor(login: str | None) -> Obj | None:
    return (
        {"__typename": "User", "login": login, "url": f"https://github.com/{login}"}
        if login
        else None
    )


def commit_obj(c: FakeCommit) -> Obj:
    return {
        "__typename": "Commit",
        "oid": c.oid,
        "message": c.message,
        "messageHeadline": c.message.split("\n")[0],
        "authoredDate": iso(c.authored_at),
        "committedDate": iso(c.authored_at),
        "author": {
            "__typename": "GitActor",
            "name": c.author,
            "email": f"{c.author}@example.com",
            "user": actor(c.author),
        },
    }


def comment_obj(c: FakeComment, typename: str = "IssueComment") -> Obj:
    obj = {
        "__typename": typename,
        "id": f"IC_{c.id}",
        "databaseId": c.id,
        "body": c.body,
        "createdAt": iso(c.created_at),
        "author": actor(c.author),
    }
    if typename == "PullRequestReviewComment":
        obj["path"] = c.path
    return obj


def review_obj(r: FakeReview) -> Obj:
    return {
        "__typename": "PullRequestReview",
        "id": f"PRR_{r.id}",
        "databaseId": r.id,
        "body": r.body,
        "state": r.state,
        "submittedAt": iso(r.submitted_at),
        "author": actor(r.author),
        "comments": lambda a: connection(
            "comments", r.comments, a, node=lambda c: comment_obj(c, "PullRequestReviewComment")
        ),
    }


class GraphView:
    """The GraphQL object graph of the repositories a server holds."""

    def __init__(self, repos: dict[str, FakeRepo]) -> None:
        self.repos = repos

    def root(self, rate_limit: Obj | None = None) -> Obj:
        return {
            "__typename": "Query",
            "repository": self.repository,
            "node": self.node,
            "nodes": self.nodes,
            "viewer": {"__typename": "User", "login": "fake-viewer"},
            "rateLimit": {"__typename": "RateLimit", **(rate_limit or {})},
        }

    def nodes(self, args: Obj) -> list[Obj | None]:
        """`nodes(ids:)`: GitHub answers null for an id it cannot resolve (plus an error)."""
        ids = args.get("ids") or []
        if len(ids) > 100:
            raise GraphQLError("You may not request more than 100 nodes at once.", "MAX_NODES")
        reviews = {
            f"PRR_{review.id}": review
            for repo in self.repos.values()
            for pr in repo.prs.values()
            for review in pr.reviews
        }
        return [review_obj(reviews[i]) if i in reviews else None for i in ids]

    def repository(self, args: Obj) -> Obj:
        full = f"{args.get('owner')}/{args.get('name')}"
        if full.lower() not in self.repos:
            raise GraphQLError(
                f"Could not resolve to a Repository with the name '{full}'.", "NOT_FOUND"
            )
        return self.repo_obj(self.repos[full.lower()])

    def node(self, args: Obj) -> Obj:
        for repo in self.repos.values():
            for pr in repo.prs.values():
                for review in pr.reviews:
                    if f"PRR_{review.id}" == args.get("id"):
                        return review_obj(review)
        raise GraphQLError(
            f"Could not resolve to a node with the global id of '{args.get('id')}'", "NOT_FOUND"
        )

    def repo_obj(self, repo: FakeRepo) -> Obj:
        def pr_by_number(a: Obj) -> Obj:
            if a.get("number") not in repo.prs:
                raise GraphQLError(
                    f"Could not resolve to a PullRequest with the number of {a.get('number')}.",
                    "NOT_FOUND",
                )
            return self.pr_obj(repo, repo.prs[a["number"]])

        return {
            "__typename": "Repository",
            "id": f"R_{repo.id}",
            "nameWithOwner": repo.full_name,
            "name": repo.full_name.split("/")[1],
            "owner": actor(repo.full_name.split("/")[0]),
            "pullRequests": lambda a: self._ordered(
                "pullRequests", list(repo.prs.values()), a, lambda p: self.pr_obj(repo, p)
            ),
            "issues": lambda a: self._ordered(
                "issues", self._since(repo, a), a, lambda i: self.issue_obj(repo, i)
            ),
            "pullRequest": pr_by_number,
            "issue": lambda a: (
                self.issue_obj(repo, repo.issues[a["number"]])
                if a.get("number") in repo.issues
                else None
            ),
        }

    @staticmethod
    def _since(repo: FakeRepo, args: Obj) -> list[FakeIssue]:
        since = (args.get("filterBy") or {}).get("since")
        items = list(repo.issues.values())
        return [i for i in items if iso(i.updated_at) >= since] if since else items  # type: ignore[operator]

    @staticmethod
    def _ordered(name: str, items: list[Any], args: Obj, node: Callable[[Any], Obj]) -> Obj:
        """GitHub's orderBy with keyset cursors over (sort value, number)."""
        order = args.get("orderBy") or {"field": "CREATED_AT", "direction": "ASC"}
        attr = {"UPDATED_AT": "updated_at", "CREATED_AT": "created_at"}.get(
            str(order.get("field")), "created_at"
        )
        desc = order.get("direction") == "DESC"
        key = lambda _i, item: [iso(getattr(item, attr)), item.number]  # noqa: E731
        items = sorted(items, key=lambda item: key(0, item), reverse=desc)
        return connection(name, items, args, key=key, descending=desc, node=node)

    def pr_obj(self, repo: FakeRepo, pr: FakePR) -> Obj:
        return {
            "__typename": "PullRequest",
            "id": f"PR_{pr.number}",
            "number": pr.number,
            "title": pr.title,
            "body": pr.body,
            "state": pr.state,
            "createdAt": iso(pr.created_at),
            "updatedAt": iso(pr.updated_at),
            "mergedAt": iso(pr.merged_at),
            "closedAt": iso(pr.closed_at),
            "author": actor(pr.author),
            "baseRefName": pr.base_ref,
            "baseRefOid": pr.base_sha,
            "headRefName": pr.head_ref,
            "headRefOid": pr.head_sha,
            "merged": pr.state == "MERGED",
            "mergeCommit": {"__typename": "Commit", "oid": pr.merge_sha} if pr.merge_sha else None,
            "additions": pr.additions,
            "deletions": pr.deletions,
            "changedFiles": len(pr.files),
            "url": f"https://github.com/{repo.full_name}/pull/{pr.number}",
            "repository": lambda a: self.repo_obj(repo),
            "files": lambda a: connection(
                "files",
                pr.files,
                a,
                node=lambda f: {
                    "__typename": "PullRequestChangedFile",
                    "path": f.path,
                    "additions": f.additions,
                    "deletions": f.deletions,
                    "changeType": f.change_type,
                },
            ),
            "commits": lambda a: connection(
                "commits",
                pr.commits,
                a,
                node=lambda c: {"__typename": "PullRequestCommit", "commit": commit_obj(c)},
            ),
            "comments": lambda a: connection("comments", pr.comments, a, node=comment_obj),
            "reviews": lambda a: connection("reviews", pr.reviews, a, node=review_obj),
            "closingIssuesReferences": lambda a: connection(
                "closingIssuesReferences",
                [repo.issues[i] for i in pr.closing_issues],
                a,
                node=lambda i: self.issue_obj(repo, i),
            ),
            "timelineItems": lambda a: self._timeline(repo, pr, a),
        }

    def _timeline(self, repo: FakeRepo, pr: FakePR, args: Obj) -> Obj:
        wanted = args.get("itemTypes")
        events = [] if wanted and "CROSS_REFERENCED_EVENT" not in wanted else pr.cross_refs
        return connection(
            "timelineItems",
            events,
            args,
            node=lambda e: {
                "__typename": "CrossReferencedEvent",
                "willCloseTarget": False,
                "isCrossRepository": False,
                "source": self.pr_obj(repo, repo.prs[e[1]])
                if e[0] == "PullRequest"
                else self.issue_obj(repo, repo.issues[e[1]]),
            },
        )

    def issue_obj(self, repo: FakeRepo, issue: FakeIssue) -> Obj:
        return {
            "__typename": "Issue",
            "id": f"I_{issue.number}",
            "number": issue.number,
            "title": issue.title,
            "body": issue.body,
            "state": issue.state,
            "createdAt": iso(issue.created_at),
            "updatedAt": iso(issue.updated_at),
            "closedAt": iso(issue.closed_at),
            "author": actor(issue.author),
            "url": f"https://github.com/{repo.full_name}/issues/{issue.number}",
            "repository": lambda a: self.repo_obj(repo),
        }
