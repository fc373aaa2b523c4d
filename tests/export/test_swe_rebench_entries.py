"""Which stages a SWE-rebench V2 row can hold, by how the stage is entered: a row starts at
base_commit (B_t, every earlier gold patch in it), which is where a gold agent starts a stage
entered by revert, by hunks or by replay; one entered by propagation starts from no commit."""

from __future__ import annotations

from typing import Any

import pytest

from prchain.export.swe_rebench import why_not


def _stage(entry: str) -> dict[str, Any]:
    environment = {"runnable": True, "log_parser": "pytest", "ecosystem": "python"}
    return {"idx": 2, "entry": entry, "environment": environment, "FAIL_TO_PASS": ["t.py::a"],
            "PASS_TO_PASS": ["t.py::b"]}  # fmt: skip


@pytest.mark.parametrize("entry", ["revert", "hunks", "replay"])
def test_a_stage_whose_gold_start_is_base_commit_gets_a_row(entry: str) -> None:
    assert why_not({"repo": "acme/calc"}, _stage(entry)) == ""


def test_a_propagated_stage_gets_none() -> None:
    assert "propagate" in why_not({"repo": "acme/calc"}, _stage("propagate"))
