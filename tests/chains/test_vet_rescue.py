"""The link vetter on links the rules dropped (`chains.vet_rescue`): a `dependent` verdict makes a
drop of a rule that only guesses at shared code an edge again, and nothing weaker does. Real git
history, real SQLite store, the real openai client against the scripted server."""

from __future__ import annotations

import json
import re
from pathlib import Path

from click.testing import Result
from sqlalchemy import update
from sqlalchemy.orm import Session

from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.miner.config import MinerConfig
from prchain.miner.mine import mine
from prchain.store.models import PullRequest
from prchain.store.opener import make_engine
from tests.support.history import History
from tests.support.vetting import SETTINGS, chains_listed, run

ASKS_2_ON_1 = "Now decide whether #2 depends on #1."
RETRY = """class RetryBudget:
    def __init__(self, limit):
        self.limit = limit
        self.spent = 0

    def take(self):
        self.spent += 1
        return self.spent <= self.limit
"""


def _store(tmp_path: Path) -> str:
    """A history whose #2 says it depends on #1 but shares no file or name with it (dropped as
    too_little_file_overlap), whose #3 is an analogy of #1 (parallel_wording) and whose #4 only
    mentions #1 (plain_mention_without_shared_lines); built once."""
    repo = History(tmp_path / "budget")
    repo.commit("Initial commit", {"src/core.py": "def helper(items):\n    return sorted(items)\n"})
    repo.pr(1, "Add a retry budget", {"src/retry.py": RETRY})
    repo.pr(
        2,
        "Read the retry limit from the settings",
        {
            "src/settings.py": "def retry_limit(settings):\n"
            "    value = settings.get('retries', 3)\n"
            "    return max(0, int(value))\n"
        },
        body="Depends on #1: the budget needs its limit from the settings.",
    )
    repo.pr(
        3,
        "Add a cache budget",
        {
            "src/cache.py": "class CacheBudget:\n    def __init__(self, size):\n        self.size = size\n"
        },
        body="Same as #1, for the cache.",
    )
    repo.pr(
        4,
        "Log retries",
        {
            "src/log.py": "def log_retry(attempt):\n    print('retry', attempt)\n    return attempt\n"
        },
        body="See #1.",
    )
    url = f"sqlite:///{tmp_path / 'store.db'}"
    mine(MinerConfig(), make_engine(url), [str(repo.path)], source="git", name="acme/budget")
    run("chains", "build", "--db", url, *SETTINGS)
    assert "#2 → #1" in _links(url, "--rule", "too_little_file_overlap")
    assert "#3 → #1" in _links(url, "--rule", "parallel_wording")
    assert "#4 → #1" in _links(url, "--rule", "plain_mention_without_shared_lines")
    return url


def _links(url: str, *args: str) -> str:
    return run("chains", "links", "--db", url, *args).output


def _row(result: Result, label: str) -> str:
    """The count in a summary table's row `label`."""
    found = re.search(rf"│\s*{re.escape(label)}\s*│\s*(\S+)", result.output)
    assert found, result.output
    return found.group(1)


def _answer(verdict: str, why: str) -> str:
    return f"The later diff reads the setting.\n{json.dumps({'verdict': verdict, 'reason': why})}"


def test_a_drop_judged_dependent_becomes_an_edge_and_a_chain(
    tmp_path: Path, fake_llm: ScriptedLLMServer
) -> None:
    url = _store(tmp_path)
    assert "#1 ← #2" not in chains_listed(url)
    fake_llm.push(
        model="link_vetter",
        contains=ASKS_2_ON_1,
        content=_answer("dependent", "retry_limit feeds RetryBudget"),
    )
    vetted = run("chains", "vet", "--db", url, *SETTINGS)
    # Only the rescuable drop is asked about: the analogy's rule is not one that guesses, and a
    # plain mention is asked about only on request.
    assert len(fake_llm.requests_for("link_vetter")) == 1
    assert _row(vetted, "rescued now (dropped links)") == "1"
    assert _row(vetted, "of them rescued by the link vetter") == "1"
    assert "#1 ← #2" in chains_listed(url)
    rescued = _links(url, "--rescued")
    assert "#2 → #1" in rescued and "kept: rescued from too_little_file_overlap" in rescued
    assert "retry_limit feeds RetryBudget" in rescued and "#3 → #1" not in rescued
    assert "#2 → #1" not in _links(url, "--dropped")

    # A rerun asks nothing; a plain build applies the stored verdict again.
    run("chains", "vet", "--db", url, *SETTINGS)
    assert len(fake_llm.requests_for("link_vetter")) == 1
    run("chains", "build", "--db", url, *SETTINGS)
    assert "#1 ← #2" in chains_listed(url)
    # With rescue off, the rule's drop stands whatever the vetter said.
    run("chains", "build", "--db", url, *SETTINGS, "--set", "chains.vet_rescue=[]")
    assert "#1 ← #2" not in chains_listed(url)
    assert "#2 → #1" in _links(url, "--rule", "too_little_file_overlap")


