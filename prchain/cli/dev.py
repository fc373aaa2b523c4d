"""`prchain dev`: tools for demos and local development."""

from __future__ import annotations

import threading
from pathlib import Path

import click

from prchain.cli import main
from prchain.cli.safe import echo


@main.group()
def dev() -> None:
    """Development helpers: a demo repository and a scripted local LLM server, for demos and tests.

    Example:

    \b
      prchain dev fake-llm --script demo/llm-script.yaml --port 8765
    """


@dev.command("fake-llm")
@click.option(
    "--script",
    "script",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    required=True,
    help="YAML/JSON list of rules: {model, content, tool_calls, status, contains, times}.",
)
@click.option(
    "--port", default=8765, show_default=True, help="Port on 127.0.0.1 (0 picks a free one)."
)
@click.option(
    "--lenient",
    is_flag=True,
    help="Answer requests real servers refuse (null content, unknown roles, orphan tool results).",
)
def fake_llm(script: Path, port: int, lenient: bool) -> None:
    """Serve an OpenAI-compatible API on 127.0.0.1 that answers from a script, until Ctrl-C.

    Each rule answers requests for its `model` (omit it to match any model), optionally only
    when the last message contains `contains`, `times` times (null = forever). Point prchain at it
    with the two exports it prints. Requests a real server refuses get that server's error
    (`content: null` → 500 as from llama.cpp, an unknown role or a tool result without its call →
    400) unless --lenient.

    Example:

    \b
      prchain dev fake-llm --script demo/llm-script.yaml --port 8765 &
      export OPENAI_BASE_URL=http://127.0.0.1:8765/v1 OPENAI_API_KEY=dummy
      prchain queries build
    """
    from prchain.dev.fake_llm import ScriptedLLMServer

    server = ScriptedLLMServer(port=port, strict=not lenient)
    count = server.load_script(script)
    with server:
        echo(f"fake LLM serving {count} rules from {script} at {server.base_url}")
        echo(f"export OPENAI_BASE_URL={server.base_url} OPENAI_API_KEY=dummy")
        try:
            threading.Event().wait()
        except KeyboardInterrupt:
            echo(f"stopped after {len(server.requests)} requests")


@dev.command("make-repo")
@click.argument("path", type=click.Path(file_okay=False, path_type=Path))
def make_repo(path: Path) -> None:
    """Create a small real git repository whose history holds a 3-PR chain (#1 ← #2 ← #3).

    Squash and merge commits in GitHub's shapes, with a remote named acme/calc; the same history
    the test suite uses.

    Example:

    \b
      prchain dev make-repo data/demo/calc
      prchain mine --source git data/demo/calc
    """
    if path.exists() and any(path.iterdir()):
        raise click.BadParameter(f"{path} exists and is not empty", param_hint="PATH")
    from prchain.dev.repos import make_chain_repo

    repo = make_chain_repo(path)
    echo(f"made {path} with PRs {sorted(repo.prs)}")
