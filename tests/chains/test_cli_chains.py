"""`prchain chains build|list|show` and `prchain tasks export` as a user runs them, on a real mined git repo."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from prchain.cli import main
from prchain.dev.repos import make_chain_repo
from prchain.miner.config import MinerConfig
from prchain.store.opener import make_engine

# The demo repository's chain changes a few lines per PR, below the substance threshold for real
# histories; these tests are about the commands, not that threshold.
TINY = ("--set", "chains.min_chain_code_lines=0")


def _mined(tmp_path: Path) -> str:
    from prchain.miner.mine import mine

    repo = make_chain_repo(tmp_path / "calc")
    url = f"sqlite:///{tmp_path / 'store.db'}"
    mine(MinerConfig(), make_engine(url), [str(repo.path)], source="git", name="acme/calc")
    return url


def test_mined_chain_repo_gives_the_three_pr_chain(tmp_path: Path) -> None:
    url = _mined(tmp_path)
    runner = CliRunner(env={"COLUMNS": "250"})
    built = runner.invoke(main, ["chains", "build", "--db", url, *TINY])
    assert built.exit_code == 0, built.output
    assert "│ 3      │ 1" in built.output  # one chain of length 3: #1 ← #2 ← #3

    listed = runner.invoke(main, ["chains", "list", "--db", url])
    assert listed.exit_code == 0 and "#1 ← #2 ← #3" in listed.output

    shown = runner.invoke(main, ["chains", "show", "1", "--db", url])
    assert shown.exit_code == 0, shown.output
    assert "Add subtract operation" in shown.output and "Follow-up to #1" in shown.output
    assert "(none yet)" in shown.output

    out = tmp_path / "tasks.jsonl"
    exported = runner.invoke(main, ["tasks", "export", str(out), "--db", url])
    assert exported.exit_code == 0 and "wrote 1 chains" in exported.output
    task = json.loads(out.read_text())
    assert [s["instance_id"] for s in task["stages"]] == [
        "acme__calc-1",
        "acme__calc-2",
        "acme__calc-3",
    ]
    assert "def divide" in task["stages"][2]["patch"]

    stats = runner.invoke(main, ["stats", "--json", "--db", url])
    assert stats.exit_code == 0
    data = json.loads(stats.output)
    assert (
        data["chains"] == 1
        and data["chains_by_length"] == {"3": 1}
        and data["queries"] == 0
        and data["stages"] == 3
    )


def test_show_of_an_unknown_chain_is_one_clear_line(tmp_path: Path) -> None:
    url = _mined(tmp_path)
    runner = CliRunner(env={"COLUMNS": "250"})
    assert runner.invoke(main, ["chains", "build", "--db", url, *TINY]).exit_code == 0
    result = runner.invoke(main, ["chains", "show", "99", "--db", url])
    assert result.exit_code == 1 and "no chain with id 99" in result.output
    result = runner.invoke(main, ["chains", "build", "--strategy", "nope", "--db", url, *TINY])
    assert result.exit_code == 2 and "semantic" in result.output


def test_show_prints_bracketed_pr_text_verbatim(tmp_path: Path) -> None:
    """Real titles start with tags like "[ty]"; rich must not swallow them as markup."""
    from sqlalchemy import update
    from sqlalchemy.orm import Session

    from prchain.store.models import PullRequest

    url = _mined(tmp_path)
    with Session(make_engine(url)) as session, session.begin():
        session.execute(
            update(PullRequest)
            .where(PullRequest.number == 1)
            .values(title="[red-knot] Add subtract")
        )
    runner = CliRunner(env={"COLUMNS": "250"})
    assert runner.invoke(main, ["chains", "build", "--db", url, *TINY]).exit_code == 0
    shown = runner.invoke(main, ["chains", "show", "1", "--db", url])
    assert shown.exit_code == 0, shown.output
    assert "[red-knot] Add subtract" in shown.output


def _built_with_drops(tmp_path: Path) -> str:
    """The mined chain repo built with two more references: one to the docs-only #4 (a stage
    drop) and one a link rule drops (#3 only compares itself with #1)."""
    from sqlalchemy import insert, select
    from sqlalchemy.orm import Session

    from prchain.store.models import PullRequest, Reference

    url = _mined(tmp_path)
    engine = make_engine(url)
    with Session(engine) as session, session.begin():
        ids = {n: i for i, n in session.execute(select(PullRequest.id, PullRequest.number))}
        # The docs-only #4 mentioned by #3: a link the PR filters rule out.
        session.execute(
            insert(Reference).values(
                repo_id=1,
                src_pr_id=ids[3],
                target_repo="acme/calc",
                target_number=4,
                target_kind="pr",
                target_pr_id=ids[4],
                type="mention",
                found_in="body",
                via_issue=0,
                evidence="Unlike #4, this is code.",
            )
        )
        # ... and a link a link rule drops: #3 only compares itself with #1.
        session.execute(
            insert(Reference).values(
                repo_id=1,
                src_pr_id=ids[3],
                target_repo="acme/calc",
                target_number=1,
                target_kind="pr",
                target_pr_id=ids[1],
                type="mention",
                found_in="body",
                via_issue=0,
                evidence="Similar to #1, but for division.",
            )
        )
    built = CliRunner().invoke(main, ["chains", "build", "--db", url, *TINY])
    assert built.exit_code == 0, built.output
    return url


def test_links_and_a_seeded_sample_show_every_decision(tmp_path: Path) -> None:
    url = _built_with_drops(tmp_path)
    runner = CliRunner(env={"COLUMNS": "250"})
    every = runner.invoke(main, ["chains", "links", "--db", url])
    assert every.exit_code == 0, every.output
    assert "#2 → #1" in every.output and "#3 → #2" in every.output and "kept" in every.output
    dropped = runner.invoke(main, ["chains", "links", "--dropped", "--db", url])
    assert "#3 → #4" in dropped.output and "pr_filtered_or_not_mined" in dropped.output
    assert "#2 → #1" not in dropped.output
    # Stage drops (an end is no usable stage) apart from link-rule drops.
    stage = runner.invoke(main, ["chains", "links", "--dropped", "--kind", "stage", "--db", url])
    assert "#3 → #4" in stage.output and "#4 is filtered (docs_only)" in stage.output
    assert "#3 → #1" not in stage.output
    link = runner.invoke(main, ["chains", "links", "--dropped", "--kind", "link", "--db", url])
    assert "#3 → #1" in link.output and "parallel_wording" in link.output
    assert "#3 → #4" not in link.output
    by_rule = runner.invoke(main, ["chains", "links", "--rule", "gap_too_long", "--db", url])
    assert "no stored links match" in by_rule.output
    of_chain = runner.invoke(main, ["chains", "links", "--chain", "1", "--db", url])
    assert "#2 → #1" in of_chain.output and "#3 → #4" not in of_chain.output
    unknown = runner.invoke(main, ["chains", "links", "--chain", "9", "--db", url])
    assert unknown.exit_code == 1 and "no chain with id 9" in unknown.output

    args = ["chains", "sample", "--seed", "3", "-n", "5", "--db", url]
    first, second = runner.invoke(main, args), runner.invoke(main, args)
    assert first.exit_code == 0, first.output
    assert first.output == second.output
    assert "=== chain 1: id 1: #1 ← #2 ← #3" in first.output
    assert "newer #2: Add multiply operation" in first.output
    assert "older #1: Add subtract operation" in first.output
    assert (
        "Follow-up to #1, built on top of it: the calculator also needs products." in first.output
    )
    drops = runner.invoke(main, ["chains", "sample", "--dropped", "-n", "3", "--db", url])
    assert "dropped: pr_filtered_or_not_mined" in drops.output and "Unlike #4" in drops.output
    args = ["chains", "sample", "--dropped", "--kind", "link", "-n", "3", "--db", url]
    link_drops = runner.invoke(main, args)
    assert "dropped: parallel_wording" in link_drops.output
    assert "pr_filtered_or_not_mined" not in link_drops.output
    assert link_drops.output.startswith("dropped links: 2 (link rules 1, 50%; stages 1, 50%)")
    assert "drawing from link drops" in link_drops.output
    assert "drawing from both" in drops.output and "symbols -" in drops.output


LABELS = """repository,kind,older,newer,verdict,thin,rule,reason
acme/calc,chain,1,2,dep,,,#2 puts its operand check into #1's subtract
acme/calc,chain,2,3,not,,,judged independent
acme/calc,linkdrop,1,3,real,,parallel_wording,#3 calls #1's subtract
acme/calc,alldrop,4,3,borderline,,gap_too_long,docs
acme/calc,chain,1,4,dep,,,no reference joins them
acme/other,chain,5,6,dep,,,a repository this store does not hold
"""


def test_score_reads_hand_labels_against_todays_decisions(tmp_path: Path) -> None:
    url = _built_with_drops(tmp_path)
    labels = tmp_path / "labels.csv"
    labels.write_text(LABELS)
    runner = CliRunner(env={"COLUMNS": "250"})

    scored = runner.invoke(main, ["chains", "score", str(labels), "--moved", "--db", url])
    assert scored.exit_code == 0, scored.output
    assert "5 of 6 labels are of repositories this store holds" in scored.output
    assert "kept: 2, dependent 1 (50.0%), with borderline 1 (50.0%)" in scored.output
    assert "dropped by a link rule: 1, dependent 1 (100.0%)" in scored.output
    # Labelled then as dropped by gap_too_long, dropped today because #4 is no stage.
    moved = scored.output.split("moved", 1)[1].splitlines()
    row = next(line for line in moved if "#3 → #4" in line)
    assert row.split("│")[4:6] == [" dropped: gap_too_long ", " dropped: pr_filtered_or_not_mined "]
    assert not any("#3 → #1" in line for line in moved)  # dropped then by the same rule

    as_json = runner.invoke(main, ["chains", "score", str(labels), "--json", "--db", url])
    assert json.loads(as_json.output) == {
        "labels": 6,
        "scored": 5,
        "borderline/stage": 1,
        "dependent/absent": 1,
        "dependent/kept": 1,
        "dependent/link": 1,
        "not/kept": 1,
    }


def test_score_stops_at_a_bad_label_with_one_line(tmp_path: Path) -> None:
    url = _built_with_drops(tmp_path)
    bad = tmp_path / "bad.csv"
    bad.write_text(LABELS.replace("1,2,dep", "1,2,maybe"))
    runner = CliRunner()
    result = runner.invoke(main, ["chains", "score", str(bad), "--db", url])
    assert result.exit_code == 2
    assert f"{bad}:2: unknown verdict 'maybe'" in result.output
    no_column = tmp_path / "no-verdict.csv"
    no_column.write_text("repository,older,newer\nacme/calc,1,2\n")
    result = runner.invoke(main, ["chains", "score", str(no_column), "--db", url])
    assert result.exit_code == 2 and "no column verdict" in result.output