def test_nothing_weaker_than_dependent_rescues_a_drop(
    tmp_path: Path, fake_llm: ScriptedLLMServer
) -> None:
    url = _store(tmp_path)
    fake_llm.push(
        model="link_vetter",
        contains=ASKS_2_ON_1,
        content=_answer("borderline", "it only reads a setting the budget may use"),
    )
    vetted = run("chains", "vet", "--db", url, *SETTINGS)
    assert _row(vetted, "rescued now (dropped links)") == "0"
    # Even where a build keeps kept links at borderline, a drop needs `dependent`.
    run("chains", "build", "--db", url, *SETTINGS, "--set", "chains.vet_keep=borderline")
    assert "#1 ← #2" not in chains_listed(url)
    dropped = _links(url, "--rule", "too_little_file_overlap")
    assert "the link vetter judged it borderline" in dropped and "the rules dropped it" in dropped


def test_a_rescued_link_must_still_pass_the_ancestry_check(
    tmp_path: Path, fake_llm: ScriptedLLMServer
) -> None:
    url = _store(tmp_path)
    fake_llm.push(
        model="link_vetter", contains=ASKS_2_ON_1, content=_answer("dependent", "it feeds it")
    )
    run("chains", "vet", "--db", url, *SETTINGS)
    assert "#1 ← #2" in chains_listed(url)
    # Say #2 was branched before #1 merged: #1's merge is then not in #2's base history.
    engine = make_engine(url)
    with Session(engine) as session, session.begin():
        first = session.query(PullRequest).filter_by(number=1).one()
        session.execute(
            update(PullRequest).where(PullRequest.number == 2).values(base_sha=first.base_sha)
        )
    built = run("chains", "build", "--db", url, *SETTINGS)
    assert _row(built, "of them rescued by the link vetter") == "0"
    assert "#1 ← #2" not in chains_listed(url)
    assert "#2 → #1" in _links(url, "--rule", "not_an_ancestor")


def test_with_rescue_off_and_no_kept_link_there_is_nothing_to_ask(
    tmp_path: Path, fake_llm: ScriptedLLMServer
) -> None:
    url = _store(tmp_path)
    off = ("--set", "chains.vet_rescue=[]")
    result = run("chains", "vet", "--db", url, *SETTINGS, *off, code=1)
    assert "no links to vet: run `prchain chains build` first" in result.output
    assert fake_llm.requests_for("link_vetter") == []


def test_plain_mentions_are_asked_about_on_request(
    tmp_path: Path, fake_llm: ScriptedLLMServer
) -> None:
    url = _store(tmp_path)
    every = (
        "--set",
        "chains.vet_rescue=[wording_without_shared_code, too_little_file_overlap, gap_too_long,"
        " plain_mention_without_shared_lines]",
    )
    fake_llm.push(
        model="link_vetter",
        contains=ASKS_2_ON_1,
        content=_answer("dependent", "it feeds it"),
    )
    fake_llm.push(
        model="link_vetter",
        contains="Now decide whether #4 depends on #1.",
        content=_answer("dependent", "it logs what the budget retries"),
    )
    vetted = run("chains", "vet", "--db", url, *SETTINGS, *every)
    assert _row(vetted, "rescued now (dropped links)") == "2"
    assert "kept: rescued from plain_mention_without_shared_lines" in _links(url, "--rescued")
    # A build under the default leaves the plain mention dropped, its verdict stored.
    run("chains", "build", "--db", url, *SETTINGS)
    assert "#4 → #1" in _links(url, "--rule", "plain_mention_without_shared_lines")
    assert "#4 → #1" not in _links(url, "--rescued") and "#1 ← #2" in chains_listed(url)
