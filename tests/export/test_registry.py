"""The one table of export formats: every entry resolves to code at or below the layer that runs
its kind, states the version tag its module writes, and is what the CLI offers; the SWE-rebench V2
rows of a task file hold V2's row and say which stages they leave out and why."""

from __future__ import annotations

import copy
import json
import tomllib
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner

from prchain.cli import main
from prchain.export import registry, swe_rebench
from prchain.verdicts.runnable import checkout

ROOT = Path(__file__).resolve().parents[2]
# The module-level constant each format's code writes as its version tag.
VERSION_CONSTANTS = {
    "task": ("prchain.chains.views.tasks", "TASK_FORMAT"),
    "stage": ("prchain.verdicts.runnable", "FLAT_FORMAT"),
    "openai": ("prchain.agent.export", "FORMAT_VERSION"),
    "sharegpt": ("prchain.agent.export", "FORMAT_VERSION"),
    "atif": ("prchain.agent.formats.atif", "ATIF_VERSION"),
    "harbor": ("prchain.verdicts.harbor", "FORMAT"),
    "swe-rebench-v2": ("prchain.export.swe_rebench", "FORMAT"),
}
# The package that runs each kind; an entry's code may sit at its layer or below.
DRIVERS = {
    "trajectories": "prchain.agent",
    "harness": "prchain.export",
    "tasks": "prchain.app",
    "runnable": "prchain.app",
}


def _layers() -> list[list[str]]:
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    contract = config["tool"]["importlinter"]["contracts"][0]
    return [[p.strip() for p in layer.split("|")] for layer in contract["layers"]]


def _layer_of(module: str) -> int:
    return next(
        i
        for i, layer in enumerate(_layers())
        for package in layer
        if module == package or module.startswith(package + ".")
    )


@pytest.mark.parametrize("entry", registry.FORMATS, ids=lambda f: f.name)
def test_each_entry_resolves_below_its_driver_and_states_its_module_s_tag(
    entry: registry.Format,
) -> None:
    for ref in filter(None, (entry.convert, entry.check, entry.card)):
        assert callable(registry.load(ref)), ref
        assert _layer_of(ref.partition(":")[0]) >= _layer_of(DRIVERS[entry.kind]), ref
    module, constant = VERSION_CONSTANTS[entry.name]
    assert getattr(__import__(module, fromlist=[constant]), constant) == entry.version


def test_the_cli_offers_exactly_the_table_s_formats() -> None:
    runner = CliRunner()
    export_help = runner.invoke(main, ["export", "--help"], terminal_width=400).output
    convert_help = runner.invoke(main, ["tasks", "convert", "--help"], terminal_width=400).output
    assert "[openai|sharegpt|atif]" in export_help
    assert registry.choice_help("trajectories") in " ".join(export_help.split())
    assert "[harbor|swe-rebench-v2]" in convert_help
    assert registry.names("trajectories") == ("openai", "sharegpt", "atif")
    with pytest.raises(KeyError, match="no export format 'nope'"):
        registry.get("nope")


def test_a_harness_convert_refuses_a_format_of_another_kind(tmp_path: Path) -> None:
    with pytest.raises(KeyError, match="not a harness task format"):
        registry.convert("openai", [], tmp_path, timeout=1, cap=1)


GOLD = "diff --git a/geo/area.py b/geo/area.py\n--- a/geo/area.py\n+++ b/geo/area.py\n@@ -1 +1 @@\n-A = 1\n+A = 2\n"  # noqa: E501
TESTS = "diff --git a/tests/test_area.py b/tests/test_area.py\nnew file mode 100644\n--- /dev/null\n+++ b/tests/test_area.py\n@@ -0,0 +1 @@\n+def test_a(): pass\n"  # noqa: E501


