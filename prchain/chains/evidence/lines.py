"""Line lineage: does the newer PR change or remove lines the older PR added?

Two steps, so that git runs only where it can answer yes:
1. From the stored patches, the lines the newer PR removes (a rewrite is remove + add) whose text
   (whitespace squeezed, at least `MIN_LINE_CHARS`) the older PR added, in any file: code moves
   between files and files get renamed between the two PRs.
2. Where the repository's clone is at hand, `git blame -w -M -C` of exactly those lines at the
   newer PR's base says which commit last wrote each, following renames and moves between files;
   a line counts when that commit is the older PR's merge commit or one of its own commits.
   Without a clone (or when the clone lacks the objects), a line counts when it matched in the
   same file: what the stored patches alone can show.

Context lines never count: registration lists (`mod.rs`, rule tables) put every sibling PR next
to every other. Nor do imports and comments (a shared `use` line or a comment says nothing about
code built on code; where the clone is at hand, the whole file is read, and lexed whole where a
line may sit inside a block comment or a docstring spanning lines, so that such a line is known for
one), and a line the newer PR only moves (it adds the same text back) is counted apart: a move is
weaker evidence than a rewrite (`Lineage.weight`).
Only lines the older PR wrote count, not those it only re-indented, re-wrapped or moved
(`prchain.chains.reading.carried`); lines of its tests (test files, a Rust file's test module) are counted apart:
no code evidence, though enough of its test code rewritten backs a link (`test_lines_per_gap`).
"""

from __future__ import annotations

import os
import re
import weakref
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Protocol

from sqlalchemy import Engine, select

from prchain.chains.reading.carried import carried_kinds, change_blocks
from prchain.chains.reading.generated import MAX_CODE_LINE_CHARS, generated_text
from prchain.chains.reading.imports import import_lines
from prchain.chains.reading.patches import file_sections, is_test_path
from prchain.chains.reading.paths import counts_as_code
from prchain.chains.reading.substance import (
    WholeFile,
    evidence_line_flags,
    lexer_for,
    string_openers,
)
from prchain.core import git
from prchain.core.commit_graph import CommitGraphs
from prchain.environments.languages import tests_in_file
from prchain.store.models import PRCommit, PRPatch

if TYPE_CHECKING:
    from prchain.chains.evidence.nodes import PRNode

MIN_LINE_CHARS = 12  # shorter lines ("return None", "}") match by accident
MIN_AIMED_SHARE = 0.5  # of the lines a PR carries, the share on the older PR's code that aims at it
# Lines that are not code a later PR builds on: imports and comments, in the languages mined.
# (Read alone, a line shows no more than these prefixes; where the clone is at hand, `Lines` lexes
# the whole file.)
_NOT_SUBSTANCE = re.compile(
    r"^(?:(?:pub(?:\([\w:]+\))?\s+)?use\s|import\s|from\s+\S+\s+import\b|extern\s+crate\b"
    r"|(?:pub(?:\([\w:]+\))?\s+)?mod\s+\w+;|#\s*include\b|require\(|package\s"
    r"|//|/\*|\*(?:\s|/|$)|#(?![\[!])|--\s|\"\"\"|\'\'\'|<!--)"
)
BLAME_TIMEOUT = 60.0
_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,\d+)? @@")
_SHA = re.compile(r"^([0-9a-f]{40}) \d+ (\d+)")

# One git blame call: (clone, revs, path, hunks sorted, copies).
BlameJob = tuple[str, tuple[str, ...], str, tuple[tuple[int, int], ...], bool]


