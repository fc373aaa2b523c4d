"""Runnable rows without an engine: which stages run and why the others do not, the flat row's
fields, and the inputs `tasks eval` refuses with one clear line. (The images themselves, their
journey and the evaluation: test_runnable_tasks.py, with real containers.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from prchain.chains.building.build import build_chains
from prchain.chains.config import ChainsConfig
from prchain.cli import main
from prchain.core.errors import ConfigError
from prchain.store.models import ChainStage, EnvRecipe, StageEra, StageVerification
from prchain.verdicts.runnable import NOT_RUNNABLE, export_runnable, flat_path
from prchain.verdicts.stage import StageImage
from prchain.verdicts.taskfile import ENVIRONMENT_KEYS, read_predictions, read_tasks
from tests.support.chain_store import StoreBuilder

ERA_IMAGES = {"prchain/era-acme-calc:ok": StageImage("stage:ok", "sha256:" + "1" * 64, "era:ok", "sha256:" + "2" * 64)}  # fmt: skip


def _resolve(repo: str, clone: str, era_image: str) -> StageImage | str:
    """The engine as the export sees it: only the `ok` era image is there."""
    return ERA_IMAGES.get(era_image) or f"era image {era_image} is not in the Docker engine"


def _chain_of(engine: Engine, length: int) -> list[int]:
    store = StoreBuilder(engine, repo="acme/calc", clone_path="/nowhere")
    for number in range(1, length + 1):
        store.pr(number, ["calc/ops.py", "tests/test_ops.py"], title=f"Change {number}")
        if number > 1:
            store.ref(number, number - 1, "follow_up", evidence=f"Follow-up to #{number - 1}")
    store.write()
    build_chains(ChainsConfig(min_chain_code_lines=0), engine)
    with Session(engine) as session:
        return list(session.scalars(select(ChainStage.id).order_by(ChainStage.idx)))


def _era(
    session: Session, stage: int, key: str, status: str, image: str, ecosystem: str = "python"
) -> None:
    values = {"ecosystem": ecosystem, "era_date": "2024-01-01", "base_sha": "b" * 40, "method": "planner"}  # fmt: skip
    if session.scalar(select(EnvRecipe).where(EnvRecipe.era_key == key)) is None:  # one per era
        session.add(EnvRecipe(repo_id=1, era_key=key, status=status, image=image, test_command="python -m pytest {files}", **values))  # fmt: skip
    session.add(StageEra(chain_stage_id=stage, repo_id=1, era_key=key, base_sha="b" * 40))


def _tests(session: Session, stage: int, status: str, reason: str | None = None) -> None:
    f2p = ["tests/test_ops.py::test_new"] if status == "usable" else []
    session.add(
        StageVerification(
            chain_stage_id=stage,
            recipe=f"r{stage}",
            status=status,
            reason=reason,
            test_command="python -m pytest -p no:cacheprovider tests/test_ops.py",
            test_files=["tests/test_ops.py"],
            fail_to_pass=f2p,
            pass_to_pass=["tests/test_ops.py::test_old"],
        )
    )


@pytest.fixture
def five_stages(sqlite_engine: Engine) -> Engine:
    """Stage 1 runs; 2 has no era; 3's era did not verify; 4's image is gone; 5's tests were
    never verified; (a sixth would be `tests unusable`: covered with containers)."""
    s1, s2, s3, s4, s5 = _chain_of(sqlite_engine, 5)
    with Session(sqlite_engine) as session, session.begin():
        _era(session, s1, "ok", "verified", "prchain/era-acme-calc:ok")
        _tests(session, s1, "usable")
        _era(session, s3, "bad", "unverified", "prchain/era-acme-calc:ok")
        _era(session, s4, "gone", "verified", "prchain/era-acme-calc:gone")
        _era(session, s5, "ok", "verified", "prchain/era-acme-calc:ok")
        for stage in (s3, s4):
            _tests(session, stage, "usable")
    return sqlite_engine


def test_each_stage_is_runnable_or_says_why_not(five_stages: Engine, tmp_path: Path) -> None:
    out = tmp_path / "tasks.jsonl"
    summary = export_runnable(five_stages, out, _resolve)
    assert (summary.chains, summary.stages, summary.runnable) == (1, 5, 1)
    assert dict(summary.not_runnable) == {kind: 1 for kind in NOT_RUNNABLE[:4]}
    env = [s["environment"] for s in read_tasks(out)[0]["stages"]]
    assert [e["not_runnable"] for e in env] == ["", *NOT_RUNNABLE[:4]]
    assert env[3]["reason"] == "era image prchain/era-acme-calc:gone is not in the Docker engine"
    assert (env[0]["image"], env[0]["era_image"], env[0]["log_parser"]) == ("stage:ok", "era:ok", "pytest")  # fmt: skip
    assert "PYTEST_ADDOPTS" in env[0]["test_script"] and env[0]["test_script"].endswith("tests/test_ops.py")  # fmt: skip
    assert summary.images == {"stage:ok": "sha256:" + "1" * 64}


def test_an_era_no_room_recognised_is_one_stage_not_runnable(
    sqlite_engine: Engine, tmp_path: Path
) -> None:
    """vmihailenco/msgpack's 2015 base (before go.mod) is stored as ecosystem `unknown`: the
    export failed whole on it ("unknown ecosystem 'unknown'"); its stage is not runnable, the
    chain's other stage is."""
    first, second = _chain_of(sqlite_engine, 2)
    with Session(sqlite_engine) as session, session.begin():
        _era(session, first, "old", "unverified", "", ecosystem="unknown")
        _era(session, second, "ok", "verified", "prchain/era-acme-calc:ok")
        _tests(session, second, "usable")
    summary = export_runnable(sqlite_engine, tmp_path / "tasks.jsonl", _resolve, unverified=True)
    assert (summary.stages, summary.runnable, dict(summary.not_runnable)) == (
        2, 1, {"no environment": 1}
    )  # fmt: skip
    old, ok = (s["environment"] for s in read_tasks(tmp_path / "tasks.jsonl")[0]["stages"])
    assert (old["ecosystem"], old["log_parser"], old["test_script"]) == ("unknown", "", "")
    assert ok["log_parser"] == "pytest" and ok["runnable"]


