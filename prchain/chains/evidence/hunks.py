"""The carry-forward fallback by hunks (`hunks`), asked of git before a chain is kept.

Where the earlier stages' gold patches do not revert at B_t, stage t may be entered with only the
hunks of them reverted that do revert, and the others kept as B_t has them (docs/chains.md,
"Entering a busy stage"). The sandbox reverts each earlier gold patch newest first as at any entry
(`git apply -R --3way`); where one fails, it reverts that patch hunk by hunk (`git apply -R
--reject`): the hunks whose lines an outside PR rewrote since (or whose context it changed) stay
as B_t has them. Everything in C_t is then B_t's or an earlier stage's pre-image, older than B_t.

What a kept hunk costs: its lines hold the earlier stage's code as history left it at B_t, and the
agent's own change to the same lines is not carried (carry.TRANSITION takes C_t's lines where the
three-way carry meets them). So a stage is refused where a line its own gold patch changes lies in
a kept hunk: the stage's work would meet code the agent never wrote.

Conditions, each asked of git:
* every earlier stage's merge commit is an ancestor of B_t (as `propagate` asks);
* every failed revert failed only by hunks (no file missing, no binary part): else no state can
  be told;
* no line g_t changes (a removed line, or the lines around an added one, at B_t) lies in a kept
  hunk's lines at B_t: the hunk's added lines at the earlier stage's merge commit, carried to B_t
  through `git diff -U0 merge B_t` (a line an outside PR rewrote stands for the lines it became).
"""

from __future__ import annotations

import re
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from prchain.chains.evidence.propagation import EarlierStage, MergedInto
from prchain.chains.evidence.revertible import GIT_TIMEOUT, StageBases
from prchain.core import git
from prchain.core.errors import GitError

LITERAL = {"GIT_LITERAL_PATHSPECS": "1"}
_RANGE = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@", re.MULTILINE)
# What `git apply --reject` says of a hunk it rejects; any other error is not a hunk's.
_HUNK_ERRORS = ("error: while searching for:", "error: patch failed: ")


@dataclass
class Kept:
    """What stage t entered by hunks keeps of B_t: per path, B_t's line numbers (1-based) of the
    earlier gold hunks that did not revert, and how many hunks those were."""

    lines: dict[str, set[int]] = field(default_factory=dict)
    hunks: int = 0


class HunkEntry(StageBases, MergedInto):
    """Answers, per repository clone, whether a stage can be entered by hunks after its earlier
    stages, and what it keeps of B_t. The reverts run in the scratch work tree of `StageBases`
    (the clone is only read), with the files the patches touch and B_t's `.gitattributes`
    checked out, as the sandbox's worktree has them."""

    def __init__(self, clones: Mapping[int, str | None]) -> None:
        StageBases.__init__(self, clones)
        MergedInto.__init__(self, clones)
        self._kept: dict[tuple[int, str, tuple[tuple[str, str], ...]], Kept | None] = {}

    def enters(self, repo_id: int, base: str, earlier: Sequence[EarlierStage], gold: str) -> bool:
        """Whether stage t (base B_t, gold patch `gold`) can be entered by hunks after the
        `earlier` stages (oldest first)."""
        if not earlier or not base or repo_id not in self.clones:
            return False
        if not self.all_merged(repo_id, earlier, base):
            return False
        kept = self.kept(repo_id, base, earlier)
        if kept is None:
            return False
        touched = changed_lines(gold)
        return not any(touched.get(path, set()) & lines for path, lines in kept.lines.items())

    def kept(self, repo_id: int, base: str, earlier: Sequence[EarlierStage]) -> Kept | None:
        """The hunks of the earlier gold patches that stay as B_t has them (None: a revert failed
        otherwise than by hunks, or git could not be asked)."""
        parts = tuple(
            (s.merge_sha or "", part)
            for s in earlier
            if (part := self._reverted_part(s.gold)).strip()
        )
        key = (repo_id, base, parts)
        if key not in self._kept:
            try:
                self._kept[key] = self._carry(repo_id, base, parts)
            except GitError:
                self._kept[key] = None
        return self._kept[key]

    def _carry(self, repo_id: int, base: str, parts: tuple[tuple[str, str], ...]) -> Kept | None:
        """Revert `parts` (merge commit, patch; oldest first) at `base` as carry.STAGE_BASE does."""
        found = Kept()
        if not parts:
            return found
        tree, env = self._env(repo_id)
        if not self._read_tree(repo_id, base, tree, env):
            return None
        touched: set[str] = set()
        for _merge, patch in parts:
            paths = self._paths(patch, tree, env)
            if paths is None:
                return None
            touched |= paths
        attributes = git.run(tree, "ls-files", "-z", "--", ":(glob)**/.gitattributes", env=env,
                             check=False, timeout=GIT_TIMEOUT).stdout  # fmt: skip
        listed = sorted(touched) + [p.decode() for p in attributes.split(b"\0") if p]
        self._restore(tree, env, listed)
        for merge, patch in reversed(parts):
            data = (patch if patch.endswith("\n") else patch + "\n").encode()
            before = git.output(tree, "write-tree", env=env, timeout=GIT_TIMEOUT).strip()
            done = git.run(tree, "apply", "-R", "--3way", "--whitespace=nowarn", input=data,
                           env=env, check=False, timeout=GIT_TIMEOUT)  # fmt: skip
            if done.ok:
                continue
            git.run(tree, "read-tree", "--reset", before, env=env, timeout=GIT_TIMEOUT)
            self._restore(tree, env, sorted(touched))
            done = git.run(tree, "apply", "-R", "--reject", "--whitespace=nowarn", input=data,
                           env=env, check=False, timeout=GIT_TIMEOUT)  # fmt: skip
            rejected = _collect_rejects(tree, touched)
            # What reverted is staged, as the sandbox stages it: the next revert starts from it.
            data = b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in sorted(touched))
            git.run(tree, "update-index", "--add", "--remove", "-z", "--stdin", input=data,
                    env=env, timeout=GIT_TIMEOUT)  # fmt: skip
            errors = [
                line
                for line in done.stderr.decode(errors="replace").splitlines()
                if line.startswith("error:") and not line.startswith(_HUNK_ERRORS)
            ]
            if errors or (not done.ok and not rejected):
                return None
            for path, text in rejected.items():
                lines = self._at_base(repo_id, merge, base, path, _added_lines(text))
                found.lines.setdefault(path, set()).update(lines)
                found.hunks += len(_RANGE.findall(text))
        return found

    def _restore(self, tree: Path, env: dict[str, str], paths: list[str]) -> None:
        """The work tree's `paths` as the index has them (absent there: removed), and no `.rej`.
        A submodule's path is a directory there (numpy's svml): removed whole."""
        for path in paths:
            place = tree / path
            if place.is_dir() and not place.is_symlink():
                shutil.rmtree(place)
            else:
                place.unlink(missing_ok=True)
            Path(f"{place}.rej").unlink(missing_ok=True)
        data = b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in paths)
        git.run(tree, "checkout-index", "-f", "-u", "-q", "-z", "--stdin", input=data, env=env,
                check=False, timeout=GIT_TIMEOUT)  # fmt: skip

    def _at_base(self, repo_id: int, merge: str, base: str, path: str, lines: set[int]) -> set[int]:
        """`lines` of `path` at `merge`, carried to `base` through the changes in between: a line
        in a changed block stands for all lines the block became (where it became none, for the
        two lines around the place)."""
        if not lines:
            return set()
        diff = git.run(self.clones[repo_id], "diff", "-U0", "--no-ext-diff", "--no-color", merge,
                       base, "--", path, env=LITERAL, check=False,
                       timeout=GIT_TIMEOUT).stdout.decode(errors="replace")  # fmt: skip
        blocks = [(int(a), int(b or 1), int(c), int(d or 1)) for a, b, c, d in _RANGE.findall(diff)]
        return {n for line in lines for n in _carried(line, blocks)}


