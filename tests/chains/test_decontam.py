"""Decontamination against a small local instance file: by PR, by base commit, by near-duplicate patch."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import Engine

from prchain.chains.building.build import build_chains
from prchain.chains.building.decontam import DecontamSourceError, instance_from_row, load_instances
from prchain.chains.config import ChainsConfig, DecontamConfig
from prchain.cli import main
from tests.support.chain_store import StoreBuilder

BODY = [f"    value_{i} = compute(item, {i}) + offset_{i}" for i in range(30)]


def _diff(path: str, lines: list[str], removed: tuple[str, ...] = ()) -> str:
    added = "".join(f"+{line}\n" for line in lines)
    gone = "".join(f"-{line}\n" for line in removed)
    return (
        f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n"
        f"@@ -1,{1 + len(removed)} +1,{len(lines) + 1} @@\n def f(item, offset):\n{gone}{added}"
    )


def _store(engine: Engine) -> StoreBuilder:
    store = StoreBuilder(engine, repo="acme/calc")
    for n in range(1, 9):
        store.pr(n, [f"calc/m{(n + 1) // 2}.py"])
    # PR #6 rewrites a line of #5, the PR it follows up.
    store.patches[5]["diff"] = _diff("calc/m3.py", BODY, ("value_5_0 = compute(5, 0)",))
    for newer in (2, 4, 6, 8):
        store.ref(newer, newer - 1, "follow_up", evidence=f"Follow-up to #{newer - 1}")
    store.write()
    return store


def _instances(tmp_path: Path, store: StoreBuilder) -> Path:
    near = [*BODY[:29], "    value_29 = compute(item, 29)"]  # one line of thirty differs
    rows = [
        {"instance_id": "acme__calc-2", "repo": "acme/calc", "base_commit": "f" * 40, "patch": ""},
        {
            "instance_id": "acme__calc-999",
            "repo": "acme/calc",
            "base_commit": f"{4:040x}",
            "patch": "",
        },
        {
            "instance_id": "other__lib-7",
            "repo": "other/lib",
            "base_commit": "e" * 40,
            "patch": _diff("lib/core.py", ["  " + line.strip() + "  " for line in near]),
        },
    ]
    path = tmp_path / "instances.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_chains_matching_an_instance_are_dropped_with_their_reason(
    engine: Engine, tmp_path: Path
) -> None:
    store = _store(engine)
    source = _instances(tmp_path, store)
    summary = build_chains(
        ChainsConfig(min_chain_code_lines=0), engine, decontaminate=[str(source)]
    )
    assert dict(summary.by_length) == {2: 1}  # only #7 ← #8 is clean
    assert dict(summary.chains_dropped) == {
        "benchmark_pr": 1,
        "benchmark_base_commit": 1,
        "benchmark_near_duplicate": 1,
    }
    hits = {(c["pr"], c["rule"], c["instance"]) for c in summary.contaminated}
    assert hits == {
        (2, "benchmark_pr", "acme__calc-2"),
        (4, "benchmark_base_commit", "acme__calc-999"),
        (6, "benchmark_near_duplicate", "other__lib-7"),
    }


def test_the_threshold_and_config_sources_apply(engine: Engine, tmp_path: Path) -> None:
    store = _store(engine)
    source = _instances(tmp_path, store)
    strict = ChainsConfig(
        min_chain_code_lines=0, decontam=DecontamConfig(sources=[str(source)], threshold=0.99)
    )
    summary = build_chains(strict, engine)
    assert "benchmark_near_duplicate" not in summary.chains_dropped
    assert summary.chains_dropped["benchmark_pr"] == 1


def test_instance_numbers_come_from_fields_or_the_instance_id(tmp_path: Path) -> None:
    assert (
        instance_from_row({"instance_id": "astral-sh__ruff-1234", "repo": "astral-sh/ruff"}).number
        == 1234
    )
    assert instance_from_row({"instance_id": "x", "pull_number": "77"}).number == 77
    parquet = tmp_path / "i.parquet"
    import datasets

    datasets.Dataset.from_list(
        [{"instance_id": "a__b-3", "repo": "a/b", "base_commit": "c", "patch": ""}]
    ).to_parquet(str(parquet))
    assert [i.number for i in load_instances(str(parquet), "test")] == [3]


def test_a_missing_source_is_one_clear_line(engine: Engine, tmp_path: Path) -> None:
    with pytest.raises(DecontamSourceError, match="does not exist"):
        load_instances(str(tmp_path / "nope.jsonl"), "test")
    url = f"sqlite:///{tmp_path / 'store.db'}"
    result = CliRunner().invoke(
        main, ["chains", "build", "--db", url, "--decontaminate", str(tmp_path / "nope.jsonl")]
    )
    assert result.exit_code != 0 and "does not exist" in result.output
