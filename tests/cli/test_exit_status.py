"""The exit-status contract (prchain.cli.exits), command by command: 0 all work done; 1 some work
failed or was skipped for a reason the user must act on; 2 usage or configuration error.

Every command, including those added later, is walked for the usage and configuration cases and
for the contract in its --help; the table below runs each command's own failure cases."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from click.testing import CliRunner, Result
from sqlalchemy import insert, update

from prchain.cli import main
from prchain.cli.exits import CONTRACT
from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.store.db import session_scope
from prchain.store.models import ChainStage, Rollout
from prchain.store.opener import make_engine
from tests.agent.conftest import seed_chain
from tests.support.llm_fixtures import make_test_llm_config


def _leaves(
    group: click.Group, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], click.Command]]:
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            yield from _leaves(command, (*path, name))
        else:
            yield (*path, name), command


COMMANDS = [path for path, _ in _leaves(main)]
# Commands that read the config (--set): a bad setting is a configuration error.
CONFIGURED = [path for path, c in _leaves(main) if "overrides" in {p.name for p in c.params}]


def run(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner(env=env).invoke(main, list(args))


def test_the_contract_is_in_the_top_level_help_and_the_readme() -> None:
    text = " ".join(run("--help").output.split())
    assert " ".join(CONTRACT.split()) in text
    readme = (Path(__file__).parents[2] / "README.md").read_text()
    assert "Exit status" in readme and "0" in readme


@pytest.mark.parametrize("path", COMMANDS, ids=" ".join)
def test_every_command_states_the_contract_and_refuses_an_unknown_option_with_2(
    path: tuple[str, ...],
) -> None:
    shown = run(*path, "--help")
    assert shown.exit_code == 0 and " ".join(CONTRACT.split()) in " ".join(shown.output.split())
    assert run(*path, "--no-such-option").exit_code == 2


@pytest.mark.parametrize("path", CONFIGURED, ids=" ".join)
def test_every_configured_command_exits_2_on_a_configuration_error(
    path: tuple[str, ...], tmp_path: Path
) -> None:
    # Arguments a command needs come before the bad setting; the setting fails first.
    needs = {"chains show": ["1"], "trajectories show": ["1"], "p2t graph": ["1:1"]}
    needs |= {"export": [str(tmp_path / "x.jsonl")], "tasks export": [str(tmp_path / "t.jsonl")]}
    needs |= {"report": [str(tmp_path / "report")], "env build": ["acme/calc"]}
    needs |= {"p2t curate": ["--chain", "1"]}
    args = [*path, *needs.get(" ".join(path), []), "--set", "no_such_section.key=1"]
    result = run(*args, "--db", f"sqlite:///{tmp_path / 'store.db'}")
    assert result.exit_code == 2, result.output
    assert "error:" in result.output.lower() and "Traceback" not in result.output


# -- each command's own failure cases -------------------------------------------------------------


@pytest.fixture
def store(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    assert run("stats", "--db", url).exit_code == 0
    return url


def _config(tmp_path: Path) -> str:
    path = tmp_path / "prchain.yaml"
    path.write_text(json.dumps({"llm": make_test_llm_config().model_dump(mode="json")}))
    return str(path)


def test_per_command_failure_cases(store: str, tmp_path: Path) -> None:
    db = ["--db", store]
    no_token = {"GITHUB_TOKEN": "", "OPENAI_BASE_URL": "", "OPENAI_API_KEY": ""}
    cases: list[tuple[list[str], int]] = [
        (["stats", *db], 0),
        (["stats", "--db", "postgresql+psycopg://x:y@127.0.0.1:1/none"], 1),  # store unreachable
        (["mine", *db], 2),  # no repository given
        (["mine", "--source", "git", str(tmp_path / "absent"), *db], 2),
        (["mine", "acme/calc", *db], 2),  # GitHub without a token
        (["mine", "not a name", *db], 2),
        (["chains", "show", "99", *db], 1),  # nothing mined yet: run mine first
        (["queries", "build", *db], 1),  # no chain to write queries for
        (["rollout", *db], 1),  # no chain has queries
        (["rollout", "--chain", "99", *db], 1),
        (["trajectories", "show", "9", *db], 1),
        (["export", "/dev/full", *db], 2),
        (["report", "/proc/no-such-dir/report", *db], 2),
        (["tests", "verify", *db], 1),
        (["config", "show", "--set", "llm=["], 2),
        (["dev", "make-repo", str(tmp_path)], 2),  # not empty
        (["dev", "fake-llm", "--script", str(tmp_path / "absent.yaml")], 2),
    ]
    for args, status in cases:
        result = run(*args, env=no_token)
        assert result.exit_code == status, (args, result.output)
        assert "Traceback" not in result.output, (args, result.output)


def test_queries_build_exits_1_when_a_query_could_not_be_written_and_2_without_a_server(
    fake_llm: ScriptedLLMServer, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    seed_chain(url, tmp_path, prs=(1,))
    with session_scope(make_engine(url)) as session:
        session.execute(update(ChainStage).values(query=None))
    args = ["queries", "build", "--config", _config(tmp_path), "--db", url]
    unset = {"OPENAI_BASE_URL": "", "OPENAI_API_KEY": ""}
    assert run(*args, env=unset).exit_code == 2  # no server configured
    # A reply that is never a query (code, not prose): the stage is skipped, the run goes on.
    fake_llm.push(model="query_constructor", content="```python\nx = 1\n```", times=None)
    fake_llm.push(model="overview", content="The calculator grows.", times=None)
    failed = run(*args)
    assert failed.exit_code == 1, failed.output
    assert "could not be written" in failed.output and "Traceback" not in failed.output
    # The server down: the run stops with one line, and the status says work failed.
    fake_llm.reset()
    fake_llm.push(status=500, times=None)
    down = run(*args)
    assert down.exit_code == 1 and "HTTP 500" in down.output, down.output


def test_rollout_when_every_chain_is_finished_is_done_not_a_hint(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    chain = seed_chain(url, tmp_path, prs=(1,)).chain_id
    with session_scope(make_engine(url)) as session:
        session.execute(
            insert(Rollout), [{"chain_id": chain, "status": "kept", "conflict_policy": "strict"}]
        )
    result = run("rollout", "--db", url)
    assert result.exit_code == 0, result.output
    assert "nothing to do" in result.output and "--redo" in result.output
    assert "earlier pipeline stage" not in result.output


@pytest.mark.docker
def test_rollout_exits_1_when_a_rollout_failed(fake_llm: ScriptedLLMServer, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    seed_chain(url, tmp_path, prs=(1,))
    fake_llm.push(model="policy", status=500, times=None)
    result = run("rollout", "--config", _config(tmp_path), "--db", url)
    assert result.exit_code == 1, result.output
    assert "1 rollout failed" in result.output and "Traceback" not in result.output