def _carried(line: int, blocks: list[tuple[int, int, int, int]]) -> list[int]:
    """Where `line` of the old side of `git diff -U0`'s `blocks` is on the new side."""
    shift = 0
    for old, old_len, new, new_len in blocks:
        # A block that removes nothing sits after old line `old`; one that removes lines starts at it.
        start = old + 1 if old_len == 0 else old
        if line < start:
            break
        if old_len and line < old + old_len:
            return list(range(new, new + new_len)) if new_len else [new, new + 1]
        shift += new_len - old_len
    return [line + shift]


def _added_lines(rejects: str) -> set[int]:
    """The new-side line numbers of the lines a `.rej` file's hunks add (the earlier gold's code),
    and for a hunk that only removes, the two lines around the place."""
    found: set[int] = set()
    for hunk in re.split(r"(?m)^(?=@@ )", rejects):
        head = _RANGE.match(hunk)
        if head is None:
            continue
        new = int(head.group(3))
        added = False
        for row in hunk.splitlines()[1:]:
            if row.startswith("+"):
                found.add(new)
                added = True
            if row.startswith((" ", "+")):
                new += 1
        if not added:
            found |= {int(head.group(3)), int(head.group(3)) + 1}
    return found


def _collect_rejects(tree: Path, touched: set[str]) -> dict[str, str]:
    """The `.rej` files `git apply --reject` left beside `touched` paths, read and removed."""
    found = {}
    for path in sorted(touched):
        rej = Path(f"{tree / path}.rej")
        if rej.exists():
            found[path] = rej.read_text(errors="replace")
            rej.unlink()
    return found


def changed_lines(gold: str) -> dict[str, set[int]]:
    """The lines of B_t a gold patch changes, per path (its old side): each removed line, and for
    lines added where none is removed, the two lines around the place. Read by the hunk headers,
    not by unidiff: a stored patch whose last context line is blank may have lost it."""
    found: dict[str, set[int]] = {}
    lines: set[int] | None = None
    before, removing, header = 0, False, False
    for row in gold.splitlines():
        if row.startswith("diff --git "):
            lines, header = None, True
        elif header and row.startswith("--- "):
            old = row[4:].split("\t", 1)[0]
            lines = None if old == "/dev/null" else found.setdefault(old.removeprefix("a/"), set())
        elif row.startswith("@@ "):
            head = _RANGE.match(row)
            header, removing = False, False
            before = int(head.group(1)) - (0 if head.group(2) == "0" else 1) if head else 0
        elif header or lines is None:
            continue
        elif row.startswith("-"):
            before += 1
            lines.add(before)
            removing = True
        elif row.startswith("+"):
            if not removing:
                lines |= {before, before + 1}
        elif row.startswith(" ") or row == "":
            before += 1
            removing = False
    return found
