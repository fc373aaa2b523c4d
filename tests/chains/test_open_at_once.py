"""Two PRs open at once, on a real squash-merged history: the git source knows such a PR only by
its merge, so its PR number tells that it was opened before a later-numbered PR merged. The one
merged later builds on the other only when its patch shows it was finished on top of it."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from prchain.chains.config import ChainsConfig
from prchain.chains.evidence.loading import opened_by
from prchain.store.models import ChainLink
from tests.support.history import History
from tests.support.links import links_by_number, mine_and_build

LIMITS = "".join(f"LIMIT_{i} = scale_limit(base_{i}, factor={i})\n" for i in range(6))
BURST = "".join(f"burst.append(scale(base, factor={i}))\n" for i in range(6))  # no new names


def _history(path: Path) -> History:
    repo = History(path)
    repo.commit("Initial commit", {"src/core.py": "def scale_limit(base, factor):\n    return 0\n"})
    # #11 opened first and merged second: it only mentions #12, whose code it does not touch.
    repo.pr(12, "Add the limit table", {"src/limits.py": LIMITS})
    repo.pr(
        11,
        "Describe the limits",
        {"src/describe.py": "def describe_limits():\n    return 'scaled per table entry'\n"},
        body="Follow-up to #12: describe its table.",
    )
    # #13 likewise, but it rewrites two of #14's lines: it was finished on top of #14's merge.
    repo.pr(14, "Add the quota table", {"src/quotas.py": LIMITS.replace("LIMIT", "QUOTA")})
    quotas = LIMITS.replace("LIMIT", "QUOTA").replace("factor=0", "factor=10")
    repo.pr(
        13,
        "Raise the first quotas",
        {"src/quotas.py": quotas.replace("factor=1", "factor=11")},
        body="Follow-up to #14: the first quotas were too low.",
    )
    # One rewritten line is as often rebase glue between parallel PRs.
    repo.pr(16, "Add the burst table", {"src/burst.py": BURST})
    repo.pr(
        15,
        "Raise the first burst",
        {"src/burst.py": BURST.replace("factor=0", "factor=10")},
        body="Follow-up to #16: the first burst was too low.",
    )
    # #17 calls the function #18 brought into the repository.
    repo.pr(
        18,
        "Add a capacity helper",
        {"src/capacity.py": "def compute_capacity_limit(size):\n    return size * 2\n"},
    )
    repo.pr(
        17,
        "Cap the queue",
        {"src/queue.py": "def cap(queue):\n    return compute_capacity_limit(len(queue))\n"},
        body="Follow-up to #18: cap the queue with it.",
    )
    return repo


@pytest.fixture(scope="module")
def links(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[int, int], ChainLink]:
    root = tmp_path_factory.mktemp("open")
    config = ChainsConfig(corroboration_signs=0, min_chain_code_lines=0, min_stage_code_lines=0)
    engine = mine_and_build(_history(root / "open").path, root / "store.db", "acme/open", config)
    return links_by_number(engine)


def test_a_pr_opened_before_the_other_does_not_build_on_it_by_words_alone(links: dict) -> None:
    assert (links[11, 12].kept, links[11, 12].rule) == (False, "not_merged_before_created")
    assert (links[15, 16].kept, links[15, 16].rule) == (False, "not_merged_before_created")


def test_a_pr_finished_on_top_of_the_other_builds_on_it(links: dict) -> None:
    rewrites, uses = links[13, 14], links[17, 18]
    assert (rewrites.kept, rewrites.lineage) == (True, 2)
    assert rewrites.gap_days <= 0  # opened by the time #14 merged
    assert (uses.kept, uses.symbols) == (True, 1)


def test_only_the_branch_tells_when_code_may_not(tmp_path: Path) -> None:
    config = ChainsConfig(
        corroboration_signs=0, min_chain_code_lines=0, min_stage_code_lines=0, caught_up_lines=0
    )
    engine = mine_and_build(_history(tmp_path / "open").path, tmp_path / "s.db", "acme/o", config)
    links = links_by_number(engine)
    assert {links[pair].rule for pair in ((13, 14), (17, 18))} == {"not_merged_before_created"}


def test_a_pr_was_opened_before_any_later_numbered_pr_merged() -> None:
    day = [datetime(2024, 1, d) for d in range(1, 8)]
    merges = [(1, 5, day[3]), (1, 6, day[1]), (1, 7, day[5]), (1, 9, day[2]), (2, 5, day[0])]
    assert opened_by(merges) == {
        (1, 5): day[1],  # #6 merged on the 2nd: #5 was open by then
        (1, 6): day[1],
        (1, 7): day[2],
        (1, 9): day[2],
        (2, 5): day[0],  # another repository's numbers are its own
    }
    # A history that carries the PRs of the repository it moved from: the old #280 merged long
    # before the new #276 was opened, and tells nothing of it.
    moved = [(1, 276, datetime(2016, 9, 1)), (1, 280, datetime(2015, 12, 1))]
    assert opened_by(moved)[1, 276] == datetime(2016, 9, 1)
    assert opened_by([(1, 276, datetime(2016, 9, 1)), (1, 280, datetime(2016, 8, 1))])[
        1, 276
    ] == datetime(2016, 8, 1)


def test_an_older_pr_reverted_before_the_newer_merged_is_not_in_its_base(tmp_path: Path) -> None:
    """tokio #4373, opened before #4377 merged, merged after #4394 reverted #4377: the main branch
    it was squashed onto no longer held #4377's code, whenever it was opened."""
    repo = History(tmp_path / "reverted")
    repo.commit("Initial commit", {"src/core.py": "def scale_limit(base, factor):\n    return 0\n"})
    helper = "def compute_capacity_limit(size):\n    return size * 2\n"
    repo.pr(40, "Add a capacity helper", {"src/capacity.py": helper})
    repo.pr(44, "Unrelated", {"src/other.py": "def other_thing():\n    return 1\n"})
    repo.pr(
        42,
        'Revert "Add a capacity helper"',
        {"src/capacity.py": None},
        body=f"This reverts commit {repo.prs[40]}.",
    )
    repo.pr(
        41,
        "Cap the queue",
        {"src/queue.py": "def cap(queue):\n    return compute_capacity_limit(len(queue))\n"},
        body="Follow-up to #40: cap the queue with it.",
    )
    config = ChainsConfig(corroboration_signs=0, min_chain_code_lines=0, min_stage_code_lines=0)
    links = links_by_number(mine_and_build(repo.path, tmp_path / "s.db", "acme/r", config))
    assert links[41, 40].gap_days < 2  # opened before #42 reverted #40
    assert (links[41, 40].kept, links[41, 40].rule) == (False, "older_reverted_before")