def test_unverified_environments_run_when_asked(five_stages: Engine, tmp_path: Path) -> None:
    summary = export_runnable(five_stages, tmp_path / "tasks.jsonl", _resolve, unverified=True)
    assert summary.runnable == 2 and "environment not verified" not in summary.not_runnable


def test_the_flat_row_maps_the_stage_as_documented(five_stages: Engine, tmp_path: Path) -> None:
    out = tmp_path / "tasks.jsonl"
    export_runnable(five_stages, out, _resolve)
    chain = read_tasks(out)[0]
    stage = chain["stages"][0]
    (row,) = [json.loads(line) for line in flat_path(out).read_text().splitlines()]
    env, config = stage["environment"], row["install_config"]
    assert (row["image_name"], row["image_digest"], row["language"]) == (env["image"], env["image_id"], "python")  # fmt: skip
    assert (config["test_cmd"], config["log_parser"], config["setup_cmd"]) == (env["test_script"], "pytest", "")  # fmt: skip
    assert config["install"][-1].endswith(f"checkout -q --detach {stage['base_commit']}")
    assert {k: row[k] for k in ("instance_id", "patch", "test_patch", "FAIL_TO_PASS")} == {
        k: stage[k] for k in ("instance_id", "patch", "test_patch", "FAIL_TO_PASS")
    }
    assert (row["chain_id"], row["stage_idx"], row["chain_length"]) == (chain["chain_id"], 1, 5)


def test_eval_refuses_the_flat_form_and_a_plain_export(five_stages: Engine, tmp_path: Path) -> None:
    out = tmp_path / "tasks.jsonl"
    export_runnable(five_stages, out, _resolve)
    with pytest.raises(ConfigError, match="line 1 is not a chain with runnable stages"):
        read_tasks(flat_path(out))
    out.write_text("{not json\n")
    with pytest.raises(ConfigError, match="line 1 is not JSON"):
        read_tasks(out)