@dataclass(frozen=True)
class Lineage:
    """How many of the older PR's lines the newer one changes, and how that was established."""

    lines: int = 0
    via: str = ""  # blame | patch | "" (none found)
    # Of `lines`, those the newer PR only moves (it adds the same text elsewhere) or only carries
    # (scipy #416 writes `numpy.abs(` for `abs(` on 31 lines, 3 of them #415's).
    moved: int = 0
    # Lines of the older PR's text the newer one removes in the same file, imports and comments
    # included, tests and moved lines not (read from the patches): weak evidence that the two PRs
    # share code at all.
    touched: int = 0
    # Lines of the older PR's tests (test files, a Rust file's test module) the newer one changes:
    # not counted in `lines`. A line or two of one test says little about code built on code;
    # enough lines of test code back a link on their own (`prchain.chains.rules.link_rules.tests_back`).
    tests: int = 0
    # Of `tests`, those in test code: a test file in a programming language (not data, markup or
    # configuration: no snapshot, expected output or fixture JSON) or a Rust test module. The
    # checks the older PR wrote, which the newer one changes.
    test_code: int = 0
    # Lines of code the older PR removed and the newer one writes back (from the patches): a
    # re-land restores what its revert removed. Code evidence, though no line the older PR wrote.
    restored: int = 0
    # The rewritten lines are all the code the older PR wrote (tests, imports and comments left
    # out): a one-line fix, rewritten months later, is that fix's whole change.
    whole: bool = False
    # Places where the newer PR adds code inside code the older PR wrote: both nearest code lines
    # around the insertion are the older PR's (a `case` added to the function it introduced, a
    # method added to its impl). Each place counts as one rewritten line.
    inserted: int = 0

    @property
    def weight(self) -> float:
        """Lines as evidence: a moved line counts half a rewritten one, and so does a line of the
        older PR's tests, both only beside a rewritten line of its code: alone, a move or a test
        edit shows no code built on code (oxc #7351 moved two match arms of #7350 in a reorder)."""
        rewritten = self.lines - self.moved
        if rewritten <= 0:
            return float(self.inserted)
        return rewritten + self.moved / 2 + self.tests / 2 + self.inserted


class LineOracle(Protocol):
    def lineage(self, newer: PRNode, older: PRNode, *, blame: bool = True) -> Lineage: ...

    def undoes(self, newer: PRNode, older: PRNode) -> bool: ...

    def branch_holds(self, later: PRNode, earlier: PRNode) -> bool: ...

    def repeats(self, newer: PRNode, older: PRNode) -> bool: ...


@dataclass
class Removed:
    """A line the diff removes: the path it had before, its line number there, its text, and
    the old side of its hunk (first line, count), which is blamed whole: git's move and copy
    detection needs a block of some size, a single line is too short to be recognised.
    `carried`: the diff only carries it (`prchain.chains.reading.carried`: re-indented, moved, or edited as the
    diff edits many other lines, a rename or a search and replace; `edited` the latter)."""

    path: str
    line: int
    text: str
    hunk: tuple[int, int] = (0, 0)
    carried: bool = False
    edited: bool = False  # carried by an edit made over and over, not as it was


@dataclass
class PatchLines:
    """Added texts and removed lines of one diff. `authored` keeps, per path, the added texts the
    diff wrote: not those it only carries (re-indented, re-wrapped or reformatted lines, lines
    moved from elsewhere in the same diff; `prchain.chains.reading.carried`)."""

    added: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    removed: list[Removed] = field(default_factory=list)
    authored: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    # Where each added text landed: path → (line number in the new file, text).
    added_at: dict[str, list[tuple[int, str]]] = field(default_factory=lambda: defaultdict(list))
    # Runs of added lines with no removed line beside them: (old path, nearest code line above,
    # nearest code line below), the two texts as they stood before.
    inserted: list[tuple[str, str, str]] = field(default_factory=list)
    # Removed lines in code files that the diff only carries (`Removed.carried`).
    carried_code: int = 0

    def added_anywhere(self) -> set[str]:
        return set().union(*self.added.values()) if self.added else set()

    def authored_anywhere(self) -> set[str]:
        return set().union(*self.authored.values()) if self.authored else set()


def squeeze(text: str) -> str:
    return " ".join(text.split())


def substantive(text: str) -> bool:
    """Whether a (squeezed) line is code another PR can build on: not an import or a comment."""
    return _NOT_SUBSTANCE.match(text) is None


