"""Issue 77, class 2, in the Java room: the gold of a two-stage chain resolves in a clean room.

On the code before, the surefire report script touched `report.start` beside root's report pipe,
in a directory the tester cannot write: no report reached root and no Java stage could pass in a
clean room. The tiny `calc` project (tests/support/calc_maven.py: JUnit and two plugins, one era)
is mined, set up, verified and exported; both gold stages resolve through `tasks eval`, and the
gold code written by an agent resolves in its rollout's clean room while a wrong one does not."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from prchain.store.db import make_engine, session_scope
from prchain.store.models import ChainStage
from prchain.verdicts.oracle import run_tests, stage_tests
from tests.support.calc_maven import (
    PACKAGE,
    SQUARE,
    TWICE,
    TWICE_ID,
    calc,
    make_calc,
)
from tests.support.era_runs import (
    chain_sandbox,
    invoke,
    remove_repo_images,
    verdicts_by_pr,
    write_config,
)

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.timeout(1800)]
REPO = f"java-room-test-{uuid.uuid4().hex[:8]}/calc"  # this run's own images


@pytest.fixture(scope="module")
def verified(
    tmp_path_factory: pytest.TempPathFactory, docker_client: Any, base_image: str
) -> Iterator[tuple[list[str], str, Path, Path]]:
    """(CLI options, store URL, clone, exported tasks), once per module: one era image."""
    work = tmp_path_factory.mktemp("java-room")
    clone = make_calc(work / "calc")
    config = write_config(work, {"suites": {"bookworm": "3.11"}, "extra_base_packages": []})
    url = f"sqlite:///{work / 'store.db'}"
    common = ["--config", str(config), "--db", url]
    try:
        assert invoke("mine", "--source", "git", "--name", REPO, str(clone), *common).exit_code == 0
        built = invoke("chains", "build", "--min-len", "2", "--max-len", "2", *common)
        assert built.exit_code == 0, built.output
        setup = invoke("env", "setup", *common)
        assert "0 not" in setup.output, setup.output
        invoke("tests", "verify", "--gold-runs", "1", *common)
        tasks = work / "tasks.jsonl"
        exported = invoke("tasks", "export", str(tasks), "--runnable", *common)
        assert exported.exit_code == 0, exported.output
        yield common, url, clone, tasks
    finally:
        remove_repo_images(docker_client, REPO, ("repo", "era", "sandbox"))


def test_both_gold_stages_resolve_through_tasks_eval(verified: Any, tmp_path: Path) -> None:
    common, url, _clone, tasks = verified
    found = verdicts_by_pr(url)
    # The stage runs only its own test class (`-Dtest=TwiceTest`): no PASS_TO_PASS.
    assert found[1].fail_to_pass == [TWICE_ID] and found[1].pass_to_pass == []
    results = tmp_path / "gold.jsonl"
    out = invoke("tasks", "eval", str(tasks), "--results", str(results), *common)
    assert "2 of 2 stages resolved" in out.output, out.output


def test_the_gold_resolves_in_a_rollouts_clean_room_and_a_wrong_change_does_not(
    verified: Any, tmp_path: Path
) -> None:
    _common, url, clone, _tasks = verified
    engine = make_engine(url)
    with session_scope(engine) as session:
        first = session.scalar(select(ChainStage.id).where(ChainStage.idx == 1))
    hidden = stage_tests(engine, first)
    assert hidden is not None and hidden.fail_to_pass == [TWICE_ID]
    with chain_sandbox(url, tmp_path / "logs", REPO, clone) as env:
        env.enter_stage(1)
        env.write_file(f"{PACKAGE}/Calc.java", calc(SQUARE, TWICE))
        gold = run_tests(env, hidden, timeout=600)
        assert gold.passed, (gold.outcomes, gold.output_tail)
        env.write_file(f"{PACKAGE}/Calc.java", calc(SQUARE, TWICE.replace("2 * n", "n + 1")))
        wrong = run_tests(env, hidden, timeout=600)
        assert not wrong.passed and wrong.outcomes[TWICE_ID] == "failed", wrong.outcomes
