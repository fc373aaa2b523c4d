"""B_t from a clone that lacks some of its blobs: the commit's tree without them.

A fetched snapshot leaves out a repository's largest files, and a partial clone leaves out what it
filtered: ruff's snapshot lacks two benchmark outputs (`scripts/ty_benchmark/snapshots/*.txt`)
present in every commit since 2025-11, so `git archive` and `git fetch` of every later base
failed, and no stage of that year could be built or entered. None of those files is code or a
test. Such a base is checked out as a stand-in: a commit without parent whose tree is B_t's with
the absent files left out, dated and signed as B_t is, so the same base always gets the same
stand-in (and the era recipe that hashes its tree stays the same). Nothing after B_t can come in:
the stand-in holds B_t's own blobs, fewer of them. Which files were left out is said in the era
build's log. The stand-in's tree and commit are written into the clone's object store, with no
ref: they are found again by their ids, and git may prune them like any unreachable object.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from prchain.core import git


@dataclass(frozen=True)
class WholeBase:
    """What to check out for B_t (`base`): B_t itself, or its stand-in without the files in
    `absent` (paths whose blobs the clone does not hold)."""

    base: str
    sha: str
    absent: tuple[str, ...] = ()

    @property
    def stands_in(self) -> bool:
        return self.sha != self.base

    def note(self) -> str:
        """One line for a recipe's notes and a build's log ('' when nothing is absent)."""
        if not self.absent:
            return ""
        shown = ", ".join(self.absent[:3]) + (" …" if len(self.absent) > 3 else "")
        return (
            f"B_t {self.base[:12]} without {len(self.absent)} file(s) the clone does not hold "
            f"(a snapshot's or partial clone's absent blobs): {shown}"
        )


def whole_base(clone: str | Path, sha: str) -> WholeBase:
    """B_t as the clone can give it whole (see the module's docstring)."""
    return _whole_base(str(clone), git.output(clone, "rev-parse", f"{sha}^{{commit}}").strip())


@lru_cache(maxsize=1024)  # a rollout enters the bases of its chain once per stage and room
def _whole_base(clone: str, sha: str) -> WholeBase:
    absent = absent_paths(clone, sha)
    if not absent:
        return WholeBase(sha, sha)
    return WholeBase(sha, _stand_in(clone, sha, absent), absent)


def absent_paths(clone: str | Path, sha: str) -> tuple[str, ...]:
    """Paths of the commit's tree whose blobs the clone does not hold (submodules aside)."""
    blobs: dict[str, list[str]] = {}
    for path, blob in git.tree_blobs(clone, sha).items():
        blobs.setdefault(blob, []).append(path)
    if not blobs:
        return ()
    checked = git.run(
        clone,
        "cat-file",
        "--batch-check=%(objectname)",
        input="".join(f"{blob}\n" for blob in blobs).encode(),
    ).text
    missing = [line.split()[0] for line in checked.splitlines() if line.endswith(" missing")]
    return tuple(sorted(path for blob in missing for path in blobs[blob]))


def _stand_in(clone: str, sha: str, absent: tuple[str, ...]) -> str:
    """A parentless commit of B_t's tree without `absent`, with B_t's author, committer and dates
    (the same one every time)."""
    with tempfile.TemporaryDirectory(prefix="prchain-whole-") as tmp:
        # An index of its own, and an empty work tree (a bare clone has none to remove files in).
        index = {"GIT_INDEX_FILE": str(Path(tmp) / "index"), "GIT_WORK_TREE": tmp}
        git.run(clone, "read-tree", sha, env=index)
        listed = "".join(f"{path}\0" for path in absent).encode(errors="surrogateescape")
        git.run(clone, "update-index", "--force-remove", "-z", "--stdin", input=listed, env=index)
        tree = git.output(clone, "write-tree", env=index).strip()
    fields = git.output(clone, "show", "-s", "--format=%an%x00%ae%x00%ad%x00%cn%x00%ce%x00%cd",
                        "--date=raw", sha)  # fmt: skip
    an, ae, ad, cn, ce, cd = fields.rstrip("\n").split("\0")
    said = {"GIT_AUTHOR_NAME": an, "GIT_AUTHOR_EMAIL": ae, "GIT_AUTHOR_DATE": ad}
    said |= {"GIT_COMMITTER_NAME": cn, "GIT_COMMITTER_EMAIL": ce, "GIT_COMMITTER_DATE": cd}
    message = f"{sha} without the files this clone lacks\n\n" + "".join(f"{p}\n" for p in absent)
    return git.output(clone, "commit-tree", tree, "-m", message, env=said).strip()


def pack(clone: str | Path, sha: str) -> bytes:
    """A pack of the commit and everything it reaches (a stand-in reaches only its own tree), for
    a sandbox whose mirror cannot give it."""
    return git.run(
        clone, "pack-objects", "--revs", "--stdout", "-q", input=f"{sha}\n".encode()
    ).stdout
