"""The project's own entry points and console scripts, as the stage's tree declares them.

An era image holds the project's dependencies but nothing of the project itself: its .dist-info is
stripped to a name and a version (python/__init__.py, `_strip_project`), because the image is built
from a commit later than most stages it serves. A project that finds its own parts through entry
points (bandit's plugins, formatters and blacklists, loaded by stevedore) or whose tests run its
console scripts (`bandit`, `bandit-baseline`) then failed 73 of 263 tests of its 2022 era, and the
missing program was taken from Debian: `python3-bandit`, another release of the project itself.

So the stripped .dist-info's `entry_points.txt` is a link to POINTS, which each stage writes from
its own tree (the stage's setup command runs this file with `--write`, as the agent, in the tree),
with a wrapper in BIN per console script the tree declares, which runs this file with `--run NAME`.
BIN ends the agent's and the clean room tester's PATH (prchain/environments/sandbox_spec.py): no
program of the image can be shadowed, and no script name is in the image, where it would be the
build commit's (issue 52). In the clean room the manifests are the stage base's (setup.cfg,
setup.py and pyproject.toml never cross), so which entry points exist is B_t's to say; the code
they name is the agent's. `pytest11` is left to the clean room's seal (python/seal.py), which names
the project's plugins itself.

This file runs in the era image with the venv's Python (3.9 and up) and the standard library only,
and is imported by prchain on the host to read a snapshot's declarations.
"""

from __future__ import annotations

import ast
import configparser
import importlib
import os
import re
import sys
from collections.abc import Callable
from typing import Any

# Where a stage writes the entry points of its tree and its console scripts' wrappers: writable by
# whichever uid runs the stage.
POINTS = "/work/.cache/prchain-own/entry_points.txt"
BIN = "/work/.cache/prchain-own/bin"
# The groups the clean room decides by itself.
SEALED_GROUPS = frozenset({"pytest11"})
Points = dict[str, dict[str, str]]  # group → name → `module:attr`


def declared(read: Callable[[str], str]) -> Points:
    """The entry points the manifests at `read` (a path → its text, "" when absent) declare: in
    setup.cfg (setuptools' `[options.entry_points]`, pbr's `[entry_points]`), pyproject.toml
    (PEP 621 and poetry, when a TOML reader imports) and a literal `entry_points=` of setup.py."""
    found: Points = {}
    for group, lines in _setup_cfg(read("setup.cfg")) + _setup_py(read("setup.py")):
        _add(found, group, _lines(lines))
    for group, table in _pyproject(read("pyproject.toml")):
        _add(found, group, [(str(k), str(v)) for k, v in table.items()])
    return {g: names for g, names in found.items() if names and g not in SEALED_GROUPS}


def _add(found: Points, group: str, pairs: list[tuple[str, str]]) -> None:
    names = found.setdefault(group.strip(), {})
    for name, value in pairs:
        if name.strip() and value.strip():
            names.setdefault(name.strip(), value.strip())


def _lines(value: object) -> list[tuple[str, str]]:
    """`name = module:attr` lines, as a string or a list of them."""
    lines = value.splitlines() if isinstance(value, str) else value
    if not isinstance(lines, (list, tuple)):  # noqa: UP038  (the image's Python may be 3.9)
        return []
    pairs = []
    for line in lines:
        text = str(line).split("#", 1)[0]
        if "=" in text:
            name, target = text.split("=", 1)
            pairs.append((name, target))
    return pairs


def _setup_cfg(text: str) -> list[tuple[str, object]]:
    parser = _parser()
    try:
        parser.read_string(text)
    except configparser.Error:
        return []
    return [
        (group, parser.get(section, group))
        for section in ("options.entry_points", "entry_points")
        if parser.has_section(section)
        for group in parser.options(section)
    ]


