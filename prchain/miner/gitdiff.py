"""Patches from a local clone: one diff on demand, or many streamed through one `git diff-tree`.

Real snapshots lack objects now and then; a diff that cannot be made is reported as
"unavailable", never raised. Binary files are flagged, not inlined (git prints "Binary files ...
differ"). Patches are decoded as UTF-8 with replacement so odd encodings never stop a run.
"""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Generator, Iterator, Sequence
from dataclasses import dataclass, field
from io import BufferedReader
from typing import cast

from prchain.core import git
from prchain.miner.source import FileRecord

# quotepath=false keeps non-ASCII paths readable; no external diff drivers or colour, ever.
GIT_DIFF_OPTS = ("-c", "core.quotepath=false", "-c", "diff.noprefix=false")
DIFF_FLAGS = ("-r", "-M", "--no-color", "--no-ext-diff", "--no-textconv", "-p")


@dataclass
class PatchResult:
    patch: str | None  # unified diff text; None if unavailable or too large
    files: list[FileRecord] = field(default_factory=list)
    status: str = "ok"  # ok | unavailable (missing objects) | too_large


def patch_between(repo_path: str, base_sha: str, head_sha: str, max_bytes: int) -> PatchResult:
    """The diff base..head. Missing objects → "unavailable"; more than max_bytes → "too_large"."""
    done = git.run(
        repo_path, "diff", *DIFF_FLAGS, base_sha, head_sha, "--", options=GIT_DIFF_OPTS, check=False
    )
    if not done.ok:
        return PatchResult(None, [], "unavailable")
    return result_from_bytes(done.stdout, max_bytes)


def result_from_bytes(raw: bytes, max_bytes: int) -> PatchResult:
    text = raw.decode("utf-8", errors="replace")
    files = parse_files(text)
    if len(raw) > max_bytes:
        return PatchResult(None, files, "too_large")
    return PatchResult(text, files, "ok")


# ---------------------------------------------------------------- parsing a unified git diff


def parse_files(patch: str) -> list[FileRecord]:
    """Per-file status, line counts, binary flag and rename source, from the diff text alone."""
    if not patch:
        return []
    sections = patch.split("\ndiff --git ")
    first = sections[0]
    sections[0] = first[len("diff --git ") :] if first.startswith("diff --git ") else first
    return [_file_from_section(s) for s in sections if s and not s.startswith("\n")]


def _file_from_section(section: str) -> FileRecord:
    header, sep, hunks = section.partition("\n@@")
    lines = header.split("\n")
    record = FileRecord("")
    old: str | None = None
    for line in lines[1:]:
        old = _read_header_line(line, record, old)
    record.path = record.path or old or _path_from_diff_line(lines[0])
    record.previous_path = old if record.status == "renamed" else None
    record.additions = hunks.count("\n+") if sep else 0
    record.deletions = hunks.count("\n-") if sep else 0
    return record


def _read_header_line(line: str, record: FileRecord, old: str | None) -> str | None:
    """Update `record` from one extended header line; return the old path seen so far."""
    if line.startswith("new file mode"):
        record.status = "added"
    elif line.startswith("deleted file mode"):
        record.status = "removed"
    elif line.startswith("rename from "):
        record.status, old = "renamed", _unquote(line[12:])
    elif line.startswith("rename to "):
        record.path = _unquote(line[10:])
    elif line.startswith("Binary files ") or line == "GIT binary patch":
        record.is_binary = True
    elif line.startswith("+++ b/") and not record.path:
        record.path = _unquote(line[6:].rstrip("\t"))
    elif line.startswith("--- a/") and old is None:
        old = _unquote(line[6:].rstrip("\t"))
    return old


def _path_from_diff_line(line: str) -> str:
    """`a/P b/P` (same path: mode-only or binary changes) → P."""
    if line.startswith('"'):
        return _unquote(line.split('" ', 1)[0] + '"')[2:]
    n = (len(line) - 5) // 2
    return line[2 : 2 + n]


def _unquote(text: str) -> str:
    """Git's C-style quoting of odd paths ("a\\tb", octal escapes for bytes)."""
    if not (text.startswith('"') and text.endswith('"')):
        return text
    raw = text[1:-1].encode("latin-1", errors="replace").decode("unicode_escape", errors="replace")
    return raw.encode("latin-1", errors="replace").decode("utf-8", errors="replace")


