"""Longer chains on a real history: the search grows a chain only through stages the sandbox can
enter, so a PR whose stage cannot be entered is passed by through a direct link instead of
cutting the chain there; and the length distribution, with why chains are no longer, is shown by
`chains build`, `prchain stats` and the report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from prchain.chains.config import ChainsConfig
from prchain.chains.evidence.revertible import StageBases
from prchain.chains.reading.patches import split_patch
from prchain.cli import main
from prchain.report.facts import PipelineFacts
from prchain.report.funnel import build_funnel
from prchain.store.models import Chain, ChainBuild, ChainStage, PRPatch, PullRequest
from tests.support.history import History
from tests.support.links import links_by_number, mine_and_build

PARSE = """def parse_fields(text, sep=","):
    fields = []
    for part in text.split(sep):
        fields.append(part.strip())
    return fields
"""
READER = """from src.parse import parse_fields


def read_records(path):
    records = []
    with open(path) as handle:
        for line in handle:
            records.append(parse_fields(line))
    return records
"""
STATS = """from src.parse import parse_fields
from src.reader import read_records


def count_fields(path):
    total = 0
    for record in read_records(path):
        total += len(record)
    return total


def widest_field(text):
    return max(len(field) for field in parse_fields(text))
"""


def _history(path: Path) -> History:
    """#1 ← #2, #1 ← #4 ← #5 and #2 ← #4. #3, outside any chain, edits a line of #2 before #4,
    so #4's stage cannot be entered after #1 ← #2 (#2's patch no longer reverts at #4's base);
    it can after #1 alone."""
    repo = History(path)
    repo.commit("Initial commit", {"README.md": "acme\n", "src/__init__.py": ""})
    repo.pr(1, "Add the field parser", {"src/parse.py": PARSE})
    repo.pr(2, "Read records with the parser", {"src/reader.py": READER}, body="Follow-up to #1.")
    repo.pr(
        3, "Accept path objects", {"src/reader.py": READER.replace("open(path)", "open(str(path))")}
    )
    repo.pr(
        4,
        "Count fields of records",
        {"src/stats.py": STATS},
        body="Follow-up to #1.\n\nAlso a follow-up to #2.",
    )
    repo.pr(
        5,
        "Skip blank fields when counting",
        {"src/stats.py": STATS.replace("len(record)", "len([f for f in record if f])")},
        body="Follow-up to #4.",
    )
    return repo


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[History, Engine]:
    root = tmp_path_factory.mktemp("long-chains")
    repo = _history(root / "repo")
    return repo, mine_and_build(
        repo.path,
        root / "store.db",
        "acme/long",
        # a path passing by a stage that cannot be entered is what this history is about: paths,
        # and no entry by replay
        ChainsConfig(min_chain_code_lines=0, entry_fallback="hunks", strategy="semantic"),
    )


def _chains(engine: Engine) -> dict[tuple[int, ...], list[int]]:
    """Each chain by PR numbers → its PR ids, oldest first."""
    with Session(engine) as session:
        number = dict(session.execute(select(PullRequest.id, PullRequest.number)).all())
        found = {}
        for chain in session.scalars(select(Chain).where(Chain.superseded_at.is_(None))):
            ids = [int(pr) for pr in chain.signature.split("-")]
            found[tuple(number[pr] for pr in ids)] = ids
        return found


def test_the_chain_passes_by_a_stage_it_cannot_enter(built: tuple[History, Engine]) -> None:
    repo, engine = built
    chains = _chains(engine)
    # Cut at #4, the path #1 ← #2 ← #4 ← #5 left #1 ← #2; #1 ← #4 ← #5 goes on past #2.
    assert set(chains) == {(1, 2), (1, 4, 5)}
    links = links_by_number(engine)
    for chain in chains:
        for older, newer in zip(chain, chain[1:], strict=False):
            assert links[(newer, older)].rule is None  # every pair a kept link
    # The link #2 → #4 is kept, in no chain, and its record says why.
    assert links[(4, 2)].rule is None
    assert "stage_base_refused): the stage of #4 cannot be entered after #2," in links[(4, 2)].why
    # Carry-forward holds: every stage's base can be made, as the sandbox makes it.
    with Session(engine) as session:
        ids = chains[(1, 4, 5)]
        bases = [session.get(PullRequest, pr).base_sha for pr in ids]
        golds = [
            split_patch(session.scalar(select(PRPatch.diff).where(PRPatch.pr_id == pr))).code
            for pr in ids
        ]
    stage_bases = StageBases({1: str(repo.path)})
    assert stage_bases.enterable_run(1, bases, golds) == (0, 3)
    # And the stage the chain passes by is one the sandbox could not enter.
    assert stage_bases.reverts(1, repo.prs[3], golds[:1]) is True
    with Session(engine) as session:
        gold_2 = split_patch(
            session.scalar(select(PRPatch.diff).where(PRPatch.pr_id == chains[(1, 2)][1]))
        ).code
    assert stage_bases.reverts(1, repo.prs[3], [golds[0], gold_2]) is False


def test_the_length_distribution_and_why_chains_stop(built: tuple[History, Engine]) -> None:
    _repo, engine = built
    with Session(engine) as session:
        build = session.scalars(select(ChainBuild).order_by(ChainBuild.id.desc())).first()
        assert build is not None
        # #1 ← #2 could go on to #4 but not enter it; #1 ← #4 ← #5 has no link further.
        assert build.graph["lengths"] == {"2": 1, "3": 1}
        assert build.graph["stops"] == {"2": {"carry_forward": 1}, "3": {"no_link": 1}}
        funnel = {step.name: step for step in build_funnel(session, PipelineFacts())}
    detail = dict(funnel["chains"].detail)
    assert [detail[f"length {k}"] for k in (2, 3, 4, 5)] == [1, 1, 0, 0]
    assert detail["shorter: carry forward"] == 1 and detail["shorter: no link"] == 1

    url = str(engine.url)
    runner = CliRunner(env={"COLUMNS": "250"})
    built_again = runner.invoke(
        main,
        ["chains", "build", "--db", url, "--set", "chains.min_chain_code_lines=0",
         "--set", "chains.entry_fallback=hunks", "--strategy", "semantic"],
    )  # fmt: skip
    assert built_again.exit_code == 0, built_again.output
    rows = [line for line in built_again.output.splitlines() if line.startswith("│ ")]
    lengths = [[cell.strip() for cell in row.strip("│ ").split("│")] for row in rows[:5]]
    # stages, chains, then why no longer: full, no link, carry forward, chain rules
    assert lengths == [
        ["2", "1", "0", "0", "1", "0"],
        ["3", "1", "0", "1", "0", "0"],
        ["4", "0", "0", "0", "0", "0"],
        ["5", "0", "0", "0", "0", "0"],
        ["total", "2"],
    ]
    stats = runner.invoke(main, ["stats", "--json", "--db", url])
    assert stats.exit_code == 0, stats.output
    data = json.loads(stats.output)
    assert data["chain_build_lengths"]["semantic"] == [
        ["2", 1, {"carry_forward": 1}],
        ["3", 1, {"no_link": 1}],
        ["4", 0, {}],
        ["5", 0, {}],
    ]
    shown = runner.invoke(main, ["stats", "--db", url])
    assert "latest build (semantic): chains by length" in shown.output
    with Session(engine) as session:
        assert session.scalar(select(ChainStage.idx).order_by(ChainStage.idx.desc())) == 3
