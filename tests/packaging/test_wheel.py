"""The wheel holds the product only: the card's top-level packages plus `prchain`, every prompt and
data file, no test code, and no shipped module that imports pytest."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOP_LEVEL = {"prchain", "sql", "miner", "chains", "environments"}


@pytest.fixture(scope="module")
def wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wheel")
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(ROOT)],
        check=True,
        capture_output=True,
    )
    (built,) = out.glob("prchain-*.whl")
    return built


def _names(wheel: Path) -> list[str]:
    with zipfile.ZipFile(wheel) as archive:
        return archive.namelist()


def test_only_the_cards_packages_are_installed(wheel: Path) -> None:
    tops = {name.split("/")[0] for name in _names(wheel) if ".dist-info/" not in name}
    assert tops == TOP_LEVEL


def test_prompts_and_data_files_ship(wheel: Path) -> None:
    names = set(_names(wheel))
    for required in (
        "prchain/agent/prompts/judge.j2",
        "prchain/prm/taxonomy.yaml",
        "chains/prompts/query.j2",
        "chains/common_words.txt",
        "sql/schema.sql",
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


def test_every_shipped_module_imports_from_the_unpacked_wheel(wheel: Path, tmp_path: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(tmp_path)
    modules = sorted(
        name.removesuffix(".py").removesuffix("/__init__").replace("/", ".")
        for name in _names(wheel)
        if name.endswith(".py")
    )
    probe = (
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
