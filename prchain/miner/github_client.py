"""The GitHub HTTP client: PyGithub requesters behind one bounded, counted, rate-limit-aware loop.

The only module that imports PyGithub. `GithubClient.request` is the single choke point every
HTTP request passes: it counts requests, picks a token with quota, and applies `prchain.miner.limits`.

PyGithub's own retry (`GithubRetry`, urllib3 under the hood) is switched off on purpose
(`retry=None`): it sleeps silently inside urllib3, cannot rotate to another token, is not bounded
by our config, and its retries would be HTTP requests our counter never sees.
"""

from __future__ import annotations

import logging
import re
import time
from typing import Any

import requests
from github import Auth, Github, GithubException

from prchain.core.errors import (
    BadCredentials,
    GithubQueryFailed,
    GithubReplyInvalid,
    InvalidRepoName,
    RateLimited,
    RepoNotFound,
    ServiceUnavailable,
    ServiceUnreachable,
)
from prchain.miner.config import GithubConfig
from prchain.miner.limits import (
    BAD_CREDENTIALS,
    NOT_FOUND,
    OK,
    PRIMARY,
    SECONDARY,
    SERVER,
    UNREACHABLE,
    Verdict,
    backoff,
    classify,
    wait_visibly,
)
from prchain.miner.points import query_cost
from prchain.miner.tokens import TokenPool

log = logging.getLogger("prchain.miner.github")
REPO_NAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,38})/[A-Za-z0-9._-]{1,100}$")


def split_name(full_name: str) -> tuple[str, str]:
    """owner/name → (owner, name), or InvalidRepoName for anything else (URLs, spaces, ..)."""
    if (
        not REPO_NAME.match(full_name or "")
        or full_name.endswith((".", ".git"))
        or "/.." in full_name
    ):
        raise InvalidRepoName(f"not a GitHub repository name: {full_name!r} (expected owner/name)")
    owner, name = full_name.split("/")
    return owner, name