def parse_patch(diff: str) -> PatchLines:
    """The added texts per (new) path, those the diff wrote itself, and every removed line with
    its old path and number."""
    found = PatchLines()
    hunks: list[tuple[tuple[str, str], tuple[int, int, int], list[str]]] = []
    for section in file_sections(diff):
        old_path = new_path = ""
        lines = section.split("\n")
        at = 0
        while at < len(lines) and not _HUNK.match(lines[at]):
            if lines[at].startswith("--- "):
                old_path = lines[at][6:] if lines[at].startswith("--- a/") else ""
            elif lines[at].startswith("+++ "):
                new_path = lines[at][6:] if lines[at].startswith("+++ b/") else ""
            at += 1
        while at < len(lines):
            hunk = _HUNK.match(lines[at])
            end = at + 1
            while end < len(lines) and not _HUNK.match(lines[end]):
                end += 1
            if hunk:
                span = (int(hunk.group(1)), int(hunk.group(2) or 1), int(hunk.group(3)))
                hunks.append(((old_path, new_path), span, lines[at + 1 : end]))
            at = end
    carried: list[tuple[str, str]] = []  # (path, text) of added lines the diff only carries
    as_they_were, edited = carried_kinds([body for _, _, body in hunks])
    for (paths, span, body), kept, made in zip(hunks, as_they_were, edited, strict=True):
        _read_hunk(found, carried, body, paths, span, kept, made)
        if paths[0] and counts_as_code(paths[0]) and not _test_file(paths[0]):
            found.inserted.extend((paths[0], *around) for around in _insertions(body))
    removed = {r.text for r in found.removed}
    for path, texts in found.added.items():
        found.authored[path] = texts - removed  # a line moved here from elsewhere in the diff
    for path, text in carried:
        found.authored[path].discard(text)
    found.carried_code = sum(1 for r in found.removed if r.carried and counts_as_code(r.path))
    return found


def _insertions(body: list[str]) -> Iterator[tuple[str, str]]:
    """For each run of added lines with no removed line beside it, the nearest code lines of the
    hunk's context above and below it (squeezed); runs at a hunk's edge have no such pair."""
    for removed, added in change_blocks(body):
        if removed or not added:
            continue
        above = _nearest_code(body[added[0] - 1 :: -1] if added[0] else [])
        below = _nearest_code(body[added[-1] + 1 :])
        if above and below:
            yield above, below


def _nearest_code(lines: Sequence[str]) -> str:
    """The first substantive context line of `lines` before any changed line ('' if none)."""
    for line in lines:
        if not line.startswith(" "):
            return ""
        text = squeeze(line[1:])
        if len(text) >= MIN_LINE_CHARS and substantive(text):
            return text
    return ""


def _read_hunk(
    found: PatchLines,
    carried: list[tuple[str, str]],
    body: list[str],
    paths: tuple[str, str],
    span: tuple[int, int, int],
    as_they_were: set[int],
    edited: set[int],
) -> None:
    """Record one hunk's lines (`span`: its old side's first line and length, its new side's
    first line); `as_they_were` and `edited`: the positions it only carries, by kind
    (`prchain.chains.reading.carried.carried_kinds`)."""
    only_carried = as_they_were | edited
    old_path, new_path = paths
    old_line, new_line = span[0], span[2]
    for pos, line in enumerate(body):
        if line.startswith("\\"):
            continue
        if line.startswith("+"):
            text = squeeze(line[1:])
            if MIN_LINE_CHARS <= len(text) <= MAX_CODE_LINE_CHARS and new_path:
                found.added[new_path].add(text)
                found.added_at[new_path].append((new_line, text))
                if pos in only_carried:
                    carried.append((new_path, text))
            new_line += 1
        elif line.startswith("-"):
            text = squeeze(line[1:])
            if MIN_LINE_CHARS <= len(text) <= MAX_CODE_LINE_CHARS and old_path:
                found.removed.append(
                    Removed(old_path, old_line, text, span[:2], pos in only_carried, pos in edited)
                )
            old_line += 1
        else:
            old_line += 1
            new_line += 1


