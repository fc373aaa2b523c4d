"""A link whose two PRs work mostly in different files is dropped as `mostly_elsewhere` unless the
link vetter judged it dependent (`chains.focus_min_share`): a PR built on another works where that
one did, and two tasks that meet in a file were most of the links the judges of rounds 36 to 39
did not call strictly dependent."""

from __future__ import annotations

import json
from pathlib import Path

from chains.config import ChainsConfig
from miner.config import MinerConfig
from miner.mine import mine
from prchain.dev.fake_llm import ScriptedLLMServer
from sql.db import make_engine
from tests.support.history import History
from tests.support.links import links_by_number, mine_and_build
from tests.support.vetting import SETTINGS, chains_listed, run

SMALL = ChainsConfig(min_chain_code_lines=0, min_stage_code_lines=0)


def _func(name: str, tag: str, count: int) -> str:
    """A function of `count` distinct lines of Python code, each naming `tag`."""
    body = "".join(f"    total = total + {tag}_{i}(total) * {i + 3}\n" for i in range(count))
    return f"def {name}(total):\n{body}    return total\n"


def _history(path: Path, older_elsewhere: int, newer_elsewhere: int) -> History:
    """#1 writes 20 lines of `ledger.py` and `older_elsewhere` lines in a file of its own; #2,
    "Follow-up to #1", rewrites 8 of them and writes `newer_elsewhere` lines in another file."""
    repo = History(path)
    repo.commit("Initial commit", {"books/__init__.py": "", "books/util.py": "SCALE = 3\n"})
    older = {"books/ledger.py": _func("settle", "ledger", 20)}
    if older_elsewhere:
        older["books/rates.py"] = _func("rates", "rate", older_elsewhere)
    repo.pr(1, "Ledger settlement", older)
    lines = _func("settle", "ledger", 20).splitlines(keepends=True)
    for i in range(1, 9):
        lines[i] = lines[i].replace("total +", f"total - audit_{i}(total) +")
    newer = {"books/ledger.py": "".join(lines)}
    if newer_elsewhere:
        newer["books/audit.py"] = _func("audit", "audit", newer_elsewhere)
    repo.pr(2, "Audit settlement", newer, body="Follow-up to #1.")
    return repo


def _link(tmp_path: Path, config: ChainsConfig = SMALL, **shape: int):
    repo = _history(tmp_path / "books", **shape)
    engine = mine_and_build(repo.path, tmp_path / "store.db", "acme/books", config)
    return links_by_number(engine)[2, 1]


def test_two_prs_working_in_the_same_file_are_a_link(tmp_path: Path) -> None:
    """#2 changes 16 lines of `ledger.py` and writes 11 in a file of its own: 59% of its code is
    where #1 worked."""
    link = _link(tmp_path, older_elsewhere=0, newer_elsewhere=9)
    assert link.kept, link.why


def test_a_newer_pr_writing_most_of_its_code_elsewhere_is_no_link(tmp_path: Path) -> None:
    """#2 follows up on #1 in 16 lines of `ledger.py` and writes 42 of its own elsewhere: a task
    of its own that meets #1's code (round 39: lxc #1019 adds `lxc.sysctl` through the parser
    #931 fixed)."""
    link = _link(tmp_path, older_elsewhere=0, newer_elsewhere=40)
    assert (link.kept, link.rule) == (False, "mostly_elsewhere"), link.why
    assert "two tasks that meet in a file: #2 writes 28% of its code in files both" in link.why
    off = _link(tmp_path / "off", ChainsConfig(**{**SMALL.model_dump(), "focus_min_share": 0}),
                older_elsewhere=0, newer_elsewhere=40)  # fmt: skip
    assert off.kept, off.why


def test_an_older_pr_whose_work_lies_mostly_elsewhere_is_no_link(tmp_path: Path) -> None:
    """#2 works only in `ledger.py`, but #1 wrote 62 of its 84 lines in `rates.py`: #2 builds on
    a corner of #1."""
    link = _link(tmp_path, older_elsewhere=60, newer_elsewhere=0)
    assert (link.kept, link.rule) == (False, "mostly_elsewhere"), link.why
    assert "#1 writes 26% of its code in files both PRs change" in link.why


def test_the_vetter_asks_about_a_link_mostly_elsewhere_and_its_dependent_lifts_the_rule(
    tmp_path: Path, fake_llm: ScriptedLLMServer
) -> None:
    """The rule guesses at what the vetter reads: `chains vet` asks about its drops, and only a
    `dependent` keeps the link."""
    for verdict, kept in (("dependent", True), ("borderline", False)):
        repo = _history(tmp_path / verdict, older_elsewhere=0, newer_elsewhere=40)
        url = f"sqlite:///{tmp_path / verdict}.db"
        mine(MinerConfig(), make_engine(url), [str(repo.path)], source="git", name="acme/books")
        small = ("--set", "chains.min_stage_code_lines=0")
        run("chains", "build", "--db", url, *SETTINGS, *small)
        listed = run("chains", "links", "--db", url, "--rule", "mostly_elsewhere").output
        assert "#2 → #1" in listed
        reply = json.dumps({"verdict": verdict, "reason": "the audit extends the settlement"})
        fake_llm.push(
            model="link_vetter", contains="Now decide whether #2 depends on #1.", content=reply
        )
        run("chains", "vet", "--db", url, *SETTINGS, *small)
        assert len(fake_llm.requests_for("link_vetter")) == 1
        fake_llm.reset()
        assert ("#1 ← #2" in chains_listed(url)) is kept
        link = links_by_number(make_engine(url))[2, 1]
        assert link.kept is kept, link.why
        assert (link.rescued_from == "mostly_elsewhere") is kept, link.why
