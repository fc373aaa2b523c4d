"""diff() is exactly the agent's change; snapshots restore the worktree and the stage."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from prchain.dev.repos import OPS_V0, git

pytestmark = pytest.mark.docker

MULTIPLY = OPS_V0 + "\n\ndef multiply(a, b):\n    return a * b\n"


def edit(env) -> None:
    """Modify, create (in a new directory), delete and chmod: every kind of change."""
    env.write_file("calc/ops.py", MULTIPLY)
    env.write_file("calc/sub/deep.py", "VALUE = 'ünïcode'\n")
    env.execute("rm README.md && printf '#!/bin/sh\\necho hi\\n' > run.sh && chmod +x run.sh")


def host_diff(chain_path: Path, tmp: Path, start: str, start_patch: str) -> str:
    """The same edits on the host, on a copy of the stage-start state, diffed by plain git."""
    work = tmp / "host"
    subprocess.run(["git", "clone", "-q", str(chain_path), str(work)], check=True)
    git(work, "checkout", "-q", "--detach", start)
    if start_patch:
        subprocess.run(
            ["git", "-C", str(work), "apply", "--index", "-"],
            input=start_patch,
            text=True,
            check=True,
        )
        git(work, "commit", "-q", "-m", "start")
    (work / "calc/ops.py").write_text(MULTIPLY)
    (work / "calc/sub").mkdir()
    (work / "calc/sub/deep.py").write_text("VALUE = 'ünïcode'\n")
    (work / "README.md").unlink()
    (work / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (work / "run.sh").chmod(0o755)
    git(work, "add", "-A")
    return subprocess.run(
        ["git", "-C", str(work), "diff", "--cached", "--binary", "HEAD"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def test_diff_is_exactly_the_agents_change(make_env, calc_chain, tmp_path) -> None:
    env = make_env()
    env.enter_stage(1)
    edit(env)
    assert env.diff() == host_diff(calc_chain.path, tmp_path, calc_chain.stages[0].base_sha, "")
    assert env.cumulative_diff() == env.diff()
    # Reading the diff changes nothing: the agent's own index and status are untouched.
    status = env.execute("git status --porcelain").output
    assert " D README.md" in status and "?? run.sh" in status


def test_stage_diff_excludes_carried_work_and_cumulative_includes_it(make_env, calc_chain) -> None:
    env = make_env()
    env.enter_stage(1)
    env.write_file("notes.txt", "stage one\n")
    env.enter_stage(2)
    env.write_file("calc/ops.py", env.read_file("calc/ops.py") + "\n\ndef neg(a):\n    return -a\n")
    stage_diff, cumulative = env.diff(), env.cumulative_diff()
    assert "notes.txt" not in stage_diff and "def neg" in stage_diff
    assert "notes.txt" in cumulative and "def neg" in cumulative
    # The agent committing its work does not hide it from either diff.
    env.execute("git add -A && git commit -qm 'my work'")
    assert env.diff() == stage_diff and env.cumulative_diff() == cumulative


def test_snapshot_and_restore_within_and_across_stages(make_env) -> None:
    env = make_env()
    env.enter_stage(1)
    env.write_file("calc/ops.py", MULTIPLY)
    env.write_file("scratch.txt", "untracked\n")
    snap = env.snapshot()
    before = env.diff()
    env.write_file("calc/ops.py", "broken\n")
    env.execute("rm scratch.txt && touch other.txt")
    env.restore(snap)
    assert env.diff() == before and env.read_file("scratch.txt") == "untracked\n"
    assert env.execute("test -e other.txt").exit_code != 0
    env.enter_stage(2)
    assert env.stage == 2
    env.restore(snap)
    assert env.stage == 1 and env.diff() == before


def test_restore_of_an_unknown_snapshot_is_a_clear_error(make_env) -> None:
    from prchain.core.errors import EnvironmentFailure

    env = make_env()
    env.enter_stage(1)
    with pytest.raises(EnvironmentFailure):
        env.restore("0" * 40)


def test_run_tests_runs_the_configured_command(make_env) -> None:
    assert make_env().run_tests() is None  # nothing configured
    env = make_env(test_command={"acme/calc": "python3 -m pytest -q -p no:cacheprovider"})
    env.enter_stage(2)
    result = env.run_tests()
    assert result is not None and result.exit_code == 0 and "1 passed" in result.output
    env.write_file("calc/ops.py", "def add(a, b):\n    return a - b\n")
    failed = env.run_tests()
    assert failed is not None and failed.exit_code != 0 and env.test_results[2] == failed


def test_cumulative_patch_is_the_carried_change_byte_for_byte(
    make_env, calc_chain, tmp_path
) -> None:
    env = make_env()
    assert env.cumulative_patch() == b""  # no stage yet
    env.enter_stage(1)
    env.execute("printf 'caf\\xe9\\r\\n\\x00\\xff' > data.bin && printf 'x\\r\\ny\\n' > crlf.txt")
    env.write_file("calc/ops.py", MULTIPLY)
    patch = env.cumulative_patch()
    assert isinstance(patch, bytes) and b"GIT binary patch" in patch
    work = tmp_path / "host"
    subprocess.run(["git", "clone", "-q", str(calc_chain.path), str(work)], check=True)
    git(work, "checkout", "-q", "--detach", calc_chain.stages[0].base_sha)
    subprocess.run(["git", "-C", str(work), "apply", "-"], input=patch, check=True)
    assert (work / "data.bin").read_bytes() == b"caf\xe9\r\n\x00\xff"
    assert (work / "crlf.txt").read_bytes() == b"x\r\ny\n"
    assert (work / "calc/ops.py").read_text() == MULTIPLY


# The file's and the index's mtime set back to the checkout's; ctime, which no one can set, left
# out of git's comparison: what a same-size change in the checkout's second looks like to git.
SAME_SECOND = (
    "git config core.trustctime false && touch -r calc/ops.py /tmp/ref && "
    "tac calc/ops.py > /tmp/r && cat /tmp/r > calc/ops.py && touch -r /tmp/ref calc/ops.py .git/index"
)


def test_a_same_size_change_made_in_the_checkouts_second_is_in_every_diff(make_env) -> None:
    """A reordered file keeps its size, and a fast agent reorders it within the second the stage
    was checked out: its stat data then match its index entry. git reads such a file only when
    it is no older than the index a diff or snapshot starts from, so the copy of that index must
    keep its date (with a copy dated now, the snapshot here missed the change, and in a scripted
    rollout the stage diff came out empty: "the agent changed nothing")."""
    env = make_env()
    env.enter_stage(1)
    env.execute(SAME_SECOND)
    for diff in (env.diff(), env.cumulative_diff()):
        assert "diff --git a/calc/ops.py b/calc/ops.py" in diff, diff
    snapshot = env.snapshot()
    env.execute("git checkout -q -- calc/ops.py")
    env.restore(snapshot)
    assert env.read_file("calc/ops.py") == env.execute("cat /tmp/r").output
