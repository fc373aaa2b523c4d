"""A real OpenAI-compatible HTTP server on 127.0.0.1 that answers from scripts.

Tests (and the README demo, via `prchain dev fake-llm`) drive the real `openai` client against it:

    with ScriptedLLMServer() as server:
        server.push(model="judge", content='{"score": 0.9}')
        server.push(model="policy", status=429)           # then the next policy reply
        server.push(model="policy", tool_calls=[{"name": "bash", "arguments": {"cmd": "ls"}}])
        server.push(model="policy", content="ok", reasoning_content="thinking first")  # vLLM/SGLang

Replies are queued FIFO per model; a rule may also require that the last message contains a
string, answer several times (`times`, None = forever) or compute the reply (`responder`).
A request no rule matches gets a 500 naming the model, so a test fails loudly.

Strict mode (the default) refuses what real servers refuse before any rule is consulted, with the
status each server uses: a message whose `content` is `null` (llama.cpp's server answers 500 with
its JSON library's type error), an unknown role, a tool message that answers no call of an
earlier assistant turn, an assistant's calls left without their results, malformed tool calls or
tool definitions, a non-positive `max_tokens`. `strict=False` keeps the lenient server for tests
of the client's own error handling.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import yaml

from prchain.core.errors import ConfigError
from prchain.dev.chat_checks import refuse
from prchain.dev.fake_llm_replies import completion_body, error_reply

Responder = Callable[[dict[str, Any]], dict[str, Any]]
SCRIPT_FIELDS = {
    "model",
    "content",
    "tool_calls",
    "status",
    "contains",
    "times",
    "retry_after",
    "reasoning_content",
    "reasoning",
}
# Reasoning servers put the model's thinking beside the content: `reasoning_content` (SGLang,
# llama.cpp, older vLLM) or `reasoning` (newer vLLM, Ollama).
REASONING_FIELDS = ("reasoning_content", "reasoning")
ERROR_TYPES = {400: "invalid_request_error", 401: "authentication_error", 429: "rate_limit_error"}


@dataclass
class Rule:
    """One scripted reply. `model=None` matches any model; `times=None` never runs out."""

    model: str | None = None
    content: str | None = None
    tool_calls: list[dict[str, Any]] | None = None
    status: int = 200
    contains: str | None = None
    times: int | None = 1
    responder: Responder | None = None
    retry_after: float = 1.0
    reasoning_content: str | None = None
    reasoning: str | None = None

    def matches(self, body: dict[str, Any]) -> bool:
        if self.model is not None and body.get("model") != self.model:
            return False
        return self.contains is None or self.contains in last_message_text(body)


def last_message_text(body: dict[str, Any]) -> str:
    messages = body.get("messages") or [{}]
    content = messages[-1].get("content") or ""
    if isinstance(content, list):  # content parts: [{"type": "text", "text": ...}]
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content)


class ScriptedLLMServer:
    """Context manager running the server in a background thread; `.base_url` ends in /v1."""

    def __init__(self, host: str = "127.0.0.1", port: int = 0, *, strict: bool = True) -> None:
        self.strict = strict
        self.refused: list[str] = []  # why strict mode refused each refused request
        self._rules: list[Rule] = []
        self.requests: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._httpd = ThreadingHTTPServer((host, port), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread: threading.Thread | None = None

    # -- scripting ---------------------------------------------------------------------------

    def push(
        self,
        model: str | None = None,
        content: str | None = None,
        tool_calls: list[dict[str, Any]] | None = None,
        status: int = 200,
        contains: str | None = None,
        times: int | None = 1,
        responder: Responder | None = None,
        retry_after: float = 1.0,
        reasoning_content: str | None = None,
        reasoning: str | None = None,
    ) -> ScriptedLLMServer:
        rule = Rule(model, content, tool_calls, status, contains, times, responder, retry_after)
        rule.reasoning_content, rule.reasoning = reasoning_content, reasoning
        with self._lock:
            self._rules.append(rule)
        return self

    def load_script(self, path: str | Path) -> int:
        """Rules from a YAML or JSON file: a list of mappings with the fields of `push`."""
        data = yaml.safe_load(Path(path).read_text()) or []
        rules = data.get("rules", []) if isinstance(data, dict) else data
        if not isinstance(rules, list) or not all(isinstance(rule, dict) for rule in rules):
            raise ConfigError(f"{path}: expected a list of rules (mappings)")
        for number, rule in enumerate(rules, 1):
            unknown = set(rule) - SCRIPT_FIELDS
            if unknown:
                raise ConfigError(
                    f"{path}: rule {number} has unknown fields {sorted(unknown)}; valid: {sorted(SCRIPT_FIELDS)}"
                )
            self.push(**rule)
        return len(rules)

    def reset(self) -> None:
        """Forget every rule and recorded request (between tests sharing one server)."""
        with self._lock:
            self._rules.clear()
            self.requests.clear()
            self.refused.clear()

    def pending(self) -> list[Rule]:
        """Rules not yet used up (a test can assert its whole script was consumed)."""
        with self._lock:
            return [rule for rule in self._rules if rule.times is None or rule.times > 0]

    def requests_for(self, model: str) -> list[dict[str, Any]]:
        with self._lock:
            return [body for body in self.requests if body.get("model") == model]

    # -- lifecycle ---------------------------------------------------------------------------

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def start(self) -> ScriptedLLMServer:
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, name="fake-llm", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join()

    def __enter__(self) -> ScriptedLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- answering ---------------------------------------------------------------------------

    def answer(self, body: dict[str, Any]) -> tuple[int, dict[str, Any], dict[str, str]]:
        """(status, JSON body, extra headers) for one chat request."""
        if self.strict and (refusal := refuse(body)) is not None:
            status, message = refusal
            with self._lock:
                self.requests.append(body)
                self.refused.append(message)
            return error_reply(status, message, ERROR_TYPES.get(status, "server_error"))
        with self._lock:
            self.requests.append(body)
            rule = self._take(body)
        if rule is None:
            model = body.get("model")
            return error_reply(
                500, f"fake LLM: no scripted reply left for model {model!r}", "server_error"
            )
        return self._scripted(rule, body)

    def _scripted(
        self, rule: Rule, body: dict[str, Any]
    ) -> tuple[int, dict[str, Any], dict[str, str]]:
        """The reply `rule` scripts (or its responder computes) for `body`."""
        try:
            reply = rule.responder(body) if rule.responder else {}
        except (
            Exception
        ) as exc:  # a broken responder must fail the test loudly, not hang the client
            return error_reply(
                500, f"fake LLM: responder raised {type(exc).__name__}: {exc}", "server_error"
            )
        status = int(reply.get("status", rule.status))
        if status == 429:
            code, payload, _ = error_reply(429, "fake LLM: rate limited", ERROR_TYPES[429])
            return code, payload, {"Retry-After": str(rule.retry_after)}
        if status != 200:
            return error_reply(
                status,
                f"fake LLM: scripted status {status}",
                ERROR_TYPES.get(status, "server_error"),
            )
        content = reply.get("content", rule.content)
        calls = reply.get("tool_calls", rule.tool_calls)
        extra = {
            name: reply.get(name, getattr(rule, name))
            for name in REASONING_FIELDS
            if reply.get(name, getattr(rule, name)) is not None
        }
        return 200, completion_body(body, content, calls, extra, self._ids), {}

    def _take(self, body: dict[str, Any]) -> Rule | None:
        for rule in self._rules:
            if (rule.times is None or rule.times > 0) and rule.matches(body):
                if rule.times is not None:
                    rule.times -= 1
                return rule
        return None

    def models(self) -> dict[str, Any]:
        with self._lock:
            names = sorted({rule.model for rule in self._rules if rule.model})
        return {
            "object": "list",
            "data": [{"id": name, "object": "model", "owned_by": "fake"} for name in names],
        }


def _handler_for(server: ScriptedLLMServer) -> type[BaseHTTPRequestHandler]:
    return type("Handler", (_Handler,), {"scripted": server})


class _Handler(BaseHTTPRequestHandler):
    """HTTP for one scripted server (`scripted`, set per server by `_handler_for`)."""

    protocol_version = "HTTP/1.1"
    scripted: ScriptedLLMServer

    def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
        if self.path.rstrip("/").endswith("/models"):
            self._send(200, self.scripted.models(), {})
        else:
            self._send(
                *error_reply(404, f"fake LLM: no route GET {self.path}", "invalid_request_error")
            )

    def do_POST(self) -> None:  # noqa: N802
        length = int(self.headers.get("Content-Length", 0))
        raw = self.rfile.read(length)
        if not self.path.rstrip("/").endswith("/chat/completions"):
            self._send(
                *error_reply(404, f"fake LLM: no route POST {self.path}", "invalid_request_error")
            )
            return
        try:
            body = json.loads(raw or b"{}")
        except json.JSONDecodeError:
            self._send(
                *error_reply(400, "fake LLM: the request body is not JSON", "invalid_request_error")
            )
            return
        self._send(*self.scripted.answer(body))

    def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        return
