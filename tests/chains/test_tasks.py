"""The task export: one JSON line per chain, SWE-bench fields per stage, loadable by `datasets`."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
from sqlalchemy import Engine, update
from sqlalchemy.orm import Session

from prchain.chains.building.build import build_chains
from prchain.chains.config import ChainsConfig
from prchain.chains.views.tasks import export_tasks, instance_id
from prchain.store.models import ChainStage
from tests.support.chain_store import StoreBuilder


def _build(engine: Engine) -> StoreBuilder:
    store = StoreBuilder(engine, repo="acme/calc")
    store.pr(
        1, ["calc/ops.py", "tests/test_ops.py"], title="Add subtract", body="Users asked for it."
    )
    store.pr(2, ["calc/ops.py"], title="Add multiply")
    store.pr(3, ["calc/other.py"], title="Lonely change")
    store.ref(2, 1, "follow_up", evidence="Follow-up to #1")
    store.write()
    build_chains(ChainsConfig(), engine, strategy="single")  # a chain with no edges at all first
    build_chains(ChainsConfig(), engine)
    return store


def test_export_has_swe_bench_fields_and_loads_with_datasets(
    engine: Engine, tmp_path: Path
) -> None:
    _build(engine)
    with Session(engine) as session, session.begin():
        session.execute(
            update(ChainStage)
            .where(ChainStage.idx == 2)
            .values(query="Let the calculator multiply.")
        )
    out = tmp_path / "tasks.jsonl"
    assert export_tasks(engine, out) == 2
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    single, chain = rows
    assert single["edges"] == [] and single["length"] == 1
    first, second = chain["stages"]
    assert first["instance_id"] == "acme__calc-1" and first["repo"] == "acme/calc"
    assert first["base_commit"] == f"{1:040x}" and "tests/test_ops.py" in first["test_patch"]
    assert "tests/test_ops.py" not in first["patch"]
    assert (
        first["problem_statement"] == "Add subtract\n\nUsers asked for it." and first["query"] == ""
    )
    assert second["problem_statement"] == "Let the calculator multiply."
    assert chain["edges"][0]["evidence"][0]["text"] == "Follow-up to #1"

    loaded = datasets.load_dataset("json", data_files=str(out), split="train")
    assert loaded.num_rows == 2
    assert loaded[1]["stages"][0]["instance_id"] == "acme__calc-1"
    assert loaded[1]["edges"][0]["types"] == ["follow_up"]
    assert export_tasks(engine, tmp_path / "single.jsonl", strategy="single") == 1


def test_instance_ids_follow_swe_bench() -> None:
    assert instance_id("astral-sh/ruff", 1234) == "astral-sh__ruff-1234"
