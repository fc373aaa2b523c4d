"""Can every stage of a chain be entered? Asked of git before the chain is kept.

The sandbox starts stage t from B_t with the earlier stages' gold patches reverted, newest first
(`git apply -R --3way`, docs/architecture.md, "Carry-forward"). When a PR outside the chain edited
an earlier stage's lines between that stage and stage t, the revert conflicts: the stage base
cannot be made, and under the default conflict policy the rollout stops there. That happens to
about half of the chains the link rules allow (mypy #2193 → #2436: #2378, #2391 and #2419 rewrote
lines of #2193's `mypy/types.py` in between), so the build asks first: in a throwaway index read
from B_t (no checkout; B_t's `.gitattributes` apply) it reverts the same patches the same way.

A chain keeps its longest run of consecutive stages that can all be entered (the earliest of equal
runs); a run of fewer than two stages is no chain. Without a clone nothing can be asked, and the
chain is kept as it is.

The clone is only read. git runs in a scratch work tree of its own, with a scratch index and a
scratch object directory that borrows the clone's objects: a three-way revert writes the blobs it
merges, and where it falls back to a file (a PR deleted a file that is back at the later base) it
writes that file into the directory git was started in. Started in the clone, that was a mined
mirror's git directory: opentelemetry-collector's build wrote `config/configauth/*.go` there,
where git's own `config` belongs, and git could read that clone no more.
"""

from __future__ import annotations

import shutil
import tempfile
import uuid
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path

from prchain.core import git
from prchain.core.errors import GitError
from prchain.environments.stage_entry import reverted_part

GIT_TIMEOUT = 120
BASE_INDEXES = 64  # base commits whose index is kept in memory (a few MB each at most)


