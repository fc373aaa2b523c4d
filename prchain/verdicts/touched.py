"""Which tests a gold test patch touches, read from the patch alone, the same for every language.

A test whose unit did not even build with the test patch alone (a Go package, a Rust test target,
a Java module, a Python module that did not import) has no outcome "before the gold code patch".
classify.py then takes its outcome at the start, with the base's own test files, unless the test
patch touches it: a changed test could not be run before the gold code patch, so it stays
FAIL_TO_PASS.

The patch touches a test when one of the names the test is defined under (`TestReport.names`:
`TestFoo`, a Rust module and function, a Java class and method, a describe block and test title)
is a whole word of
  - a line the patch adds or removes, or
  - the definition enclosing such a line: the nearest line above it in its hunk that starts a
    definition by git's own default rule (a line beginning with a letter, `_` or `$`: `func
    TestFoo(`, `class FooTest {`, `mod tests {`, `def test_x():`), else the hunk's header, which
    git fills by the same rule. Any other line at the margin (`}`, a comment, `#[test]`) ends that
    definition, so a test appended after `TestOld` does not touch `TestOld`.
Indented definitions (methods, nested modules) are enclosed by their class or module, so a change in
one Java method touches the whole class: the rule errs towards FAIL_TO_PASS, today's class.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator

_DEFINITION = re.compile(r"^[A-Za-z_$]")  # git's default funcname rule (userdiff.c)
UNREADABLE = "(the test patch could not be read)"
UNNAMED = "(no name to look for)"

Touched = Callable[[str], str | None]
"""A test id → the name by which the test patch touches it, or None when it does not."""


def hunk_lines(patch: str) -> Iterator[tuple[str, str]]:
    """(kind, text) of each hunk line: kind `@` for a hunk's header (text: git's header words),
    `+`, `-` or ` `. Read line by line, not by unidiff, which refuses a hunk whose line counts are
    off (a stored patch that lost its trailing blank context line); only the kinds are needed."""
    in_hunk = False
    for line in patch.splitlines():
        if line.startswith("diff --git "):
            in_hunk = False
        elif line.startswith("@@"):
            in_hunk = True
            yield "@", line.split("@@", 2)[2] if line.count("@@") >= 2 else ""
        elif in_hunk and line[:1] in ("+", "-", " ", ""):
            yield line[:1] or " ", line[1:]


def touched_text(patch: str) -> str | None:
    """The lines `patch` adds or removes, each with the definition enclosing it (see the module
    docstring), one per line; None when the patch has no hunk to read."""
    kept: list[str] = []
    enclosing, hunks = "", 0
    for kind, text in hunk_lines(patch):
        if kind == "@":
            enclosing, hunks = text.strip(), hunks + 1
            continue
        if _DEFINITION.match(text):
            enclosing = text
        if kind in "+-" and text.strip():
            kept += [text, enclosing]
        if text[:1] not in ("", " ", "\t") and not _DEFINITION.match(text):
            enclosing = ""  # a `}` or comment at the margin: the definition has ended
    return "\n".join(kept) if hunks else None


def _word(name: str) -> re.Pattern[str]:
    return re.compile(rf"(?<![\w$]){re.escape(name)}(?![\w$])")


def touched_by(patch: str, names: Callable[[str], Iterable[str]]) -> Touched:
    """The `Touched` of a test patch, with `names` the test-report reader's (`TestReport.names`).
    An unreadable patch touches every test, and so does any test without a name to look for."""
    text = touched_text(patch)

    def touched(test_id: str) -> str | None:
        if text is None:
            return UNREADABLE
        wanted = [n for n in names(test_id) if n.strip()]
        if not wanted:
            return UNNAMED
        return next((n for n in wanted if _word(n).search(text)), None)

    return touched
