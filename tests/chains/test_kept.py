"""Evidence kept in the store (prchain.chains.evidence.kept): a rebuild after a setting change asks git nothing
about pairs it has seen, and decides every link as a cold build with that setting does."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, func, select
from sqlalchemy.orm import Session

from prchain.chains.building.build import build_chains
from prchain.chains.config import ChainsConfig
from prchain.chains.evidence import kept
from prchain.chains.evidence.kept import EVIDENCE_VERSION
from prchain.core import git
from prchain.core.errors import GitError
from prchain.environments import languages
from prchain.miner.config import MinerConfig
from prchain.miner.mine import mine
from prchain.store.models import PairEvidence, PullRequest
from prchain.store.opener import make_engine
from tests.support.history import History
from tests.support.links import links_by_number

SCHEDULER = """from collections import OrderedDict


def schedule_batches(queue, batch_size):
    pending_batches = [queue[i : i + batch_size] for i in range(0, len(queue), batch_size)]
    return [batch for batch in pending_batches if batch]


def by_position(queue):
    return OrderedDict(enumerate(queue))


def drain_queue(queue):
    drained_items = list(queue)
    queue.clear()
    return drained_items
"""
# The git questions that are asked per pair or per PR; what a build asks once per repository
# (its mainline, pushed reverts) or per chain (stage bases) is not pair evidence.
PER_PAIR = {"blame", "grep", "show", "cat-file", "merge-base", "ls-tree", "check-attr"}


def _history(path: Path) -> History:
    repo = History(path)
    repo.commit("Initial commit", {"jobs/__init__.py": "", "jobs/util.py": "RETRIES = 3\n"})
    repo.pr(1, "Schedule work in batches", {"jobs/scheduler.py": SCHEDULER})
    rewritten = SCHEDULER.replace(
        "return [batch for batch in pending_batches if batch]",
        "return [tuple(batch) for batch in pending_batches if batch]",
    )
    repo.pr(2, "Batches are tuples", {"jobs/scheduler.py": rewritten}, body="See #1.")
    # It also uses the standard library's OrderedDict, new to the code at #1's base but no name
    # of #1's (`prchain.chains.reading.foreign`: read only for the names #3 uses).
    caller = (
        "from collections import OrderedDict\n\nfrom jobs.scheduler import schedule_batches\n\n\n"
        "def run_nightly(queue):\n    seen = OrderedDict()\n"
        "    for batch in schedule_batches(queue, batch_size=50):\n        seen[len(seen)] = batch\n"
    )
    repo.pr(3, "Run the nightly job", {"jobs/nightly.py": caller}, body="Uses #1.")
    return repo


def _mined(tmp_path: Path) -> tuple[History, Engine]:
    repo = _history(tmp_path / "jobs")
    engine = make_engine(f"sqlite:///{tmp_path / 'store.db'}")
    mine(MinerConfig(), engine, [str(repo.path)], source="git", name="acme/jobs")
    return repo, engine


def _decisions(engine: Any) -> dict[tuple[int, int], tuple[str | None, int, int | None]]:
    return {
        pair: (link.rule, link.lineage, link.symbols)
        for pair, link in links_by_number(engine).items()
    }


def test_a_rebuild_asks_git_nothing_of_pairs_it_has_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, engine = _mined(tmp_path)
    loose = ChainsConfig(
        corroboration_signs=0,
        min_chain_code_lines=0,
        min_stage_code_lines=0,
        lineage_workers=1,
        plain_mention_min_contact=0,
    )
    cold = build_chains(loose, engine)
    assert cold.graph.evidence_new > 0 and cold.graph.lineage_blames > 0
    with Session(engine) as session:
        pairs = session.scalar(
            select(func.count()).where(PairEvidence.newer_pr_id != PairEvidence.older_pr_id)
        )
        lexed = session.scalar(
            select(func.count()).where(PairEvidence.kind.startswith("substance"))
        )
        versions = set(session.scalars(select(PairEvidence.version)))
    assert pairs == cold.graph.evidence_new and versions == {EVIDENCE_VERSION}
    assert lexed == 3  # each PR's patch, lexed for its substance

    asked: list[str] = []
    real_run = git.run

    def counting(repo_path: Any, *args: str, **kwargs: Any) -> Any:
        # The stage-base checks (per chain, in a scratch index of their own) list their paths
        # with `ls-tree` too.
        if "GIT_INDEX_FILE" not in (kwargs.get("env") or {}):
            asked.append(args[0])
        return real_run(repo_path, *args, **kwargs)

    monkeypatch.setattr(git, "run", counting)
    # A stricter symbol rule: #3's two names of #1 (kept in the store) no longer back its link.
    assert links_by_number(engine)[3, 1].kept
    strict = loose.model_copy(update={"min_symbols": 3})
    rebuilt = build_chains(strict, engine)
    assert not PER_PAIR & set(asked), asked
    assert (rebuilt.graph.lineage_blames, rebuilt.graph.evidence_new) == (0, 0)
    assert rebuilt.graph.evidence_kept > 0
    monkeypatch.setattr(git, "run", real_run)

    # The same decisions as a cold build with the stricter setting, on a store of its own.
    fresh = make_engine(f"sqlite:///{tmp_path / 'fresh.db'}")
    mine(MinerConfig(), fresh, [str(repo.path)], source="git", name="acme/jobs")
    build_chains(strict, fresh)
    decided = _decisions(engine)
    assert decided == _decisions(fresh)
    assert decided[2, 1][0] is None and decided[2, 1][1] >= 1  # rewrites #1's line
    # It calls #1's `schedule_batches` with its `batch_size`: two names, under the three asked.
    assert decided[3, 1] == ("plain_mention_without_shared_lines", 0, 2)


def test_evidence_of_another_version_is_asked_again(tmp_path: Path) -> None:
    repo, engine = _mined(tmp_path)
    config = ChainsConfig(
        corroboration_signs=0, min_chain_code_lines=0, min_stage_code_lines=0, lineage_workers=1
    )
    first = build_chains(config, engine)
    with Session(engine) as session:
        for row in session.scalars(select(PairEvidence)):
            row.version = "0"
            if row.kind.startswith("lineage"):
                row.value = {"v": {"lines": 0}}  # what an older computation might have said
        session.commit()
    again = build_chains(config, engine)
    assert again.graph.evidence_kept == 0 and again.graph.evidence_new == first.graph.evidence_new
    assert links_by_number(engine)[2, 1].lineage >= 1


def test_a_build_that_dies_keeps_the_evidence_it_had_computed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo, engine = _mined(tmp_path)
    config = ChainsConfig(
        corroboration_signs=0, min_chain_code_lines=0, min_stage_code_lines=0, lineage_workers=1
    )
    monkeypatch.setattr("prchain.chains.evidence.kept.SAVE_EVERY", 1)
    real_run = git.run
    asked: list[str] = []

    def dies_on_the_way(repo_path: Any, *args: str, **kwargs: Any) -> Any:
        asked.append(args[0])
        if sum(command in PER_PAIR for command in asked) == 3:
            raise GitError(f"git {args[0]} took longer than 60 s")
        return real_run(repo_path, *args, **kwargs)

    monkeypatch.setattr(git, "run", dies_on_the_way)
    with pytest.raises(GitError):
        build_chains(config, engine)
    with Session(engine) as session:
        kept = session.scalar(
            select(func.count()).where(PairEvidence.newer_pr_id != PairEvidence.older_pr_id)
        )
    assert kept and kept > 0  # what was answered before the failure is in the store

    monkeypatch.setattr(git, "run", real_run)
    again = build_chains(config, engine)
    assert again.graph.evidence_kept >= kept
    fresh = make_engine(f"sqlite:///{tmp_path / 'fresh.db'}")
    mine(MinerConfig(), fresh, [str(repo.path)], source="git", name="acme/jobs")
    build_chains(config, fresh)
    assert _decisions(engine) == _decisions(fresh)


CLOCK = """package svc

