"""A local fake GitHub (REST + GraphQL) on 127.0.0.1 that the real PyGithub client talks to.

It serves repositories built from real git histories (`fake_github_data`), answers with GitHub's
payload shapes, Link-header pagination and rate-limit headers on every response, keeps a quota per
token and resource, and plays scripted faults: a secondary limit (403 + Retry-After, or the HTML
abuse page), a 429, a 502, a GraphQL timeout, a primary-limit exhaustion that resets a moment
later. 401 for unknown tokens, 404 for unknown repositories. Every request is counted per endpoint.
"""

from __future__ import annotations

import json
import re
import subprocess
import threading
import time
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from prchain.core.errors import PrchainError
from prchain.miner.points import NODE_LIMIT, QueryCost, query_cost
from tests.support.fake_github_data import FakeIssue, FakePR, FakeRepo
from tests.support.fake_github_views import GraphView, file_json, issue_json, pr_json, repo_json
from tests.support.fake_graphql import execute

DOCS = "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"
SECONDARY = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. "
    "If you reach out to GitHub Support for help, please include the request ID 1234:ABCD."
)
ABUSE_HTML = (
    "<!DOCTYPE html><html><head><title>Whoa there!</title></head><body><h1>Whoa there!</h1>"
    "<p>You have triggered an abuse detection mechanism. Please wait a few minutes before you try again.</p>"
    "</body></html>"
)
BAD_GATEWAY = (
    "<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>"
)
ROUTES = [  # (method, pattern, endpoint name, handler method)
    ("GET", r"/rate_limit", "GET /rate_limit", "rate_limit"),
    ("GET", r"/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)", "GET /repos/{owner}/{repo}", "repo"),
    (
        "GET",
        r"/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/pulls",
        "GET /repos/{owner}/{repo}/pulls",
        "pulls",
    ),
    (
        "GET",
        r"/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/pulls/(?P<number>\d+)",
        "GET /repos/{owner}/{repo}/pulls/{number}",
        "pull",
    ),
    (
        "GET",
        r"/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/pulls/(?P<number>\d+)/files",
        "GET /repos/{owner}/{repo}/pulls/{number}/files",
        "pull_files",
    ),
    (
        "GET",
        r"/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/issues",
        "GET /repos/{owner}/{repo}/issues",
        "issues",
    ),
    (
        "GET",
        r"/repos/(?P<owner>[^/]+)/(?P<repo>[^/]+)/issues/(?P<number>\d+)",
        "GET /repos/{owner}/{repo}/issues/{number}",
        "issue",
    ),
    ("POST", r"/graphql", "POST /graphql", "graphql"),
]


@dataclass
class Fault:
    kind: str  # secondary | secondary_html | too_many | bad_gateway | graphql_timeout | primary
    path: str = ""  # only requests whose path contains this ("" = any)
    times: int = 1
    retry_after: int = 1
    reset_in: float = 2.0


@dataclass
class Reply:
    status: int
    body: bytes
    content_type: str = "application/json; charset=utf-8"
    headers: dict[str, str] | None = None


def graphql_cost(body: bytes) -> QueryCost | Reply | None:
    """The points a GraphQL request costs, by GitHub's documented rule; a Reply when GitHub would
    refuse it unrun (over 500,000 nodes). None when the body is not a query (the route says why)."""
    try:
        request = json.loads(body or b"{}")
        cost = query_cost(request["query"], request.get("variables") or {})
    except (ValueError, KeyError, TypeError, PrchainError):
        return None
    if not cost.within_node_limit:
        message = (
            f"This query requests up to {cost.nodes:,} possible nodes which exceeds the maximum "
            f"limit of {NODE_LIMIT:,}."
        )
        return json_reply(
            200, {"errors": [{"type": "MAX_NODE_LIMIT_EXCEEDED", "message": message}]}
        )
    return cost


def json_reply(status: int, data: Any, headers: dict[str, str] | None = None) -> Reply:
    return Reply(status, json.dumps(data).encode(), headers=headers)


