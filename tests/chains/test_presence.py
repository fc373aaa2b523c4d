"""Names at many bases in one walk of the history (prchain.chains.evidence.presence): at every commit, the answer
is `git grep`'s (`prchain.chains.evidence.symbols.present_at`), whatever the history does to the files that hold
the names: edits, moves, deletions, binary files, prose, submodules, odd paths, merges; and a
walk that meets a blob the clone lacks leaves the commits after it to grep."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from prchain.chains.config import ChainsConfig
from prchain.chains.evidence import presence
from prchain.chains.evidence import symbols as symbols_module
from prchain.chains.evidence.presence import name_lines, names_in_history
from prchain.chains.evidence.symbols import PROSE_EXCLUDES, present_along, present_at
from prchain.dev.repos import git
from tests.chains.test_codelinks import RETRY
from tests.support.history import History
from tests.support.links import links_by_number, mine_and_build

NAMES = {
    "schedule_batches",
    "RetryPolicy",
    "drain_queue",
    "MAX_WORKERS",
    "merge_only_name",
    "odd_path_name",
    "binary_then_text",
    "gone_again",
}
ENGINE = "from jobs.util import MAX_WORKERS\n\n\ndef schedule_batches(queue):\n    return queue\n"


def _history(path: Path) -> tuple[History, list[str]]:
    """A history whose files gain, move and lose the `NAMES`; returns it with its commits."""
    repo = History(path)
    shas = [repo.commit("Initial commit", {"jobs/util.py": "MAX_WORKERS = 4\n"})]
    shas.append(repo.pr(1, "Engine", {"jobs/engine.py": ENGINE}))
    # A name in a comment and a string only (code? `_Read` decides), and in prose (left out).
    shas.append(
        repo.pr(
            2,
            "Notes",
            {
                "jobs/notes.py": '# RetryPolicy comes later\nTEXT = "drain_queue"\n',
                "README.md": "RetryPolicy, drain_queue and gone_again\n",
            },
        )
    )
    # A binary file holding a name, and a path git quotes (a space and a non-ASCII letter).
    (repo.path / "data").mkdir()
    (repo.path / "data" / "blob.bin").write_bytes(b"\0binary_then_text\n")
    shas.append(repo.pr(3, "Odd files", {"jobs/naïve file.py": "odd_path_name = 1\n"}))
    # A commit that changes prose only: `git log` of the code leaves it out.
    shas.append(repo.commit("Docs only", {"README.md": "schedule_batches, RetryPolicy\n"}))
    # The same name in more than READ_FILES files, then an edit, a move and a deletion.
    many = {f"jobs/user_{i}.py": "from jobs.engine import schedule_batches\n" for i in range(5)}
    shas.append(repo.pr(4, "Users", many))
    shas.append(
        repo.pr(
            5,
            "Rework",
            {"jobs/engine.py": ENGINE.replace("return queue", "return drain_queue(queue)")},
            moves={"jobs/util.py": "jobs/settings.py"},
        )
    )
    (repo.path / "data" / "blob.bin").write_bytes(b"binary_then_text = True\n")
    shas.append(repo.pr(6, "Blob is text now", {"jobs/user_0.py": None, "jobs/user_1.py": None}))
    # A submodule entry (its commit is nobody's blob), then a merge commit on main.
    git(repo.path, "update-index", "--add", "--cacheinfo", f"160000,{shas[0]},vendor/lib")
    git(repo.path, "commit", "-q", "-m", "Vendor a library")
    shas.append(git(repo.path, "rev-parse", "HEAD"))
    git(repo.path, "checkout", "-q", "-b", "side")
    (repo.path / "jobs" / "side.py").write_text("def merge_only_name():\n    pass\n")
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "Side work")
    git(repo.path, "checkout", "-q", "main")
    (repo.path / "jobs" / "main_only.py").write_text("gone_again = 1\n")
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "Main work")
    shas.append(git(repo.path, "rev-parse", "HEAD"))
    git(repo.path, "merge", "-q", "--no-ff", "-m", "Merge side (#7)", "side")
    shas.append(git(repo.path, "rev-parse", "HEAD"))
    shas.append(repo.pr(8, "Drop it again", {"jobs/main_only.py": None}))
    shas.append(repo.commit("Docs again", {"README.md": "gone_again\n"}))
    return repo, shas


def test_each_commit_answered_as_git_grep_does(tmp_path: Path) -> None:
    repo, shas = _history(tmp_path / "jobs")
    clone = str(repo.path)
    walked = present_along(clone, {sha: NAMES for sha in shas})
    assert set(walked) == set(shas)
    for sha in shas:
        assert walked[sha] == present_at(clone, sha, NAMES), sha
    # The history does what it says: the checks above cover each case.
    assert "RetryPolicy" not in walked[shas[2]]  # in a comment and in prose only
    assert "binary_then_text" not in walked[shas[3]]  # a binary file holds nothing
    assert "binary_then_text" in walked[shas[7]]  # ... until it is text
    assert "odd_path_name" in walked[shas[3]] and "odd_path_name" in walked[shas[4]]
    assert "merge_only_name" in walked[shas[10]] and "merge_only_name" not in walked[shas[9]]
    assert "gone_again" in walked[shas[10]] and "gone_again" not in walked[shas[11]]
    assert "gone_again" not in walked[shas[12]]  # prose only
    assert "MAX_WORKERS" in walked[shas[6]]  # moved with its file, still there


def test_asked_commits_only_and_where_each_name_stands(tmp_path: Path) -> None:
    repo, shas = _history(tmp_path / "jobs")
    asked = {shas[1]: {"schedule_batches", "drain_queue"}, shas[5]: {"schedule_batches"}}
    found = names_in_history(str(repo.path), asked, lambda p: p.endswith(".md"), PROSE_EXCLUDES)
    assert set(found) == set(asked)
    assert found[shas[1]] == {"schedule_batches": {"jobs/engine.py": _blob(repo, shas[1])}}
    assert len(found[shas[5]]["schedule_batches"]) == 6  # the engine and its five users
    text = "schedule_batches = 1\nx = schedule_batchesX\n  y(schedule_batches)\n"
    assert name_lines(text, ["schedule_batches", "x", "drain_queue", "a-b"]) == {
        "schedule_batches": {1, 3},
        "x": {2},
    }


@pytest.mark.parametrize("block", [1, 2, 7, 64])
def test_the_walk_reads_git_in_blocks_of_any_size(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, block: int
) -> None:
    """git's output is read in blocks and cut at each commit's start: a block boundary anywhere
    (inside a commit's marker, its sha, a header or a hunk line) changes no answer."""
    repo, shas = _history(tmp_path / "jobs")
    asked = {sha: NAMES for sha in shas}
    whole = present_along(str(repo.path), asked)
    monkeypatch.setattr(presence, "READ_BLOCK", block)
    assert present_along(str(repo.path), asked) == whole
    assert set(whole) == set(shas)


def test_a_commit_off_the_first_parent_line_is_left_to_grep(tmp_path: Path) -> None:
    repo, shas = _history(tmp_path / "jobs")
    side = git(repo.path, "rev-parse", "side")
    assert present_along(str(repo.path), {side: NAMES, shas[1]: NAMES}).keys() == {shas[1]}


def test_a_blob_the_clone_lacks_stops_the_walk_there(tmp_path: Path) -> None:
    repo = History(tmp_path / "src")
    first = repo.commit("Initial commit", {"a.py": "schedule_batches = 1\n"})
    second = repo.pr(1, "More", {"b.py": "drain_queue = 2\n"})
    third = repo.pr(2, "Big", {"c.py": "RetryPolicy = 3\n"})
    fourth = repo.pr(3, "After", {"d.py": "gone_again = 4\n"})
    # A snapshot without c.py's blob, as the fetch tool leaves a repository's largest files out.
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--no-local", str(repo.path), str(clone))
    git(clone, "repack", "-a", "-d", "-q")  # every object in one pack, written again below
    missing = git(clone, "rev-parse", f"{third}:c.py")
    packs = list((clone / ".git" / "objects" / "pack").glob("*.pack"))
    kept = "\n".join(
        line.split()[0]
        for line in git(clone, "rev-list", "--objects", "--all").splitlines()
        if line.split()[0] != missing
    )
    for pack in packs:
        pack.unlink()
        pack.with_suffix(".idx").unlink()
    subprocess.run(
        ["git", "-C", str(repo.path), "pack-objects", "-q", str(clone / ".git/objects/pack/p")],
        input=kept.encode(),
        check=True,
        capture_output=True,
    )
    asked = {sha: NAMES for sha in (first, second, third, fourth)}
    walked = present_along(str(clone), asked)
    assert walked.keys() == {first, second}  # the walk stopped at the blob git could not read
    assert (
        walked[second]
        == present_at(str(clone), second, NAMES)
        == {
            "schedule_batches",
            "drain_queue",
        }
    )


def test_a_cold_build_walks_once_and_decides_as_the_greps_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Code links ask every older PR's new names; with one walk instead of a grep per older PR,
    the build decides every link as before."""
    repo = History(tmp_path / "flows")
    repo.commit("Initial commit", {"flows/__init__.py": "", "flows/util.py": "TIMEOUT = 30\n"})
    text = RETRY
    for number in range(1, 6):
        # Each PR rewrites the last one's lines, keeping the names it brought in.
        text = (
            text.replace(f"{number - 1}.0", f"{number}.0")
            .replace(f"delay, {number + 2})", f"delay, {number + 3})")
            .replace("range(attempts)", "range(0, attempts)")
            .replace(
                "range(0, attempts)", "range(attempts)" if number % 2 else "range(0, attempts)"
            )
        )
        text += f"\n\ndef policy_step_{number}(attempts):\n    return retry_delays(attempts, 1.0)\n"
        repo.pr(number, f"Retry policy, step {number}", {"flows/retries.py": text})
    config = ChainsConfig(
        min_chain_code_lines=0,
        min_stage_code_lines=0,
        code_link_min_stage_lines=0,
        code_links=True,
        lineage_workers=2,
    )
    calls = {"grep": 0, "walk": 0}
    grep, walk = symbols_module.present_at, symbols_module.present_along

    def counted_grep(*args: Any) -> Any:
        calls["grep"] += 1
        return grep(*args)

    def counted_walk(*args: Any) -> Any:
        calls["walk"] += 1
        return walk(*args)

    monkeypatch.setattr(symbols_module, "present_at", counted_grep)
    monkeypatch.setattr(symbols_module, "present_along", counted_walk)
    decisions = {}
    for label, least in (("grep", 10**6), ("walk", 1)):
        monkeypatch.setattr(symbols_module, "WALK_MIN_BASES", least)
        engine = mine_and_build(repo.path, tmp_path / f"{label}.db", "acme/flows", config)
        decisions[label] = {
            pair: (link.kept, link.rule, link.symbols, link.why)
            for pair, link in links_by_number(engine).items()
        }
        if label == "grep":
            assert calls == {"grep": 4, "walk": 0}  # one per older PR asked about
    assert calls == {"grep": 4, "walk": 1}  # the walk answered them all: no grep more
    assert decisions["walk"] == decisions["grep"]
    assert any(used for _kept, _rule, used, _why in decisions["walk"].values())


def _blob(repo: History, sha: str) -> str:
    return git(repo.path, "rev-parse", f"{sha}:jobs/engine.py")
