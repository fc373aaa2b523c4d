"""The carry-forward fallback by replay on a real history: a stage whose own lines are the ones an
outside PR rewrote since the earlier stage (no revert, no entry by hunks) is entered at B_t
itself, and every stage after it in the chain is replayed too."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from prchain.chains.evidence.propagation import EarlierStage
from prchain.chains.evidence.replay import Replay
from prchain.store.models import ChainBuild
from tests.support.history import History
from tests.support.links import built_by_fallback, chain_entries

REPORT = """def header(title):
    return title.upper()


def row(cells):
    return " | ".join(cells)


def _pad(text, width):
    return text.ljust(width)


def _clip(text, width):
    return text[:width]


def footer(count):
    return f"{count} rows"
"""
# #1 words the footer and pads the rows; #2, outside any chain, rewrites #1's footer line; #3
# changes that very line again (its own lines are the busy ones) and #1's padding; #4 builds on
# #3's footer.
REPORT_1 = REPORT.replace('f"{count} rows"', 'f"{count} rows shown"').replace(
    '" | ".join(cells)', '" | ".join(_pad(cell, 8) for cell in cells)'
)
REPORT_2 = REPORT_1.replace("rows shown", "rows in all")
REPORT_3 = REPORT_2.replace(
    '    return f"{count} rows in all"\n',
    '    noun = "row" if count == 1 else "rows"\n    return f"{count} {noun} in all"\n',
).replace("_pad(cell, 8)", "_pad(cell.strip(), 10)")
REPORT_4 = REPORT_3.replace("def footer(count):\n", "def footer(count, total=None):\n").replace(
    '    return f"{count} {noun} in all"\n',
    '    shown = f"{count} {noun}"\n'
    '    return f"{shown} of {total}" if total is not None else f"{shown} in all"\n',
)


def _history(path: Path) -> History:
    repo = History(path)
    repo.commit("Initial commit", {"README.md": "acme\n", "src/report.py": REPORT})
    repo.pr(1, "Word the footer and pad the rows", {"src/report.py": REPORT_1})
    repo.pr(2, "Count all rows", {"src/report.py": REPORT_2})
    repo.pr(3, "Say row for one row", {"src/report.py": REPORT_3}, body="Follow-up to #1.")
    repo.pr(4, "Show the total in the footer", {"src/report.py": REPORT_4}, body="Builds on #3.")
    return repo


def test_replay_asks_only_that_the_earlier_stages_are_in_b_t(tmp_path: Path) -> None:
    repo = _history(tmp_path / "repo")
    sha = repo.prs
    entry = Replay({7: str(repo.path)})
    stage_1 = EarlierStage(sha[1], "")
    assert entry.enters(7, sha[2], [stage_1], "") is True  # #3's base holds #1 (and #2)
    # Nothing after B_t: an earlier stage merged after the base, or of unknown merge, is refused.
    assert entry.enters(7, sha[1] + "^", [stage_1], "") is False
    assert entry.enters(7, sha[2], [EarlierStage(None, "")], "") is False
    assert entry.enters(8, sha[2], [stage_1], "") is False  # no clone: nothing can be asked


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Engine]:
    """The same history built with each fallback."""
    root = tmp_path_factory.mktemp("entry-replay")
    repo = _history(root / "repo")
    return built_by_fallback(repo.path, root, "acme/replay", ("hunks", "replay"))


def test_the_build_replays_the_busy_stage_and_every_stage_after_it(
    built: dict[str, Engine],
) -> None:
    # By hunks #3 is refused: its own lines are #1's footer as #2 left it. Only #3 ← #4 remains.
    assert chain_entries(built["hunks"]) == {(3, 4): ("revert", "revert")}
    # By replay the chain keeps all three; #4's revert of g_3 would succeed, but after a replayed
    # stage the start holds the agent's earlier work, so #4 is replayed too.
    assert chain_entries(built["replay"]) == {(1, 3, 4): ("revert", "replay", "replay")}
    with Session(built["replay"]) as session:
        build = session.scalars(select(ChainBuild).order_by(ChainBuild.id.desc())).first()
        assert build is not None and build.graph is not None
        assert build.graph["entered_by"] == {"revert": 1, "replay": 2}
