"""What a code link (prchain.chains.rules.codelinks) must show to join two stages: points of contact with the
older PR's code (rewritten lines, insertions, names used; `code_link_min_contact`), a share of the
newer PR's code (`code_link_min_share`), and two ends that are stages, not a follow-up fix
(`code_link_min_stage_lines`, `code_link_followup_lines`). Round 31's blind check found the code
links a judge called borderline were small contacts inside a task of its own, and a third of the
chains had a thin stage: a dozen-line fix of the older PR."""

from __future__ import annotations

import json
from pathlib import Path

from prchain.chains.config import ChainsConfig
from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.miner.config import MinerConfig
from prchain.miner.mine import mine
from prchain.store.opener import make_engine
from tests.support.history import History
from tests.support.links import links_by_number, mine_and_build
from tests.support.vetting import SETTINGS, chains_listed, run


def _word(n: int) -> str:
    """A distinct lowercase word for each `n` (a single word: no name a symbol check reads as
    introduced; numbers alone would not do, a line's numbers are no change of its own)."""
    letters = "bdfgklmnprstvz"
    vowels = "aeiou"
    word = ""
    for _ in range(3):
        n, c = divmod(n, len(letters))
        n, v = divmod(n, len(vowels))
        word += letters[c] + vowels[v]
    return word


def _lines(tag: int, count: int) -> list[str]:
    """`count` distinct lines of Python code."""
    return [
        f"    value = value.{_word(tag + i)}(value) or {_word(tag + i + 7)}\n" for i in range(count)
    ]


def _func(name: str, body: list[str]) -> str:
    return f"def {name}(value):\n{''.join(body)}    return value\n"


SWEPT = [f"books/{_word(700 + i)}.py" for i in range(8)]


def _history(path: Path, older: int, rewrite: int, own: int, swept: int = 0) -> History:
    """#1 writes `older` lines of `ledger.py`; #2 (no text names #1) rewrites `rewrite` of them,
    writes `own` lines of its own in another file and edits `swept` files #1 never touched."""
    repo = History(path)
    untouched = {name: _func("keep", _lines(800 + 40 * i, 4)) for i, name in enumerate(SWEPT)}
    repo.commit(
        "Initial commit", {"books/__init__.py": "", "books/util.py": "SCALE = 3\n", **untouched}
    )
    body = _lines(1, older)
    repo.pr(1, "Ledger settlement", {"books/ledger.py": _func("settle", body)})
    # Each line rewritten its own way: one edit repeated on every line is carried, not written.
    rewritten = [
        f"{line.rstrip()} + value.{_word(9_000 + i)}({i})\n"
        for i, line in enumerate(body[:rewrite])
    ]
    rewritten += body[rewrite:]
    files = {"books/ledger.py": _func("settle", rewritten)}
    if own:
        files["books/audit.py"] = _func("audit", _lines(5_000, own))
    for i, name in enumerate(SWEPT[:swept]):
        files[name] = _func("keep", _lines(800 + 40 * i, 4) + _lines(6_000 + 40 * i, 3))
    repo.pr(2, "Audit trail", files)
    return repo


def _link(
    tmp_path: Path,
    older: int,
    rewrite: int,
    own: int,
    config: ChainsConfig | None = None,
    swept: int = 0,
):
    repo = _history(tmp_path / "books", older, rewrite, own, swept)
    config = config or ChainsConfig(corroboration_signs=0, code_links=True)
    engine = mine_and_build(repo.path, tmp_path / "store.db", "acme/books", config)
    return links_by_number(engine)[2, 1]


def _dropped_unless(tmp_path: Path, rule: str, relaxed: ChainsConfig, **shape: int):
    """The pair of `shape` is dropped by `rule`; under the `relaxed` settings it is a link."""
    link = _link(tmp_path, **shape)
    assert (link.kept, link.rule) == (False, rule), link.why
    again = _link(tmp_path / "relaxed", config=relaxed, **shape)
    assert again.kept, again.why
    return link


def test_a_code_link_with_enough_contact_joins_two_stages(tmp_path: Path) -> None:
    link = _link(tmp_path, older=40, rewrite=8, own=30)
    assert (link.kept, link.evidence_class) == (True, "code"), link.why


def test_four_rewritten_lines_and_no_name_are_too_little_contact(tmp_path: Path) -> None:
    """Four of #1's lines rewritten, no name of #1's used: main kept it (3 rewritten lines were
    enough); round 31's gin #2368 → #2378 and chi #966 → #971 were such links."""
    link = _link(tmp_path, older=40, rewrite=4, own=30)
    assert (link.kept, link.rule) == (False, "code_link_unbacked"), link.why


def test_a_thin_end_is_no_stage_of_a_code_link(tmp_path: Path) -> None:
    """#2 rewrites 6 of #1's lines and writes a function of 2: 13 lines of code, over the stage
    minimum (12) but under a code link's (15): a follow-up fix, as raft #194 is of #189. (Its 16
    lines changed in source files are under `min_stage_source_lines`, turned off here.)"""
    config = ChainsConfig(code_links=True, min_stage_source_lines=0)
    link = _link(tmp_path, older=40, rewrite=6, own=2, config=config)
    assert (link.kept, link.rule) == (False, "code_link_thin_stage"), link.why
    assert "an end changes 13 line(s) of code" in link.why


