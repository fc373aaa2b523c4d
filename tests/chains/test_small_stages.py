"""A PR that changes under `min_stage_source_lines` lines in source files, by the miner's count,
is no stage, however many lines its lexed count gives it: a fix of a dozen lines teaches little
(rounds 36 to 39: 14 of the 15 judged stages under 20 such lines were thin)."""

from __future__ import annotations

from pathlib import Path

from prchain.chains.config import ChainsConfig
from tests.support.history import History
from tests.support.links import links_by_number, mine_and_build


def _func(name: str, count: int) -> str:
    body = "".join(f"    total = total + ledger_{i}(total) * {i + 3}\n" for i in range(count))
    return f"def {name}(total):\n{body}    return total\n"


def _history(path: Path, rewrite: int) -> History:
    """#1 writes a function of 40 lines; #2, "Follow-up to #1.", rewrites `rewrite` of them."""
    repo = History(path)
    repo.commit("Initial commit", {"books/__init__.py": ""})
    repo.pr(1, "Ledger settlement", {"books/ledger.py": _func("settle", 40)})
    lines = _func("settle", 40).splitlines(keepends=True)
    for i in range(1, rewrite + 1):
        lines[i] = lines[i].replace("total +", f"total - audit_{i}(total) +")
    repo.pr(2, "Audit settlement", {"books/ledger.py": "".join(lines)}, body="Follow-up to #1.")
    return repo


def _link(tmp_path: Path, rewrite: int, config: ChainsConfig):
    repo = _history(tmp_path / "books", rewrite)
    engine = mine_and_build(repo.path, tmp_path / "store.db", "acme/books", config)
    return links_by_number(engine)[2, 1]


def test_a_fix_of_a_dozen_lines_is_no_stage(tmp_path: Path) -> None:
    """#2 rewrites 8 lines: 16 changed lines in source files, 12 lines of code as lexed (a
    removed line counts half), which is the lexed minimum."""
    link = _link(tmp_path, 8, ChainsConfig())
    assert (link.kept, link.rule) == (False, "stage_below_substance"), link.why
    assert "#2: 16 lines changed in source files, under 20" in link.why
    off = _link(tmp_path / "off", 8, ChainsConfig(min_stage_source_lines=0))
    assert off.kept, off.why


def test_a_fix_of_more_lines_is_a_stage(tmp_path: Path) -> None:
    """#2 rewrites 10 lines: 20 changed lines in source files."""
    link = _link(tmp_path, 10, ChainsConfig())
    assert link.kept, link.why
