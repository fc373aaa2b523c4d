"""Writing an output file whole or not at all, and never through something that is not a file.

The content goes to a temporary file beside the target, which is renamed over the target only when
complete. A target that exists and is not a regular file (a device such as /dev/full, a FIFO, a
directory, or a symlink to any of those) is refused: renaming over it would replace a device node
or a pipe with a regular file (finding 5 of issue 16).
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from prchain.core.errors import OutputPathError


def _existing_mode(path: Path) -> int | None:
    """The mode of what `path` resolves to; None when nothing is there. A dangling symlink or an
    unreadable place is an OutputPathError: neither can be written through safely."""
    try:
        return path.stat().st_mode
    except FileNotFoundError:
        if path.is_symlink():
            raise OutputPathError(
                f"{path} is a dangling symlink; refusing to write through it"
            ) from None
        return None
    except OSError as exc:
        raise OutputPathError(f"cannot write {path}: {exc.strerror}") from None


def check_target(path: Path) -> None:
    """Raise OutputPathError unless `path` is absent or (through any symlink) a regular file."""
    mode = _existing_mode(path)
    if mode is not None and not stat.S_ISREG(mode):
        kind = "a directory" if stat.S_ISDIR(mode) else "not a regular file"
        raise OutputPathError(f"{path} is {kind}; refusing to replace it")


@contextlib.contextmanager
def atomic_output(path: str | Path) -> Iterator[TextIO]:
    """A text handle whose content replaces `path` when the block ends without an exception."""
    target = Path(path)
    check_target(target)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".partial")
    except OSError as exc:
        raise OutputPathError(f"cannot write {target}: {exc.strerror}") from None
    try:
        os.fchmod(fd, 0o644)  # mkstemp's 0600 would make every export private to its writer
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            yield handle
        check_target(target)  # it may have been swapped for something else while we wrote
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(temp)
        raise


def write_text_atomically(path: str | Path, text: str) -> None:
    with atomic_output(path) as handle:
        handle.write(text)


REPORT_MARKER = ".prchain-output"  # in a directory prchain wrote whole, and may therefore replace


def check_directory_target(path: Path, marker: str = REPORT_MARKER) -> None:
    """Raise OutputPathError unless `path` is absent, an empty directory, or a directory prchain
    wrote (it holds `marker`): a user's own files are never replaced (issue 23, finding 4)."""
    mode = _existing_mode(path)
    if mode is None:
        return
    if not stat.S_ISDIR(mode):
        raise OutputPathError(f"{path} exists and is not a directory; refusing to replace it")
    try:
        entries = {entry.name for entry in os.scandir(path)}
    except OSError as exc:
        raise OutputPathError(f"cannot read {path}: {exc.strerror}") from None
    if entries and marker not in entries:
        raise OutputPathError(
            f"{path} is not empty and was not written by prchain; refusing to replace its files",
            hint="choose a new or empty directory (an earlier report there is replaced whole)",
        )


_PARTIAL = ".prchain-partial-"


@contextlib.contextmanager
def atomic_directory(path: str | Path, marker: str = REPORT_MARKER) -> Iterator[Path]:
    """A fresh directory beside `path` to fill; when the block ends without an exception it
    replaces `path` whole (marked as prchain's), otherwise it is removed and `path` is untouched.

    A run killed midway leaves only its partial directory, which the next run removes (its name
    carries the dead writer's pid).
    """
    target = Path(path).resolve()
    check_directory_target(target, marker)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        _remove_dead_partials(target)
        work = Path(
            tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}{_PARTIAL}{os.getpid()}-")
        )
        work.chmod(0o755)  # mkdtemp's 0700 would make the site private to its writer
    except OSError as exc:
        raise OutputPathError(f"cannot write {target}: {exc.strerror}") from None
    try:
        yield work
        (work / marker).write_text("written whole by prchain; the next run replaces this folder\n")
        check_directory_target(target, marker)  # it may have changed while we wrote
        _swap(work, target)
    except OSError as exc:
        shutil.rmtree(work, ignore_errors=True)
        raise OutputPathError(f"cannot write {target}: {exc.strerror or exc}") from None
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise


def _swap(work: Path, target: Path) -> None:
    """Put `work` where `target` is; the old tree is moved aside first and removed after."""
    if not target.exists():
        os.rename(work, target)
        return
    old = Path(tempfile.mkdtemp(dir=target.parent, prefix=f".{target.name}.old-"))
    os.rename(target, old / "tree")
    try:
        os.rename(work, target)
    except OSError:
        os.rename(old / "tree", target)  # put the previous site back
        raise
    finally:
        shutil.rmtree(old, ignore_errors=True)


def _remove_dead_partials(target: Path) -> None:
    for partial in target.parent.glob(f".{glob.escape(target.name)}{_PARTIAL}*"):
        pid = partial.name.rpartition(_PARTIAL)[2].split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(partial, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