def test_a_task_file_whose_stage_lacks_an_environment_key_is_one_line(
    five_stages: Engine, tmp_path: Path
) -> None:
    """Every key the export writes is one `read_tasks` asks for, and a file without one of them
    is refused with the stage and the key named (it ended `tasks convert` in a traceback)."""
    out = tmp_path / "tasks.jsonl"
    export_runnable(five_stages, out, _resolve)
    chain = read_tasks(out)[0]
    assert all(set(ENVIRONMENT_KEYS) <= set(s["environment"]) for s in chain["stages"])
    del chain["stages"][1]["environment"]["era"]
    out.write_text(json.dumps(chain) + "\n")
    with pytest.raises(ConfigError, match="line 1: stage 2's environment has no `era`"):
        read_tasks(out, ENVIRONMENT_KEYS)
    assert read_tasks(out) == [chain]  # the image commands read the image names alone


@pytest.mark.parametrize(
    "text",
    [
        '{"instance_id": "a-1", "model_patch": "P", "model_name_or_path": "m"}\n',
        '[{"instance_id": "a-1", "model_patch": "P", "model_name_or_path": "m"}]',
        '{"a-1": {"instance_id": "a-1", "model_patch": "P", "model_name_or_path": "m"}}',
    ],
    ids=["jsonl", "list", "keyed"],
)
def test_predictions_in_each_of_swe_bench_s_shapes(tmp_path: Path, text: str) -> None:
    path = tmp_path / "preds.json"
    path.write_text(text)
    found = read_predictions(path)
    assert (found.model, found.predictions) == ("m", {"a-1": "P"})


def test_a_prediction_without_an_instance_id_is_one_clear_line(tmp_path: Path) -> None:
    path = tmp_path / "preds.jsonl"
    path.write_text('{"model_patch": "P"}\n{"instance_id": "a-2", "model_patch": "Q"}\n')
    with pytest.raises(ConfigError, match="a prediction without an instance_id") as raised:
        read_predictions(path)
    assert "\n" not in str(raised.value) and "instance_id" in (raised.value.hint or "")


def test_eval_with_nothing_to_run_says_so_in_one_line(five_stages: Engine, tmp_path: Path) -> None:
    out = tmp_path / "tasks.jsonl"
    export_runnable(five_stages, out, _resolve)
    preds = tmp_path / "preds.jsonl"
    preds.write_text('{"instance_id": "someone__else-9", "model_patch": ""}\n')
    result = CliRunner().invoke(main, ["tasks", "eval", str(out), "--predictions", str(preds)])
    assert result.exit_code == 1
    assert "error: no runnable stage of" in result.output and "name none" in result.output


@pytest.mark.parametrize(
    ("field", "value"),
    [("chain_id", "1/../../escaped"), ("idx", "1/../../../escaped"), ("instance_id", "../escaped")],
)
def test_a_task_file_whose_names_are_paths_is_refused_before_anything_is_written(
    five_stages: Engine, tmp_path: Path, field: str, value: str
) -> None:
    """Issue 77, round 5: `tasks convert` names directories after the chain id, the stage index
    and the instance id; a hostile task file's `1/../../escaped` wrote a Harbor task directory
    outside OUT."""
    out = tmp_path / "tasks.jsonl"
    export_runnable(five_stages, out, _resolve)
    chains = [json.loads(line) for line in out.read_text().splitlines()]
    target = chains[0] if field == "chain_id" else chains[0]["stages"][0]
    target[field] = value
    out.write_text("".join(json.dumps(c) + "\n" for c in chains))
    converted = tmp_path / "deep" / "er" / "harbor"
    result = CliRunner().invoke(main, ["tasks", "convert", str(out), str(converted)])
    assert result.exit_code != 0
    assert f"line 1: {field if field != 'idx' else 'a stage'}" in result.output
    assert [p for p in tmp_path.rglob("*") if "escaped" in p.name] == []
