"""`prchain run` with an engine and the scripted model (issue 78, acceptance 1): one command takes a
generated repository through every step (mine → chains → queries → environments → verdicts →
runnable export → gold evaluation → rollouts → trajectories) and prints the funnel; a second run
finds everything done and says so, step by step.

Everything it builds belongs to the made-up repository REPO (named afresh for each run; its images
carry REPO's slug and `prchain.repo` label), so removing them touches nothing else.
"""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result

from prchain.cli import main
from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.dev.repos import make_chain_repo
from prchain.environments.eras.build import cache_volume
from prchain.environments.eras.config import ErasConfig

pytestmark = [pytest.mark.docker, pytest.mark.slow]
EXAMPLES = Path(__file__).parents[2] / "examples"
REPO = f"run-test-{uuid.uuid4().hex[:8]}/calc"


def _run(repo: Path, config: Path, url: str, out: Path) -> Result:
    args = ["run", "--source", "git", "--name", REPO, str(repo), "--db", url]
    return CliRunner().invoke(main, [*args, "--config", str(config), "--out", str(out)])


def _steps(out: Path) -> dict[str, tuple[str, str]]:
    record = json.loads((out / "funnel.json").read_text())
    return {s["step"]: (s["status"], s["detail"]) for s in record["steps"]}


def test_one_command_runs_every_step_and_a_second_run_does_nothing_twice(
    docker_client: Any, fake_llm: ScriptedLLMServer, sqlite_url: str, tmp_path: Path
) -> None:
    fake_llm.load_script(EXAMPLES / "demo-llm.yaml")
    repo = make_chain_repo(tmp_path / "calc").path
    config = tmp_path / "prchain.yaml"
    demo = yaml.safe_load((EXAMPLES / "demo.yaml").read_text())
    config.write_text(yaml.safe_dump({**demo, "environment": {"log_dir": str(tmp_path / "logs")}}))
    out = tmp_path / "out"
    try:
        first = _run(repo, config, sqlite_url, out)
        steps = _steps(out)
        assert {name: status for name, (status, _) in steps.items()} == dict.fromkeys(
            steps, "done"
        ), first.output
        assert steps["env setup"][1] == "1 of 1 eras verified", first.output
        assert steps["tests verify"][1].startswith("1 of 3 stages with FAIL_TO_PASS"), first.output
        assert steps["tasks eval (gold)"][1] == "1 of 1 gold patches resolve in the clean room"
        assert steps["rollout"][1] == "1 chains rolled out"
        (calc,) = json.loads((out / "funnel.json").read_text())["repositories"]
        columns = ("PRs", "stages", "with tests", "tested", "FAIL_TO_PASS", "gold resolves")
        assert [calc[c] for c in columns] == [4, 3, 1, 1, 1, 1], first.output
        assert calc["kept trajectories"] >= 1, first.output
        assert f"{REPO} " in first.output and "funnel by language" in first.output

        again = _run(repo, config, sqlite_url, out)
        steps = _steps(out)
        assert steps["mine"] == ("done", "0 new PRs in 1 repositories"), again.output
        assert steps["chains build"] == ("done", "1 chains, 0 of them new")
        assert steps["queries build"] == ("done", "0 queries written, 3 there already, 0 failed")
        assert steps["tests verify"][1].endswith("(3 stored before)"), again.output
        assert steps["rollout"] == ("done", "0 chains rolled out"), again.output
        assert json.loads((out / "funnel.json").read_text())["repositories"] == [calc]
    finally:
        for image in docker_client.images({"prchain.repo": REPO}):
            for tag in image["tags"]:
                docker_client.remove_image(tag)
        docker_client.remove_volume(cache_volume(ErasConfig(), REPO))