# ---------------------------------------------------------------- many patches, one process


def iter_patches(
    repo_path: str, pairs: Sequence[tuple[str, str | None]], max_bytes: int
) -> Iterator[tuple[str, PatchResult]]:
    """(head, base) pairs → (head, PatchResult) in order, streamed through `git diff-tree --stdin`.

    base None means a root commit (diffed against the empty tree). When git dies on a missing
    object, the commit it was on is retried alone (and so marked unavailable) and the batch
    resumes after it.
    """
    start = 0
    while start < len(pairs):
        done = yield from _run_batch(repo_path, pairs, start, max_bytes)
        if done >= len(pairs):
            return
        head, base = pairs[done]
        yield head, _single(repo_path, head, base, max_bytes)
        start = done + 1


def _single(repo_path: str, head: str, base: str | None, max_bytes: int) -> PatchResult:
    if base is None:
        base = _empty_tree(repo_path)
    return patch_between(repo_path, base, head, max_bytes)


def _empty_tree(repo_path: str) -> str:
    done = git.run(repo_path, "hash-object", "-t", "tree", "--stdin", input=b"", check=False)
    return done.text.strip() or git.EMPTY_TREE


def _run_batch(
    repo_path: str, pairs: Sequence[tuple[str, str | None]], start: int, max_bytes: int
) -> Generator[tuple[str, PatchResult], None, int]:
    """Yield results from `start` on; return the index of the first commit not yielded.

    diff-tree prints each commit's sha on a line of its own before that commit's diff (--always
    even when the diff is empty), so the output is cut at the next expected sha.
    """
    stdin = "".join(f"{h} {b}\n" if b else f"{h}\n" for h, b in pairs[start:]).encode()
    with git.stream(
        repo_path,
        "diff-tree",
        "--stdin",
        "--always",
        "--root",
        *DIFF_FLAGS,
        stdin=True,
        options=GIT_DIFF_OPTS,
    ) as proc:
        _feed(proc, stdin)
        assert proc.stdout is not None
        cutter = _Cutter(pairs, start)
        stdout = cast(BufferedReader, proc.stdout)
        while chunk := stdout.read1(1 << 20):
            for index, raw in cutter.feed(chunk):
                yield pairs[index][0], result_from_bytes(raw, max_bytes)
        ok = proc.wait() == 0
    if ok and cutter.index >= start:
        yield pairs[cutter.index][0], result_from_bytes(cutter.rest(), max_bytes)
        return cutter.index + 1
    # git died: the commit whose output was cut short (or the next one) is redone alone.
    return max(cutter.index, start)


class _Cutter:
    """Splits diff-tree's stream into per-commit byte strings without looking at every line."""

    def __init__(self, pairs: Sequence[tuple[str, str | None]], start: int) -> None:
        self.pairs, self.start, self.index = pairs, start, start - 1
        self.data = bytearray(b"\n")  # a leading newline so every header is preceded by one
        self.scan = 0

    def _marker(self) -> bytes | None:
        nxt = self.index + 1
        return f"\n{self.pairs[nxt][0]}\n".encode() if nxt < len(self.pairs) else None

    def feed(self, chunk: bytes) -> Iterator[tuple[int, bytes]]:
        self.data.extend(chunk)
        while (marker := self._marker()) is not None:
            found = self.data.find(marker, self.scan)
            if found < 0:
                self.scan = max(0, len(self.data) - len(marker))
                return
            body = bytes(self.data[1 : found + 1])
            del self.data[: found + len(marker) - 1]
            self.scan = 0
            if self.index >= self.start:
                yield self.index, body
            self.index += 1

    def rest(self) -> bytes:
        return bytes(self.data[1:])


def _feed(proc: subprocess.Popen[bytes], data: bytes) -> None:
    """Write stdin from a thread so a large input cannot deadlock against a full stdout pipe."""

    def write() -> None:
        assert proc.stdin is not None
        try:
            proc.stdin.write(data)
            proc.stdin.close()
        except (BrokenPipeError, OSError):
            pass

    threading.Thread(target=write, daemon=True).start()