import "time"

type Clock struct {
	offset time.Duration
}

func (c Clock) Now() time.Time {
	return time.Now().Add(c.offset)
}

func (c Clock) Since(start time.Time) time.Duration {
	return c.Now().Sub(start)
}
"""


def _two_languages(path: Path) -> History:
    """The Python history above, then a Go pair: #5 rewrites #4's clock."""
    repo = _history(path)
    repo.commit("Go module", {"go.mod": "module acme/jobs\n\ngo 1.21\n"})
    repo.pr(4, "A clock with an offset", {"svc/clock.go": CLOCK})
    skewed = CLOCK.replace("time.Now().Add(c.offset)", "time.Now().UTC().Add(c.offset)")
    repo.pr(5, "The clock reads UTC", {"svc/clock.go": skewed}, body="Follow-up to #4.")
    return repo


def _versions_by_pr_number(engine: Engine) -> dict[tuple[int, int, str], str]:
    with Session(engine) as session:
        numbers = dict(session.execute(select(PullRequest.id, PullRequest.number)).all())
        rows = session.execute(
            select(
                PairEvidence.newer_pr_id,
                PairEvidence.older_pr_id,
                PairEvidence.kind,
                PairEvidence.version,
            )
        )
        return {(numbers[a], numbers[b], kind): version for a, b, kind, version in rows}


def test_one_languages_reading_changing_asks_again_only_its_pairs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bumping Go's own evidence version keeps every answer about the Python pairs and asks
    again only those about PRs that change Go files."""
    repo = _two_languages(tmp_path / "jobs")
    engine = make_engine(f"sqlite:///{tmp_path / 'store.db'}")
    mine(MinerConfig(), engine, [str(repo.path)], source="git", name="acme/jobs")
    config = ChainsConfig(
        corroboration_signs=0, min_chain_code_lines=0, min_stage_code_lines=0, lineage_workers=1
    )
    build_chains(config, engine)
    before = _versions_by_pr_number(engine)
    go_keys = {key for key in before if {key[0], key[1]} <= {4, 5}}
    go_version = languages.language_facts("go").evidence_version
    go_tag = f"{EVIDENCE_VERSION}+go{go_version}" if go_version else EVIDENCE_VERSION
    assert before == {key: go_tag if key in go_keys else EVIDENCE_VERSION for key in before}
    assert {(5, 4)} <= {key[:2] for key in go_keys} and len(go_keys) < len(before)
    decided = _decisions(engine)

    bumped = tuple(
        replace(f, evidence_version=go_version + 1) if f.name == "go" else f
        for f in languages.all_facts()
    )
    monkeypatch.setattr(kept, "all_facts", lambda: bumped)
    again = build_chains(config, engine)
    after = _versions_by_pr_number(engine)
    own = f"{EVIDENCE_VERSION}+go{go_version + 1}"
    assert after == {key: own if key in go_keys else EVIDENCE_VERSION for key in before}
    pairs_asked = {key for key in go_keys if key[0] != key[1]}
    assert again.graph.evidence_new == len(pairs_asked)
    assert again.graph.evidence_kept > 0  # the Python pairs' answers
    assert _decisions(engine) == decided
