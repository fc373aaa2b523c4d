"""Writing an output file whole or not at all, and never through something that is not a file.

The content goes to a temporary file beside the target, which is renamed over the target only when
complete. A target that exists and is not a regular file (a device such as /dev/full, a FIFO, a
directory, or a symlink to any of those) is refused: renaming over it would replace a device node
or a pipe with a regular file (finding 5 of issue 16).
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from prchain.core.errors import OutputPathError


def check_target(path: Path) -> None:
    """Raise OutputPathError unless `path` is absent or (through any symlink) a regular file."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        if path.is_symlink():
            raise OutputPathError(
                f"{path} is a dangling symlink; refusing to write through it"
            ) from None
        return
    except OSError as exc:
        raise OutputPathError(f"cannot write {path}: {exc.strerror}") from None
    if not stat.S_ISREG(mode):
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
