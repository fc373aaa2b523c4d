"""The runnable stage record (prchain/verdicts/stage.py) on a real store: read once from the store,
written by `tasks export --runnable` and read back by `tasks eval` as the same record (less what
a task file does not carry), and the same record behind `tests verify`'s era and T(p̂)'s tests."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from sqlalchemy import Engine
from sqlalchemy.orm import Session

from prchain.chains.building.build import build_chains
from prchain.chains.config import ChainsConfig
from prchain.store.environments import Environments
from prchain.verdicts.oracle import stage_tests
from prchain.verdicts.runnable import export_runnable, placed
from prchain.verdicts.stage import (
    RunnableStage,
    StageImage,
    environment_block,
    from_row,
    runnable_stages,
    stage_setup,
)
from prchain.verdicts.taskfile import read_tasks
from prchain.verdicts.verify import era_tests
from tests.support.chain_store import StoreBuilder

ERA = "prchain/era-acme-calc:2024"
STAGE = StageImage("stage:2024", "sha256:" + "1" * 64, ERA, "sha256:" + "2" * 64)


def _resolve(repo: str, clone: str, era_image: str) -> StageImage | str:
    """As `tasks export` resolves on an engine that has the era's image: its stage layer."""
    return STAGE if era_image == ERA else f"era image {era_image} is not in the Docker engine"


@pytest.fixture
def three_stages(sqlite_engine: Engine) -> tuple[Engine, int]:
    """Stage 1 runs (a verified era, usable tests); 2 has an era and unusable tests; 3 has no era."""
    store = StoreBuilder(sqlite_engine, repo="acme/calc", clone_path="/nowhere")
    for number in (1, 2, 3):
        store.pr(number, ["calc/ops.py", "tests/test_ops.py"], title=f"Change {number}")
        if number > 1:
            store.ref(number, number - 1, "follow_up", evidence=f"Follow-up to #{number - 1}")
    store.write()
    build_chains(ChainsConfig(min_chain_code_lines=0), sqlite_engine)
    with Session(sqlite_engine) as session:
        stages = runnable_stages(session)
    first, second, _ = (s.stage_id for s in stages)
    eras = Environments(sqlite_engine)
    eras.save_recipe({
        "repo_id": 1, "era_key": "k2024", "ecosystem": "python", "era_date": "2024-01-01",
        "base_sha": "b" * 40, "status": "verified", "method": "planner", "image": ERA,
        "suite": "bookworm", "interpreter": "3.12", "commands": ["pip install -e ."],
        "notes": ["pinned"], "test_command": "python -m pytest {files}",
        "setup_command": "python setup.py build_ext -i",
        "verification": {"excluded": {"calc/slow": "needs a GPU"}},
    })  # fmt: skip
    eras.save_stage_eras([
        {"chain_stage_id": s, "repo_id": 1, "era_key": "k2024", "base_sha": "b" * 40}
        for s in (first, second)
    ])  # fmt: skip
    for stage, status in ((first, "usable"), (second, "unusable")):
        eras.save_verification({
            "chain_stage_id": stage, "recipe": f"r{stage}", "status": status,
            "reason": None if status == "usable" else "environment broken",
            "test_command": "python -m pytest tests/test_ops.py", "test_files": ["tests/test_ops.py"],
            "fail_to_pass": ["tests/test_ops.py::test_new"] if status == "usable" else [],
            "pass_to_pass": ["tests/test_ops.py::test_old"], "runs": {},
        })  # fmt: skip
    return sqlite_engine, stages[0].chain_id


def _travels(stage: RunnableStage) -> RunnableStage:
    """The record as a task file carries it: no stage id, no clone, no era template or units."""
    era = stage.era and replace(stage.era, test_command="", excluded={})
    return replace(stage, stage_id=0, clone_path="", era=era)


def test_store_to_record_to_row_to_record(three_stages: tuple[Engine, int], tmp_path: Path) -> None:
    engine, chain = three_stages
    with Session(engine) as session:
        read = runnable_stages(session, chain_ids=[chain])
    first, second, third = read
    assert (
        first.era is not None
        and first.era.image == ERA
        and first.era.excluded == {"calc/slow": "needs a GPU"}
    )
    assert first.tests is not None and first.tests.fail_to_pass == ("tests/test_ops.py::test_new",)
    assert second.tests is not None and second.tests.reason == "environment broken"
    assert third.era is None and third.tests is None and third.usable_era is None

    out = tmp_path / "tasks.jsonl"
    summary = export_runnable(engine, out, _resolve)
    assert (summary.stages, summary.runnable) == (3, 1)
    (row,) = read_tasks(out)
    for stage, record in zip(row["stages"], read, strict=True):
        back = from_row(row, stage)
        image = _resolve(record.repo, record.clone_path, record.era.image) if record.era else ""
        assert back == _travels(placed(record, image, unverified=False))
        assert environment_block(back) == stage["environment"]  # row → record → the same row
    # a row made by hand (the attack tests' one-stage chains) may hold no checkout: eval needs none
    bare = {**row["stages"][0], "environment": dict(row["stages"][0]["environment"])}
    del bare["environment"]["checkout"]
    placed_bare = from_row(row, bare).placement
    assert placed_bare is not None and placed_bare.checkout == () and placed_bare.runnable
    kinds = [from_row(row, s).placement for s in row["stages"]]
    assert [(p.runnable, p.not_runnable) for p in kinds if p is not None] == [
        (True, ""), (False, "tests unusable"), (False, "no environment")
    ]  # fmt: skip
    flat = [
        json.loads(line) for line in out.with_name("tasks.stages.jsonl").read_text().splitlines()
    ]
    assert [f["FAIL_TO_PASS"] for f in flat] == [list(first.tests.fail_to_pass)]


def test_verify_and_the_rollout_s_tests_read_the_same_record(
    three_stages: tuple[Engine, int],
) -> None:
    engine, chain = three_stages
    with Session(engine) as session:
        first, _, third = runnable_stages(session, chain_ids=[chain])
    setup = stage_setup(engine, first.stage_id)
    assert setup is not None and setup.era == first.era and setup.base_sha == first.base_sha
    tests = era_tests(setup.era)
    assert tests is not None and (tests.image, tests.setup, tests.excluded) == (
        ERA, "python setup.py build_ext -i", {"calc/slow": "needs a GPU"}
    )  # fmt: skip
    hidden = stage_tests(engine, first.stage_id)
    assert hidden is not None and first.tests is not None
    assert (hidden.fail_to_pass, hidden.test_command) == (
        list(first.tests.fail_to_pass), first.tests.test_command
    )  # fmt: skip
    assert hidden.test_patch == first.gold_test_patch and hidden.ecosystem == "python"
    assert stage_tests(engine, third.stage_id) is None
    assert era_tests(stage_setup(engine, third.stage_id).era) is None  # type: ignore[union-attr]


def test_a_stage_to_verify_is_a_work_item_as_before(three_stages: tuple[Engine, int]) -> None:
    """`tests verify` and `env setup` hand stages to the backends as work items: hashable and
    picklable, with its era."""
    import pickle

    from prchain.verdicts.verify import find_stages

    engine, chain = three_stages
    jobs = find_stages(engine, [chain])
    assert len({*jobs}) == 3 and pickle.loads(pickle.dumps(jobs)) == jobs
    assert jobs[0].usable_era is not None and jobs[2].era is None