def _stage(idx: int, ecosystem: str = "python", entry: str = "revert") -> dict[str, Any]:
    base = f"{idx:040x}"
    return {
        "idx": idx,
        "instance_id": f"acme__geo-{idx}",
        "pr_number": idx,
        "title": f"Fix area {idx}",
        "query": "",
        "entry": entry,
        "base_commit": base,
        "patch": GOLD,
        "test_patch": TESTS,
        "problem_statement": "Fix area\n\nArea is wrong.",
        "created_at": "2024-01-02T03:04:05+00:00",
        "merged_at": "2024-01-03T00:00:00+00:00",
        "FAIL_TO_PASS": ["tests/test_area.py::test_a"],
        "PASS_TO_PASS": [],
        "environment": {
            "runnable": True,
            "not_runnable": "",
            "ecosystem": ecosystem,
            "log_parser": {"python": "pytest", "go": "gotest"}[ecosystem],
            "image": "registry.local:5000/prchain/repo-acme-geo:0123",
            "image_id": "sha256:" + "0" * 64,
            "era": "e1",
            "workdir": "/work/repo",
            "report_path": "/tmp/prchain-junit.xml",
            "checkout": checkout(base),
            "setup_command": "",
            "test_script": "python -m pytest -rA tests/test_area.py",
        },
    }


def test_a_v2_row_holds_v2_s_row_and_the_chain_s_order() -> None:
    chain = {"chain_id": 7, "repo": "acme/geo", "stages": [_stage(1), _stage(2)]}
    row = swe_rebench.task_row(chain, chain["stages"][1], ["acme__geo-1"])
    swe_rebench.check_row(json.loads(json.dumps(row)))
    assert row["image_name"] == "registry.local:5000/prchain/repo-acme-geo-swe-rebench-v2:c7-s2"
    assert row["created_at"] == 1704164645000 and row["language"] == "python"
    config = row["install_config"]
    assert config["base_image_name"] == chain["stages"][1]["environment"]["image"]
    assert config["log_parser"] == "parse_log_pytest"
    assert config["test_cmd"] == ["python -m pytest -rA tests/test_area.py"]
    assert config["install"][-1] == "ln -sT /work/repo /geo"
    assert row["meta"]["prchain"]["carried_from"] == ["acme__geo-1"]
    assert row["meta"]["prchain"]["stage_idx"] == 2
    assert "FROM registry.local:5000/prchain/repo-acme-geo:0123\n" in swe_rebench.dockerfile(row)
    assert swe_rebench.dockerfile(row).endswith("WORKDIR /geo\n")


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("repo", "geo", "does not match"),
        ("FAIL_TO_PASS", [], "should be non-empty"),
        ("install_config", {"log_parser": "parse_log_pytest"}, "'test_cmd' is a required"),
        ("install_config", {"log_parser": "pytest", "test_cmd": ["x"]}, "does not match"),
    ],
)
def test_check_row_refuses_what_v2_s_runner_cannot_read(
    field: str, value: Any, message: str
) -> None:
    chain = {"chain_id": 7, "repo": "acme/geo", "stages": [_stage(1)]}
    row = copy.deepcopy(swe_rebench.task_row(chain, chain["stages"][0], []))
    row[field] = value
    with pytest.raises(jsonschema.ValidationError, match=message):
        swe_rebench.check_row(row)


def test_stages_v2_cannot_run_are_counted_by_why() -> None:
    chain = {"chain_id": 7, "repo": "acme/geo", "stages": []}
    assert swe_rebench.why_not(chain, _stage(1)) == ""
    assert "gotest" in swe_rebench.why_not(chain, _stage(1, "go"))
    assert "propagate" in swe_rebench.why_not(chain, _stage(1, entry="propagate"))
    spaced = {**_stage(1), "PASS_TO_PASS": ["tests/test_area.py::test_b[unit - r]"]}
    assert "whitespace" in swe_rebench.why_not(chain, spaced)
    assert "sandbox's own" in swe_rebench.why_not({**chain, "repo": "acme/work"}, _stage(1))