class FakeGithub:
    """Start with `start()`; `url` is the API base URL to give PyGithub; `counts` the requests seen."""

    LIMIT = 5000

    def __init__(self, tokens: tuple[str, ...] = ("ghp_fake_token_1",)) -> None:
        self.tokens = set(tokens)
        self.repos: dict[str, FakeRepo] = {}
        self.faults: list[Fault] = []
        self.counts: Counter[str] = Counter()
        self.by_token: Counter[str] = Counter()
        self.quota: dict[
            tuple[str, str], list[float]
        ] = {}  # (token, resource) → [remaining, reset_at]
        self.diff_max_bytes = 3_000_000
        self.points_charged = 0
        self.lock = threading.Lock()
        self.view = GraphView(self.repos)
        self._server: ThreadingHTTPServer | None = None

    # ------------------------------------------------------------------ control

    def add_repo(self, repo: FakeRepo) -> FakeRepo:
        self.repos[repo.full_name.lower()] = repo
        return repo

    def inject(
        self, kind: str, path: str = "", times: int = 1, retry_after: int = 1, reset_in: float = 2.0
    ) -> None:
        with self.lock:
            self.faults.append(Fault(kind, path, times, retry_after, reset_in))

    def set_quota(
        self, token: str, remaining: int, resource: str = "graphql", reset_in: float = 3600
    ) -> None:
        with self.lock:
            self.quota[(token, resource)] = [remaining, time.time() + reset_in]

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    def reset_counts(self) -> None:
        with self.lock:
            self.counts.clear()
            self.by_token.clear()

    def start(self) -> FakeGithub:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def stop(self) -> None:
        if self._server:
            self._server.shutdown()
            self._server.server_close()

    @property
    def url(self) -> str:
        assert self._server, "start() the server first"
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    # ------------------------------------------------------------------ one request

    def handle(self, method: str, target: str, headers: dict[str, str], body: bytes) -> Reply:
        parts = urlsplit(target)
        route = next(
            (
                (n, h, m.groupdict())
                for verb, p, n, h in ROUTES
                if verb == method and (m := re.fullmatch(p, parts.path))
            ),
            None,
        )
        with self.lock:
            self.counts[route[0] if route else f"{method} {parts.path}"] += 1
        token = re.sub(r"^(token|bearer)\s+", "", headers.get("authorization", ""), flags=re.I)
        resource = "graphql" if parts.path == "/graphql" else "core"
        if token not in self.tokens:
            return self._limited(
                json_reply(401, {"message": "Bad credentials", "documentation_url": DOCS}),
                token,
                resource,
            )
        with self.lock:
            self.by_token[token] += 1
        cost = graphql_cost(body) if resource == "graphql" else None
        if isinstance(cost, Reply):  # unparsable, or over the node limit: refused before running
            return self._limited(cost, token, resource)
        points = cost.points if cost else 1
        refused = self._fault(parts.path, token, resource) or self._spend(token, resource, points)
        if refused:
            return self._limited(refused, token, resource)
        if route is None:
            reply = json_reply(404, {"message": "Not Found", "documentation_url": DOCS})
        else:
            reply = getattr(self, f"_r_{route[1]}")(route[2], parse_qs(parts.query), headers, body)
        return self._limited(reply, token, resource)

    def _bucket(self, token: str, resource: str) -> list[float]:
        bucket = self.quota.setdefault((token, resource), [self.LIMIT, time.time() + 3600])
        if time.time() >= bucket[1]:
            bucket[:] = [self.LIMIT, time.time() + 3600]
        return bucket

    def _spend(self, token: str, resource: str, amount: int = 1) -> Reply | None:
        """Take `amount` (1 per REST request; the query's points on GraphQL) from the quota."""
        with self.lock:
            bucket = self._bucket(token, resource)
            if bucket[0] < amount:
                return self._primary_reply(resource)
            bucket[0] -= amount
            self.points_charged += amount if resource == "graphql" else 0
        return None

    def _primary_reply(self, resource: str) -> Reply:
        message = "API rate limit exceeded for user ID 1."
        if resource == "graphql":  # GraphQL says so with HTTP 200, as documented
            return json_reply(
                200,
                {
                    "errors": [
                        {"type": "RATE_LIMITED", "code": "graphql_rate_limit", "message": message}
                    ]
                },
            )
        return json_reply(403, {"message": message, "documentation_url": DOCS})

    def _fault(self, path: str, token: str, resource: str) -> Reply | None:
        with self.lock:
            fault = next((f for f in self.faults if f.times > 0 and f.path in path), None)
            if fault is None:
                return None
            fault.times -= 1
            if fault.kind == "primary":
                self.quota[(token, resource)] = [0, time.time() + fault.reset_in]
        wait = {"Retry-After": str(fault.retry_after)}
        return {
            "secondary": lambda: json_reply(
                403, {"message": SECONDARY, "documentation_url": DOCS}, wait
            ),
            "secondary_html": lambda: Reply(403, ABUSE_HTML.encode(), "text/html; charset=utf-8"),
            "too_many": lambda: json_reply(
                429, {"message": SECONDARY, "documentation_url": DOCS}, wait
            ),
            "bad_gateway": lambda: Reply(502, BAD_GATEWAY.encode(), "text/html; charset=utf-8"),
            "graphql_timeout": lambda: json_reply(
                200,
                {
                    "data": None,
                    "errors": [
                        {
                            "message": (
                                "Something went wrong while executing your query. This may be the result of a timeout, "
                                "or it could be a GitHub bug. Please include `1234:ABCD` when reporting this issue."
                            )
                        }
                    ],
                },
            ),
            "primary": lambda: self._primary_reply(resource),
        }[fault.kind]()

    def _limited(self, reply: Reply, token: str, resource: str) -> Reply:
        """Every response carries the caller's quota, as GitHub's do."""
        with self.lock:
            remaining, reset = (
                self._bucket(token, resource) if token in self.tokens else (59, time.time() + 3600)
            )
        reply.headers = {
            **(reply.headers or {}),
            "x-ratelimit-limit": str(self.LIMIT),
            "x-ratelimit-remaining": str(int(max(remaining, 0))),
            "x-ratelimit-reset": str(int(reset + 0.999)),
            "x-ratelimit-used": str(int(self.LIMIT - max(remaining, 0))),
            "x-ratelimit-resource": resource,
            "x-github-request-id": "1234:ABCD",
            "x-github-api-version-selected": "2022-11-28",
        }
        return reply

    # ------------------------------------------------------------------ routes

    def _repo(self, params: dict[str, str]) -> FakeRepo | None:
        return self.repos.get(f"{params['owner']}/{params['repo']}".lower())

    def _r_rate_limit(
        self,
        params: dict[str, str],
        query: dict[str, list[str]],
        headers: dict[str, str],
        body: bytes,
    ) -> Reply:
        reset = int(time.time()) + 3600
        core = {"limit": self.LIMIT, "remaining": self.LIMIT, "reset": reset, "used": 0}
        return json_reply(
            200,
            {
                "resources": {"core": core, "graphql": core, "search": {**core, "limit": 30}},
                "rate": core,
            },
        )

    def _r_repo(
        self,
        params: dict[str, str],
        query: dict[str, list[str]],
        headers: dict[str, str],
        body: bytes,
    ) -> Reply:
        repo = self._repo(params)
        return json_reply(200, repo_json(repo, self.url)) if repo else _not_found()

    def _r_pulls(
        self,
        params: dict[str, str],
        query: dict[str, list[str]],
        headers: dict[str, str],
        body: bytes,
    ) -> Reply:
        repo = self._repo(params)
        if not repo:
            return _not_found()
        state = query.get("state", ["open"])[0]
        prs = [
            p
            for p in repo.prs.values()
            if state == "all" or (p.state == "OPEN") == (state == "open")
        ]
        sort = "updated_at" if query.get("sort", [""])[0] == "updated" else "created_at"
        prs.sort(
            key=lambda p: (getattr(p, sort), p.number),
            reverse=query.get("direction", ["desc"])[0] == "desc",
        )
        return self._page(
            [pr_json(repo, p, self.url) for p in prs], f"/repos/{repo.full_name}/pulls", query
        )

    def _r_pull(
        self,
        params: dict[str, str],
        query: dict[str, list[str]],
        headers: dict[str, str],
        body: bytes,
    ) -> Reply:
        repo = self._repo(params)
        pr = repo.prs.get(int(params["number"])) if repo else None
        if not repo or not pr:
            return _not_found()
        if "diff" not in headers.get("accept", ""):
            return json_reply(200, pr_json(repo, pr, self.url))
        diff = subprocess.run(
            ["git", "-C", str(repo.git_path), "diff", pr.diff_base, pr.head_sha],
            capture_output=True,
            check=True,
        ).stdout
        if len(diff) > self.diff_max_bytes or diff.count(b"\n") > 20000:
            return json_reply(
                406,
                {
                    "message": "Sorry, the diff exceeded the maximum number of lines (20000)",
                    "errors": [{"resource": "PullRequest", "field": "diff", "code": "too_large"}],
                    "documentation_url": DOCS,
                },
            )
        return Reply(200, diff, "text/plain; charset=utf-8")

    def _r_pull_files(
        self,
        params: dict[str, str],
        query: dict[str, list[str]],
        headers: dict[str, str],
        body: bytes,
    ) -> Reply:
        repo = self._repo(params)
        pr = repo.prs.get(int(params["number"])) if repo else None
        if not repo or not pr:
            return _not_found()
        files = [file_json(repo, pr, i) for i in range(len(pr.files))]
        return self._page(files, f"/repos/{repo.full_name}/pulls/{pr.number}/files", query)

    def _r_issues(
        self,
        params: dict[str, str],
        query: dict[str, list[str]],
        headers: dict[str, str],
        body: bytes,
    ) -> Reply:
        repo = self._repo(params)
        if not repo:
            return _not_found()
        items: list[FakeIssue | FakePR] = [*repo.issues.values(), *repo.prs.values()]
        items.sort(key=lambda i: i.number, reverse=True)
        state = query.get("state", ["open"])[0]
        items = [i for i in items if state == "all" or (i.state == "OPEN") == (state == "open")]
        return self._page(
            [issue_json(repo, i, self.url) for i in items], f"/repos/{repo.full_name}/issues", query
        )

    def _r_issue(
        self,
        params: dict[str, str],
        query: dict[str, list[str]],
        headers: dict[str, str],
        body: bytes,
    ) -> Reply:
        repo = self._repo(params)
        item: FakeIssue | FakePR | None = None
        if repo:
            item = repo.issues.get(int(params["number"])) or repo.prs.get(int(params["number"]))
        return json_reply(200, issue_json(repo, item, self.url)) if repo and item else _not_found()

    def _r_graphql(
        self,
        params: dict[str, str],
        query: dict[str, list[str]],
        headers: dict[str, str],
        body: bytes,
    ) -> Reply:
        try:
            request = json.loads(body or b"{}")
        except ValueError:
            return json_reply(400, {"message": "Problems parsing JSON", "documentation_url": DOCS})
        if not isinstance(request.get("query"), str):
            return json_reply(
                200,
                {
                    "errors": [
                        {"message": "A query attribute must be specified and must be a string."}
                    ]
                },
            )
        token = re.sub(r"^(token|bearer)\s+", "", headers.get("authorization", ""), flags=re.I)
        variables = request.get("variables") or {}
        cost = query_cost(request["query"], variables)
        with self.lock:
            remaining, reset = self._bucket(token, "graphql")
        rate_limit = {
            "cost": cost.points,
            "limit": self.LIMIT,
            "remaining": int(remaining),
            "used": int(self.LIMIT - remaining),
            "resetAt": datetime.fromtimestamp(reset, UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "nodeCount": cost.nodes,
        }
        return json_reply(200, execute(request["query"], variables, self.view.root(rate_limit)))

    def _page(self, items: list[Any], path: str, query: dict[str, list[str]]) -> Reply:
        """One page plus GitHub's Link header (first/prev/next/last)."""
        per_page = min(int(query.get("per_page", ["30"])[0]), 100)
        page = max(int(query.get("page", ["1"])[0]), 1)
        last = max((len(items) + per_page - 1) // per_page, 1)
        rest = {k: v[0] for k, v in query.items() if k != "page"}
        link = lambda n, rel: f'<{self.url}{path}?{urlencode({**rest, "page": n})}>; rel="{rel}"'  # noqa: E731
        links = ([link(page + 1, "next"), link(last, "last")] if page < last else []) + (
            [link(page - 1, "prev"), link(1, "first")] if page > 1 else []
        )
        chunk = items[(page - 1) * per_page : page * per_page]
        return json_reply(200, chunk, {"Link": ", ".join(links)} if links else None)


def _not_found() -> Reply:
    return json_reply(404, {"message": "Not Found", "documentation_url": DOCS, "status": "404"})


def _handler_for(fake: FakeGithub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as PyGithub's requests session expects

        def _serve(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            headers = {k.lower(): v for k, v in self.headers.items()}
            reply = fake.handle(self.command, self.path, headers, body)
            self.send_response(reply.status)
            self.send_header("Content-Type", reply.content_type)
            self.send_header("Content-Length", str(len(reply.body)))
            for name, value in (reply.headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(reply.body)

        do_GET = do_POST = _serve

        def log_message(
            self, format: str, *args: Any
        ) -> None:  # quiet: tests read counts, not logs
            pass

    return Handler
