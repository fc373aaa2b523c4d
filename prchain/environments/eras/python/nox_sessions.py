"""What a project's nox sessions install for its tests, read from `noxfile.py` without running it.

A project whose suite runs through nox says there what the test run needs beyond its manifests:
strawberry's "CLI tests" session of 2023 installs uvicorn and starlette, which no dependency group
names, and without them every test of `tests/cli` failed to import (#2911's two new tests were
gold-failing for it). The file is parsed with `ast`, never imported: a session counts when a
`session.run(...)` of it names pytest, and of its `install(...)` calls only those at the session's
top level whose arguments are literal strings are read. An install under an `if` or a loop (one
parametrized variant's: `if integration == "flask": session.install("pytest-flask")`) or built
from a variable or an f-string (`f"django~={django}"`) is another env than the test run's own,
and so is every install of a parametrized session (`def tests_django(session, django)`): its
literal `pytest-django`, installed without the Django its f-string brings, made pytest fail to
start in strawberry's 2023-08 era (the project's pytest config names a Django settings module).
Where some of those sessions are named for tests (`tests`, `tests_cli`), only they count: hist's
`boost` and `minimums` sessions run pytest too, against a boost-histogram built from git and the
lowest versions, with mypy beside it. pip, setuptools and wheel are the era's to choose.
"""

from __future__ import annotations

import ast
import posixpath
import re
from dataclasses import dataclass, field

from prchain.environments.eras.manifests import Snapshot
from prchain.environments.eras.python.constraints import OWN_TREE

RUNNERS = frozenset({"pytest", "py.test"})
# pip options that take the next argument as their value (`-c constraints.txt`, `--index-url URL`)
_WITH_VALUE = frozenset({"-c", "--constraint", "-i", "--index-url", "--extra-index-url", "-f"})
_EDITABLE = re.compile(r"^(?:-e|--editable)=?\s*")
# the installer's own tools: the era chooses their versions (hist upgrades pip in its sessions)
INSTALLERS = frozenset({"pip", "setuptools", "wheel"})
PIP_RUNS: tuple[list[str | None], ...] = (
    ["pip", "install"],
    ["python", "-m", "pip", "install"],
    ["uv", "pip", "install"],
)


@dataclass
class NoxInstalls:
    """The literal installs of the sessions that run pytest."""

    requirements: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)  # `-r` requirements files
    extras: list[str] = field(default_factory=list)  # of the project's own line (`.[test]`)
    sessions: list[str] = field(default_factory=list)  # the test sessions that install any


def nox_installs(snap: Snapshot) -> NoxInstalls:
    """The literal installs of `noxfile.py`'s test sessions (nothing when it does not parse)."""
    found = NoxInstalls()
    try:
        tree = ast.parse(snap.text("noxfile.py"))
    except (SyntaxError, ValueError):
        return found
    runs = [
        node
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
        and _is_session(node)
        and len(node.args.args) == 1  # a parametrized session (`session, django`) is a matrix
        and _runs_pytest(node)
    ]
    named = [node for node in runs if "test" in _session_name(node).lower()]
    for node in named or runs:
        read = [args for args in map(_install_arguments, node.body) if args is not None]
        for arguments in read:
            _read(arguments, found)
        if any(a is not None for arguments in read for a in arguments):
            found.sessions.append(node.name)
    return found


def _session_name(function: ast.FunctionDef) -> str:
    """The session's `name=` where its decorator gives one, else its function's name."""
    for decorator in function.decorator_list:
        for keyword in decorator.keywords if isinstance(decorator, ast.Call) else []:
            if keyword.arg == "name" and (name := _literal(keyword.value)):
                return name
    return function.name


def _is_session(function: ast.FunctionDef) -> bool:
    """Decorated by nox's `session` (`@nox.session(...)`, `@session`, nox-poetry's)."""
    for decorator in function.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name == "session":
            return True
    return False


def _runs_pytest(function: ast.FunctionDef) -> bool:
    """A `.run(...)` or `.run_always(...)` anywhere in the session names pytest as a word."""
    for node in ast.walk(function):
        if isinstance(node, ast.Call) and _method(node) in ("run", "run_always"):
            words = [word for text in _literals(node.args) for word in text.split()]
            if RUNNERS & set(words):
                return True
    return False


def _install_arguments(statement: ast.stmt) -> list[str | None] | None:
    """The arguments of an install the statement itself makes (None: it makes none):
    `session.install(...)` (any receiver: nox-poetry's `session._session.install`) or a pip run
    (`session.run("pip", "install", ...)`). A non-literal argument is None."""
    call = statement.value if isinstance(statement, ast.Expr) else None
    if not isinstance(call, ast.Call) or _method(call) not in ("install", "run", "run_always"):
        return None
    arguments = [_literal(arg) for arg in call.args]
    if _method(call) == "install":
        return arguments
    for prefix in PIP_RUNS:
        if arguments[: len(prefix)] == prefix:
            return arguments[len(prefix) :]
    return None


def _read(arguments: list[str | None], found: NoxInstalls) -> None:
    skip_next = False
    for index, argument in enumerate(arguments):
        if skip_next:
            skip_next = False
            continue
        if argument is None:
            continue
        if argument in ("-r", "--requirement"):
            path = arguments[index + 1] if index + 1 < len(arguments) else None
            if path:
                found.files.append(posixpath.normpath(path))
            skip_next = True
        elif argument in _WITH_VALUE:
            skip_next = True
        elif own := OWN_TREE.match(_EDITABLE.sub("", argument)):
            found.extras += [e.strip() for e in (own.group(1) or "").split(",") if e.strip()]
        elif argument.startswith("-"):
            continue  # `-e`, `--upgrade`, `--group=test`: options, no package
        elif _name(argument) in INSTALLERS:
            continue
        elif argument not in found.requirements:
            found.requirements.append(argument)


def _name(requirement: str) -> str:
    found = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement)
    return found.group(0).lower() if found else ""


def _method(node: ast.AST) -> str | None:
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        return node.func.attr
    return None


def _literal(node: ast.expr) -> str | None:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _literals(nodes: list[ast.expr]) -> list[str]:
    return [text for text in map(_literal, nodes) if text is not None]