def _setup_py(text: str) -> list[tuple[str, object]]:
    """`entry_points=` of a setup() call, a dict literal or a module-level name bound to one."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    bound = {
        target.id: node.value
        for node in tree.body
        if isinstance(node, ast.Assign)
        for target in node.targets
        if isinstance(target, ast.Name)
    }
    found: list[tuple[str, object]] = []
    for node in ast.walk(tree):
        for keyword in getattr(node, "keywords", []) if isinstance(node, ast.Call) else []:
            if keyword.arg != "entry_points":
                continue
            value = keyword.value
            if isinstance(value, ast.Name):
                value = bound.get(value.id, value)
            try:
                points = ast.literal_eval(value)
            except ValueError:
                continue
            if isinstance(points, dict):
                found += [(str(group), lines) for group, lines in points.items()]
    return found


def _pyproject(text: str) -> list[tuple[str, dict[str, object]]]:
    if not text:
        return []
    loads = _toml_reader()
    if loads is None:
        return []
    try:
        data = loads(text)
    except Exception:  # any reader's own error: the file is no TOML it reads
        return []
    project = data.get("project") or {}
    poetry = (data.get("tool") or {}).get("poetry") or {}
    tables: list[tuple[str, Any]] = [
        ("console_scripts", project.get("scripts")),
        ("gui_scripts", project.get("gui-scripts")),
        ("console_scripts", poetry.get("scripts")),
        *((project.get("entry-points") or {}).items()),
        *((poetry.get("plugins") or {}).items()),
    ]
    return [(group, table) for group, table in tables if isinstance(table, dict)]


def _toml_reader() -> Callable[[str], dict[str, Any]] | None:
    for name in ("tomllib", "tomli", "toml"):
        try:
            return importlib.import_module(name).loads  # type: ignore[no-any-return]
        except ImportError:
            continue
    return None


def render(points: Points) -> str:
    """entry_points.txt's format."""
    return "".join(
        f"[{group}]\n" + "".join(f"{name} = {value}\n" for name, value in names.items()) + "\n"
        for group, names in sorted(points.items())
    )


def _read_tree(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError):
        return ""


def write(points_file: str = POINTS, bin_dir: str = BIN) -> None:
    """The entry points of the tree in the working directory into `points_file`, and a wrapper
    per console script in `bin_dir` (those of an earlier write go)."""
    points = declared(_read_tree)
    os.makedirs(os.path.dirname(points_file), exist_ok=True)
    with open(points_file, "w", encoding="utf-8") as handle:
        handle.write(render(points))
    os.makedirs(bin_dir, exist_ok=True)
    for old in os.listdir(bin_dir):
        os.unlink(os.path.join(bin_dir, old))
    here = os.path.abspath(__file__)
    for script in points.get("console_scripts", {}):
        if not re.fullmatch(r"[A-Za-z0-9][\w.+-]*", script):
            continue
        wrapper = os.path.join(bin_dir, script)
        with open(wrapper, "w", encoding="utf-8") as out:
            out.write(f'#!/bin/sh\nexec {sys.executable} {here} --run {script} "$@"\n')
        os.chmod(wrapper, 0o755)


def _parser() -> configparser.RawConfigParser:
    parser = configparser.RawConfigParser()
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # names keep their case
    return parser


def run(name: str, args: list[str], points_file: str = POINTS) -> Any:
    """Console script `name` of the stage's tree, called as its installed wrapper would: what
    it returns is the exit status `sys.exit` makes of it."""
    parser = _parser()
    parser.read(points_file, encoding="utf-8")
    if not parser.has_option("console_scripts", name):
        sys.stderr.write(
            f"{name}: command not found (the project's tree declares no such script)\n"
        )
        return 127
    module, _, attr = parser.get("console_scripts", name).partition(":")
    target: Any = importlib.import_module(module.strip())
    for part in attr.split("[", 1)[0].strip().split(".") if attr.strip() else []:
        target = getattr(target, part)
    sys.argv = [name, *args]
    return target()


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name or "").lower()


def install(project: str, version: str, points_file: str = POINTS) -> list[str]:
    """At the era's build, as root: the project's .dist-info (the stripped one, else a new one of
    its name and `version`) reading its entry points from `points_file`. What it did, a line
    each."""
    import importlib.metadata as metadata
    import sysconfig

    own = _norm(project)
    infos = [
        str(d._path)  # type: ignore[attr-defined]
        for d in metadata.distributions()
        if _norm(d.metadata["Name"]) == own
    ]
    if not infos:
        info = os.path.join(
            sysconfig.get_paths()["purelib"], f"{own.replace('-', '_')}-{version}.dist-info"
        )
        os.makedirs(info)
        with open(os.path.join(info, "METADATA"), "w", encoding="utf-8") as out:
            out.write(f"Metadata-Version: 2.1\nName: {project}\nVersion: {version}\n")
        infos = [info]
    said = []
    for info in infos:
        link = os.path.join(info, "entry_points.txt")
        if os.path.lexists(link):
            os.unlink(link)
        os.symlink(points_file, link)
        said.append(f"entry points of {project} from each stage's tree: {link}")
    return said


if __name__ == "__main__":
    command = sys.argv[1:2]
    if command == ["--write"]:
        write()
    elif command == ["--run"] and len(sys.argv) > 2:
        sys.exit(run(sys.argv[2], sys.argv[3:]))
    elif command == ["--install"] and len(sys.argv) == 4:
        print("\n".join(install(sys.argv[3], sys.argv[2])))
    else:
        sys.exit("usage: own_points.py --write | --run NAME [ARGS...] | --install VERSION PROJECT")