def test_a_stack_merged_within_one_second_lands_in_the_order_of_its_history(
    tmp_path: Path,
) -> None:
    """qdrant #9763 and #9777, a stack squashed onto main in the same second: git keeps no finer
    time, and only the history tells that #9777 (which uses #9763's new `FileNotFound`) landed
    second. Each later PR here builds on the one merged in the same second just before it, one
    numbered below it and one above."""
    repo = History(tmp_path / "stack")
    repo.commit("Initial commit", {"src/core.py": "def scale_limit(base, factor):\n    return 0\n"})
    helper = "def compute_burst_window(size):\n    return size * 2\n"
    repo.pr(21, "Add a burst helper", {"src/burst.py": helper}, day=5)
    use = "def cap(queue):\n    return compute_burst_window(len(queue))\n"
    repo.pr(22, "Cap the queue", {"src/queue.py": use}, body="Follow-up to #21.", day=5)
    depth = "def compute_queue_depth(queue):\n    return len(queue)\n"
    repo.pr(24, "Add a depth helper", {"src/depth.py": depth}, day=9)
    gauge = "def gauge(queue):\n    return compute_queue_depth(queue) * 2\n"
    repo.pr(23, "Gauge the queue", {"src/gauge.py": gauge}, body="Uses #24's helper.", day=9)
    config = ChainsConfig(
        corroboration_signs=0,
        min_chain_code_lines=0,
        min_stage_code_lines=0,
        plain_mention_min_contact=0,
    )
    links = links_by_number(mine_and_build(repo.path, tmp_path / "s.db", "acme/s", config))
    for newer, older in ((22, 21), (23, 24)):
        assert (links[newer, older].kept, links[newer, older].symbols) == (True, 1)
