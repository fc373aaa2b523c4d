"""Every console prchain prints through is a SafeConsole: untrusted text rendered as data, and in a
log, a pipe or CI a table keeps its natural width (rich's own Console squeezes it into 80 columns
there: `tasks eval`'s table read `jd__ten…`, `unresol…`)."""

from __future__ import annotations

import ast
import io
from pathlib import Path

from rich.table import Table

from prchain.cli.safe import LOG_WIDTH, SafeConsole

PRODUCT = Path(__file__).resolve().parents[2] / "prchain"


def _bare_consoles(source: str) -> list[int]:
    """Lines that call rich's `Console(...)` itself."""
    tree = ast.parse(source)
    imported = {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module == "rich.console"
        for alias in node.names
        if alias.name == "Console"
    }
    return sorted(
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and (
            (isinstance(node.func, ast.Name) and node.func.id in imported)
            or (isinstance(node.func, ast.Attribute) and node.func.attr == "Console")
        )
    )


def test_no_module_prints_through_riches_own_console() -> None:
    found = {
        f"{path.relative_to(PRODUCT.parent)}:{line}"
        for path in PRODUCT.rglob("*.py")
        if path.name != "safe.py"
        for line in _bare_consoles(path.read_text())
    }
    assert found == set()


def test_the_check_sees_a_bare_console() -> None:
    source = "from rich.console import Console as C\nimport rich.console\nC().print(1)\nrich.console.Console()\n"
    assert _bare_consoles(source) == [3, 4]


def test_a_wide_table_keeps_its_width_in_a_pipe() -> None:
    out = io.StringIO()
    table = Table("instance", "model", "status")
    table.add_row("jd__tenacity-122", "mini-swe-agent", "unresolved")
    console = SafeConsole(file=out)
    console.print(table)
    assert console.width == LOG_WIDTH
    assert "jd__tenacity-122" in out.getvalue() and "unresolved" in out.getvalue()