def blamed_commits(
    clone: str,
    revs: Sequence[str],
    path: str,
    hunks: Iterable[tuple[int, int]],
    *,
    copies: bool = True,
    env: Mapping[str, str] | None = None,
) -> dict[int, str] | None:
    """line → the commit that last wrote it at `rev`, for the lines of `hunks` (first, count),
    following renames, moves and copies. None when git cannot answer (objects missing, path
    absent at `rev`). `env`: git's extra environment (a commit-graph to read, `CommitGraphs`).

    `revs` may bound the walk (`rev ^since^@`): blame then walks only the commits in between
    (seconds become milliseconds on a large history); a line older than the bound is given to a
    boundary commit, reported here as "" (unknown), never as that commit. `copies` adds git's
    detection of lines moved from other files (-C), which costs the most; renames of the whole
    file are followed without it."""
    ranges = [arg for a, n in sorted(set(hunks)) if n > 0 for arg in ("-L", f"{a},+{n}")]
    if not ranges:
        return {}
    done = git.run(
        clone,
        "blame",
        "--porcelain",
        "-w",
        "-M",
        *(["-C"] if copies else []),
        *ranges,
        *revs,
        "--",
        path,
        check=False,
        timeout=BLAME_TIMEOUT,
        env=env,
    )
    if not done.ok:
        return None
    found: dict[int, str] = {}
    boundary: set[str] = set()
    sha = ""
    for row in done.text.splitlines():
        match = _SHA.match(row)
        if match:
            sha = match.group(1)
            found[int(match.group(2))] = sha
        elif row == "boundary":
            boundary.add(sha)
    return {line: ("" if sha in boundary else sha) for line, sha in found.items()}


