"""The carry-forward fallback by hunks on a real history: a stage whose earlier gold patch does not
revert whole at its base is entered with the hunks of it reverted that revert, the others kept as
B_t has them, unless a line the stage's own gold patch changes lies in a kept hunk."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from prchain.chains.evidence.hunks import HunkEntry, changed_lines
from prchain.chains.evidence.propagation import EarlierStage
from prchain.dev.repos import git
from prchain.store.models import ChainBuild
from tests.support.history import History
from tests.support.links import built_by_fallback, chain_entries

TABLE = """def render(rows, width=80):
    lines = []
    for row in rows:
        cells = [str(cell) for cell in row]
        lines.append(" | ".join(cells)[:width])
    return "\\n".join(lines)


def _rule(width):
    return "-" * width


def _blank(width):
    return " " * width


def _title(text):
    return text.strip()


def footer(count):
    return f"{count} rows"
"""
PARSE = """def parse(text, limit=10):
    parts = text.split(",")
    kept = [part for part in parts]
    return kept[:limit]


def _strip(part):
    return part


def _lower(part):
    return part.lower()


def _upper(part):
    return part.upper()


def join(parts):
    return ",".join(parts)
"""
TABLE_1 = TABLE.replace("str(cell) for", "str(cell).ljust(12) for").replace(
    'f"{count} rows"', 'f"{count} rows shown"'
)
PARSE_11 = (
    PARSE.replace("[part for", "[part.strip() for")
    .replace('",".join', '", ".join')
    .replace('split(",")', 'split(",", -1)')
    .replace("kept[:limit]", "kept[: limit or None]")
)
PARSE_12 = PARSE_11.replace("for part in parts]", "for part in parts if part]")


def _history(path: Path) -> History:
    repo = History(path)
    repo.commit("Initial commit", {"README.md": "acme\n", "src/table.py": TABLE,
                                   "src/parse.py": PARSE})  # fmt: skip
    # #1 pads the cells and words the footer; #2 (no reference) rewrites #1's footer line, so #1
    # does not revert whole at #3's base. #3 centres the cells #1 padded: only #1's cell hunk
    # meets it, and that hunk reverts.
    repo.pr(1, "Pad table cells", {"src/table.py": TABLE_1})
    repo.pr(2, "Count the rows", {"src/table.py": TABLE_1.replace("rows shown", "rows in all")})
    table_3 = TABLE_1.replace("rows shown", "rows in all").replace("ljust(12)", "center(12)")
    repo.pr(3, "Centre table cells", {"src/table.py": table_3}, body="Follow-up to #1.")
    # #11 → #13: #12 rewrites #11's strip line, and #13 changes that very hunk of #11 (and #11's
    # join, which reverts): it would meet a kept hunk (#11's code as #12 left it, the agent's own
    # version not carried). Refused.
    repo.pr(11, "Strip the parts", {"src/parse.py": PARSE_11})
    repo.pr(12, "Skip empty parts", {"src/parse.py": PARSE_12})
    parse_13 = (
        PARSE_12.replace("part.strip() for", "part.strip().lower() for")
        .replace('", ".join', '"; ".join')
        .replace('split(",", -1)', 'split(";", -1)')
        .replace("kept[: limit or None]", "kept[: limit or 100]")
    )
    repo.pr(13, "Lower-case the parts", {"src/parse.py": parse_13}, body="Follow-up to #11.")
    return repo


def _patch(repo: History, sha: str) -> str:
    return git(repo.path, "diff", f"{sha}^", sha)


def test_a_busy_pair_is_entered_by_hunks_and_one_meeting_a_kept_hunk_is_not(
    tmp_path: Path,
) -> None:
    repo = _history(tmp_path / "repo")
    sha = repo.prs
    entry = HunkEntry({7: str(repo.path)})
    stage_1 = EarlierStage(sha[1], _patch(repo, sha[1]))
    # Whole, #1 does not revert at #3's base; hunk by hunk its footer stays (line 22 at B_3).
    assert entry.reverts(7, sha[2], [stage_1.gold]) is False
    kept = entry.kept(7, sha[2], [stage_1])
    assert kept is not None and (kept.hunks, kept.lines) == (1, {"src/table.py": {22}})
    assert changed_lines(_patch(repo, sha[3])) == {"src/table.py": {4}}
    assert entry.enters(7, sha[2], [stage_1], _patch(repo, sha[3])) is True
    # #13 changes lines 2-4 of parse.py, #11's hunk with the strip line #12 rewrote: kept.
    stage_11 = EarlierStage(sha[11], _patch(repo, sha[11]))
    kept = entry.kept(7, sha[12], [stage_11])
    assert kept is not None and kept.lines == {"src/parse.py": {2, 3, 4}}
    assert entry.enters(7, sha[12], [stage_11], _patch(repo, sha[13])) is False
    # Nothing after B_t: an earlier stage merged after the base, or of unknown merge, is refused.
    assert entry.enters(7, sha[1] + "^", [stage_1], _patch(repo, sha[3])) is False
    unknown = EarlierStage(None, stage_1.gold)
    assert entry.enters(7, sha[2], [unknown], _patch(repo, sha[3])) is False


def test_reverting_by_hunks_follows_the_sandbox_order(tmp_path: Path) -> None:
    """Two earlier stages, newest reverted first: the partly reverted newer stage is what the
    older one's revert starts from (kept lines are B_t's, mapped from each stage's merge)."""
    repo = _history(tmp_path / "repo")
    sha = repo.prs
    entry = HunkEntry({7: str(repo.path)})
    earlier = [
        EarlierStage(sha[1], _patch(repo, sha[1])),
        EarlierStage(sha[2], _patch(repo, sha[2])),
    ]
    # At #3's base #1 and #2 both revert whole (#2 first, then #1): nothing is kept.
    kept = entry.kept(7, sha[2], earlier)
    assert kept is not None and (kept.hunks, kept.lines) == (0, {})


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Engine]:
    """The same history built with each fallback."""
    root = tmp_path_factory.mktemp("entry-hunks")
    repo = _history(root / "repo")
    return built_by_fallback(repo.path, root, "acme/hunks", ("none", "propagate", "hunks"))