class StageBases:
    """Answers, per repository clone, whether earlier gold patches revert at a later base.

    Answers are cached on (base, patches): chains of one start share their first stages, and the
    search asks of every path it grows. What git cannot answer (a base the clone lacks, a
    timeout) counts as enterable, as a chain without a clone does. Asking costs a git process
    per patch: a base's index is read once and kept (`BASE_INDEXES` of them), and patches that
    failed to revert at a base fail there whatever older patches come after them."""

    def __init__(self, clones: Mapping[int, str | None]) -> None:
        self.clones = {repo: path for repo, path in clones.items() if path and Path(path).exists()}
        self._answers: dict[tuple[int, str, tuple[str, ...]], bool] = {}
        self._dirs: dict[str, tuple[str, str]] = {}
        self._indexes: OrderedDict[tuple[int, str], bytes | None] = OrderedDict()
        self._scratch: tempfile.TemporaryDirectory[str] | None = None
        self._parts: dict[str, str] = {}  # gold patch → its reverted part (`reverted_part`)
        self._touched: dict[str, frozenset[str] | None] = {}  # reverted part → paths (`_paths`)

    def can_check(self, repo_id: int) -> bool:
        return repo_id in self.clones

    def reverts(self, repo_id: int, base: str, golds: Sequence[str]) -> bool:
        """Whether `golds` (oldest first) revert cleanly, newest first, on `base`: the stage base
        can be made. Each is reverted as the sandbox reverts it (`reverted_part`: Go's module
        files stay), and one left empty is skipped, as the sandbox skips it."""
        patches = tuple(p for p in map(self._reverted_part, golds) if p.strip())
        if not patches or not base:
            return True
        key = (repo_id, base, patches)
        if key not in self._answers:
            # The newest patches are reverted first: where they alone failed, so does the whole.
            failed = any(
                self._answers.get((repo_id, base, patches[i:])) is False
                for i in range(1, len(patches))
            )
            try:
                self._answers[key] = not failed and self._revert(repo_id, base, patches)
            except GitError:
                self._answers[key] = True
        return self._answers[key]

    def _reverted_part(self, gold: str) -> str:
        """`reverted_part` of a gold patch, once per patch: the search asks of every path it
        grows, and each path's golds again (a patch is read whole: 0.4 ms for ruff's average)."""
        part = self._parts.get(gold)
        if part is None:
            part = self._parts[gold] = reverted_part(gold)
        return part

    def _git_dirs(self, clone: str) -> tuple[str, str]:
        """(git directory, object directory) of a clone, bare or checked out, as absolute paths."""
        if clone not in self._dirs:
            found = git.output(clone, "rev-parse", "--absolute-git-dir", "--git-path", "objects")
            git_dir, objects = found.splitlines()[:2]
            self._dirs[clone] = (git_dir, str((Path(clone) / objects).resolve()))
        return self._dirs[clone]

    def _env(self, repo_id: int) -> tuple[Path, dict[str, str]]:
        """A scratch work tree, emptied, and git's environment for it: the clone's git directory,
        a scratch index, and a scratch object directory borrowing the clone's objects."""
        if self._scratch is None:
            self._scratch = tempfile.TemporaryDirectory(prefix="prchain-stage-base-")
        scratch = Path(self._scratch.name)
        # An empty work tree of our own: git then reads .gitattributes from the index, that
        # is B_t's, as the sandbox's checkout of B_t does (`doc/whats-new.rst merge=union`
        # in xarray makes a changelog revert clean). A bare clone would read none, a user's
        # clone its own checkout's. Whatever git writes lands in the scratch directory.
        tree = scratch / "tree"
        shutil.rmtree(tree, ignore_errors=True)
        tree.mkdir()
        (scratch / "objects").mkdir(exist_ok=True)
        git_dir, objects = self._git_dirs(self.clones[repo_id])
        return tree, {
            "GIT_DIR": git_dir,
            "GIT_WORK_TREE": str(tree),
            "GIT_INDEX_FILE": str(scratch / "index"),
            "GIT_OBJECT_DIRECTORY": str(scratch / "objects"),
            "GIT_ALTERNATE_OBJECT_DIRECTORIES": objects,
        }

    def _read_base(
        self, repo_id: int, base: str, patches: tuple[str, ...], tree: Path, env: dict[str, str]
    ) -> bool:
        """Put in the scratch index what reverting `patches` reads of `base`'s tree (`_entries`),
        or the whole tree where that cannot be told; False for a base the clone lacks."""
        entries = self._entries(base, patches, tree, env)
        if entries is None:
            return self._read_tree(repo_id, base, tree, env)
        index = Path(env["GIT_INDEX_FILE"])
        index.unlink(missing_ok=True)
        git.run(tree, "update-index", "-z", "--index-info", input=entries, env=env,
                timeout=GIT_TIMEOUT)  # fmt: skip
        return True

    def _entries(
        self, base: str, patches: tuple[str, ...], tree: Path, env: dict[str, str]
    ) -> bytes | None:
        """`base`'s index entries that `git apply --cached` reads when it reverts `patches`, as
        `ls-tree -z` lines: the paths they touch, a file in the place of a directory above one
        (it fails an added file there) and the `.gitattributes` of each directory above one (a
        merge driver). Reading the whole tree of a large repository (ruff: 11,000 files, a
        1.6 MB index) costs more than the reverts themselves, and git reads and writes the whole
        index once per patch. None where the whole tree is needed: a touched path that is a
        directory at `base` (an added file there fails on all of its files), a path that git
        would read as pathspec magic, or git could not list the paths."""
        touched: set[str] = set()
        for patch in patches:
            paths = self._paths(patch, tree, env)
            if paths is None:
                return None
            touched |= paths
        wanted = set(touched) | {".gitattributes"}
        for path in touched:
            parts = path.split("/")[:-1]
            for depth in range(1, len(parts) + 1):
                above = "/".join(parts[:depth])
                wanted |= {above, f"{above}/.gitattributes"}
        if any(path.startswith(":") for path in wanted):
            return None
        return _listed(git.run(tree, "ls-tree", "-z", base, "--", *sorted(wanted), env=env,
                               check=False, timeout=GIT_TIMEOUT), wanted, touched)  # fmt: skip

    def _paths(self, patch: str, tree: Path, env: dict[str, str]) -> frozenset[str] | None:
        """The paths `patch` touches, old and new names, as git apply reads them (None where it
        cannot), once per patch. `--numstat` names a record by its new path only (a rename's old
        one is left out), so it is asked of the patch and of its reverse."""
        if patch not in self._touched:
            data = (patch if patch.endswith("\n") else patch + "\n").encode()
            ways = [
                git.run(tree, "apply", *way, "--numstat", "-z", input=data, env=env,
                        check=False, timeout=GIT_TIMEOUT)
                for way in ((), ("-R",))
            ]  # fmt: skip
            ok = all(done.ok for done in ways)
            self._touched[patch] = (
                frozenset().union(*(_numstat_paths(done.stdout) for done in ways)) if ok else None
            )
        return self._touched[patch]

    def learn_paths(self, repo_id: int, golds: Iterable[str]) -> None:
        """Ask git for the paths of many gold patches at once, as `_paths` asks of one (`git
        apply --numstat`, forwards and reversed): one process each way, not two per patch
        (ruff: 706 processes). Each patch is followed by a marker patch of its own, whose record
        splits git's records between them. A patch is taken only where git gave one record per
        `diff --git` header of it (so no part of it was read otherwise than alone); git failing
        on the whole (a malformed patch fails all) is asked again in halves; what is left is
        asked alone later, as before."""
        if repo_id not in self.clones:
            return
        parts = (self._reverted_part(gold) for gold in golds)
        todo = list(dict.fromkeys(p for p in parts if p.strip() and p not in self._touched))
        if todo:
            tree, env = self._env(repo_id)
            self._learn(todo, tree, env)

    def _learn(self, patches: list[str], tree: Path, env: dict[str, str]) -> None:
        marker = f".prchain-numstat-{uuid.uuid4().hex}-"
        data = "".join(
            _ended(patch) + _marker_patch(f"{marker}{i}") for i, patch in enumerate(patches)
        ).encode()
        ways = [
            git.run(tree, "apply", *way, "--numstat", "-z", input=data, env=env,
                    check=False, timeout=GIT_TIMEOUT)
            for way in ((), ("-R",))
        ]  # fmt: skip
        if not all(done.ok for done in ways):
            if len(patches) > 1:
                half = len(patches) // 2
                self._learn(patches[:half], tree, env)
                self._learn(patches[half:], tree, env)
            return
        # git lists the records reversed where it reverses (`-R` puts each patch first)
        split = [
            _split_records(done.stdout, marker, len(patches), reverse=bool(way))
            for way, done in enumerate(ways)
        ]
        for i, patch in enumerate(patches):
            headers = _ended(patch).count("\ndiff --git ") + patch.startswith("diff --git ")
            records = [way[i] for way in split if way is not None]
            if headers and len(records) == 2 and all(len(r) == headers for r in records):
                self._touched[patch] = frozenset().union(*map(_record_paths, records))

    def _read_tree(self, repo_id: int, base: str, tree: Path, env: dict[str, str]) -> bool:
        """Put `base`'s whole tree in the scratch index (read once per base, then copied); False
        for a base the clone lacks."""
        key = (repo_id, base)
        index = Path(env["GIT_INDEX_FILE"])
        if key not in self._indexes:
            done = git.run(tree, "read-tree", base, env=env, check=False, timeout=GIT_TIMEOUT)
            self._indexes[key] = index.read_bytes() if done.ok else None
            if len(self._indexes) > BASE_INDEXES:
                self._indexes.popitem(last=False)
        self._indexes.move_to_end(key)
        data = self._indexes[key]
        if data is not None:
            index.write_bytes(data)
        return data is not None

    def _revert(self, repo_id: int, base: str, patches: tuple[str, ...]) -> bool:
        tree, env = self._env(repo_id)
        if not self._read_base(repo_id, base, patches, tree, env):
            return True  # a base the clone lacks: unknown
        for patch in reversed(patches):
            data = patch if patch.endswith("\n") else patch + "\n"
            done = git.run(
                tree, "apply", "-R", "--cached", "--3way", "--whitespace=nowarn",
                input=data.encode(), env=env, check=False, timeout=GIT_TIMEOUT,
            )  # fmt: skip
            if not done.ok:
                return False
        return True

    def enterable_run(
        self,
        repo_id: int,
        bases: Sequence[str],
        golds: Sequence[str],
        otherwise: Callable[[int, int], bool] | None = None,
    ) -> tuple[int, int]:
        """The longest run [start, end) of consecutive stages that can all be entered, the
        earliest of equal runs: stage t of a run from `start` needs golds[start:t] to revert on
        bases[t], or `otherwise(start, t)` to hold (the fallback entry)."""
        return longest_run(
            len(bases),
            lambda start, end: (
                self.reverts(repo_id, bases[end], golds[start:end])
                or (otherwise is not None and otherwise(start, end))
            ),
        )