class Lines:
    """Lineage for pairs of PRs, reading patches and commits from the store on demand.

    `clones` maps a repository id to its clone path (None: patches only). Patches and blames are
    cached: one PR is the newer end of many pairs. Blame reads each clone with its commit-graph
    from `graphs` (written on the first blame run; none given: the clone as it is)."""

    def __init__(
        self,
        engine: Engine,
        clones: Mapping[int, str | None] | None = None,
        graphs: CommitGraphs | None = None,
    ) -> None:
        self.engine = engine
        self.clones = dict(clones or {})
        self.graphs = graphs or CommitGraphs(None)
        self._patches: dict[int, PatchLines] = {}
        self._blames: dict[tuple[int, str, str], dict[int, str]] = {}
        self._unblamable: set[tuple[int, str, str]] = set()
        self._files: dict[tuple[str, str, str], _FileFacts] = {}
        # Each (file name, text) read for code once: one version of a file sits under many PRs'
        # bases.
        self._whole_files: dict[tuple[str, str], WholeFile] = {}
        self._holds: dict[tuple[str, str], bool] = {}
        # One running `git cat-file` per clone reads the files asked about (`_show`), ended
        # with this object.
        self._readers = git.CatFiles()
        weakref.finalize(self, self._readers.close)
        self.blame_calls = 0
        # Answers fetched ahead (by `prefetch`), each used once by the call that asks for it.
        self._ahead: dict[BlameJob, dict[int, str] | None] = {}
        self._planning: list[BlameJob] | None = None

    def planner(self) -> Lines:
        """A twin that runs no git: it records the blame calls a pass over the pairs would make
        (answering each with unknown commits), so that they can be run at once beforehand.

        The answer's shape only decides which later calls are needed (which lines are known),
        and a real answer knows exactly the lines of the ranges asked for (git fails the call
        otherwise), as the placeholder does; a failed call only removes later calls."""
        twin = Lines(self.engine, self.clones, self.graphs)
        twin._patches = self._patches  # parsing is shared; it does not depend on blame
        twin._holds = self._holds  # so is ancestry, which the dry pass needs to see the same pairs
        twin._files = self._files  # and what each file holds (read and lexed once)
        twin._whole_files = self._whole_files
        twin._readers = self._readers
        twin._planning = []
        return twin

    @property
    def planned(self) -> list[BlameJob]:
        return list(self._planning or [])

    def prefetch(self, jobs: Sequence[BlameJob], workers: int = 0) -> None:
        """Run `jobs` with up to `workers` git processes at once (0: one per CPU); the sequential
        pass that follows takes its answers from here, so its decisions do not change."""
        todo = [job for job in dict.fromkeys(jobs) if job not in self._ahead]
        size = min(workers or os.cpu_count() or 1, len(todo))
        if size <= 1:
            return
        with ThreadPoolExecutor(max_workers=size, thread_name_prefix="blame") as pool:
            answers = pool.map(self._run_job, todo)
            self._ahead.update(zip(todo, answers, strict=True))

    def _blame_call(
        self, clone: str, revs: Sequence[str], path: str, hunks: set[tuple[int, int]], copies: bool
    ) -> dict[int, str] | None:
        job: BlameJob = (clone, tuple(revs), path, tuple(sorted(hunks)), copies)
        if self._planning is not None:
            self._planning.append(job)
            return {a + i: "" for a, n in hunks for i in range(n)}
        self.blame_calls += 1
        if job in self._ahead:
            return self._ahead[job]
        return self._run_job(job)

    def _run_job(self, job: BlameJob) -> dict[int, str] | None:
        clone, revs, path, hunks, copies = job
        return blamed_commits(clone, revs, path, hunks, copies=copies, env=self.graphs.env(clone))

    def _patch(self, pr_id: int) -> PatchLines:
        if pr_id not in self._patches:
            with self.engine.connect() as conn:
                diff = conn.scalar(select(PRPatch.diff).where(PRPatch.pr_id == pr_id)) or ""
            self._patches[pr_id] = parse_patch(diff)
        return self._patches[pr_id]

    def _commits(self, older: PRNode) -> set[str]:
        with self.engine.connect() as conn:
            shas = set(conn.scalars(select(PRCommit.sha).where(PRCommit.pr_id == older.id)))
        return shas | ({older.merge_sha} if older.merge_sha else set())

    def lineage(self, newer: PRNode, older: PRNode, *, blame: bool = True) -> Lineage:
        """The newer PR's rewrites of the older one's lines; `blame=False` reads patches only
        (cheap: for links whose decision does not depend on it)."""
        theirs = self._patch(older.id)
        mine = self._patch(newer.id)
        restored = len(_restored(theirs, mine))
        if not theirs.authored_anywhere():
            return Lineage(restored=restored)
        # Lines it only moves (it adds the same text elsewhere) touch nothing either.
        readded = mine.added_anywhere()
        shared = [
            r
            for r in mine.removed
            if r.text in theirs.authored.get(r.path, ()) and r.text not in readded
        ]
        touched = len(shared) - len(self._tests(newer, shared))
        found = self._rewrites(newer, older, theirs, mine, blame=blame)
        whole = found.lines > found.moved and not self._code_beyond(older, theirs, shared)
        inside = sum(
            1
            for path, above, below in mine.inserted
            if {above, below} <= theirs.authored.get(path, set())
        )
        return replace(found, touched=touched, restored=restored, whole=whole, inserted=inside)

    def _code_beyond(self, older: PRNode, theirs: PatchLines, rewritten: list[Removed]) -> bool:
        """Whether the older PR wrote code besides the `rewritten` lines: substantive lines in
        code files, outside a Rust file's test module (read at its merge, where the clone is at
        hand)."""
        done = {r.text for r in rewritten}
        clone = self.clones.get(older.repo_id)
        merged = (clone, older.merge_sha) if clone and older.merge_sha else None
        for path, placed in theirs.added_at.items():
            if not counts_as_code(path):
                continue
            authored = theirs.authored.get(path, set())
            for line, text in placed:
                if text not in authored or text in done or not substantive(text):
                    continue
                if merged is None or not self._in_tests(*merged, path, line):
                    return True
        return False

    def branch_holds(self, later: PRNode, earlier: PRNode) -> bool:
        """Whether the later PR's own branch (its merge commit's second parent) holds the earlier
        PR's merge: the branch merged the main branch, or was rebased, after the earlier PR
        landed, so the later PR's code was finished on top of it. False for a squash merge (one
        parent) and where the clone is not at hand."""
        clone = self.clones.get(later.repo_id)
        if not clone or not later.merge_sha or not earlier.merge_sha:
            return False
        key = (later.merge_sha, earlier.merge_sha)
        if key not in self._holds:
            head = f"{later.merge_sha}^2"
            asked = git.answer(clone, "merge-base", "--is-ancestor", earlier.merge_sha, head)
            self._holds[key] = asked is True
        return self._holds[key]

    def undoes(self, newer: PRNode, older: PRNode) -> bool:
        """Whether the newer PR's patch is the older one's turned around (a revert, whatever its
        title says: vite's "fix: revert resolve nested dependencies #3753")."""
        return undoes(self._patch(newer.id), self._patch(older.id))

    def repeats(self, newer: PRNode, older: PRNode) -> bool:
        """Whether the newer PR's patch is the older one's again (see `repeats`)."""
        return repeats(self._patch(newer.id), self._patch(older.id))

    def _rewrites(
        self, newer: PRNode, older: PRNode, theirs: PatchLines, mine: PatchLines, *, blame: bool
    ) -> Lineage:
        texts = theirs.authored_anywhere()
        matches = [r for r in mine.removed if r.text in texts and substantive(r.text)]
        if not matches:
            return Lineage()
        readded = mine.added_anywhere()
        clone = self.clones.get(newer.repo_id) if blame else None
        if clone and newer.base_sha:
            # Moves between files need git's costly copy detection; a line the older PR added in
            # the very file the newer PR removes it from does not.
            moved = any(r.text not in theirs.authored.get(r.path, ()) for r in matches)
            blamed = self._blame(clone, newer, older, matches, copies=moved)
            if blamed is not None:
                commits = self._commits(older)
                hits = [r for r in matches if blamed.get((r.path, r.line)) in commits]
                hits = self._in_code(clone, newer.base_sha, hits)
                tests = self._tests(newer, hits)
                return _lineage(hits, "blame", readded, tests, mine.carried_code)
        same_file = [r for r in matches if r.text in theirs.authored.get(r.path, ())]
        clone = self.clones.get(newer.repo_id)
        if clone and newer.base_sha:
            same_file = self._in_code(clone, newer.base_sha, same_file)
        tests = self._tests(newer, same_file)
        return _lineage(same_file, "patch", readded, tests, mine.carried_code)

    def _in_code(self, clone: str, rev: str, lines: list[Removed]) -> list[Removed]:
        """Those of `lines` that hold code in the whole file at `rev`, as its lexer reads it: a
        line alone cannot tell that it sits in a block comment or a docstring (arrow-rs #7846
        fixed a typo in a JSON sample inside a `/* … */` of #7808's benchmark)."""
        return [r for r in lines if self._file(clone, rev, r.path).code(r.line)]

    def _tests(self, newer: PRNode, lines: list[Removed]) -> list[Removed]:
        """Those of `lines` (removed by `newer`) that are test code; a Rust file's test module is
        found only where the clone is at hand."""
        clone = self.clones.get(newer.repo_id)
        if clone and newer.base_sha:
            return [r for r in lines if self._in_tests(clone, newer.base_sha, r.path, r.line)]
        return [r for r in lines if _test_file(r.path)]

    def _in_tests(self, clone: str, rev: str, path: str, line: int) -> bool:
        """Whether line `line` of `path` at `rev` is test code: in a test file, or in a Rust
        file's test module (`#[cfg(test)] mod tests { … }`, by convention at the end of the file)."""
        if _test_file(path):
            return True
        if not path.endswith(".rs"):
            return False
        start = self._file(clone, rev, path).test_start
        return start is not None and line >= start

    def _file(self, clone: str, rev: str, path: str) -> _FileFacts:
        key = (clone, rev, path)
        if key not in self._files:
            text = self._show(clone, f"{rev}:{path}")
            self._files[key] = _FileFacts(path, text, self._whole_files)
        return self._files[key]

    def _show(self, clone: str, name: str) -> str | None:
        """A file's text (`name`: `rev:path`) as `git show` gives it (None where it fails), read
        by the clone's running `git cat-file`; what is no blob there (a directory, a submodule,
        nothing) is asked of `git show` itself."""
        found = self._readers.of(clone).read(name)
        if found is not None and found[0] == "blob":
            return found[1].decode("utf-8", errors="replace")
        shown = git.run(clone, "show", name, check=False)
        return shown.text if shown.ok else None

    def _blame(
        self, clone: str, newer: PRNode, older: PRNode, lines: list[Removed], *, copies: bool
    ) -> dict[tuple[str, int], str] | None:
        """(path, line) → blamed commit for `lines` at the newer PR's base; None if git could not.

        Blame walks back only to the older PR's base (`^base^@` leaves the base in the walk, so
        the older PR's own commits are never boundary commits): anything older is not the older
        PR's line. Each line is blamed once per older base (one PR is the newer end of many pairs)."""
        since = older.base_sha
        revs = [str(newer.base_sha), *([f"^{since}^@"] if since else [])]
        by_path: dict[str, list[Removed]] = defaultdict(list)
        for r in lines:
            by_path[r.path].append(r)
        found: dict[tuple[str, int], str] = {}
        for path, removed in by_path.items():
            key = (newer.id, path, f"{since or ''}{'+C' if copies else ''}")
            if key in self._unblamable:
                return None
            known = self._blames.setdefault(key, {})
            missing = {r.hunk for r in removed if r.line not in known}
            if missing:
                answer = self._blame_call(clone, revs, path, missing, copies)
                if answer is None:
                    self._unblamable.add(key)
                    return None
                known.update(answer)
                known.update({r.line: "" for r in removed if r.line not in known})
            found.update(((path, r.line), known[r.line]) for r in removed)
        return found


