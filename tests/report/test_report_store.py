"""`prchain report` on a real mined repository, on SQLite and PostgreSQL, without a browser."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from prchain.cli import main
from prchain.dev.repos import make_chain_repo
from prchain.miner.config import MinerConfig
from prchain.report.patches import edit_hunk, step_piece
from prchain.store.opener import make_engine

EXTERNAL = re.compile(r"""(?:src|href)\s*=\s*["'](?:https?:)?//""", re.IGNORECASE)


def _mined_with_chains(tmp_path: Path, db_url: str) -> None:
    from prchain.miner.mine import mine

    repo = make_chain_repo(tmp_path / "calc")
    mine(MinerConfig(), make_engine(db_url), [str(repo.path)], source="git", name="acme/calc")
    tiny = ["--set", "chains.min_chain_code_lines=0"]  # the demo chain is a few lines per PR
    built = CliRunner().invoke(main, ["chains", "build", "--db", db_url, *tiny])
    assert built.exit_code == 0, built.output


def test_report_of_a_store_without_rollouts(tmp_path: Path, db_url: str) -> None:
    _mined_with_chains(tmp_path, db_url)
    out = tmp_path / "site"
    result = CliRunner().invoke(main, ["report", str(out), "--db", db_url])
    assert result.exit_code == 0, result.output
    assert "1 chain pages, 0 trajectory pages" in result.output
    index = (out / "index.html").read_text()
    assert "docs_only: 1" in index  # the funnel names the filter that dropped PR #4
    assert "no query yet: 3" in index
    chains = json.loads(re.search(r'id="chains-data">(.*?)</script>', index, re.S).group(1))
    assert [(c["len"], c["prs"], c["outcome"]) for c in chains] == [
        (3, [1, 2, 3], "not rolled out")
    ]
    page = (out / "chains/1.html").read_text()
    assert "def subtract(a, b):" in page and "no rollout reached this stage" in page
    assert "fixes" in page and "Follow-up to #1" in page  # edge types and evidence
    for html in [out / "index.html", *out.glob("*/*.html")]:
        assert not EXTERNAL.search(html.read_text()), f"{html} loads something from the network"
    assets = {p.name for p in (out / "assets").iterdir()}
    assert {"plotly.min.js", "report.css", "report.js"} <= assets


def test_rerun_replaces_pages_of_chains_that_are_gone(tmp_path: Path, sqlite_url: str) -> None:
    _mined_with_chains(tmp_path, sqlite_url)
    out = tmp_path / "site"
    first = CliRunner().invoke(main, ["report", str(out), "--db", sqlite_url])
    assert first.exit_code == 0, first.output
    (out / "chains" / "999.html").write_text("stale")  # a chain page of an earlier report
    result = CliRunner().invoke(main, ["report", str(out), "--db", sqlite_url])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (out / "chains").iterdir()) == ["1.html"]


def test_editor_writes_become_diff_hunks_and_reads_do_not() -> None:
    create = edit_hunk({"command": "create", "path": "a.py", "file_text": "x = 1\ny = 2"})
    assert create == "--- /dev/null\n+++ b/a.py\n@@ create @@\n+x = 1\n+y = 2\n"
    replace = edit_hunk({"command": "str_replace", "path": "a.py", "old_str": "x", "new_str": "z"})
    assert replace is not None and replace.endswith("@@ str_replace @@\n-x\n+z\n")
    assert edit_hunk({"command": "view", "path": "a.py"}) is None
    call = {
        "function": {
            "name": "str_replace_editor",
            "arguments": json.dumps(
                {"command": "insert", "path": "a.py", "insert_line": 0, "new_str": "# hi"}
            ),
        }
    }
    piece = step_piece(7, call, "The file a.py has been edited.")
    assert piece is not None and piece.step == 7 and "+# hi" in piece.text
    assert step_piece(7, call, "Error: `insert_line` 9 is outside [0, 2]") is None
    bash = {"function": {"name": "bash", "arguments": json.dumps({"command": "ls -la"})}}
    assert step_piece(8, bash, "a.py") is None  # a read-only command changes nothing


