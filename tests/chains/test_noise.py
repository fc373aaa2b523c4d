"""Release and dependency bots, version bumps and vendored syncs are no stages, known by author
and title before any link is judged, and counted by what they are (prchain.chains.rules.filters)."""

from __future__ import annotations

from pathlib import Path

from prchain.chains.building.build import build_chains
from prchain.chains.config import ChainsConfig
from prchain.miner.config import MinerConfig
from prchain.miner.mine import mine
from prchain.store.opener import make_engine
from tests.support.history import History
from tests.support.links import links_by_number

CODE = "def fetch(client):\n    return client.get_resources(limit=100, region='eu')\n"


def _history(path: Path) -> History:
    """cloudquery's shape: a plugin change, then "CloudQuery Bot"'s release PR whose changelog
    names it, a renovate upgrade by a bot named with a space, and a maintainer's follow-up."""
    repo = History(path)
    repo.commit("Initial commit", {"plugin/aws.go": "package aws\n", "CHANGELOG.md": "# Log\n"})
    repo.pr(1, "feat: Fetch resources by region", {"plugin/fetch.py": CODE})
    release = "# Log\n\n## v8.0.0\n\n* Fetch resources by region (#1)\n"
    repo.pr(
        2,
        "chore(main): Release plugins-source-aws v8.0.0",
        {"CHANGELOG.md": release, "plugin/version.py": "VERSION = 'v8.0.0-release'\n"},
        body="Follow-up to #1: this release ships it.",
        author="CloudQuery Bot",
    )
    bumped = CODE.replace("limit=100", "limit=100, retries=3")
    repo.pr(
        3,
        "fix(deps): Update module github.com/aws/aws-sdk-go-v2 to v1.30.1",
        {"plugin/fetch.py": bumped, "plugin/aws.go": "package aws // v1.30.1\n"},
        body="Follow-up to #1.",
        author="Renovate Bot",
    )
    followed = bumped.replace("region='eu'", "region=client.default_region")
    repo.pr(4, "fix: Default the region", {"plugin/fetch.py": followed}, body="Follow-up to #1.")
    return repo


def test_release_and_dependency_bots_are_no_stages_and_are_counted(tmp_path: Path) -> None:
    repo = _history(tmp_path / "cq")
    engine = make_engine(f"sqlite:///{tmp_path / 'store.db'}")
    mine(MinerConfig(), engine, [str(repo.path)], source="git", name="acme/cq")
    config = ChainsConfig(min_chain_code_lines=0, min_stage_code_lines=0)
    summary = build_chains(config, engine)
    removed = summary.graph.filtered.removed
    assert (removed["release"], removed["dependency_bump"]) == (1, 1)
    links = links_by_number(engine)
    for noise in (2, 3):
        assert links[noise, 1].rule == "pr_filtered_or_not_mined"
        assert "is filtered" in links[noise, 1].why
    assert links[4, 1].kept
    # With the filters off, the same PRs are stages again: the shape decided, not the history.
    filters = {"skip_releases": False, "skip_dependency_bumps": False, "skip_bots": False}
    config = ChainsConfig.model_validate(
        {"min_chain_code_lines": 0, "min_stage_code_lines": 0, "filters": filters}
    )
    summary = build_chains(config, engine)
    assert not {"release", "dependency_bump", "bot"} & set(summary.graph.filtered.removed)
    assert links_by_number(engine)[3, 1].rule != "pr_filtered_or_not_mined"
