"""A link no text calls a dependency needs `corroboration_signs` (3) of four signs that its newer
PR works on the older one's code: contact, focus, shared files, and a title naming what the
older PR wrote. Fewer, it is dropped as `uncorroborated` unless the link vetter judged it
dependent."""

from __future__ import annotations

import json
from pathlib import Path

from prchain.chains.config import ChainsConfig
from prchain.chains.rules.corroborate import title_names_older_work, words
from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.miner.config import MinerConfig
from prchain.miner.mine import mine
from prchain.store.opener import make_engine
from tests.support.history import History
from tests.support.links import links_by_number, mine_and_build
from tests.support.vetting import SETTINGS, chains_listed, run


def _func(name: str, tag: str, count: int) -> str:
    """A function of `count` distinct lines of Python code, each calling a `tag`_i."""
    body = "".join(f"    total = total + {tag}_{i}(total) * {i + 3}\n" for i in range(count))
    return f"def {name}(total):\n{body}    return total\n"


def _history(path: Path, title: str, own: int, body: str = "") -> History:
    """#1 writes a 40-line `settle` in `ledger.py`; #2 rewrites 14 of its lines and writes a
    function of `own` lines of its own in `audit.py`. No text names #1 unless `body` does."""
    repo = History(path)
    repo.commit("Initial commit", {"books/__init__.py": ""})
    repo.pr(1, "Ledger settlement", {"books/ledger.py": _func("settle", "ledger", 40)})
    lines = _func("settle", "ledger", 40).splitlines(keepends=True)
    for i in range(1, 15):
        lines[i] = lines[i].replace("total +", f"total - review_{i}(total) +")
    newer = {"books/ledger.py": "".join(lines)}
    if own:
        newer["books/audit.py"] = _func("trail", "journal", own)
    repo.pr(2, title, newer, body=body)
    return repo


def _link(tmp_path: Path, title: str, own: int, config: ChainsConfig | None = None, body: str = ""):
    repo = _history(tmp_path / "books", title, own, body)
    engine = mine_and_build(
        repo.path, tmp_path / "store.db", "acme/books", config or ChainsConfig()
    )
    return links_by_number(engine)[2, 1]


def test_a_code_link_with_every_sign_stands(tmp_path: Path) -> None:
    """#2 only rewrites #1's lines: 14 points of contact, all of its code, the same file."""
    link = _link(tmp_path, "Review pass", own=0)
    assert link.evidence_class == "code"
    assert link.kept, link.why


def test_a_code_link_two_signs_short_of_three_is_dropped(tmp_path: Path) -> None:
    """#2 rewrites 14 of #1's lines, calling 14 names #1 brought in (contact), in a file both
    change (files), but most of its code is a trail of its own (28 points in 103 lines, under
    30%) and its title names nothing #1 wrote: a task of its own that meets #1's code."""
    link = _link(tmp_path, "Audit trail", own=80)
    assert (link.kept, link.rule) == (False, "uncorroborated"), link.why
    assert "2 of 4 signs that #2 works on #1's code (contact, files), under 3" in link.why
    off = _link(tmp_path / "off", "Audit trail", own=80, config=ChainsConfig(corroboration_signs=0))
    assert off.kept, off.why


def test_a_title_naming_what_the_older_pr_wrote_is_the_third_sign(tmp_path: Path) -> None:
    """The same change titled after #1's ledger code is about that code."""
    link = _link(tmp_path, "Audit trail for the ledger", own=80)
    assert link.kept, link.why


def test_a_link_stated_as_a_dependency_stands_on_its_words(tmp_path: Path) -> None:
    link = _link(tmp_path, "Audit trail", own=80, body="Follow-up to #1.")
    assert link.evidence_class == "strong"
    assert link.kept, link.why


def test_the_vetter_asks_about_an_uncorroborated_link_and_its_dependent_lifts_the_rule(
    tmp_path: Path, fake_llm: ScriptedLLMServer
) -> None:
    """The rule guesses at what the vetter reads: `chains vet` asks about its drops, and only a
    `dependent` keeps the link."""
    for verdict, kept in (("dependent", True), ("borderline", False)):
        repo = _history(tmp_path / verdict, "Audit trail", own=80)
        url = f"sqlite:///{tmp_path / verdict}.db"
        mine(MinerConfig(), make_engine(url), [str(repo.path)], source="git", name="acme/books")
        run("chains", "build", "--db", url, *SETTINGS)
        listed = run("chains", "links", "--db", url, "--rule", "uncorroborated").output
        assert "#2 → #1" in listed
        reply = json.dumps({"verdict": verdict, "reason": "the audit rewrites the settlement"})
        fake_llm.push(
            model="link_vetter", contains="Now decide whether #2 depends on #1.", content=reply
        )
        run("chains", "vet", "--db", url, *SETTINGS)
        assert len(fake_llm.requests_for("link_vetter")) == 1
        fake_llm.reset()
        assert ("#1 ← #2" in chains_listed(url)) is kept
        link = links_by_number(make_engine(url))[2, 1]
        assert link.kept is kept, link.why
        assert (link.rescued_from == "uncorroborated") is kept, link.why


def test_title_words_split_identifiers_and_leave_common_words_out() -> None:
    found = words("Fix getBucketAndObject for the s3_fs_ls path")
    assert {"get", "bucket"} <= found and not found & {"object", "fix", "the"}
    assert not words("Fix the tests") & {"fix", "the", "tests", "test"}
    diff = (
        "diff --git a/src/dirs.rs b/src/dirs.rs\n--- a/src/dirs.rs\n+++ b/src/dirs.rs\n"
        "@@ -1,1 +1,2 @@\n fn main() {}\n+fn simplify_dir_names(names: Vec<String>) {}\n"
    )
    assert title_names_older_work("Simplify dir names further", "Tree output", diff)
    assert title_names_older_work("Colour the ledger summary", "Ledger summary", "")
    assert not title_names_older_work("Colour flag", "Ledger summary", diff)
