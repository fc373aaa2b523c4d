"""The carry-forward fallback on a real history: a stage whose earlier gold patch does not revert at
its base is entered by propagation where that shows nothing after B_t and the stage's own gold
patch meets history's files; elsewhere it is still refused."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from prchain.chains.config import ChainsConfig
from prchain.chains.evidence.propagation import EarlierStage, Propagation
from prchain.dev.repos import git
from prchain.store.models import ChainBuild
from tests.support.history import History
from tests.support.links import chain_entries, mine_and_build

TABLE = """def render(rows, width=80):
    lines = []
    for row in rows:
        cells = [str(cell).ljust(12) for cell in row]
        lines.append(" | ".join(cells)[:width])
    return "\\n".join(lines)
"""
UTIL = """def clip(text, width):
    if len(text) <= width:
        return text
    return text[: width - 1] + "~"


def pad(text, width):
    return text + " " * (width - len(text))
"""
PARSE = """def parse(text, limit=10):
    parts = text.split(",")
    kept = [part.strip() for part in parts]
    return kept[:limit]
"""


def _history(path: Path) -> History:
    repo = History(path)
    repo.commit("Initial commit", {"README.md": "acme\n"})
    # #1 adds the renderer and its helpers; #2 (no reference) rewrites a helper line of #1, so #1
    # no longer reverts at #3's base; #3 builds on #1's renderer and touches only that file.
    repo.pr(1, "Add the table renderer", {"src/table.py": TABLE, "src/util.py": UTIL})
    repo.pr(2, "Clip with an ellipsis", {"src/util.py": UTIL.replace('"~"', '"…"')})
    repo.pr(
        3,
        "Centre table cells",
        {"src/table.py": TABLE.replace("ljust(12)", "center(12)")},
        body="Follow-up to #1.",
    )
    # #11 → #13: #12 rewrites #11's line in the very file #13 changes. Propagated, #13 would see
    # #11's file without #12's change and its gold patch meets a file history never had: refused.
    repo.pr(11, "Add the parser", {"src/parse.py": PARSE})
    repo.pr(12, "Split on semicolons", {"src/parse.py": PARSE.replace('split(",")', 'split(";")')})
    parse_13 = PARSE.replace('split(",")', 'split(";")').replace(
        "kept[:limit]", "kept[:limit or None]"
    )
    repo.pr(13, "No limit", {"src/parse.py": parse_13}, body="Follow-up to #11.")
    return repo


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Engine, Engine]:
    """The same history built without the fallback and with it."""
    root = tmp_path_factory.mktemp("entry-fallback")
    repo = _history(root / "repo")
    config = ChainsConfig(min_chain_code_lines=0, entry_fallback="none")
    revert = mine_and_build(repo.path, root / "revert.db", "acme/fallback", config)
    fallback = config.model_copy(update={"entry_fallback": "propagate"})
    propagate = mine_and_build(repo.path, root / "propagate.db", "acme/fallback", fallback)
    return revert, propagate


def _build(engine: Engine) -> ChainBuild:
    with Session(engine) as session:
        build = session.scalars(select(ChainBuild).order_by(ChainBuild.id.desc())).first()
        assert build is not None
        return build


def _refused(engine: Engine) -> int:
    rules = {rule["rule"]: rule for rule in _build(engine).rules}
    return int(rules["stage_base_refused"]["links"]) if "stage_base_refused" in rules else 0


def test_a_stage_the_revert_refuses_is_entered_by_propagation(
    built: tuple[Engine, Engine],
) -> None:
    revert, propagate = built
    assert chain_entries(revert) == {}
    assert _refused(revert) == 2
    # #3 is entered by the fallback; #13's own gold meets a file #12 changed: still refused.
    assert chain_entries(propagate) == {(1, 3): ("revert", "propagate")}
    assert _refused(propagate) == 1
    graph = _build(propagate).graph
    assert graph is not None and graph["entered_by"] == {"revert": 1, "propagate": 1}


def _patch(repo: History, sha: str) -> str:
    return git(repo.path, "diff", f"{sha}^", sha)


def test_the_fallback_refuses_what_would_show_code_after_the_base(tmp_path: Path) -> None:
    repo = _history(tmp_path / "repo")
    sha = repo.prs
    bases = Propagation({7: str(repo.path)})
    gold_1, gold_3 = _patch(repo, sha[1]), _patch(repo, sha[3])
    stage_1 = EarlierStage(sha[1], gold_1)
    assert bases.enters(7, sha[2], [stage_1], gold_3) is True
    # What it withholds of B_t: #2's change of util.py, a file #3 does not touch.
    assert bases.withheld(7, sha[2], [stage_1]) == ["src/util.py"]
    assert bases.withheld_lines(7, sha[2], [stage_1]) == 2
    # An earlier stage merged after B_t: its post-image would carry code from after the base.
    assert bases.enters(7, sha[1] + "^", [stage_1], gold_3) is False
    late = EarlierStage(sha[12], _patch(repo, sha[12]))
    assert bases.enters(7, sha[2], [late], gold_3) is False
    # An earlier stage whose merge commit is unknown cannot be shown to be before B_t.
    assert bases.enters(7, sha[2], [EarlierStage(None, gold_1)], gold_3) is False
    # The stage's own gold touches a file an outside PR changed since: refused.
    gold_13 = _patch(repo, sha[13])
    assert (
        bases.enters(7, sha[12], [EarlierStage(sha[11], _patch(repo, sha[11]))], gold_13) is False
    )
