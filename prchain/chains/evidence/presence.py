"""Which names the trees of many commits hold, read in one walk of the history.

`prchain.chains.evidence.symbols.present_at` asks `git grep` whether an older PR's new names were already in the
code at its base: one grep of a whole tree per older PR (709 on ruff, 0.6 s each: most of the git
time of a cold `chains build`). Consecutive bases share almost every line, so this module reads
each line once instead. It reads the tree of the earliest base asked about, then follows the
first-parent history to the latest base with `git log -p -U0` (changed lines only), keeping for
every file how often it holds each name asked about anywhere. At each base asked about, a name's
files are those where that count is above zero.

The answer is git grep's, as `present_at` asks it (`-w -I`, prose files left out): a word is a
run of ASCII letters, digits and underscores; a binary blob holds nothing (a NUL byte in its
first 8,000 bytes, or a diff git shows as binary); a submodule is not entered. Where git cannot
read a blob on the way (a snapshot that lacks it), the walk stops there and the bases after it
are left out of the answer, for `git grep` to answer.
"""

from __future__ import annotations

import re
import subprocess
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping
from functools import lru_cache
from typing import IO

from prchain.core import git

_WORD_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
# Every byte that is not a word's made a space: `split()` then gives git grep's words, as a
# regex's `findall` of `[A-Za-z0-9_]+` does, at twice its speed.
_NOT_WORDS_SPACED = bytes(byte if byte in _WORD_BYTES else 0x20 for byte in range(256))
_TEXT_WORD = re.compile(r"[A-Za-z0-9_]+")
BINARY_PROBE = 8000  # bytes git reads to tell a binary blob (`buffer_is_binary`)
SUBMODULE = b"160000"
NO_BLOB = "0" * 40

Found = dict[str, dict[str, str]]  # name → {path: blob id}, of the names some file holds


def names_in_history(
    clone: str,
    asked: Mapping[str, Iterable[str]],
    skip_path: Callable[[str], bool],
    excludes: Iterable[str] = (),
) -> dict[str, Found]:
    """For each commit of `asked` (sha → the names asked about there) on the first-parent history
    of the clone's HEAD, the files holding each name (a name in no file is left out). A commit
    off that history, or past a blob git could not read, is left out of the answer (ask `git
    grep`). `skip_path` leaves files out; `excludes` are the same as git pathspecs."""
    order = _first_parent(clone)
    on_line = sorted((order[sha], sha) for sha in asked if sha in order)
    if not on_line:
        return {}
    wanted = {name.encode() for names in asked.values() for name in names}
    first, last = on_line[0][1], on_line[-1][1]
    state = _State(wanted, git.stream(clone, "cat-file", "--batch", stdin=True))
    answers: dict[str, Found] = {}
    waiting = iter(on_line)
    due = next(waiting, None)
    try:
        state.start(_tree(clone, first, skip_path))
        # A commit `git log` leaves out (it changed only files left out) changed nothing here:
        # each base is answered once every commit up to it is applied.
        for sha in _walk(clone, first, last, skip_path, excludes, state):
            reached = order[sha] if sha else len(order)
            while due is not None and due[0] < reached:
                answers[due[1]] = state.found(asked[due[1]])
                due = next(waiting, None)
    finally:
        state.close()
    return answers


