"""`prchain mine` and `prchain stats` as a user runs them, bad input included."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from prchain.cli import main
from prchain.dev.repos import make_chain_repo


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


def _stats(runner: CliRunner, db: str) -> dict[str, object]:
    result = runner.invoke(main, ["stats", "--db", db, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_mine_a_clone_then_stats_json(runner: CliRunner, tmp_path: Path, sqlite_url: str) -> None:
    repo = make_chain_repo(tmp_path / "calc").path
    result = runner.invoke(main, ["mine", "--source", "git", str(repo), "--db", sqlite_url])
    assert result.exit_code == 0, result.output
    assert "acme/calc" in result.output and "prchain mine" in result.output
    data = _stats(runner, sqlite_url)
    assert {
        k: data[k] for k in ("repos", "prs", "references", "pr_pr_references", "prs_with_patch")
    } == {
        "repos": 1,
        "prs": 4,
        "references": 2,
        "pr_pr_references": 2,
        "prs_with_patch": 4,
    }
    assert data["references_by_type"] == {"fixes": 1, "follow_up": 1}
    assert data["references_by_kind"] == {"pr": 2}
    rerun = runner.invoke(main, ["mine", "--source", "git", str(repo), "--db", sqlite_url])
    assert rerun.exit_code == 0 and _stats(runner, sqlite_url)["prs"] == 4


def test_stats_tables_render(runner: CliRunner, sqlite_url: str) -> None:
    result = runner.invoke(main, ["stats", "--db", sqlite_url])
    assert result.exit_code == 0 and "Mined" in result.output and "PR → PR" in result.output


def test_name_limit_and_repos_file(runner: CliRunner, tmp_path: Path, sqlite_url: str) -> None:
    repo = make_chain_repo(tmp_path / "calc", remote=None).path
    listing = tmp_path / "repos.txt"
    listing.write_text(f"# clones to mine\n\n{repo}  # the calculator\n")
    args = [
        "mine",
        "--source",
        "git",
        "--repos-file",
        str(listing),
        "--name",
        "me/calc",
        "--limit",
        "3",
        "--db",
        sqlite_url,
    ]
    result = runner.invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "me/calc" in result.output and _stats(runner, sqlite_url)["prs"] == 3
    runner.invoke(main, args)  # the next run continues from the cursor
    assert _stats(runner, sqlite_url)["prs"] == 4


def _one_line_error(result: Result, fragment: str, status: int = 2) -> None:
    """A usage error (status 2 of the exit-status contract) on one line."""
    output = result.output
    assert result.exit_code == status, output
    lines = [line for line in output.splitlines() if line.startswith("error:")]
    assert len(lines) == 1 and fragment in lines[0], output
    assert "Traceback" not in output


def test_unknown_path(runner: CliRunner, tmp_path: Path, sqlite_url: str) -> None:
    result = runner.invoke(
        main, ["mine", "--source", "git", str(tmp_path / "nope"), "--db", sqlite_url]
    )
    _one_line_error(result, "does not exist")


def test_directory_that_is_not_a_clone(runner: CliRunner, tmp_path: Path, sqlite_url: str) -> None:
    result = runner.invoke(main, ["mine", "--source", "git", str(tmp_path), "--db", sqlite_url])
    _one_line_error(result, "not a git clone")


@pytest.mark.parametrize(
    "name", ["ruff", "astral-sh/", "/ruff", "a/b/c", "astral sh/ruff", "astral-sh/ruff!", "_x/ruff"]
)
def test_malformed_owner_repo(runner: CliRunner, sqlite_url: str, name: str) -> None:
    result = runner.invoke(main, ["mine", "--source", "github", name, "--db", sqlite_url])
    _one_line_error(result, "owner/name")


def test_malformed_name_for_a_clone(runner: CliRunner, tmp_path: Path, sqlite_url: str) -> None:
    repo = make_chain_repo(tmp_path / "calc").path
    result = runner.invoke(
        main, ["mine", "--source", "git", str(repo), "--name", "nope", "--db", sqlite_url]
    )
    _one_line_error(result, "owner/name")


def test_missing_token_is_one_clear_line(
    runner: CliRunner, sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("GITHUB_TOKEN", raising=False)
    result = runner.invoke(
        main, ["mine", "--source", "github", "astral-sh/ruff", "--db", sqlite_url]
    )
    _one_line_error(result, "GITHUB_TOKEN")


def test_nothing_to_mine_and_bad_since(runner: CliRunner, tmp_path: Path, sqlite_url: str) -> None:
    _one_line_error(runner.invoke(main, ["mine", "--db", sqlite_url]), "REPO")
    repo = make_chain_repo(tmp_path / "calc").path
    result = runner.invoke(
        main, ["mine", "--source", "git", str(repo), "--since", "last tuesday", "--db", sqlite_url]
    )
    _one_line_error(result, "--since")