# Where a file holds none of these, no line that reads as code alone (`substantive`) sits in a
# comment or a docstring, and lexing it could change nothing.
BLOCK_OPENERS = ("/*", '"""', "'''", "<!--", "{-", "--[[", "=begin")


class _FileFacts:
    """What lineage asks of one file at one revision: where a Rust test module starts, and which
    lines hold code: not those an import spans (`import_lines`), nor those in a comment, a
    docstring or a string literal of any language (`evidence_line_flags`: lexed on first ask, the
    line alone unless the file has a block comment or a string spanning lines to be inside of; `lexed` holds each text once per file name, lexed whole only where a line needs
    it). No line of a file its first lines mark generated is code: a parser regenerated by two
    grammar changes is no work of one on the other (coffeescript #5319 and #5293 meet only in
    `parser.js`, "generated by jison"). Unknown (the file could not be read): every line is
    code, none is a test."""

    def __init__(
        self, path: str, text: str | None, lexed: dict[tuple[str, str], WholeFile]
    ) -> None:
        self.path = path
        self.text = text
        tests_at = tests_in_file(path)
        self.test_start = tests_at(text) if text and tests_at else None
        self._lexed = lexed
        self._imports: frozenset[int] | None = None
        self._rows: list[str] | None = None
        # No block comment or string spanning lines to be inside of: a line is read alone.
        self._plain: bool | None = None
        self.generated = generated_text(text)

    def code(self, line: int) -> bool:
        text = self.text
        if text is None:
            return True
        if self.generated:
            return False
        if self._imports is None:
            self._imports = import_lines(text)
        if line in self._imports:
            return False
        if self._plain is None:
            openers = BLOCK_OPENERS + string_openers(lexer_for(self.path))
            self._plain = not any(opener in text for opener in openers)
        if self._plain:
            rows = self._rows = self._rows or text.split("\n")
            row = rows[line - 1] if 0 < line <= len(rows) else ""
            return evidence_line_flags([row], lexer_for(self.path))[0] if row.strip() else True
        key = (self.path.rsplit("/", 1)[-1], text)
        if key not in self._lexed:
            self._lexed[key] = WholeFile(text, lexer_for(self.path))
        return self._lexed[key].line_is_evidence(line)


