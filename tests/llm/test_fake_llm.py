"""The scripted server itself: script files, matching rules, the dev command."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import urllib.request
from pathlib import Path

import pytest

from prchain.core.errors import ConfigError
from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.llm.client import LLMClient
from prchain.llm.config import LLMConfig

SCRIPT = """
- model: judge
  content: '{"score": 1.0}'
  times: null
- contains: overview please
  content: A chain of three changes.
- model: policy
  tool_calls: [{name: submit, arguments: {}}]
"""


def _post(url: str, body: dict) -> tuple[int, dict]:
    request = urllib.request.Request(
        url, json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_script_file_rules_answer_through_the_client(
    tmp_path: Path, fake_llm: ScriptedLLMServer, llm_config: LLMConfig
) -> None:
    script = tmp_path / "script.yaml"
    script.write_text(SCRIPT)
    assert fake_llm.load_script(script) == 3
    client = LLMClient(llm_config)
    for _ in range(3):
        assert (
            client.complete("judge", [{"role": "user", "content": f"judge {_}"}]).content
            == '{"score": 1.0}'
        )
    assert client.complete(
        "overview", [{"role": "user", "content": "an overview please"}]
    ).content.startswith("A chain")
    assert (
        client.complete("policy", [{"role": "user", "content": "go"}]).tool_calls[0]["function"][
            "name"
        ]
        == "submit"
    )
    assert [rule.model for rule in fake_llm.pending()] == ["judge"]  # the forever rule stays


def test_contains_selects_among_rules_of_one_model(fake_llm: ScriptedLLMServer) -> None:
    fake_llm.push(model="m", contains="second", content="B").push(model="m", content="A")
    status, first = _post(
        f"{fake_llm.base_url}/chat/completions",
        {"model": "m", "messages": [{"role": "user", "content": "first"}]},
    )
    _, second = _post(
        f"{fake_llm.base_url}/chat/completions",
        {"model": "m", "messages": [{"role": "user", "content": "the second"}]},
    )
    assert status == 200 and first["choices"][0]["message"]["content"] == "A"
    assert second["choices"][0]["message"]["content"] == "B"
    assert (
        first["usage"]["total_tokens"]
        == first["usage"]["prompt_tokens"] + first["usage"]["completion_tokens"]
    )


def test_errors_are_openai_shaped(fake_llm: ScriptedLLMServer) -> None:
    fake_llm.push(model="m", status=429, retry_after=2)
    request = urllib.request.Request(
        f"{fake_llm.base_url}/chat/completions",
        json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode(),
    )
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(request)
    assert caught.value.code == 429 and caught.value.headers["Retry-After"] == "2"
    assert json.loads(caught.value.read())["error"]["type"] == "rate_limit_error"
    status, body = _post(
        f"{fake_llm.base_url}/chat/completions",
        {"model": "nobody", "messages": [{"role": "user", "content": "hi"}]},
    )
    assert status == 500 and "'nobody'" in body["error"]["message"]


def test_models_endpoint_lists_scripted_models(fake_llm: ScriptedLLMServer) -> None:
    fake_llm.push(model="judge", content="x").push(model="policy", content="y")
    with urllib.request.urlopen(f"{fake_llm.base_url}/models") as response:
        assert [m["id"] for m in json.loads(response.read())["data"]] == ["judge", "policy"]


def test_a_script_with_unknown_fields_is_a_config_error(tmp_path: Path) -> None:
    script = tmp_path / "bad.yaml"
    script.write_text("- model: judge\n  reply: hi\n")
    with pytest.raises(ConfigError, match="unknown fields \\['reply'\\]"):
        ScriptedLLMServer().load_script(script)


def test_dev_fake_llm_command_serves_the_script(tmp_path: Path) -> None:
    script = tmp_path / "script.yaml"
    script.write_text(SCRIPT)
    process = subprocess.Popen(
        [
            str(Path(sys.executable).parent / "prchain"),
            "dev",
            "fake-llm",
            "--script",
            str(script),
            "--port",
            "0",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        base_url = process.stdout.readline().rsplit(" at ", 1)[1].strip()
        status, body = _post(
            f"{base_url}/chat/completions",
            {"model": "judge", "messages": [{"role": "user", "content": "hi"}]},
        )
        assert status == 200 and body["choices"][0]["message"]["content"] == '{"score": 1.0}'
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_a_server_that_took_the_scripted_servers_port_is_told_apart() -> None:
    """The session fixture's check (llm_fixtures.not_itself): the scripted server answers as
    itself; once it stops and another server takes its port, the check says what answered."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    from tests.support.llm_fixtures import not_itself

    class GoLike(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
            self.send_response(404)
            self.send_header("Content-Length", "19")
            self.end_headers()
            self.wfile.write(b"404 page not found\n")

        def log_message(self, *args: object) -> None:
            pass

    server = ScriptedLLMServer().start()
    assert not_itself(server) is None
    server.stop()
    assert not_itself(server) is not None and "no answer" in str(not_itself(server))
    other = ThreadingHTTPServer(("127.0.0.1", server.port), GoLike)
    threading.Thread(target=other.serve_forever, daemon=True).start()
    try:
        assert "page not found" in str(not_itself(server))
    finally:
        other.shutdown()
        other.server_close()