def longest_run(length: int, enters: Callable[[int, int], bool]) -> tuple[int, int]:
    """The longest run [start, end) of `length` consecutive stages where `enters(start, t)` holds
    for each stage t after the run's first, the earliest of equal runs."""
    best = (0, min(1, length))
    for start in range(length - 1):
        end = start + 1
        while end < length and enters(start, end):
            end += 1
        if end - start > best[1] - best[0]:
            best = (start, end)
        if best[1] - best[0] >= length - start - 1:
            break  # no later start can make a longer run
    return best


def _numstat_paths(out: bytes) -> frozenset[str]:
    """The paths of `git apply --numstat -z`'s records: `added\tdeleted\tpath`, or a record
    of its own for each path (`git diff --numstat -z` names a rename so)."""
    return _record_paths(out.decode("utf-8", errors="surrogateescape").split("\0"))


def _record_paths(records: list[str]) -> frozenset[str]:
    paths = {record.split("\t", 2)[-1] for record in records}
    return frozenset(paths - {""})


def _ended(patch: str) -> str:
    return patch if patch.endswith("\n") else patch + "\n"


def _marker_patch(path: str) -> str:
    """A patch that adds the one-line file `path`: git's record of it ends the patch before."""
    return (
        f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n"
        "@@ -0,0 +1 @@\n+marker\n"
    )


