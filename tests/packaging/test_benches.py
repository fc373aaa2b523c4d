"""Every script `make bench` runs still imports: the benches live outside the package, so a moved
or renamed name breaks them silently (the store seam once broke eighteen of them at import)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.mark.parametrize("script", sorted(BENCH.glob("*.py")), ids=lambda path: path.stem)
def test_the_bench_script_imports(script: Path) -> None:
    spec = importlib.util.spec_from_file_location(f"bench_import_check_{script.stem}", script)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    try:
        spec.loader.exec_module(module)
    finally:
        del sys.modules[spec.name]
    assert module.__doc__, f"{script.name} says nothing of what it measures"
