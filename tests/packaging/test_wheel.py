"""The wheel holds the product only: one top-level package, `prchain`, every prompt and
data file, no test code, and no shipped module that imports pytest.

The import check stands in for `pip install .` into a fresh virtualenv: every module the wheel
ships is imported from the unpacked wheel while every installed distribution that the base
dependencies do not pull in (the dev tools, and the extras such as ray or the report's plotting)
is made unimportable. A module that needs an extra must import it inside the function using it."""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[2]
TOP_LEVEL = {"prchain"}  # one import name: nothing generic at the top of site-packages


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    # Built from a copy of the tracked files: setuptools' build/ in a working tree keeps modules
    # that were since deleted, and they would end up in the wheel.
    source = tmp_path_factory.mktemp("source")
    tracked = subprocess.run(
        ["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=True
    ).stdout.decode()
    for name in filter(None, tracked.split("\0")):
        if (ROOT / name).is_file():
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, source / name)
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(source)],
        check=True,
        capture_output=True,
    )
    (built,) = out.glob("prchain-*.whl")
    return built


def _names(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        return archive.namelist()


def test_only_prchain_is_installed(wheel: Path) -> None:
    tops = {name.split("/")[0] for name in _names(wheel) if ".dist-info/" not in name}
    assert tops == TOP_LEVEL


def test_prompts_and_data_files_ship(wheel: Path) -> None:
    names = set(_names(wheel))
    for required in (
        "prchain/agent/prompts/judge.j2",
        "prchain/agent/prompts/mini/feedback.j2",
        "prchain/prm/taxonomy.yaml",
        "prchain/chains/writers/prompts/query.j2",
        "prchain/chains/reading/common_words.txt",
        "prchain/store/schema.sql",
        "prchain/store/migrations/env.py",
        "prchain/store/migrations/script.py.mako",
        "prchain/store/migrations/versions/0001_first_store.py",
    ):
        assert required in names


def test_no_shipped_module_imports_pytest(wheel: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            if not name.endswith(".py"):
                continue
            tree = ast.parse(archive.read(name))
            for node in ast.walk(tree):
                modules = [a.name for a in node.names] if isinstance(node, ast.Import) else []
                if isinstance(node, ast.ImportFrom) and node.module:
                    modules = [node.module]
                assert not any(m.split(".")[0] == "pytest" for m in modules), name


def _normal(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def base_distributions() -> set[str]:
    """The distributions `pip install .` brings in: the base dependencies and theirs (with the
    extras a requirement names, e.g. psycopg[binary]), none of prchain's own extras."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    todo: list[tuple[Requirement, set[str]]] = [
        (Requirement(r), {""}) for r in project["dependencies"]
    ]
    seen: set[tuple[str, str]] = set()
    names: set[str] = set()
    while todo:
        requirement, wanted_by = todo.pop()
        marker = requirement.marker
        if marker and not any(marker.evaluate({"extra": extra}) for extra in wanted_by):
            continue
        name = _normal(requirement.name)
        extras = {"", *requirement.extras}
        if all((name, extra) in seen for extra in extras):
            continue
        seen |= {(name, extra) for extra in extras}
        names.add(name)
        try:
            todo += [(Requirement(r), extras) for r in metadata.requires(name) or []]
        except metadata.PackageNotFoundError:
            continue
    return names


# What every virtualenv has, and what the wheel itself installs.
ALWAYS_THERE = {"pip", "setuptools", "pkg_resources", "_distutils_hack"}


def modules_a_fresh_install_lacks() -> list[str]:
    base = base_distributions()
    ours = TOP_LEVEL
    return sorted(
        module
        for module, dists in metadata.packages_distributions().items()
        if not any(_normal(d) in base for d in dists)
        and module not in ours | ALWAYS_THERE
        and module.isidentifier()
    )


BLOCKER = """
import importlib.abc, importlib.util, sys
BLOCKED = set(%r)
class Absent(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"{name} is not installed (an extra or a dev tool)", name=name)
        return None
sys.meta_path.insert(0, Absent())
"""


def test_every_shipped_module_imports_from_the_unpacked_wheel(wheel: Path, tmp_path: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(tmp_path)
    modules = sorted(
        name.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
        for name in _names(wheel)
        if name.endswith(".py")
    )
    probe = BLOCKER % (modules_a_fresh_install_lacks(),) + (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    module = importlib.import_module(name)\n"
        f"    assert module.__file__.startswith({str(tmp_path)!r}), (name, module.__file__)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr[-2000:]


def test_the_fresh_install_stand_in_hides_extras_and_dev_tools() -> None:
    lacking = modules_a_fresh_install_lacks()
    assert {"pytest", "mypy"} <= set(lacking) and "sqlalchemy" not in lacking
    probe = BLOCKER % (lacking,) + "import pytest\n"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True)
    assert done.returncode != 0 and "is not installed" in done.stderr
