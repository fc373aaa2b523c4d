"""Each failure of issue 16's finding 8 is one `error:` line plus a `hint:` line, never a traceback."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result
from sqlalchemy import Engine
from sqlalchemy.engine import make_url

from prchain.cli import main
from tests.conftest import POSTGRES_URL


def run(*args: str) -> Result:
    return CliRunner().invoke(main, list(args))


def one_line_error(result: Result, fragment: str, hint: str = "", status: int = 1) -> str:
    """One error line and one hint; `status` 2 for usage and configuration errors, else 1."""
    output = result.output
    assert result.exit_code == status, output
    errors = [line for line in output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and fragment in errors[0], output
    hints = [line for line in output.splitlines() if line.startswith("hint:")]
    assert len(hints) == 1 and hint in hints[0], output
    assert "Traceback" not in output and isinstance(result.exception, SystemExit)
    return errors[0]


@pytest.mark.postgres
def test_wrong_database_password(postgres_admin: Engine) -> None:
    url = make_url(POSTGRES_URL).set(password="not-the-password").render_as_string(False)
    line = one_line_error(run("stats", "--db", url), "password authentication failed", "--db")
    assert "not-the-password" not in line


def test_database_url_that_is_not_a_url() -> None:
    one_line_error(run("stats", "--db", "not a url"), "is not a database URL", "sqlite:///")


def test_database_server_that_does_not_answer() -> None:
    url = "postgresql+psycopg://prchain:secret-pw@127.0.0.1:1/prchain"
    line = one_line_error(run("stats", "--db", url), "cannot use the store", "prchain config show")
    assert "secret-pw" not in line


def test_corrupted_sqlite_file(tmp_path: Path) -> None:
    db = tmp_path / "prchain.db"
    db.write_bytes(b"this is not a database\n" * 500)
    one_line_error(run("stats", "--db", f"sqlite:///{db}"), "not a usable SQLite database")


def test_invalid_yaml_config(tmp_path: Path) -> None:
    config = tmp_path / "prchain.yaml"
    config.write_text("llm:\n  models: [judge, policy\n  workers: 2\n")
    line = one_line_error(run("stats", "--config", str(config)), "is not valid YAML", status=2)
    assert "line " in line


def test_invalid_yaml_in_a_set_override() -> None:
    one_line_error(
        run("config", "show", "--set", "llm.models=[a, b"), "is not a YAML value", status=2
    )


@pytest.fixture
def empty_store(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    assert run("stats", "--db", url).exit_code == 0
    return url


def test_unwritable_export_path(empty_store: str, tmp_path: Path) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    one_line_error(
        run("export", str(blocker / "out.jsonl"), "--db", empty_store),
        "cannot write",
        "regular",
        status=2,
    )


@pytest.mark.parametrize("kind", ["device", "fifo", "symlink to device"])
def test_export_refuses_special_targets(empty_store: str, tmp_path: Path, kind: str) -> None:
    target = tmp_path / "out.jsonl"
    if kind == "device":
        target = Path("/dev/full")
    elif kind == "fifo":
        os.mkfifo(target)
    else:
        target.symlink_to("/dev/null")
    before = os.lstat(target)
    one_line_error(
        run("export", str(target), "--db", empty_store), "refusing", "regular file", status=2
    )
    after = os.lstat(target)
    assert (after.st_mode, after.st_ino) == (before.st_mode, before.st_ino)  # left as it was
    assert not [p for p in target.parent.iterdir() if p.name.endswith(".partial")]


def test_export_replaces_a_regular_file_through_a_temp_file(
    empty_store: str, tmp_path: Path
) -> None:
    target = tmp_path / "out.jsonl"
    target.write_text("old\n")
    assert run("export", str(target), "--db", empty_store).exit_code == 0
    assert target.read_text() == "" and target.stat().st_mode & 0o777 == 0o644
    written = sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("store.db"))
    # no temp file left behind; the dataset card and the manifest are written beside the export
    assert written == ["README.md", "out.config.json", "out.jsonl", "out.manifest.json"]


class _HtmlPage(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
        body = b"<html><body>Please log in to the proxy</body></html>"
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_POST = do_GET  # noqa: N815

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def html_server() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _HtmlPage)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_github_reply_that_is_not_json(
    html_server: str, sqlite_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_not_a_real_token_0000000000000000")
    result = run(
        "mine",
        "acme/calc",
        "--db",
        sqlite_url,
        "--clone-dir",
        str(tmp_path / "clones"),
        "--set",
        f"miner.github.api_url={html_server}",
    )
    line = one_line_error(result, "not JSON", "miner.github.api_url")
    assert "Please log in" in line


def test_the_hint_names_a_command_that_exists(monkeypatch: pytest.MonkeyPatch) -> None:
    one_line_error(
        run("stats", "--set", "store.nope=1"), "invalid configuration", "config show", status=2
    )
    monkeypatch.setenv("OPENAI_API_KEY", "sk-configured-secret-value-123456")
    result = run(
        "config", "show", "--db", "postgresql+psycopg://me:db-password-1@db.example/prchain"
    )
    assert result.exit_code == 0, result.output
    shown = yaml.safe_load(result.output)
    assert shown["store"]["url"] == "postgresql+psycopg://me:***@db.example/prchain"
    assert "db-password-1" not in result.output and "sk-configured" not in result.output
    assert shown["llm"]["api_key_env"] == "OPENAI_API_KEY"


def test_rollout_of_a_chain_that_does_not_exist(empty_store: str) -> None:
    one_line_error(
        run("rollout", "--chain", "999", "--db", empty_store), "chain 999 does not exist"
    )
