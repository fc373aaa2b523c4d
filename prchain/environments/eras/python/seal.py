"""pytest in a clean room, configured by the image and never by the tree it tests.

Three things the tree could otherwise decide (issue 52):
- **plugins**: pytest loads every `pytest11` entry point of every distribution on `sys.path`, and
  the repository is on it; in the room, autoloading is off (`PYTEST_DISABLE_PLUGIN_AUTOLOAD=1`,
  pytest >= 3.7) and the plugins the image itself installed are named with `-p`, read from the
  image by root before any of the agent's files exist, in isolated mode, from `/`;
- **the runner itself**: `python -m pytest` puts the working directory first on `sys.path`, so a
  `pytest.py` there is what runs; in the room it is `python LAUNCHER`, which imports pytest with
  the working directory off the path and appends it afterwards (so the project still imports, but
  last: it shadows nothing installed or standard). `-P`/PYTHONSAFEPATH would do the first half
  only on Python >= 3.11; the launcher works on every interpreter an era has.
- **the report** is written into a pipe that root reads (prchain/environments/clean_room.py), not a file.

A repository that is itself a pytest plugin (pytest-mock) declares it as a `pytest11` entry point;
the image holds no entry point of the project's (its .dist-info is stripped: it would be a later
commit's), so the stage base's own declaration (`project_plugins`, read on the host from B_t's
pyproject.toml, setup.cfg or setup.py, never from the agent's tree) is named with `-p` too: the
module is the agent's code, as it should be, but which modules load is B_t's to say.
"""

from __future__ import annotations

import ast
import re
import shlex
from datetime import UTC, datetime

from prchain.environments.eras.manifests import Snapshot
from prchain.environments.eras.python import _get, _ini, _toml

LAUNCHER_SOURCE = '''"""prchain: `python -m pytest` with the working directory last on sys.path, and every
top-level module the image holds outside the places other users can write found there first,
unless the stage base's tree uses its name (root's `own-names` beside this file)."""
import os
import sys
from importlib.machinery import PathFinder

del sys.path[0]  # this file's own directory
WRITABLE = ("/work", "/tmp", "/var/tmp", "/dev/shm", "/home", "/run")
try:
    with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "own-names")) as f:
        OWN = frozenset(f.read().split())
except OSError:
    OWN = None


def _writable(entry):
    where = os.path.abspath(entry or os.curdir)
    return any(where == w or where.startswith(w + "/") for w in WRITABLE)


IMAGE_PATH = [entry for entry in sys.path if entry and not _writable(entry)]


class ImageFirst(object):
    """A top-level module the image provides (the standard library, the venv's packages) comes
    from the image, wherever pytest puts the tree on sys.path (a root conftest.py's directory goes
    first), unless a file or directory of the stage base's tree or of the hidden tests has its
    name (a `test/` package of the project, not the standard library's): a namespace package and
    anything else resolve as usual. Without root's list, nothing changes."""

    @staticmethod
    def find_spec(name, path=None, target=None):
        if path is not None or OWN is None or name in OWN or name == "conftest":
            return None
        spec = PathFinder.find_spec(name, IMAGE_PATH)
        if spec is None or spec.origin in (None, "namespace"):
            return None
        return spec


sys.meta_path.insert(0, ImageFirst)
import pytest

sys.path.append(os.getcwd())
sys.exit(pytest.main())
'''
# Run by root in the room before the agent's change is there: the pytest version and the pytest11
# entry points of distributions installed outside every place another user can write.
PROBE_SOURCE = """
import importlib.metadata as m
try:
    import pytest
    print("VERSION", pytest.__version__)
except Exception:
    pass
for d in m.distributions():
    try:
        where = str(d.locate_file(""))
        points = list(d.entry_points)
    except Exception:
        continue
    if where.startswith(("/work", "/tmp", "/var/tmp", "/dev/shm", "/home", "/run")):
        continue
    for ep in points:
        if ep.group == "pytest11":
            print("PLUGIN", ep.name, ep.value.split(":")[0].strip())
"""
PROBE = (
    "cd / && for py in python3 python; do command -v $py >/dev/null 2>&1 && "
    f"$py -I -c {shlex.quote(PROBE_SOURCE)} 2>/dev/null; done; true"
)
_PYTHON_M_PYTEST = re.compile(
    r"(?<![\w.+/-])((?:/[\w.+-]+)*/?python[\d.]*)\s+-m\s+pytest(?![\w.-])"
)
_BLOCKED = re.compile(r"-p\s*no:([\w.-]+)")


def launched(command: str, launcher: str) -> str:
    """`command` with each `python -m pytest` run through the launcher instead."""
    return _PYTHON_M_PYTEST.sub(lambda m: f"{m.group(1)} {shlex.quote(launcher)}", command)


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", text)[:2]) or (0,)