def _split_records(
    out: bytes, marker: str, count: int, *, reverse: bool = False
) -> list[list[str]] | None:
    """`git apply --numstat -z`'s records (`out`, read backwards where `reverse`) of each of
    `count` patches, each followed by its marker's record (`marker` and its number); None where
    the markers are not all there in order."""
    found: list[list[str]] = [[]]
    records = out.decode("utf-8", errors="surrogateescape").split("\0")
    for record in reversed(records) if reverse else records:
        if record.split("\t", 2)[-1] == f"{marker}{len(found) - 1}":
            found.append([])
        elif record:
            found[-1].append(record)
    return found[:count] if len(found) == count + 1 and not found[-1] else None


def _listed(done: git.GitResult, wanted: set[str], touched: set[str]) -> bytes | None:
    """The lines of `ls-tree -z` (`done`) whose path is `wanted` and no directory; None where git
    failed or a touched path is a directory."""
    if not done.ok:
        return None
    kept = []
    for line in done.stdout.split(b"\0"):
        head, _, name = line.partition(b"\t")
        path = name.decode("utf-8", errors="surrogateescape")
        if path not in wanted:
            continue
        if head.split(b" ")[1:2] == [b"tree"]:
            if path in touched:
                return None
            continue
        kept.append(line + b"\0")
    return b"".join(kept)
