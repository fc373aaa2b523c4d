"""The one way prchain runs git on the host: the git CLI, with one rule for errors, timeouts and
credentials.

Why the CLI and not GitPython: every heavy use (streaming `diff-tree --stdin`, `log -p`, mirrors,
`archive`) is a plain git process anyway, and one runner keeps one set of rules. Never prompting for
credentials matters: a private or missing repository must fail, not hang.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from prchain.core.errors import GitError

QUIET_ENV = {"GIT_TERMINAL_PROMPT": "0", "GIT_ASKPASS": "true", "SSH_ASKPASS": "true"}
EMPTY_TREE = (
    "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # sha1 of the empty tree, in every sha1 repo
)
Where = str | Path | None


@dataclass(frozen=True)
class GitResult:
    returncode: int
    stdout: bytes
    stderr: bytes

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    @property
    def text(self) -> str:
        return self.stdout.decode("utf-8", errors="replace")


def command(repo: Where, args: Sequence[str], options: Sequence[str] = ()) -> list[str]:
    """argv of `git [options] [-C repo] args…`."""
    return ["git", *options, *(["-C", str(repo)] if repo is not None else []), *args]


def environment(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    return {**os.environ, **QUIET_ENV, **(extra or {})}


def run(
    repo: Where,
    *args: str,
    input: bytes | None = None,
    check: bool = True,
    timeout: float | None = None,
    env: Mapping[str, str] | None = None,
    options: Sequence[str] = (),
) -> GitResult:
    """Run git to completion. `check` turns a non-zero exit into GitError with git's own words."""
    argv = command(repo, args, options)
    try:
        done = subprocess.run(
            argv,
            input=input,
            capture_output=True,
            env=environment(env),
            timeout=timeout,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise GitError(f"{_describe(repo, args)} took longer than {timeout:g} s") from None
    except OSError as exc:
        raise GitError(f"{_describe(repo, args)} could not start: {exc}") from None
    result = GitResult(done.returncode, done.stdout, done.stderr)
    if check and not result.ok:
        words = result.stderr.decode(errors="replace").strip()[-400:]
        raise GitError(f"{_describe(repo, args)} failed: {words}")
    return result


def output(repo: Where, *args: str, **kwargs: object) -> str:
    """git's stdout as text; raises GitError when git fails."""
    return run(repo, *args, **kwargs).text  # type: ignore[arg-type]


def succeeds(repo: Where, *args: str, timeout: float | None = None) -> bool:
    """Whether git exits 0 (for questions such as `merge-base --is-ancestor`)."""
    return run(repo, *args, check=False, timeout=timeout).ok


def answer(repo: Where, *args: str, timeout: float | None = None) -> bool | None:
    """A yes/no question: exit 0 → True, 1 → False, anything else (unknown object) → None."""
    code = run(repo, *args, check=False, timeout=timeout).returncode
    return {0: True, 1: False}.get(code)


def resolve(repo: Where, rev: str) -> str | None:
    """The full sha `rev` names, or None when the repository has no such commit."""
    if not rev:
        return None
    done = run(repo, "rev-parse", "-q", "--verify", f"{rev}^{{commit}}", check=False)
    return done.text.strip() or None if done.ok else None


def tree_blobs(repo: Where, rev: str) -> dict[str, str]:
    """path → blob id of every file of `rev`'s whole tree (no submodule: those are commits).
    Paths as git stores them, undecodable bytes kept (`surrogateescape`)."""
    listed = run(repo, "ls-tree", "-r", "-z", "--full-tree", rev).stdout
    files = {}
    for entry in filter(None, listed.split(b"\0")):
        meta, _, path = entry.partition(b"\t")
        _mode, kind, blob = meta.split()
        if kind == b"blob":
            files[path.decode(errors="surrogateescape")] = blob.decode()
    return files


def stream(
    repo: Where, *args: str, stdin: bool = False, options: Sequence[str] = ()
) -> subprocess.Popen[bytes]:
    """A git process whose stdout (and optionally stdin) the caller reads as a stream."""
    try:
        return subprocess.Popen(
            command(repo, args, options),
            stdin=subprocess.PIPE if stdin else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=environment(),
        )
    except OSError as exc:
        raise GitError(f"{_describe(repo, args)} could not start: {exc}") from None


def _describe(repo: Where, args: Sequence[str]) -> str:
    where = f" in {repo}" if repo is not None else ""
    return f"git {' '.join(args[:2])}{where}"


class CatFile:
    """One `git cat-file --batch` of a repository, kept running: objects are read one request at
    a time, not with a git process each (starting one costs ~3 ms of git's CPU: 1,776 files read
    so took 5 s of a cold `chains build` on ruff). Started on the first read; `close` ends it."""

    def __init__(self, repo: Where) -> None:
        self.repo = repo
        self._proc: subprocess.Popen[bytes] | None = None
        self._ended = False  # git ended on its own (no repository there): nothing can be read

    def read(self, name: str) -> tuple[str, bytes] | None:
        """(type, content) of the object `name` names (`rev:path` too), or None where git names
        none (or cannot: a name with a newline cannot be asked)."""
        if "\n" in name or self._ended:
            return None
        if self._proc is None:
            self._proc = stream(self.repo, "cat-file", "--batch", stdin=True)
        assert self._proc.stdin is not None and self._proc.stdout is not None
        try:
            self._proc.stdin.write(f"{name}\n".encode())
            self._proc.stdin.flush()
        except BrokenPipeError:  # git ended at once: no repository there, nothing to read
            self._ended = True
            self.close()
            return None
        header = self._proc.stdout.readline().split()
        # "<sha> <type> <size>"; else "<name> missing" or "<name> ambiguous", where the name may
        # hold spaces of its own
        if len(header) != 3 or not header[2].isdigit():
            return None
        return header[1].decode(), self._proc.stdout.read(int(header[2]) + 1)[:-1]

    def close(self) -> None:
        if self._proc is None:
            return
        proc, self._proc = self._proc, None
        if proc.stdin is not None:
            with contextlib.suppress(BrokenPipeError):  # what it still holds goes nowhere
                proc.stdin.close()
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()


class CatFiles:
    """A running `CatFile` per repository, each started on its first read."""

    def __init__(self) -> None:
        self._readers: dict[str, CatFile] = {}

    def of(self, repo: str) -> CatFile:
        if repo not in self._readers:
            self._readers[repo] = CatFile(repo)
        return self._readers[repo]

    def close(self) -> None:
        for reader in self._readers.values():
            reader.close()
