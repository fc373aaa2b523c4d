"""Entering a later stage reverts the earlier stages' gold code but keeps Go's module files as B_t
has them: the earlier stage's tests stay and may need what they require (cloudquery #6759 requires
testify for its tests; reverted, go rewrote go.mod and go.sum at the agent's first `go test` of
stage #6763, and both showed in the agent's own diff). Real git history, real containers."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from prchain.dev.repos import git
from prchain.environments.stage_entry import reverted_part
from tests.support.history import History

pytestmark = pytest.mark.docker

REPO = f"acme-{uuid.uuid4().hex[:8]}/carry-gomods"  # this run's own: its image goes by it
GO_MOD = "module example.com/store\n\ngo 1.21\n"
TESTIFY = "\nrequire github.com/stretchr/testify v1.8.1\n"
SUM = "github.com/stretchr/testify v1.8.1 h1:w7B6lhMri9wdJUVmEZPGGhZzrYTPvgJArz7wNPgYKsk=\n"
CODE_V0 = "package store\n\nfunc Open() int { return 1 }\n"
CODE_V1 = CODE_V0 + '\nfunc Has(name string) bool { return name != "" }\n'
AGENT_V1 = CODE_V0 + "\nfunc Has(name string) bool { return len(name) > 0 }\n"
TEST_V1 = 'package store\n\nimport "github.com/stretchr/testify/require"\n'


def _gold(path: Path, base: str, merge: str) -> str:
    """A PR's gold code patch as the store keeps it: everything but its tests."""
    return git(path, "diff", base, merge, "--", ".", ":(exclude)*_test.go") + "\n"


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> History:
    """#1 adds `Has`, its test, and testify to go.mod and go.sum; #2 changes `Open`."""
    repo = History(tmp_path_factory.mktemp("gomods") / "store")
    repo.commit("Initial commit", {"go.mod": GO_MOD, "store.go": CODE_V0})
    repo.pr(
        1,
        "Add Has",
        {"go.mod": GO_MOD + TESTIFY, "go.sum": SUM, "store.go": CODE_V1, "store_test.go": TEST_V1},
    )
    repo.pr(2, "Open returns two", {"store.go": CODE_V1.replace("return 1", "return 2")})
    return repo


@pytest.fixture(scope="module")
def image(docker_client: Any, base_image: str, history: History) -> Iterator[str]:
    from prchain.environments.config import EnvironmentConfig
    from prchain.environments.images import ensure_repo_image

    built = ensure_repo_image(docker_client, EnvironmentConfig(), REPO, history.path)
    yield built.tag
    if built.built:
        docker_client.remove_image(built.tag)


def test_only_the_module_files_of_a_gold_patch_are_kept_from_its_revert(history: History) -> None:
    first = history.prs[1]
    gold = _gold(history.path, f"{first}^", first)
    kept = reverted_part(gold)
    assert "store.go" in kept and "go.mod" not in kept and "go.sum" not in kept
    assert reverted_part(kept) == kept


def test_stage_two_keeps_b2_s_module_files_and_carries_the_agent_s_code(
    docker_client: Any, image: str, history: History
) -> None:
    from prchain.environments.config import EnvironmentConfig
    from prchain.environments.docker_env import DockerEnvironment
    from prchain.environments.protocol import StageSpec

    path = history.path
    first, second = history.prs[1], history.prs[2]
    stages = [
        StageSpec(1, git(path, "rev-parse", f"{first}^"), _gold(path, f"{first}^", first)),
        StageSpec(2, first, _gold(path, first, second)),
    ]
    with DockerEnvironment(
        EnvironmentConfig(), repo=REPO, clone_path=str(path), stages=stages, client=docker_client
    ) as env:
        env.start()
        env.enter_stage(1)
        env.write_file("store.go", AGENT_V1)
        delta = env.cumulative_diff()
        transition = env.enter_stage(2)
        assert (transition.outcome, transition.reverted) == ("clean", [1]), transition
        # #1's code is the agent's, its test and its module files are B_2's
        assert env.read_file("store.go") == AGENT_V1
        assert env.read_file("store_test.go") == TEST_V1
        assert env.read_file("go.mod") == GO_MOD + TESTIFY
        assert env.read_file("go.sum") == SUM
        assert env.diff() == "" and env.cumulative_diff() == delta