class GithubClient:
    """PyGithub requesters, one per token, behind one bounded, counted, rate-limit-aware loop."""

    def __init__(self, config: GithubConfig, pool: TokenPool) -> None:
        self.config, self.pool = config, pool
        self.requests = 0
        self.points = 0  # GraphQL points the server says it charged (rateLimit.cost)
        self._answered = (
            False  # whether the host has ever answered; until then a connection error is final
        )
        self._clients: dict[int, Github] = {}

    def _client(self, index: int) -> Github:
        if index not in self._clients:
            self._clients[index] = Github(
                base_url=self.config.api_url.rstrip("/"),
                auth=Auth.Token(self.pool.tokens[index]),
                timeout=int(max(self.config.timeout_seconds, 1)),
                retry=None,
                per_page=100,
                seconds_between_requests=self.config.request_interval_seconds or None,
                seconds_between_writes=None,
            )
        return self._clients[index]

    def rest(
        self, path: str, headers: dict[str, str] | None = None, tolerate: tuple[str, ...] = ()
    ) -> tuple[Verdict, Any]:
        return self.request("core", "GET", path, headers=headers, tolerate=tolerate)

    def graphql(self, query: str, variables: dict[str, Any]) -> dict[str, Any]:
        url = self._client(0).requester.graphql_url
        estimate = query_cost(query, variables).points
        _, body = self.request(
            "graphql",
            "POST",
            url,
            payload={"query": query, "variables": variables},
            points=estimate,
        )
        data = body["data"]
        spent = (data or {}).get("rateLimit") or {}
        self.points += int(spent.get("cost") or 0)
        return data

    def request(
        self,
        resource: str,
        verb: str,
        url: str,
        *,
        headers: dict[str, str] | None = None,
        payload: Any = None,
        tolerate: tuple[str, ...] = (),
        points: int = 1,
    ) -> tuple[Verdict, Any]:
        """Send until answered: OK or a tolerated verdict returns, anything else is waited out or
        raised. `points` is what the request is expected to cost (GraphQL), so a token whose
        remaining points cannot pay for it is not used."""
        retries = limited = 0
        while True:
            index = self._token(resource, points)
            verdict, body = self._attempt(index, resource, verb, url, headers, payload)
            if verdict.kind == OK:
                wants_json = "diff" not in (headers or {}).get("Accept", "")
                return verdict, self._json(body, url) if wants_json else body
            if verdict.kind in tolerate:
                return verdict, body
            if verdict.kind == PRIMARY:
                limited = self._on_primary(verdict, index, resource, limited)
            elif verdict.kind in (SECONDARY, SERVER):
                retries = self._on_retryable(verdict, retries, url)
            else:
                raise self._error(verdict, index, url)

    def _json(self, body: Any, url: str) -> Any:
        """The body, unless it is not JSON: PyGithub wraps such a reply as {"data": "<html>..."}."""
        if isinstance(body, dict) and list(body) == ["data"] and isinstance(body["data"], str):
            snippet = " ".join(body["data"].split())[:80]
            raise GithubReplyInvalid(
                f"the server at {self.config.api_url} answered {url} with something that is not "
                f"JSON: {snippet!r}"
            )
        return body

    def _attempt(
        self,
        index: int,
        resource: str,
        verb: str,
        url: str,
        headers: dict[str, str] | None,
        payload: Any,
    ) -> tuple[Verdict, Any]:
        self.requests += 1
        requester = self._client(index).requester
        try:
            reply_headers, body = requester.requestJsonAndCheck(
                verb, url, headers=headers, input=payload
            )
            status = 200
        except GithubException as exc:
            status, reply_headers, body = exc.status, dict(exc.headers or {}), exc.data
        except requests.ConnectionError as exc:
            # A host that never answered (no network, DNS failure) will not answer on retry either.
            kind = SERVER if self._answered else UNREACHABLE
            return Verdict(kind, f"{type(exc).__name__}: {str(exc)[:200]}"), None
        except (requests.RequestException, ValueError) as exc:  # timeout, cut-off JSON
            return Verdict(SERVER, f"{type(exc).__name__}: {str(exc)[:200]}"), None
        self._answered = True
        self.pool.observe(index, resource, reply_headers)
        return classify(status, reply_headers, body), body

    def _token(self, resource: str, need: int = 1) -> int:
        """A token with quota left; when all are spent, wait (visibly) for the earliest reset."""
        while True:
            index, wait = self.pool.pick(resource, need=need)
            if index is not None:
                return index
            if wait > self.config.max_wait_seconds:
                raise RateLimited(
                    f"all {len(self.pool)} GitHub token(s) are out of {resource} quota for {wait:.0f} s more"
                )
            reset = time.strftime("%H:%M:%S", time.localtime(time.time() + wait))
            wait_visibly(
                wait + 1,
                f"primary rate limit ({resource}) reached on all {len(self.pool)} token(s), resets at {reset}",
            )

    def _on_primary(self, verdict: Verdict, index: int, resource: str, limited: int) -> int:
        if limited > self.config.max_retries + len(self.pool):
            raise RateLimited(
                f"GitHub keeps refusing with a primary rate limit: {verdict.message[:200]}"
            )
        self.pool.exhaust(index, resource, verdict.reset_at or time.time() + 60)
        following, _ = self.pool.pick(resource)
        if following is not None:
            log.warning(
                "GitHub: %s is out of %s quota; switching to %s",
                self.pool.label(index),
                resource,
                self.pool.label(following),
            )
        return limited + 1

    def _on_retryable(self, verdict: Verdict, retries: int, url: str) -> int:
        if retries >= self.config.max_retries:
            error = RateLimited if verdict.kind == SECONDARY else ServiceUnavailable
            raise error(
                f"GitHub kept failing on {url} after {retries} retries: {verdict.message[:200]}"
            )
        if verdict.retry_after is not None:
            wait = verdict.retry_after
        else:
            first = (
                self.config.secondary_wait_seconds
                if verdict.kind == SECONDARY
                else self.config.backoff_seconds
            )
            wait = backoff(first, retries)
        what = (
            "secondary rate limit"
            if verdict.kind == SECONDARY
            else f"server error ({verdict.message[:80]})"
        )
        wait_visibly(wait, f"{what}; retry {retries + 1}/{self.config.max_retries}")
        return retries + 1

    def _error(self, verdict: Verdict, index: int, url: str) -> Exception:
        if verdict.kind == UNREACHABLE:
            return ServiceUnreachable(
                f"cannot reach GitHub at {self.config.api_url}: {verdict.message[:120]}"
            )
        if verdict.kind == BAD_CREDENTIALS:
            return BadCredentials(
                f"GitHub refused {self.pool.label(index)} from {self.config.token_env} (401 Bad credentials)"
            )
        if verdict.kind == NOT_FOUND:
            return RepoNotFound(f"GitHub has no {url} ({verdict.message[:120]})")
        return GithubQueryFailed(f"GitHub refused {url}: {verdict.message}")