def test_verdict_and_p2t_tables_are_rendered_when_present(tmp_path: Path, sqlite_url: str) -> None:
    """Test verdicts (issue 10's table) and P2T tables (`p2t_*`, made here by hand) are shown."""
    from sqlalchemy import insert, text

    from prchain.store.models import (
        Judgement,
        P2TStage,
        Rollout,
        RolloutStage,
        StageVerification,
        Step,
    )

    _mined_with_chains(tmp_path, sqlite_url)
    engine = make_engine(sqlite_url)
    with engine.begin() as conn:
        stage_id = conn.execute(text("SELECT id FROM chain_stages WHERE idx = 1")).scalar_one()
        conn.execute(
            insert(StageVerification),
            [
                {
                    "chain_stage_id": stage_id,
                    "recipe": "r1",
                    "status": "usable",
                    "test_command": "pytest {files}",
                    "fail_to_pass": ["tests/test_ops.py::test_subtract"],
                    "pass_to_pass": ["tests/test_ops.py::test_add"],
                }
            ],
        )
        conn.execute(
            text(
                "CREATE TABLE p2t_candidates (id INTEGER PRIMARY KEY, rollout_id INTEGER, "
                "window_idx INTEGER, eff REAL, length INTEGER, committed BOOLEAN)"
            )
        )
        conn.execute(
            text("INSERT INTO p2t_candidates VALUES (1, 1, 0, 0.5, 7, 0), (2, 1, 0, 0.75, 4, 1)")
        )
        conn.execute(
            insert(Rollout),
            [{"id": 1, "chain_id": 1, "status": "kept", "conflict_policy": "strict"}],
        )
        conn.execute(
            insert(RolloutStage),
            [
                {
                    "rollout_id": 1,
                    "stage_idx": 1,
                    "status": "passed",
                    "score": 0.9,
                    "stage_diff": "",
                    "cumulative_diff": "",
                    "tests_passed": False,
                    # What the runner stores when a stage has verified tests (T(p̂), not a run).
                    "test_result": {
                        "passed": False,
                        "failing": ["tests/test_ops.py::test_subtract"],
                        "error": None,
                        "output": "1 failed, 1 passed",
                    },
                }
            ],
        )
        conn.execute(
            insert(Judgement),
            [
                {
                    "rollout_id": 1,
                    "stage_idx": 1,
                    "round": 0,
                    "score": 0.9,
                    "comment": "ok",
                    "passed": True,
                    "attempts": 1,
                }
            ],
        )
        window = {
            "start_step": 0,
            "frontier": ["api.subtract"],
            "candidates": [
                {"name": "seed-0", "eff": 0.5, "length": 9, "seed": True, "grounded": True},
                {"name": "fix-subtract", "eff": 1.0, "length": 4, "seed": False, "grounded": True},
            ],
            "chosen": "fix-subtract",
            "committed": 4,
            "credited": ["api.subtract"],
        }
        conn.execute(
            insert(P2TStage),
            [
                {
                    "rollout_id": 1,
                    "stage_idx": 1,
                    "admitted": True,
                    "coverage": 1.0,
                    "established": ["api.subtract"],
                    "windows": [window],
                    "steps": 4,
                }
            ],
        )
        conn.execute(
            insert(Step),
            [
                {
                    "rollout_id": 1,
                    "stage_idx": 1,
                    "idx": 0,
                    "kind": "query",
                    "message": {"role": "user", "content": "Add subtraction."},
                }
            ],
        )
    out = tmp_path / "site"
    result = CliRunner().invoke(main, ["report", str(out), "--db", sqlite_url])
    assert result.exit_code == 0, result.output
    index = (out / "index.html").read_text()
    assert "stages with verified tests" in index and "p2t_candidates" in index
    # The judge passed a stage its hidden tests failed: the 2x2 table shows it.
    agreement = index.split('id="agreement"', 1)[1].split("</section>", 1)[0]
    assert "Judge vs hidden tests" in agreement
    assert '<td>judge pass</td><td class="num">0</td><td class="num">1</td>' in agreement
    chain = (out / "chains/1.html").read_text()
    assert "FAIL_TO_PASS 1" in chain and "tests/test_ops.py::test_subtract" in chain
    assert "hidden tests on the agent's change" in chain and "failing (1)" in chain
    trajectory = (out / "trajectories/1.html").read_text()
    assert "p2t_candidates" in trajectory
    assert trajectory.count('class="committed"') == 2  # committed candidate, both P2T views
    assert "P2T curation" in trajectory and "fix-subtract" in trajectory
    assert "api.subtract" in trajectory


def test_report_shows_the_builds_graph_and_builds_none(
    tmp_path: Path, sqlite_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The funnel's graph steps are what the latest build kept: the report neither rebuilds the
    graph nor runs git (it took 327 s on the ruff store when it rebuilt it, lineage included)."""
    _mined_with_chains(tmp_path, sqlite_url)
    from prchain.chains.building import graph
    from prchain.core import git

    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("the report rebuilt the graph or ran git")

    monkeypatch.setattr(graph, "load_graph", refused)
    monkeypatch.setattr(git, "run", refused)
    out = tmp_path / "site"
    result = CliRunner().invoke(main, ["report", str(out), "--db", sqlite_url])
    assert result.exit_code == 0, result.output
    index = (out / "index.html").read_text()
    assert "docs_only: 1" in index and "reference graph edges" in index