def _lineage(
    hits: list[Removed], via: str, readded: set[str], tests: list[Removed], carried_code: int
) -> Lineage:
    """Lineage of the code lines among `hits` (removed by the newer PR, which carries
    `carried_code` lines of code in all); those in `tests` are counted apart.

    A line the newer PR carries as it was (re-indented, re-wrapped, reformatted) counts as moved:
    a formatter run over code just written changes nobody's work (dialoguer #126 runs rustfmt
    over the prompt #124 wrote). A line it carries by an edit made over and over counts as moved
    where its edits go over the older PR's code in passing: fewer than `MIN_AIMED_SHARE` of the
    code lines the newer PR carries are the older PR's (scipy #416 edits 31 lines the same way, 3
    of them #415's). Where most are, the edit is aimed at the older PR's code (ruff #10254
    interpolates the condition into the four messages #8613 wrote, each arm edited alike): a
    rewrite like any other."""
    code = [r for r in hits if r not in tests]
    if not hits:
        return Lineage()
    carried = [r for r in code if r.carried]
    in_passing = len(carried) < MIN_AIMED_SHARE * carried_code
    moved = sum(
        1 for r in code if (r.carried and (in_passing or not r.edited)) or r.text in readded
    )
    test_code = sum(1 for r in tests if _test_source(r.path))
    return Lineage(len(code), via, moved, tests=len(tests), test_code=test_code)