class _State:
    """The tree being walked: per file its blob and how often it holds each wanted name, and per
    name the files that hold it."""

    def __init__(self, wanted: set[bytes], reader: subprocess.Popen[bytes]) -> None:
        self.wanted = wanted
        self.reader = reader
        self.blobs: dict[str, str] = {}
        self.counts: dict[str, Counter[bytes]] = {}
        self.where: dict[bytes, set[str]] = {}

    def start(self, files: Mapping[str, str]) -> None:
        for path, blob in files.items():
            self.replace(path, blob)

    def replace(self, path: str, blob: str | None) -> None:
        """The path now holds `blob` whole (None: it is gone)."""
        held = self.counts.get(path, Counter())
        self.change(path, Counter({name: -count for name, count in held.items()}))
        self.counts.pop(path, None)
        self.blobs.pop(path, None)
        if blob is not None:
            self.blobs[path] = blob
            self.change(path, self._names(self._read(blob)))

    def edit(self, path: str, blob: str, removed: list[bytes], added: list[bytes]) -> None:
        """The path's lines `removed` became `added`, and it now holds `blob`."""
        self.blobs[path] = blob
        delta = self._names(b"\n".join(added))
        delta.subtract(self._names(b"\n".join(removed)))
        self.change(path, delta)

    def change(self, path: str, delta: Counter[bytes]) -> None:
        counts = self.counts.setdefault(path, Counter())
        for name, by in delta.items():
            if not by:
                continue
            before = counts[name]
            counts[name] = after = before + by
            if before <= 0 < after:
                self.where.setdefault(name, set()).add(path)
            elif after <= 0 < before:
                self.where[name].discard(path)
            if after <= 0:
                del counts[name]

    def found(self, names: Iterable[str]) -> Found:
        found: Found = {}
        for name in names:
            paths = self.where.get(name.encode())
            if paths:
                found[name] = {path: self.blobs[path] for path in paths}
        return found

    def _names(self, text: bytes) -> Counter[bytes]:
        # Most words are not wanted: only the wanted ones are counted (filtered in C).
        words = text.translate(_NOT_WORDS_SPACED).split()
        return Counter(filter(self.wanted.__contains__, words))

    def _read(self, blob: str) -> bytes:
        """A blob's text (empty for a binary or missing one), from the running `cat-file`."""
        assert self.reader.stdin is not None and self.reader.stdout is not None
        self.reader.stdin.write(f"{blob}\n".encode())
        self.reader.stdin.flush()
        header = self.reader.stdout.readline().split()
        if len(header) != 3:  # "<id> missing"
            return b""
        data = self.reader.stdout.read(int(header[2]) + 1)[:-1]
        return b"" if b"\0" in data[:BINARY_PROBE] else data

    def close(self) -> None:
        if self.reader.stdin is not None:
            self.reader.stdin.close()
        try:
            self.reader.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.reader.kill()


def _first_parent(clone: str) -> dict[str, int]:
    """Each commit of HEAD's first-parent history → its place, oldest first."""
    listed = git.run(clone, "rev-list", "--first-parent", "--reverse", "HEAD", check=False)
    return {sha: i for i, sha in enumerate(listed.text.split())} if listed.ok else {}


def _tree(clone: str, rev: str, skip_path: Callable[[str], bool]) -> dict[str, str]:
    """path → blob of the files of `rev`'s tree that can hold a name."""
    return {path: blob for path, blob in git.tree_blobs(clone, rev).items() if not skip_path(path)}


def _walk(
    clone: str,
    first: str,
    last: str,
    skip_path: Callable[[str], bool],
    excludes: Iterable[str],
    state: _State,
) -> Iterator[str]:
    """Apply each commit after `first` up to `last` to `state`: yield each one's sha before its
    changes are applied, then "" once every one is. Where git stops (a blob it cannot read), the
    walk stops without the last."""
    proc = git.stream(
        clone, "log", "--first-parent", "--reverse", "-p", "-U0", "--no-renames", "--full-index",
        "--no-ext-diff", "--no-textconv", "--no-color", "--src-prefix=a/", "--dst-prefix=b/",
        "--diff-merges=first-parent", "--format=%x01%H", f"{first}..{last}",
        "--", ".", *excludes,
    )  # fmt: skip
    assert proc.stdout is not None
    try:
        for sha, patch in _commits(proc.stdout):
            yield sha
            for section in _sections(patch):
                path = _header_path(section)
                if path is not None and not skip_path(path):
                    _apply(state, path, section)
    finally:
        proc.stdout.close()
        failed = proc.wait() != 0
    if not failed:
        yield ""


READ_BLOCK = 1 << 20


def _commits(stream: IO[bytes]) -> Iterator[tuple[str, bytes]]:
    """(sha, patch) of each commit of `git log --format=%x01%H -p`'s output. The output (the
    history's every changed line, 370 MB on ruff) is read in blocks and cut with `bytes`
    methods, not line by line in Python: a line of a patch begins with `\x01` only where a
    commit begins."""
    pending = bytearray()
    while block := stream.read(READ_BLOCK):
        pending += block
        # Only the new block (and the newline before it) can hold a new commit's start.
        cut = pending.rfind(b"\n\x01", max(0, len(pending) - len(block) - 1))
        if cut >= 0:
            yield from _split_commits(bytes(pending[: cut + 1]))
            del pending[: cut + 1]
    yield from _split_commits(bytes(pending))


def _split_commits(text: bytes) -> Iterator[tuple[str, bytes]]:
    """(sha, patch) of each whole commit in `text`, each begun by `\x01`."""
    for commit in text.split(b"\n\x01"):
        sha, _, patch = commit.lstrip(b"\x01").partition(b"\n")
        if sha.strip():
            yield sha.strip().decode(), patch


