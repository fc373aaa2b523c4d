"""The LLM setup agent, driven by the scripted server through the real openai client, in a real
build sandbox: it repairs a recipe the planner could not finish, rolling one failed step back."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from prchain.core.errors import PrchainError
from prchain.dev.repos import git
from prchain.environments.buildbox import BoxSettings, BuildBox
from prchain.llm.client import LLMClient
from prchain.setup.agent import SetupAgentFailed, SetupRequest, run_setup_agent
from prchain.setup.config import SetupAgentConfig

pytestmark = pytest.mark.docker

TEST_COMMAND = "python3 -m pytest -q"
# The failed step leaves a half-made state behind, as a failed install would.
FAILED_STEP = (
    "touch /opt/half-installed && python3 -c 'import sys; sys.exit(\"no wheel for shim\")'"
)
GOOD_STEP = (
    'python3 -c "import os, site; d = site.getsitepackages()[0]; os.makedirs(d, exist_ok=True); '
    "open(os.path.join(d, 'shim.py'), 'w').write('VALUE = 42\\n')\""
)


def make_repo(path: Path) -> str:
    """A project whose code needs a module no manifest names: the planner cannot know it."""
    (path / "calcpkg").mkdir(parents=True)
    (path / "tests").mkdir()
    (path / "calcpkg" / "__init__.py").write_text(
        "from shim import VALUE\n\n\ndef answer():\n    return VALUE\n"
    )
    (path / "tests" / "test_answer.py").write_text(
        "from calcpkg import answer\n\n\ndef test_answer():\n    assert answer() == 42\n"
    )
    (path / "pyproject.toml").write_text('[project]\nname = "calcpkg"\nversion = "1.0"\n')
    git(path, "init", "-q", "-b", "main")
    git(path, "add", "-A")
    git(path, "commit", "-qm", "calc", date="2021-03-04T05:06:07Z")
    return git(path, "rev-parse", "HEAD")


def call(name: str, **args: str) -> list[dict[str, Any]]:
    return [{"name": name, "arguments": args}]


def request(path: Path, sha: str, base_image: str) -> SetupRequest:
    return SetupRequest(
        repo="acme/shimmed",
        clone=path,
        sha=sha,
        base_image=base_image,
        commands=[],
        test_command=TEST_COMMAND,
        failure="E   ModuleNotFoundError: No module named 'shim'\n1 error during collection",
    )


def test_the_agent_repairs_the_recipe_with_one_rolled_back_step(
    tmp_path, fake_llm, llm_config, docker_client, base_image
) -> None:
    sha = make_repo(tmp_path / "repo")
    for reply in (
        call("inspect", command="cat calcpkg/__init__.py"),
        call("run", command=FAILED_STEP),
        call("rollback"),
        call("inspect", command="test -e /opt/half-installed && echo present || echo absent"),
        call("run", command=GOOD_STEP),
        call("inspect", command=TEST_COMMAND),
        call("finish", test_command=TEST_COMMAND),
    ):
        fake_llm.push(model="env_setup", tool_calls=reply)
    client = LLMClient(llm_config)

    recipe = run_setup_agent(
        client, docker_client, request(tmp_path / "repo", sha, base_image), SetupAgentConfig()
    ).required()

    assert recipe.commands == [GOOD_STEP] and recipe.test_command == TEST_COMMAND
    assert recipe.rolled_back == 1 and recipe.replies == 7 and recipe.cost_usd > 0
    assert [s.rolled_back for s in recipe.steps if s.tool == "run"] == [True, False]
    requests = fake_llm.requests_for("env_setup")
    assert "No module named 'shim'" in requests[0]["messages"][1]["content"]
    assert "2021-03-04" in requests[0]["messages"][0]["content"]
    observations = [m["content"] for m in requests[-1]["messages"] if m["role"] == "tool"]
    assert "from shim import VALUE" in observations[0]
    assert "the step failed" in observations[1] and "absent" in observations[3]
    assert "1 passed" in observations[5]
    assert not fake_llm.pending()

    # The recipe stands on its own: replayed on a fresh copy of the base, the suite passes and the
    # rolled-back step's leftovers are nowhere.
    with BuildBox(docker_client, base_image, "acme/shimmed", tmp_path / "repo", sha) as box:
        for command in recipe.commands:
            assert box.run(command).ok
        assert "1 passed" in box.run(TEST_COMMAND).output
        assert box.run("test -e /opt/half-installed").exit_code == 1
        checkpoints = list(box.checkpoints)
    assert all(docker_client.image_id(image) is None for image in checkpoints)


def test_an_agent_that_gives_up_says_so_in_one_line(
    tmp_path, fake_llm, llm_config, docker_client, base_image
) -> None:
    sha = make_repo(tmp_path / "repo")
    fake_llm.push(model="env_setup", content="I think I should look around first.")
    fake_llm.push(model="env_setup", tool_calls=call("give_up", reason="shim is on no index"))
    result = run_setup_agent(
        LLMClient(llm_config),
        docker_client,
        request(tmp_path / "repo", sha, base_image),
        SetupAgentConfig(),
    )
    assert result.outcome == "gave_up" and result.commands == [] and result.replies == 2
    with pytest.raises(SetupAgentFailed) as caught:
        result.required()
    assert isinstance(caught.value, PrchainError)
    assert "\n" not in str(caught.value) and "shim is on no index" in str(caught.value)


def test_the_prompt_names_the_language_and_registries_of_the_ecosystem(
    tmp_path, fake_llm, llm_config, docker_client, base_image
) -> None:
    sha = make_repo(tmp_path / "repo")
    fake_llm.push(model="env_setup", tool_calls=call("give_up", reason="no toolchain"))
    rust = replace(request(tmp_path / "repo", sha, base_image), ecosystem="rust")
    run_setup_agent(LLMClient(llm_config), docker_client, rust, SetupAgentConfig())
    system = fake_llm.requests_for("env_setup")[0]["messages"][0]["content"]
    assert "a Rust repository" in system and "crates.io" in system
    assert "Python" not in system and "PyPI" not in system


def test_the_step_budget_stops_the_agent(
    tmp_path, fake_llm, llm_config, docker_client, base_image
) -> None:
    sha = make_repo(tmp_path / "repo")
    fake_llm.push(model="env_setup", tool_calls=call("inspect", command="true"), times=None)
    result = run_setup_agent(
        LLMClient(llm_config),
        docker_client,
        request(tmp_path / "repo", sha, base_image),
        SetupAgentConfig(max_steps=3),
    )
    assert result.outcome == "step_limit" and result.replies == 3


def test_the_box_matches_the_build_it_replays_in_and_rollback_restores_the_tree(
    tmp_path, docker_client, base_image
) -> None:
    sha = make_repo(tmp_path / "repo")
    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "tool").write_text("#!/bin/sh\necho tool says $ERA_VAR\n")
    (tools / "tool").chmod(0o755)
    settings = BoxSettings(
        src="/opt/prchain/src",
        binds={str(tools): ("/opt/prchain/bin", "ro")},
        environment={"ERA_VAR": "hello", "PATH": "/opt/prchain/bin:/usr/bin:/bin"},
    )
    with BuildBox(
        docker_client, base_image, "acme/shimmed", tmp_path / "repo", sha, settings=settings
    ) as box:
        assert box.run("pwd && tool").output.split() == [
            "/opt/prchain/src",
            "tool",
            "says",
            "hello",
        ]
        assert not box.run("touch /opt/prchain/bin/x").ok  # tools are read-only
        assert box.run("echo broken > calcpkg/__init__.py && rm -r tests").ok
        box.rollback()
        assert "from shim import VALUE" in box.run("cat calcpkg/__init__.py").output
        assert box.run("test -f tests/test_answer.py").ok
    assert not (tools / "x").exists()