def _restored(theirs: PatchLines, mine: PatchLines) -> set[str]:
    """Code texts the older PR removed and the newer one writes back: a revert of its removal, a
    re-land after a revert, a function brought back on top of the older PR's new API."""
    gone = {r.text for r in theirs.removed if counts_as_code(r.path) and substantive(r.text)}
    return gone & mine.authored_anywhere()


UNDO_SHARE = 0.8  # of the older PR's code lines a revert must undo, and of its own it must spend so
MIN_UNDONE = 3  # fewer changed lines undo by accident


TAKEN_BACK_SHARE = 0.8  # of the code a partial revert writes, the share the older PR removed
TAKEN_BACK_OWN = 0.5  # of the code it removes, the share that is the older PR's
MIN_TAKEN_BACK = 5  # fewer lines written back are a shared idiom as often as a revert


def undoes(mine: PatchLines, theirs: PatchLines) -> bool:
    """Whether `mine` removes what `theirs` wrote and writes back what it removed (code lines),
    and does little else; or takes back part of it (`takes_back`)."""
    whole = _matches(
        (_code_texts(theirs.authored), _removed_code(theirs)),
        (_removed_code(mine), _code_texts(mine.added)),
    )
    return whole or takes_back(mine, theirs)


def takes_back(mine: PatchLines, theirs: PatchLines) -> bool:
    """Whether `mine` reverts a part of `theirs`: nearly all the code it writes is code the older
    PR removed, and most of the code it removes is the older PR's. ollama #1383 puts the CLI back
    on /api/generate and leaves the rest of #991's chat API; astro #11733 ("Revert parseArgs
    change") takes yargs-parser back in the CLI where #11645 had taken it out."""
    written = _code_texts(mine.added)
    restored = {t for t in written & _removed_code(theirs) if substantive(t)}
    if len(restored) < max(MIN_TAKEN_BACK, TAKEN_BACK_SHARE * len(written)):
        return False
    removed = _removed_code(mine)
    return len(removed & _code_texts(theirs.authored)) >= TAKEN_BACK_OWN * len(removed)


def repeats(mine: PatchLines, theirs: PatchLines) -> bool:
    """Whether `mine` makes the change `theirs` made once more: writes what it wrote and removes
    what it removed (code lines), and does little else. A re-submission (serde #316 of #302) or a
    change applied again after a bad rebase undid it (numpy #10017 of #9667) builds on nothing of
    the first: it is the same task twice."""
    return _matches(
        (_code_texts(theirs.added), _removed_code(theirs)),
        (_code_texts(mine.added), _removed_code(mine)),
    )


def _matches(theirs: tuple[set[str], set[str]], mine: tuple[set[str], set[str]]) -> bool:
    """Whether the two sides of the older change (what it added, what it removed) meet the two
    sides of the newer one, in that order, for `UNDO_SHARE` of each change: the older one has at
    least `MIN_UNDONE` lines."""
    size = len(theirs[0]) + len(theirs[1])
    if size < MIN_UNDONE:
        return False
    shared = len(theirs[0] & mine[0]) + len(theirs[1] & mine[1])
    return shared >= UNDO_SHARE * size and shared >= UNDO_SHARE * (len(mine[0]) + len(mine[1]))


def _removed_code(patch: PatchLines) -> set[str]:
    return {r.text for r in patch.removed if counts_as_code(r.path)}


def _code_texts(texts: Mapping[str, set[str]]) -> set[str]:
    return {t for path, found in texts.items() if counts_as_code(path) for t in found}


# Where Pygments keeps the lexers of data, markup and configuration (and plain text).
_DATA_LEXER_MODULES = tuple(
    f"pygments.lexers.{name}" for name in ("data", "markup", "configs", "html", "special")
)


def _test_source(path: str) -> bool:
    """Whether a line of the older PR's tests in `path` is test code: a Rust source's test module
    (the file counts as code), or a test file a lexer reads as a programming language (no
    snapshot or expected output, which no lexer knows, and no JSON, YAML or Markdown)."""
    if counts_as_code(path):
        return True
    if not is_test_path(path):
        return False
    lexer = lexer_for(path)
    return lexer is not None and not type(lexer).__module__.startswith(_DATA_LEXER_MODULES)


def _test_file(path: str) -> bool:
    """A file whose lines are no code a later PR builds on: tests, fixtures, docs, config."""
    return not counts_as_code(path)