def runner_env(probe: str, command: str, own: tuple[str, ...] = ()) -> dict[str, str]:
    """The variables that keep pytest to the image's plugins, from the probe's output, and to the
    project's own (`own`, modules from `project_plugins`); a plugin the command blocks (`-p no:x`)
    is not named, nor an own module the image already names."""
    versions = [
        _version(line.split()[1]) for line in probe.splitlines() if line.startswith("VERSION ")
    ]
    if not versions or min(versions) < (3, 7):
        return {}  # autoloading cannot be turned off; the allow-list still keeps the tree's out
    by_name = min(versions) >= (4, 5)  # `-p <entry point name>` from pytest 4.5
    blocked = set(_BLOCKED.findall(command))
    names, modules = [], set()
    for line in probe.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == "PLUGIN" and parts[1] not in blocked:
            names.append(parts[1] if by_name else parts[2])
            modules.add(parts[2])
    names += [m for m in own if m not in modules and m not in blocked]
    options = " ".join(f"-p {shlex.quote(n)}" for n in dict.fromkeys(names))
    return {
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        **({"PYTEST_ADDOPTS": options} if options else {}),
    }


_MODULE = re.compile(r"^[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*$")


# The files `project_plugins` reads.
PLUGIN_MANIFESTS = ("pyproject.toml", "setup.cfg", "setup.py")


def project_plugins(snap: Snapshot) -> tuple[str, ...]:
    """The modules the project at `snap` (a stage base) declares as `pytest11` entry points, in
    pyproject.toml (PEP 621, poetry), setup.cfg or a literal in setup.py."""
    pyproject = _toml(snap)
    found = [
        *_values(_get(pyproject, "project", "entry-points", "pytest11")),
        *_values(_get(pyproject, "tool", "poetry", "plugins", "pytest11")),
    ]
    setup_cfg = _ini(snap.text("setup.cfg"))
    if setup_cfg.has_option("options.entry_points", "pytest11"):
        found += _entry_lines(setup_cfg.get("options.entry_points", "pytest11"))
    found += _setup_py_plugins(snap.text("setup.py"))
    modules = (str(value).split(":")[0].strip() for value in found)
    return tuple(dict.fromkeys(m for m in modules if _MODULE.match(m)))


def _values(table: object) -> list[object]:
    return list(table.values()) if isinstance(table, dict) else []


def _entry_lines(value: object) -> list[str]:
    """`name = module[:attr]` lines (a string or a list of them) → their values."""
    lines = value.splitlines() if isinstance(value, str) else value
    if not isinstance(lines, list | tuple):
        return []
    return [str(line).split("=", 1)[1] for line in lines if "=" in str(line)]


def _setup_py_plugins(text: str) -> list[str]:
    """setup.py's `entry_points={"pytest11": [...]}`, when it is a literal."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    found: list[str] = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Dict):
            continue
        for key, value in zip(node.keys, node.values, strict=False):
            if isinstance(key, ast.Constant) and key.value == "pytest11" and value is not None:
                try:
                    found += _entry_lines(ast.literal_eval(value))
                except ValueError:
                    continue
    return found


def plugin_paths(manifests: dict[str, str]) -> list[str]:
    """The files of the modules the stage base's manifests (PLUGIN_MANIFESTS, name → text) declare
    as its own pytest plugins, at the root and below `src/`: the room loads them with `-p`
    before any test, so they are test machinery, sealed like a conftest.py (the stage base's
    copy runs). A plugin that is a package keeps only its `__init__.py` out: the modules it
    imports are the project's code, which the judge reads."""
    snap = Snapshot("", datetime.fromtimestamp(0, UTC), manifests)
    found = []
    for module in project_plugins(snap):
        path = module.replace(".", "/")
        for root in ("", "src/"):
            found += [f"{root}{path}.py", f"{root}{path}/__init__.py"]
    return found


# A project's own test-support modules, by name: `mypkg/testing.py`, pandas' `_testing`. Those in
# a test directory (`numpy/testing/`, `tests/helpers.py`) are test side already.
HELPER_MODULES = frozenset({"testing", "_testing", "testutils", "testing_utils", "_test_utils"})
_IMPORT = re.compile(
    r"^[ +]?\s*(?:from\s+([\w.]+)\s+import\s+\(?([\w\s,]+)|import\s+([\w.]+))", re.M
)


def helper_paths(tests: str) -> list[str]:
    """The files of the project's test-support modules (HELPER_MODULES) that the hidden tests'
    text `tests` (their files, and the gold test patch) imports, at the root and below `src/`:
    an assertion helper the tests call judges as the tests do, so the stage base's copy runs (a
    rewritten `mypkg/testing.assert_close` that never fails would pass any change)."""
    modules = set()
    for match in _IMPORT.finditer(tests):
        if match.group(3):
            modules.add(match.group(3))
            continue
        modules.add(match.group(1))
        names = (name.split()[0] for name in match.group(2).split(",") if name.split())
        modules |= {f"{match.group(1)}.{name}" for name in names}
    found = []
    for module in sorted(modules):
        parts = module.split(".")
        if len(parts) < 2 or parts[-1] not in HELPER_MODULES:
            continue
        path = "/".join(parts)
        found += [p for root in ("", "src/") for p in (f"{root}{path}.py", f"{root}{path}")]
    return found
