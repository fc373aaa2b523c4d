"""Feature threads on a real history: a stage may build on any earlier stage of its chain, so a
PR that builds on stage 1 but not on stage 2 goes on the chain's thread instead of ending it.

#1 ← #2 and #1 ← #3 ← #4: #3 builds on #1 alone, so the path rule cannot put #2 and #3 in one
chain; the thread #1, #2, #3, #4 holds (#2 and #3 on #1, #4 on #3). #5 ← #6 and #5 ← #7: two
sibling follow-ups of #5, one path of two stages each; one thread of three.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from prchain.chains.building.build import build_chains
from prchain.chains.config import ChainsConfig
from prchain.store.models import Chain, ChainBuild, PullRequest
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
    with open(path) as handle:
        return [parse_fields(line) for line in handle]
"""
COUNT = """from src.parse import parse_fields


def count_fields(text):
    return len(parse_fields(text))
"""
WIDEST = (
    COUNT
    + """

def widest_field(text):
    if not count_fields(text):
        return 0
    return max(len(field) for field in parse_fields(text))
"""
)
CACHE = """class FieldCache:
    def __init__(self):
        self.entries = {}

    def remember(self, key, value):
        self.entries[key] = value
"""
WARM = """from src.cache import FieldCache


def warm_cache(keys):
    cache = FieldCache()
    for key in keys:
        cache.remember(key, None)
    return cache
"""
DUMP = """from src.cache import FieldCache


def dump_cache(cache: FieldCache):
    return sorted(cache.entries.items())
"""


def _history(path: Path) -> History:
    repo = History(path)
    repo.commit("Initial commit", {"README.md": "acme\n", "src/__init__.py": ""})
    repo.pr(1, "Add the field parser", {"src/parse.py": PARSE})
    repo.pr(2, "Read records with the parser", {"src/reader.py": READER}, body="Follow-up to #1.")
    repo.pr(3, "Count parsed fields", {"src/count.py": COUNT}, body="Follow-up to #1.")
    repo.pr(4, "Report the widest field", {"src/count.py": WIDEST}, body="Follow-up to #3.")
    repo.pr(5, "Add a field cache", {"src/cache.py": CACHE})
    repo.pr(6, "Warm the field cache", {"src/warm.py": WARM}, body="Follow-up to #5.")
    repo.pr(7, "Dump the field cache", {"src/dump.py": DUMP}, body="Follow-up to #5.")
    return repo


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Engine:
    root = tmp_path_factory.mktemp("threads")
    repo = _history(root / "repo")
    return mine_and_build(
        repo.path,
        root / "store.db",
        "acme/threads",
        ChainsConfig(min_chain_code_lines=0, strategy="semantic"),
    )


def _chains(engine: Engine, strategy: str) -> dict[tuple[int, ...], list[tuple[int, int]]]:
    """Each current chain of `strategy` by PR numbers → its stored links (newer, older) by number."""
    with Session(engine) as session:
        number = dict(session.execute(select(PullRequest.id, PullRequest.number)).all())
        query = select(Chain).where(Chain.strategy == strategy, Chain.superseded_at.is_(None))
        return {
            tuple(number[int(pr)] for pr in chain.signature.split("-")): [
                (e["src_number"], e["dst_number"]) for e in chain.edges
            ]
            for chain in session.scalars(query)
        }


def test_threads_form_where_paths_cannot(store: Engine) -> None:
    # The path rule: #2 and #3 both build on #1, and #6 and #7 on #5 (one kept of the two).
    assert set(_chains(store, "semantic")) == {(1, 2), (1, 3, 4), (5, 6)}
    build_chains(ChainsConfig(min_chain_code_lines=0), store, strategy="thread")
    threads = _chains(store, "thread")
    assert set(threads) == {(1, 2, 3, 4), (5, 6, 7)}
    # Every dependency of a stage on an earlier one is stored with the chain, and is a kept link.
    assert threads[(1, 2, 3, 4)] == [(2, 1), (3, 1), (4, 3)]
    assert threads[(5, 6, 7)] == [(6, 5), (7, 5)]
    links = links_by_number(store)
    assert all(links[pair].rule is None for edges in threads.values() for pair in edges)
    assert (3, 2) not in links and (7, 6) not in links  # no link where the path rule needs one
    with Session(store) as session:
        build = session.scalars(
            select(ChainBuild).where(ChainBuild.strategy == "thread").order_by(ChainBuild.id.desc())
        ).first()
        assert build is not None
        assert build.graph["lengths"] == {"3": 1, "4": 1}
        assert build.graph["stops"] == {"3": {"no_link": 1}, "4": {"no_link": 1}}
        # Seven PRs read, seven stages selected: the yield the summary and `stats` show.
        assert (build.graph["prs"], build.graph["stages"]) == (7, 7)
        assert build.graph["per_thousand"] == 1000.0


def test_profiles_are_named_settings_the_config_overrides() -> None:
    assert ChainsConfig().profile == "precise" and ChainsConfig().strategy == "thread"
    paper = ChainsConfig(profile="paper")
    assert (paper.strategy, paper.code_links, paper.strong_needs_code) == ("thread", False, False)
    assert paper.min_overlap_by_strength == {} and paper.corroboration_signs == 0
    # A field set beside the profile wins over it.
    assert ChainsConfig(profile="paper", strategy="semantic").strategy == "semantic"
