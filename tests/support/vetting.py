"""What the `chains vet` tests share: the settings that name the scripted vetter, and the CLI."""

from __future__ import annotations

from click.testing import CliRunner, Result

from prchain.cli import main

SETTINGS = (
    # The generated histories change a few lines per PR, under the substance minimum of real ones.
    "--set",
    "chains.min_chain_code_lines=0",
    "--set",
    "llm.models.link_vetter=link_vetter",
    "--set",
    "llm.max_retries=2",
    "--set",
    "llm.retry_backoff_seconds=0.01",
)


def run(*args: str, code: int = 0) -> Result:
    """`prchain *args` in-process, wide enough that table rows stay on one line."""
    result = CliRunner(env={"COLUMNS": "250"}).invoke(main, list(args))
    assert result.exit_code == code, result.output
    return result


def chains_listed(url: str) -> str:
    return run("chains", "list", "--db", url).output
