"""`chains show` and `trajectories show` in an 80-column terminal: long titles end in an ellipsis."""

from __future__ import annotations

import re
from pathlib import Path

from click.testing import CliRunner
from sqlalchemy import insert

from prchain.cli import main
from prchain.store.models import Rollout, RolloutStage, Step
from prchain.store.opener import make_engine
from tests.support.chain_store import StoreBuilder

LONG = "Refactor the configuration loader so that every nested section is validated before use"


def _narrow(*args: str) -> list[str]:
    result = CliRunner(env={"COLUMNS": "80"}).invoke(main, list(args))
    assert result.exit_code == 0, result.output
    return result.output.splitlines()


def _store(url: str) -> None:
    store = StoreBuilder(make_engine(url))
    for n in (1, 2, 3):
        store.pr(n, ["calc/ops.py"], title=f"{LONG} (part {n})")
    store.ref(2, 1, "follow_up", evidence=f"Follow-up to #1. {LONG}; see the discussion there.")
    store.ref(3, 2, "fixes")
    store.write()
    built = CliRunner().invoke(main, ["chains", "build", "--db", url])
    assert built.exit_code == 0, built.output


def test_chains_show_fits_80_columns(sqlite_url: str) -> None:
    _store(sqlite_url)
    lines = _narrow("chains", "show", "1", "--db", sqlite_url)
    assert all(len(line) <= 80 for line in lines)
    titled = [line for line in lines if "Refactor the configuration" in line]
    assert len(titled) == 4 and all("…" in line for line in titled)  # 3 stages, 1 evidence line
    assert all("#" in line and "1970-" not in line for line in titled[:3])
    evidence = [line for line in lines if "[follow_up in body]" in line]
    assert len(evidence) == 1 and evidence[0].endswith("…")


def test_trajectories_show_fits_80_columns(sqlite_url: str) -> None:
    _store(sqlite_url)
    engine = make_engine(sqlite_url)
    with engine.begin() as conn:
        conn.execute(
            insert(Rollout),
            [{"id": 1, "chain_id": 1, "status": "kept", "conflict_policy": "strict"}],
        )
        conn.execute(insert(RolloutStage), [{"rollout_id": 1, "stage_idx": 1, "status": "passed"}])
        call = {
            "id": "c1",
            "type": "function",
            "function": {"name": "bash", "arguments": '{"command": "' + "x" * 200 + '"}'},
        }
        conn.execute(
            insert(Step),
            [
                {
                    "rollout_id": 1,
                    "stage_idx": 1,
                    "idx": 0,
                    "kind": "query",
                    "message": {
                        "role": "user",
                        "content": f"{LONG}.\nWith a second line,\nand a third.",
                    },
                },
                {
                    "rollout_id": 1,
                    "stage_idx": 1,
                    "idx": 1,
                    "kind": "assistant",
                    "message": {"role": "assistant", "content": LONG, "tool_calls": [call]},
                },
            ],
        )
    lines = _narrow("trajectories", "show", "1", "--db", sqlite_url)
    assert all(len(line) <= 80 for line in lines)
    query = [line for line in lines if line.startswith("query (user)")]
    assert len(query) == 1 and query[0].endswith("…")  # one line, not wrapped word by word
    assert any(line.startswith("  → bash") and line.endswith("…") for line in lines)


def test_mine_summary_fits_80_columns(sqlite_url: str, tmp_path: Path) -> None:
    from prchain.dev.repos import make_chain_repo

    repo = make_chain_repo(tmp_path / "calc")
    name = "acme/a-calculator-whose-repository-name-is-long"
    lines = _narrow("mine", "--source", "git", "--name", name, str(repo.path), "--db", sqlite_url)
    assert all(len(line) <= 80 for line in lines), "\n".join(lines)
    header = next(line for line in lines if "repository" in line)
    for column in ("source", "PRs new/upd", "issues", "refs", "PR→PR", "API req", "points"):
        assert column in header  # no column dropped or cut to an ellipsis
    assert header.rstrip().endswith(" s")
    row = next(line for line in lines if " git " in line)
    assert re.fullmatch(r"\d+/0", row.split()[2])  # numbers whole, on the name's first line
    assert f"{name}: " in " ".join(line.strip() for line in lines)  # per-PR costs, by name
