"""No network to GitHub: one clear line at once, not minutes of retries."""

import socket

from click.testing import CliRunner

from prchain.cli import main


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_unreachable_api_fails_on_first_request_with_a_hint(
    sqlite_url: str, monkeypatch, tmp_path
) -> None:
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_not_a_real_token_0000000000000000")
    api = f"http://127.0.0.1:{_closed_port()}"
    result = CliRunner().invoke(
        main,
        [
            "mine",
            "acme/calc",
            "--db",
            sqlite_url,
            "--clone-dir",
            str(tmp_path / "clones"),
            "--set",
            f"miner.github.api_url={api}",
            "--set",
            "miner.github.backoff_seconds=30",
        ],
    )
    assert result.exit_code == 1
    assert f"cannot reach GitHub at {api}" in result.output
    assert "--source git" in result.output  # the hint says what to do instead
    assert "ghp_not_a_real_token" not in result.output
