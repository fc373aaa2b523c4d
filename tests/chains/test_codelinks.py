"""Links found in code (prchain.chains.rules.codelinks): a pair no text names is a candidate where the newer PR
rewrites the older one's code, and the same rules decide it; each decision is stored with the
evidence class `code`, and `code_links: false` keeps only the links a text names."""

from __future__ import annotations

from pathlib import Path

from prchain.chains.config import ChainsConfig
from tests.support.history import History
from tests.support.links import links_by_number, mine_and_build

RETRY = """def retry_delays(attempts, base_delay):
    delays = [base_delay * (2 ** attempt) for attempt in range(attempts)]
    capped_delays = [min(delay, 60.0) for delay in delays]
    return [round(delay, 3) for delay in capped_delays]
"""


def _history(path: Path) -> History:
    """prefect's shape: squash commits that carry their titles only. #2 rewrites #1's backoff;
    #3 touches the same file and writes a function of its own beside it."""
    repo = History(path)
    repo.commit("Initial commit", {"flows/__init__.py": "", "flows/util.py": "TIMEOUT = 30\n"})
    repo.pr(1, "Exponential backoff for task retries", {"flows/retries.py": RETRY})
    jittered = (
        "import random\n\n\ndef retry_delays(attempts, base_delay, jitter=0.1):\n"
        "    delays = [base_delay * (2 ** attempt) * (1 + random.random() * jitter)"
        " for attempt in range(attempts)]\n"
        "    capped_delays = [min(delay, 300.0) for delay in delays]\n"
        "    return [round(delay, 6) for delay in capped_delays]\n"
    )
    repo.pr(2, "Jitter the retry delays", {"flows/retries.py": jittered})
    sibling = jittered + "\n\ndef describe_policy(name):\n    return f'policy {name} in use'\n"
    repo.pr(3, "Name retry policies", {"flows/retries.py": sibling})
    return repo


def test_a_rewrite_no_text_names_is_a_code_link(tmp_path: Path) -> None:
    repo = _history(tmp_path / "flows")
    # A four-line history: the substance minimums, a code link's among them, left out.
    config = ChainsConfig(
        min_chain_code_lines=0, min_stage_code_lines=0, code_link_min_stage_lines=0, code_links=True
    )
    links = links_by_number(mine_and_build(repo.path, tmp_path / "store.db", "acme/flows", config))
    link = links[2, 1]
    assert (link.kept, link.evidence_class) == (True, "code"), link.why
    assert link.lineage >= 3 and link.lineage_via == "blame"
    assert link.evidence[0]["type"] == "code"
    # #3 only adds beside #2's code and removes none of it: no candidate at all.
    assert (3, 2) not in links and (3, 1) not in links


def test_code_links_off_keeps_only_links_a_text_names(tmp_path: Path) -> None:
    repo = _history(tmp_path / "flows")
    config = ChainsConfig(min_chain_code_lines=0, min_stage_code_lines=0, code_links=False)
    links = links_by_number(mine_and_build(repo.path, tmp_path / "store.db", "acme/flows", config))
    assert not links


def test_an_unbacked_code_candidate_is_dropped_and_recorded(tmp_path: Path) -> None:
    """The patches say #1 wrote the lines #2 removes, but a push without a PR wrote them last
    (the file deleted and written again): git blame gives them to that commit, nothing backs the
    candidate, and the drop is kept with its class."""
    repo = History(tmp_path / "pushed")
    repo.commit("Initial commit", {"flows/__init__.py": ""})
    repo.pr(1, "Exponential backoff for task retries", {"flows/retries.py": RETRY})
    repo.commit("Drop the retries for now", {"flows/retries.py": None})
    repo.commit("Bring the retries back", {"flows/retries.py": RETRY})
    rewritten = RETRY.replace("60.0", "120.0").replace("round(delay, 3)", "round(delay, 1)")
    rewritten = rewritten.replace("range(attempts)", "range(1, attempts + 1)")
    repo.pr(2, "Longer retry delays", {"flows/retries.py": rewritten})
    # Symbol use left out: #2 reads `base_delay`, which #1 brought into the code first.
    config = ChainsConfig(
        min_chain_code_lines=0, min_stage_code_lines=0, min_symbols=0, code_links=True
    )
    links = links_by_number(mine_and_build(repo.path, tmp_path / "store.db", "acme/pushed", config))
    link = links[2, 1]
    assert (link.kept, link.rule, link.evidence_class) == (False, "code_link_unbacked", "code")
    assert link.lineage == 0


def test_auto_decides_on_references_among_prs_that_can_be_stages(tmp_path: Path) -> None:
    """cloudquery's shape: release PRs name every PR they ship, so the history as a whole reads
    rich in references, while the PRs that can be stages name none. `auto` counts the latter
    and looks in the code (issue 75)."""
    repo = _history(tmp_path / "flows")
    for n, version in ((4, "1.0.0"), (5, "1.0.1")):
        notes = f"## {version}\n\n- #1\n- #2\n- #3\n"
        repo.pr(n, f"Release v{version}", {"CHANGELOG.md": notes}, body=notes)
    config = ChainsConfig(
        min_chain_code_lines=0, min_stage_code_lines=0, code_link_min_stage_lines=0
    )
    assert config.code_links == "auto"
    links = links_by_number(mine_and_build(repo.path, tmp_path / "store.db", "acme/flows", config))
    assert (links[2, 1].kept, links[2, 1].evidence_class) == (True, "code"), links[2, 1].why
    # The releases' own references are there, and no stage's.
    assert links[4, 1].rule == "pr_filtered_or_not_mined"