def test_a_short_follow_up_of_a_large_change_is_no_stage(tmp_path: Path) -> None:
    """#2 is 32 lines of code on #1's 120: a fix of the older change (spark-connect-swift #128
    of #126), however much of it touches #1's code."""
    off = ChainsConfig(corroboration_signs=0, code_links=True, code_link_followup_lines=0)
    link = _dropped_unless(tmp_path, "code_link_thin_stage", off, older=120, rewrite=8, own=20)
    assert "follow-up fix" in link.why


def test_a_task_of_its_own_passing_through_the_older_code_is_no_link(tmp_path: Path) -> None:
    """#2 writes 150 lines of its own and rewrites 6 of #1's: under 5% of its code touches #1
    (bat #2755 rewrites the syntax mapping #2647 had extended)."""
    link = _link(tmp_path, older=40, rewrite=6, own=150)
    assert (link.kept, link.rule) == (False, "code_link_thin_stage"), link.why
    assert "point(s) of contact" in link.why


def test_auto_reads_code_only_where_prs_seldom_name_each_other(tmp_path: Path) -> None:
    """`code_links: auto` (the default): the same pair is a code link in a history whose PRs name
    no PR, and no link at all in one whose PRs name each other (there the text-named links are
    the chains, and reading every pair's code would only cost the build)."""
    quiet = _history(tmp_path / "quiet", older=40, rewrite=8, own=30)
    engine = mine_and_build(
        quiet.path, tmp_path / "quiet.db", "acme/quiet", ChainsConfig(corroboration_signs=0)
    )
    link = links_by_number(engine)[2, 1]
    assert (link.kept, link.evidence_class) == (True, "code"), link.why

    talking = _history(tmp_path / "talking", older=40, rewrite=8, own=30)
    talking.pr(3, "Audit report", {"books/report.py": "TOTAL = 1\n"}, body="Follow-up to #2.")
    engine = mine_and_build(
        talking.path, tmp_path / "talking.db", "acme/talking", ChainsConfig(corroboration_signs=0)
    )
    links = links_by_number(engine)
    assert (2, 1) not in links
    assert (3, 2) in links
    # Asked for everywhere, the pair is found in code there too.
    engine = mine_and_build(
        talking.path,
        tmp_path / "on.db",
        "acme/talking",
        ChainsConfig(corroboration_signs=0, code_links=True),
    )
    assert links_by_number(engine)[2, 1].evidence_class == "code"


def test_a_change_of_its_own_with_little_contact_is_incidental(tmp_path: Path) -> None:
    """#2 writes 60 lines of its own and rewrites 6 of #1's: over 5% of its code, so its ends are
    stages, but under 15%: a feature that rewrites a few of the older lines on its way (round
    33: fiber #3754 through #3746's cache code, starship #4550 through #4743's)."""
    lower = ChainsConfig(corroboration_signs=0, code_links=True, code_link_focus_share=0.05)
    link = _dropped_unless(tmp_path, "code_link_incidental", lower, older=40, rewrite=6, own=60)
    assert "a change of its own: 6 point(s) of contact" in link.why


def test_a_sweep_through_files_the_older_pr_never_touched_is_incidental(tmp_path: Path) -> None:
    """#2 rewrites 8 of #1's lines, enough contact for its size, but edits 8 files #1 never
    touched besides: a sweep (round 33: mockito #476 puts a singleton in place of `new
    ThreadSafeMockingProgress()` in 16 files, badger #1498 moves `y.Closer` to `z.Closer`)."""
    link = _link(tmp_path, older=40, rewrite=8, own=0, swept=8)
    assert (link.kept, link.rule) == (False, "code_link_incidental"), link.why
    assert "the older PR touched 1 of the newer PR's 9 file(s)" in link.why
    # Two such files are no sweep: #1 touched a third of #2's files.
    fewer = _link(tmp_path / "fewer", older=40, rewrite=8, own=0, swept=2)
    assert fewer.kept, fewer.why


def test_the_vetter_asks_about_an_incidental_code_link_and_its_dependent_lifts_the_rule(
    tmp_path: Path, fake_llm: ScriptedLLMServer
) -> None:
    """The rule guesses at what a change is for, which the link vetter reads: `chains vet` asks
    about its drops, a `dependent` keeps the link, a `borderline` leaves it dropped."""
    for verdict, kept in (("dependent", True), ("borderline", False)):
        repo = _history(tmp_path / verdict, older=40, rewrite=8, own=0, swept=8)
        url = f"sqlite:///{tmp_path / verdict}.db"
        mine(MinerConfig(), make_engine(url), [str(repo.path)], source="git", name="acme/books")
        code = ("--set", "chains.code_links=true")
        run("chains", "build", "--db", url, *SETTINGS, *code)
        assert (
            "#2 → #1"
            in run("chains", "links", "--db", url, "--rule", "code_link_incidental").output
        )
        reply = json.dumps({"verdict": verdict, "reason": "the audit rewrites the settlement"})
        fake_llm.push(
            model="link_vetter", contains="Now decide whether #2 depends on #1.", content=reply
        )
        run("chains", "vet", "--db", url, *SETTINGS, *code)
        assert len(fake_llm.requests_for("link_vetter")) == 1
        fake_llm.reset()
        assert ("#1 ← #2" in chains_listed(url)) is kept
        link = links_by_number(make_engine(url))[2, 1]
        assert link.kept is kept
        assert (link.rescued_from == "code_link_incidental") is kept, link.why
