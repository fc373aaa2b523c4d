"""The layer picture in pyproject.toml holds, and the check really catches a lower package importing
a higher one (shown on a copy of the tree with one bad import added)."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def lint_imports(tree: Path) -> subprocess.CompletedProcess[str]:
    command = Path(sys.executable).with_name("lint-imports")
    env = {**os.environ, "PYTHONPATH": str(tree)}
    return subprocess.run(
        [str(command), "--no-cache"], cwd=tree, env=env, capture_output=True, text=True
    )


def copy_tree(target: Path) -> Path:
    ignore = shutil.ignore_patterns("__pycache__")
    shutil.copytree(ROOT / "prchain", target / "prchain", ignore=ignore)
    shutil.copy(ROOT / "pyproject.toml", target / "pyproject.toml")
    return target


def test_the_layers_hold() -> None:
    done = lint_imports(ROOT)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "0 broken" in done.stdout


def test_a_store_module_importing_the_app_layer_breaks_the_contract(tmp_path: Path) -> None:
    tree = copy_tree(tmp_path)
    db = tree / "prchain" / "store" / "db.py"
    db.write_text(db.read_text() + "\nfrom prchain.app.config import Config  # a layer violation\n")
    done = lint_imports(tree)
    assert done.returncode != 0
    assert "prchain layers BROKEN" in done.stdout
    assert "prchain.store.db -> prchain.app.config" in done.stdout


def test_the_cli_importing_a_library_package_breaks_the_contract(tmp_path: Path) -> None:
    tree = copy_tree(tmp_path)
    stats = tree / "prchain" / "cli" / "stats.py"
    stats.write_text(
        stats.read_text()
        + "\nfrom prchain.store.opener import make_engine  # skips the app layer\n"
    )
    done = lint_imports(tree)
    assert done.returncode != 0
    assert "prchain.cli.stats -> prchain.store.opener" in done.stdout


def test_a_library_importing_the_store_opener_breaks_the_contract(tmp_path: Path) -> None:
    tree = copy_tree(tmp_path)
    build = tree / "prchain" / "chains" / "building" / "build.py"
    build.write_text(build.read_text() + "\nfrom prchain.store.opener import open_store  # opens\n")
    done = lint_imports(tree)
    assert done.returncode != 0
    assert "only the composition layer opens the store BROKEN" in done.stdout
    assert "prchain.chains.building.build -> prchain.store.opener" in done.stdout


# Only these open the store; every library below takes the Store (or its engine, or plain data)
# it is given.
OPENERS = ("prchain/app/", "prchain/cli/", "prchain/store/")
OPENING = {"make_engine", "create_engine", "create_async_engine", "open_store"}


def _opens_the_store(tree: ast.Module) -> bool:
    """An opener imported by name, the opener module imported, or an opener called through a
    module (`sqlalchemy.create_engine(...)`)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (
            node.module == "prchain.store.opener"
            or any(alias.name in OPENING or alias.name == "opener" for alias in node.names)
        ):
            return True
        if isinstance(node, ast.Import) and any(
            alias.name == "prchain.store.opener" for alias in node.names
        ):
            return True
        if isinstance(node, ast.Attribute) and node.attr in OPENING:
            return True
    return False


def test_no_module_below_the_composition_layer_opens_the_store() -> None:
    below = [
        path.relative_to(ROOT).as_posix()
        for path in sorted((ROOT / "prchain").rglob("*.py"))
        if not path.relative_to(ROOT).as_posix().startswith(OPENERS)
        and _opens_the_store(ast.parse(path.read_text()))
    ]
    assert below == []


def test_the_store_check_finds_a_library_that_opens_it() -> None:
    opening = [
        "def f(url):\n    from prchain.store.opener import make_engine\n    return make_engine(url)\n",
        "from prchain.store import opener\n",
        "import sqlalchemy\nengine = sqlalchemy.create_engine('sqlite://')\n",
        "from sqlalchemy import create_engine\n",
    ]
    assert all(_opens_the_store(ast.parse(code)) for code in opening)
    assert not _opens_the_store(ast.parse("def f(store):\n    return store.engine\n"))
