"""Issue 19 item 6 / issue 20 finding 4: the agent's repository holds exactly the stage base.

The image holds no worktree (nothing of HEAD, nothing its install commands built), each stage's
worktree is exactly the stage base's tracked files, and no object of B_t, of a gold patch or of
the future is reachable or even present in what the agent can read."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from prchain.dev.repos import git, make_chain_repo
from prchain.environments.carry import PUBLIC_DIR
from prchain.environments.protocol import StageSpec

pytestmark = pytest.mark.docker

REPO = f"acme-{uuid.uuid4().hex[:8]}/calc-sandbox-nofuture"  # this run's own image
# A later commit (after every PR of the chain) with an ignore rule and a file; and install commands
# that leave files in the (empty) /work/repo, one of them ignored by that rule.
INSTALL = [
    "mkdir -p build && echo from-head > build/artefact.txt && echo stray > stray.txt",
    "echo home > /home/agent/installed.txt",
]
FIND_FILES = (
    "find . -path ./.git -prune -o \\( -type f -o -type l \\) -print | sed 's|^\\./||' | sort"
)


@pytest.fixture(scope="module")
def future_env(
    docker_client: Any, base_image: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Any, Any]]:
    from prchain.environments.config import EnvironmentConfig
    from prchain.environments.docker_env import DockerEnvironment
    from prchain.environments.images import ensure_repo_image

    repo = make_chain_repo(tmp_path_factory.mktemp("future") / "calc")
    (repo.path / ".gitignore").write_text("build/\n*.log\n")
    (repo.path / "future.txt").write_text("from a later commit\n")
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-qm", "Later work")
    stages = [
        StageSpec(i, repo.prs[n].base_sha, repo.prs[n].gold_patch)
        for i, n in enumerate((1, 2, 3), start=1)
    ]
    config = EnvironmentConfig(install_commands={REPO: INSTALL})
    image = ensure_repo_image(docker_client, config, REPO, repo.path)
    env = DockerEnvironment(
        config, repo=REPO, clone_path=str(repo.path), stages=stages, client=docker_client
    )
    try:
        yield env.start(), repo
    finally:
        env.close()
        if image.built:
            docker_client.remove_image(image.tag)


def gold_lines(repo: Any) -> list[str]:
    """Lines the gold patches add that no stage base holds anywhere (B_1 is the oldest)."""
    base = repo.prs[1].base_sha
    files = git(repo.path, "ls-tree", "-r", "--name-only", base).split()
    at_base = "\n".join(git(repo.path, "show", f"{base}:{f}") for f in files)
    found = set()
    for number in (1, 2, 3):
        for line in repo.prs[number].gold_patch.splitlines():
            body = line[1:].strip()
            if line.startswith("+") and not line.startswith("+++") and len(body) >= 8:
                found.add(body)
    return sorted(line for line in found if line not in at_base)


def test_each_stage_holds_exactly_the_stage_base_and_nothing_of_b_t(future_env) -> None:
    env, repo = future_env
    golds = gold_lines(repo)
    assert golds
    for t in (1, 2, 3):
        env.enter_stage(t)
        tracked = env.execute("git ls-tree -r --name-only HEAD | sort").output
        assert env.execute(FIND_FILES).output == tracked, t  # nothing ignored or untracked
        assert "future.txt" not in tracked and "stray.txt" not in tracked
        assert env.read_file("/home/agent/installed.txt") == "home\n"  # the install did run
        # B_t is neither reachable nor present, in the agent's repository or in the store it
        # borrows from; every object either holds is free of gold lines.
        base = env.stages[t].base_sha
        assert env.execute(f"git cat-file -e {base}").exit_code != 0
        assert env.execute(f"git --git-dir={PUBLIC_DIR} cat-file -e {base}").exit_code != 0
        # C_t alone, then the carried Δ (the agent's .gitignore) on top of it
        assert env.execute("git rev-list --count HEAD").output.strip() == ("1" if t == 1 else "2")
        every = env.execute(
            f"git --git-dir={PUBLIC_DIR} cat-file --batch-all-objects --batch; "
            "git cat-file --batch-all-objects --batch; git log --all -p",
            timeout=60,
        ).output
        assert [line for line in golds if line in every] == [], t
        # Stage 1's leak: diffing the stage base against B_t printed the earlier gold patches.
        assert "refs/prchain/base" not in env.execute("git for-each-ref").output
        # An ignored file the agent makes does not survive into the next stage.
        env.execute("printf 'build/\\n' > .gitignore && mkdir -p build && echo x > build/mine.txt")


def test_the_image_carries_no_worktree(future_env) -> None:
    env, _repo = future_env
    seed = env._root("ls -A /opt/prchain/seed/work/repo 2>/dev/null; echo end").output
    assert seed.strip() == "end"
    listing = env._root(
        "find / -xdev \\( -name future.txt -o -name stray.txt -o -name artefact.txt \\) "
        "-not -path '/proc/*' 2>/dev/null; echo end"
    ).output
    assert listing.strip() == "end"
