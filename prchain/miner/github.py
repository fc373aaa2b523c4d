"""GitHub as a PR source: PRs and issues by bulk GraphQL (every overflowing inner connection
fetched in full), patches from a local bare clone with the REST API as fallback. All HTTP goes
through `prchain.miner.github_client.GithubClient`."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from datetime import datetime
from typing import Any

from prchain.core.errors import GitError, RepoNotFound, ServiceUnavailable
from prchain.miner import graphql as gq
from prchain.miner.clone import CloneReader, clone_path, ensure_clone
from prchain.miner.config import GithubConfig
from prchain.miner.gitdiff import iter_patches, parse_files
from prchain.miner.github_client import GithubClient, split_name
from prchain.miner.limits import NOT_FOUND, OK, TOO_LARGE
from prchain.miner.source import SOURCES, IssueRecord, PRRecord, SourceInfo
from prchain.miner.tokens import TokenPool

log = logging.getLogger("prchain.miner.github")
MIN_PAGE = 5  # the smallest PR page we shrink to before giving up
DIFF_ACCEPT = {"Accept": "application/vnd.github.v3.diff"}


@SOURCES.register("github")
class GithubSource:
    """PRs and issues of one repository, changed since a cursor (the updatedAt of the last PR yielded)."""

    name = "github"

    def __init__(
        self,
        config: GithubConfig,
        full_name: str,
        clone_dir: str,
        since: datetime | None = None,
        max_patch_bytes: int = 2_000_000,
    ) -> None:
        self.owner, self.repo = split_name(full_name)
        self.full_name, self.config, self.clone_dir = full_name, config, clone_dir
        self.since, self.max_patch_bytes = since, max_patch_bytes
        self.client = GithubClient(config, TokenPool.from_env(config.token_env))
        self._info: SourceInfo | None = None
        self._reader: CloneReader | None = None
        self._clone_tried = False
        self._prs: set[int] = set()
        self._issues: set[int] = set()
        self._cursor_of: dict[int, str] = {}
        self._expected: int | None = None

    # ------------------------------------------------------------------ PRSource

    def describe(self) -> SourceInfo:
        if self._info is None:
            verdict, repo = self.client.rest(
                f"/repos/{self.owner}/{self.repo}", tolerate=(NOT_FOUND,)
            )
            if verdict.kind == NOT_FOUND:
                raise RepoNotFound(
                    f"GitHub has no repository {self.full_name} (or the token cannot see it)"
                )
            path = clone_path(self.clone_dir, self.full_name) if self.config.use_clone else None
            self._info = SourceInfo(
                repo.get("full_name") or self.full_name,
                repo.get("default_branch"),
                str(path) if path else None,
            )
        return self._info

    def pull_requests(self, since_cursor: str | None) -> Iterator[PRRecord]:
        self.describe()
        since = self._since(since_cursor)
        pages = self._all_pages() if since is None else self._changed_pages(since)
        for nodes in pages:
            self._attach_review_comments(nodes)
            records = [gq.pr_record(self._complete(node)) for node in nodes]
            self._attach_patches(records)
            for record in records:
                self._prs.add(record.number)
                yield record

    def issues(self, since_cursor: str | None) -> Iterator[IssueRecord]:
        since = self._since(since_cursor)
        variables = self._vars(since=gq.format_time(since) if since else None)
        for node in self._paginate(gq.ISSUE_PAGE_QUERY, variables, "issues"):
            self._issues.add(node["number"])
            yield gq.issue_record(node)

    def cursor_after(self, record: PRRecord) -> str:
        if record.number in self._cursor_of:
            return self._cursor_of[record.number]
        return gq.format_time(record.updated_at) if record.updated_at else ""

    def known_numbers(self) -> tuple[set[int], set[int]] | None:
        return set(self._prs), set(self._issues)

    def requests_made(self) -> int:
        return self.client.requests

    def points_spent(self) -> int:
        return self.client.points

    def expected_count(self) -> int | None:
        """How many PRs this run will yield, once the first page told (for progress bars)."""
        return self._expected

    # ------------------------------------------------------------------ pages

    def _vars(self, **extra: Any) -> dict[str, Any]:
        return {"owner": self.owner, "name": self.repo, **extra}

    def _since(self, cursor: str | None) -> datetime | None:
        """The later of the stored cursor and --since. Inclusive: a PR sharing the cursor's second
        is fetched again rather than lost (rows are upserted, so that costs nothing)."""
        found = [
            t for t in (gq.parse_time(cursor) if cursor else None, self._naive(self.since)) if t
        ]
        return max(found) if found else None

    @staticmethod
    def _naive(value: datetime | None) -> datetime | None:
        return gq.parse_time(value.isoformat()) if value and value.tzinfo else value

    def _repository(self, query: str, variables: dict[str, Any]) -> dict[str, Any]:
        repo = self.client.graphql(query, variables).get("repository")
        if repo is None:
            raise RepoNotFound(f"GitHub has no repository {self.full_name}")
        return repo

    def _paginate(
        self, query: str, variables: dict[str, Any], field: str
    ) -> Iterator[dict[str, Any]]:
        for nodes in self._pages(query, variables, field):
            yield from nodes

    def _pages(
        self, query: str, variables: dict[str, Any], field: str
    ) -> Iterator[list[dict[str, Any]]]:
        after = None
        while True:
            conn = self._page(query, {**variables, "after": after})[field]
            self._expected = conn.get("totalCount", self._expected)
            yield conn["nodes"]
            if not conn["pageInfo"]["hasNextPage"]:
                return
            after = conn["pageInfo"]["endCursor"]

    def _page(self, query: str, variables: dict[str, Any]) -> dict[str, Any]:
        """One page; when GitHub keeps timing out on it, the same page again at half the size
        (heavy PR pages with huge bodies or many files do time out on github.com)."""
        while True:
            try:
                return self._repository(query, variables)
            except ServiceUnavailable:
                if variables.get("first", 0) <= MIN_PAGE:
                    raise
                variables = {**variables, "first": max(variables["first"] // 2, MIN_PAGE)}
                log.warning(
                    "GitHub: page keeps failing; retrying it with %d PRs", variables["first"]
                )

    def _all_pages(self) -> Iterator[list[dict[str, Any]]]:
        yield from self._pages(
            gq.PR_PAGE_QUERY, self._vars(first=self.config.page_size), "pullRequests"
        )

    def _changed_pages(self, since: datetime) -> Iterator[list[dict[str, Any]]]:
        """Newest first, numbers only, until past `since`; then those PRs in full, oldest first."""
        changed: list[tuple[int, str]] = []
        for nodes in self._pages(gq.PR_RECENT_QUERY, self._vars(), "pullRequests"):
            fresh = [
                (n["number"], n["updatedAt"])
                for n in nodes
                if (gq.parse_time(n["updatedAt"]) or since) >= since
            ]
            changed += fresh
            if len(fresh) < len(nodes):
                break
        changed.reverse()
        self._expected = len(changed)
        self._cursor_of.update(changed)
        size = self.config.page_size
        for start in range(0, len(changed), size):
            numbers = [n for n, _ in changed[start : start + size]]
            repo = self._repository(gq.pr_batch_query(numbers), self._vars())
            yield [repo[f"pr{n}"] for n in numbers if repo.get(f"pr{n}")]

    def _complete(self, pr: dict[str, Any]) -> dict[str, Any]:
        """Fetch the rest of every inner connection that overflowed its first page."""
        for name in gq.PR_CONNECTIONS:
            conn = pr[name]
            while conn["pageInfo"]["hasNextPage"]:
                variables = self._vars(number=pr["number"], after=conn["pageInfo"]["endCursor"])
                more = self._repository(gq.connection_query(name), variables)["pullRequest"][name]
                conn["nodes"] += more["nodes"]
                conn["pageInfo"] = more["pageInfo"]
        for review in pr["reviews"]["nodes"]:
            if "comments" not in review:  # a review the page's follow-up query did not reach
                self._attach_review_comments([{"reviews": {"nodes": [review]}}])
            self._complete_review(review)
        return pr

    def _attach_review_comments(self, prs: list[dict[str, Any]]) -> None:
        """The comments of every review on a page, 100 reviews per query (pages without reviews
        cost nothing)."""
        reviews = {r["id"]: r for pr in prs for r in pr["reviews"]["nodes"]}
        ids = list(reviews)
        for start in range(0, len(ids), gq.REVIEWS_PER_QUERY):
            chunk = ids[start : start + gq.REVIEWS_PER_QUERY]
            data = self.client.graphql(gq.REVIEW_COMMENTS_QUERY, {"ids": chunk})
            for node in data["nodes"]:
                if node and node.get("id") in reviews:
                    reviews[node["id"]]["comments"] = node["comments"]

    def _complete_review(self, review: dict[str, Any]) -> None:
        conn = review["comments"]
        while conn["pageInfo"]["hasNextPage"]:
            variables = {"id": review["id"], "after": conn["pageInfo"]["endCursor"]}
            data = self.client.graphql(gq.MORE_REVIEW_COMMENTS_QUERY, variables)
            more = data["node"]["comments"]
            conn["nodes"] += more["nodes"]
            conn["pageInfo"] = more["pageInfo"]

    # ------------------------------------------------------------------ patches

    def _clone(self) -> CloneReader | None:
        if not self._clone_tried:
            self._clone_tried = True
            if self.config.use_clone:
                url = self.config.clone_url_template.format(full_name=self.full_name)
                try:
                    self._reader = CloneReader(
                        ensure_clone(url, clone_path(self.clone_dir, self.full_name))
                    )
                except GitError as exc:
                    log.warning(
                        "GitHub: no clone of %s (%s); patches come from the API",
                        self.full_name,
                        exc,
                    )
        return self._reader

    def _attach_patches(self, records: list[PRRecord]) -> None:
        """One `git diff-tree` for the whole page; the API only for PRs the clone cannot answer."""
        reader = self._clone()
        ranges = {r.number: reader.patch_range(r) for r in records} if reader else {}
        todo = [r for r in records if ranges.get(r.number)]
        if reader and todo:
            pairs = [(ranges[r.number][1], ranges[r.number][0]) for r in todo]  # type: ignore[index]
            for record, (_, result) in zip(
                todo, iter_patches(str(reader.path), pairs, self.max_patch_bytes), strict=True
            ):
                record.base_sha = ranges[record.number][0]  # type: ignore[index]  # the base the patch applies to
                record.patch, record.patch_status = result.patch, result.status
                record.files = result.files or record.files
        for record in records:
            if record.patch_status in ("pending", "unavailable") and self.config.api_patch_fallback:
                self._patch_from_api(record)
            elif record.patch_status == "pending":
                record.patch_status = "unavailable"

    def _patch_from_api(self, record: PRRecord) -> None:
        path = f"/repos/{self.owner}/{self.repo}/pulls/{record.number}"
        verdict, body = self.client.rest(path, headers=DIFF_ACCEPT, tolerate=(NOT_FOUND, TOO_LARGE))
        text = (body or {}).get("data", "") if verdict.kind == OK else None
        if text is None or len(text.encode("utf-8", errors="replace")) > self.max_patch_bytes:
            record.patch, record.patch_status = (
                None,
                "unavailable" if verdict.kind == NOT_FOUND else "too_large",
            )
            return
        record.patch, record.patch_status = text, "ok"
        record.files = parse_files(text) or record.files
