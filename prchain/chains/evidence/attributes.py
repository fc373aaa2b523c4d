"""The repository's own word on generated files: `linguist-generated` in `.gitattributes`, as
`git check-attr` reads it at a commit.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable

from prchain.core import git


class Attributes:
    """Which paths a clone's `.gitattributes` (at HEAD) marks `linguist-generated`, asked of git
    itself (`check-attr`, the file given as the attributes file: a bare clone has no work tree),
    each path once. A repository whose file never names the attribute costs nothing. Use it as a
    context manager: the copy of the file is removed on leaving."""

    def __init__(self, clone: str | None) -> None:
        self.clone = clone
        self._known: dict[str, bool] = {}
        self._file: str | None = None
        if clone:
            shown = git.run(clone, "show", "HEAD:.gitattributes", check=False)
            if shown.ok and "linguist-generated" in shown.text:
                handle, self._file = tempfile.mkstemp(prefix="prchain-attrs-")
                with os.fdopen(handle, "w") as out:
                    out.write(shown.text)

    def __enter__(self) -> Attributes:
        return self

    def __exit__(self, *_exc: object) -> None:
        if self._file:
            os.unlink(self._file)
            self._file = None

    def generated(self, paths: Iterable[str]) -> set[str]:
        """Those of `paths` marked generated."""
        wanted = list(dict.fromkeys(paths))
        if self._file is None or self.clone is None:
            return {p for p in wanted if self._known.get(p)}
        todo = [p for p in wanted if p not in self._known and "\n" not in p]
        if todo:
            done = git.run(
                self.clone,
                "check-attr",
                "--stdin",
                "linguist-generated",
                input="".join(f"{p}\n" for p in todo).encode(),
                options=("-c", f"core.attributesFile={self._file}"),
                check=False,
            )
            answers = dict(_answers(done.text)) if done.ok else {}
            self._known.update((p, answers.get(p, False)) for p in todo)
        return {p for p in wanted if self._known.get(p)}


def _answers(text: str) -> Iterable[tuple[str, bool]]:
    for row in text.splitlines():
        path, _, rest = row.rpartition(": linguist-generated: ")
        if path:
            yield path, rest.strip() in ("set", "true")
