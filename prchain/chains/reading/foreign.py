"""Names a PR takes from outside the repository: its imports from other packages (Python's
here; Go's, JavaScript's, TypeScript's and Rust's in `prchain.chains.reading.imports_foreign`).

A name the older PR brought into the code counts as evidence that a newer PR using it builds on
the older one (`prchain.chains.evidence.symbols`). A name imported from another package is that package's, not
the PR's: sentry-python #6163 copies the fork-safety pattern of #6159 and shares only the
standard library's `WeakMethod` and `os.register_at_fork` with it; uvicorn #1067 shares only
asgiref's `ASGIApplication` with its sibling #990. Such names are foreign: the names a Python file
imports from a package whose top-level name is no directory or module of the repository, and the
attributes the PR's added lines read off a module so imported (`os.register_at_fork`). The
imports are read from the whole new file (Python's own parser), since a hunk seldom shows them.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable

from prchain.chains.reading.imports_foreign import Own, imported_elsewhere
from prchain.chains.reading.patches import file_sections, section_blobs, section_path


def own_roots(paths: list[str]) -> set[str]:
    """The names a module of the repository may be imported by: every directory name and every
    Python file's stem (`src/sentry_sdk/...` gives `src` and `sentry_sdk`)."""
    roots: set[str] = set()
    for path in paths:
        *dirs, name = path.split("/")
        roots.update(dirs)
        if name.endswith(".py"):
            roots.add(name[:-3])
    return roots


def imported(text: str, own: set[str]) -> tuple[set[str], set[str]]:
    """(names imported from outside the repository, with the keyword arguments the file passes
    to them, and names bound to modules from outside it) in a Python file; nothing where the
    file does not parse."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return set(), set()
    names: set[str] = set()
    modules: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and not node.level and node.module:
            if node.module.split(".")[0] not in own:
                names.update(alias.asname or alias.name for alias in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] not in own:
                    modules.add(alias.asname or alias.name.split(".")[0])
    names.discard("*")
    return names | _keywords(tree, names, modules), modules


def _keywords(tree: ast.AST, names: set[str], modules: set[str]) -> set[str]:
    """The keyword arguments of calls to what was imported from outside (`after_in_child` of
    `os.register_at_fork(after_in_child=...)`): the other package's parameter names."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        outside = (isinstance(func, ast.Name) and func.id in names) or (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id in modules
        )
        if outside:
            found.update(k.arg for k in node.keywords if k.arg)
    return found


def foreign_names(
    diff: str,
    new_text: Callable[[str], str | None],
    own: set[str],
    go_modules: tuple[str, ...] = (),
) -> set[str]:
    """The names a diff's added lines take from outside the repository: those its files import
    from other packages, and the attributes it reads off modules imported so. Python's imports
    are read by its own parser, Go's, JavaScript's, TypeScript's and Rust's by their lexers
    (`prchain.chains.reading.imports_foreign`; `go_modules`: the module paths the repository's go.mod files
    declare, whose packages are its own)."""
    found: set[str] = set()
    for section in file_sections(diff):
        found |= section_foreign(section, new_text, own, go_modules)
    return found


def added_text(section: str) -> str:
    """The lines one file section of a diff adds, joined."""
    return "\n".join(
        line[1:]
        for line in section.split("\n")
        if line.startswith("+") and not line.startswith("+++")
    )


def section_foreign(
    section: str,
    new_text: Callable[[str], str | None],
    own: set[str],
    go_modules: tuple[str, ...] = (),
) -> set[str]:
    """`foreign_names` of one file section. Every name it returns stands as a whole word in the
    section's added lines (`added_text`), so a section whose added lines hold none of the names
    asked about need not be read."""
    path = section_path(section)
    blobs = section_blobs(section)
    text = new_text(blobs[1]) if blobs is not None else None
    if text is None:
        return set()
    if path.endswith(".py"):
        names, modules = imported(text, own)
        member = "."
    else:
        names, modules, member = imported_elsewhere(text, path, Own(frozenset(own), go_modules))
    if not names and not modules:
        return set()
    added = added_text(section)
    found = {name for name in names if re.search(rf"\b{re.escape(name)}\b", added)}
    if modules:
        qualified = rf"\b(?:{'|'.join(map(re.escape, modules))}){re.escape(member)}(\w+)"
        found.update(re.findall(qualified, added))
    return found
