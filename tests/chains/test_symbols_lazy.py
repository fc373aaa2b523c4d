"""Symbol use asked cheapest first (prchain.chains.evidence.symbols): the older PR's names are looked for at its base
once, and its foreign names (whole new files lexed) are read only for the names a newer PR uses
that were new there, from the files whose added lines hold one; every answer equals the whole-PR
question's, intersected."""

from __future__ import annotations

from pathlib import Path

import pytest

from prchain.chains.evidence.loading import load_nodes, load_repos
from prchain.chains.evidence.nodes import PRNode
from prchain.chains.evidence.symbols import Symbols
from prchain.chains.reading import foreign
from prchain.miner.config import MinerConfig
from prchain.miner.mine import mine
from prchain.store.opener import make_engine
from tests.support.history import History

BASE = "def existing_helper(items):\n    return sorted(items)\n"
SCHEDULER = (
    "from collections import OrderedDict\n\nfrom jobs.util import existing_helper\n\n"
    "RETRY_LIMIT = 3\n\n\n"
    "def schedule_batches(queue, batch_size):\n"
    "    pending = OrderedDict((i, b) for i, b in enumerate(existing_helper(queue)))\n"
    "    return [pending[i] for i in range(0, len(pending), batch_size)]\n"
)
USERS = {
    # Calls #1's new function, the helper that was there before, and the standard library's class.
    2: "from collections import OrderedDict\n\n\ndef nightly_run(queue):\n"
    "    return schedule_batches(existing_helper(queue), OrderedDict())\n",
    3: "def retries_left(done):\n    return RETRY_LIMIT - done\n",  # #1's constant only
    4: "def unrelated_thing(value):\n    return str(value).upper()\n",  # no name of #1's code
}


def _prs(tmp_path: Path) -> tuple[Symbols, dict[int, PRNode], Symbols]:
    repo = History(tmp_path / "jobs")
    repo.commit("Initial commit", {"jobs/__init__.py": "", "jobs/util.py": BASE})
    # A second file whose added lines hold none of the names a newer PR uses: never read.
    other = "import json\n\n\ndef dump_state(state):\n    return json.dumps(state)\n"
    repo.pr(1, "Schedule work in batches", {"jobs/scheduler.py": SCHEDULER, "jobs/aaa.py": other})
    for number, text in USERS.items():
        repo.pr(number, f"User {number}", {f"jobs/user_{number}.py": text})
    engine = make_engine(f"sqlite:///{tmp_path / 'store.db'}")
    mine(MinerConfig(), engine, [str(repo.path)], source="git", name="acme/jobs")
    clones = {rid: path for rid, (_name, path, _branch) in load_repos(engine).items()}
    by_number = {node.number: node for node in load_nodes(engine).values()}
    return Symbols(engine, clones), by_number, Symbols(engine, clones)


def _counting_imports(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The Python files whose imports `prchain.chains.reading.foreign` reads, in order."""
    read: list[str] = []
    real = foreign.imported

    def imported(text: str, own: set[str]) -> tuple[set[str], set[str]]:
        read.append(text.split("\n", 1)[0])
        return real(text, own)

    monkeypatch.setattr(foreign, "imported", imported)
    return read


def test_no_name_shared_reads_no_imports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    symbols, pr, _ = _prs(tmp_path)
    read = _counting_imports(monkeypatch)
    assert symbols.used(pr[4], pr[1]) == 0
    assert read == []  # #4 uses none of #1's names: no file of #1's is parsed for its imports
    assert symbols.used(pr[2], pr[1]) == 1
    assert read == ["from collections import OrderedDict"]  # jobs/scheduler.py, not jobs/aaa.py
    assert symbols.grep_calls == 1  # #1's names, looked for once at its base


def test_each_answer_is_the_whole_questions_intersected(tmp_path: Path) -> None:
    symbols, pr, whole = _prs(tmp_path)
    introduced = whole.introduced(pr[1])  # every name of #1's, one grep, its foreign names read
    assert introduced == {"schedule_batches", "batch_size", "RETRY_LIMIT", "dump_state"}
    for number in (2, 3, 4):
        expected = sorted(introduced & whole._uses(pr[number]))
        assert symbols.shared(pr[number], pr[1]) == expected
        assert symbols.used(pr[number], pr[1]) == len(expected)
    assert symbols.shared(pr[2], pr[1]) == ["schedule_batches"]  # not the helper, not OrderedDict
    assert symbols.grep_calls == 1  # #1's names, looked for once at its base