def _sections(patch: bytes) -> list[bytes]:
    """One commit's patch cut into its files' parts, each from the paths of its `diff --git`
    line on."""
    return (b"\n" + patch).split(b"\ndiff --git ")[1:]


# A patch line a hunk removes or adds, with the newline before it (the hunks are read with one
# before them): a pattern that begins with a literal is tried only where that literal stands.
_REMOVED = re.compile(rb"\n-([^\n]*)")
_ADDED = re.compile(rb"\n\+([^\n]*)")


def _apply(state: _State, path: str, section: bytes) -> None:
    """Apply one file's part of a commit's patch to `state`."""
    head, at, hunks = section.partition(b"\n@@")
    blob, gone, binary, submodule = "", False, False, False
    for line in head.split(b"\n")[1:]:
        if line.startswith((b"index ", b"new file mode", b"deleted file mode")):
            submodule |= line.rstrip().endswith(SUBMODULE)
            if line.startswith(b"index "):
                blob = line.split()[1].split(b"..")[1].decode()
            gone |= line.startswith(b"deleted file mode")
        elif line.startswith(b"Binary files "):
            binary = True
    if submodule or not blob:  # a submodule, or a change of mode only
        return
    if gone or blob == NO_BLOB:
        state.replace(path, None)
    elif binary:
        state.replace(path, blob)  # read whole: a binary blob holds nothing
    else:
        hunks = at + hunks  # "\n@@ …", then the hunks' lines, each after its newline
        state.edit(path, blob, _REMOVED.findall(hunks), _ADDED.findall(hunks))


def _header_path(section: bytes) -> str | None:
    """The path of a section's `diff --git a/P b/P` line (both the same: renames are off),
    quoted or not."""
    end = section.find(b"\n")
    rest = section[: end if end >= 0 else len(section)]
    if rest.startswith(b'"'):
        end = _quoted_end(rest)
        path = _unquote(rest[1:end])
    else:
        path = rest[: (len(rest) - 1) // 2]
    return path[2:].decode(errors="surrogateescape") if path.startswith(b"a/") else None


def _quoted_end(text: bytes) -> int:
    """Index of the quote closing the C-quoted string that opens `text`."""
    at = 1
    while at < len(text) and text[at : at + 1] != b'"':
        at += 2 if text[at : at + 1] == b"\\" else 1
    return at


_ESCAPES = {b"n": b"\n", b"t": b"\t", b'"': b'"', b"\\": b"\\", b"a": b"\a", b"b": b"\b"}
_ESCAPES |= {b"f": b"\f", b"r": b"\r", b"v": b"\v"}


def _unquote(text: bytes) -> bytes:
    """git's C-style quoting undone (`\\t`, `\\"`, octal bytes `\\303\\251`)."""
    out, at = bytearray(), 0
    while at < len(text):
        char = text[at : at + 1]
        if char != b"\\":
            out += char
            at += 1
        elif text[at + 1 : at + 2].isdigit():
            out.append(int(text[at + 1 : at + 4], 8))
            at += 4
        else:
            out += _ESCAPES.get(text[at + 1 : at + 2], text[at + 1 : at + 2])
            at += 2
    return bytes(out)


@lru_cache(maxsize=4096)
def _words_pattern(words: tuple[str, ...]) -> re.Pattern[str]:
    """One of `words` as a whole word (`git grep -w`), compiled once: a walk asks about the same
    names in each version of a file, more patterns than `re` keeps compiled."""
    return re.compile(r"(?<![A-Za-z0-9_])(?:" + "|".join(words) + r")(?![A-Za-z0-9_])")


def name_lines(text: str, names: Iterable[str]) -> dict[str, set[int]]:
    """Each of `names` that `text` holds as a whole word → the lines (1-based) that hold it, as
    `git grep -n -w` finds them. One pass of one alternation over the text, not every word of it
    indexed: a walk asks about a few names per file, of files of 10,000 lines."""
    wanted = tuple(sorted(name for name in set(names) if _TEXT_WORD.fullmatch(name)))
    if not wanted:
        return {}
    pattern = _words_pattern(wanted)
    lines: dict[str, set[int]] = {}
    row, counted = 1, 0  # the line number at offset `counted`, moved forward match by match
    for match in pattern.finditer(text):
        row += text.count("\n", counted, match.start())
        counted = match.start()
        lines.setdefault(match.group(), set()).add(row)
    return lines