def test_the_build_enters_the_busy_pair_by_hunks_only(built: dict[str, Engine]) -> None:
    # Neither the revert nor file propagation (#2 changed the very file #3 changes) enters #3.
    assert chain_entries(built["none"]) == {}
    assert chain_entries(built["propagate"]) == {}
    assert chain_entries(built["hunks"]) == {(1, 3): ("revert", "hunks")}
    with Session(built["hunks"]) as session:
        build = session.scalars(select(ChainBuild).order_by(ChainBuild.id.desc())).first()
        assert build is not None and build.graph is not None
        assert build.graph["entered_by"] == {"revert": 1, "hunks": 1}
        rules = {rule["rule"]: rule for rule in build.rules}
        assert rules["stage_base_refused"]["links"] == 1  # #13 → #11


def test_a_gold_patch_that_adds_a_submodule_is_read_without_failing(tmp_path: Path) -> None:
    """numpy's build stopped here (IsADirectoryError, #19478 → #21955): an earlier gold patch
    that adds a submodule, which the scratch work tree holds as a directory, and does not revert
    whole at the later base, where history moved the submodule and rewrote a line of the patch.
    As the sandbox reverts it, only the rewritten footer line is kept."""
    repo = _history(tmp_path / "repo")

    def commit(message: str, sub: str, footer: str) -> str:
        git(repo.path, "update-index", "--add", "--cacheinfo", f"160000,{sub},vendor/svml")
        (repo.path / "src/table.py").write_text(TABLE_1.replace("rows shown", footer))
        git(repo.path, "add", "src/table.py")
        git(repo.path, "commit", "-q", "-m", message)
        return git(repo.path, "rev-parse", "HEAD").strip()

    merge = commit("Add svml and word the footer (#21)", "1" * 40, "rows listed")
    base = commit("Move svml, word the footer again (#22)", "2" * 40, "rows in total")
    entry = HunkEntry({7: str(repo.path)})
    earlier = [EarlierStage(merge, _patch(repo, merge))]
    assert "new file mode 160000" in earlier[0].gold
    assert entry.reverts(7, base, [earlier[0].gold]) is False
    kept = entry.kept(7, base, earlier)
    assert kept is not None and (kept.hunks, kept.lines) == (1, {"src/table.py": {22}})
