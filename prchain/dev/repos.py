"""Build small but real git histories with PR-shaped commits (squash and merge), for tests and demos."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from prchain.core import git as git_runner

GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "Ada Dev",
    "GIT_AUTHOR_EMAIL": "ada@example.com",
    "GIT_COMMITTER_NAME": "Ada Dev",
    "GIT_COMMITTER_EMAIL": "ada@example.com",
}


def git(repo: Path, *args: str, date: str | None = None) -> str:
    """git in the demo repository, as the demo author, at `date` when given."""
    env = dict(GIT_IDENTITY)
    if date:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = date
    return git_runner.output(repo, *args, env=env).strip()


@dataclass
class PRCommitInfo:
    number: int
    title: str
    base_sha: str  # first parent: the PR's base commit B
    merge_sha: str  # the commit that landed the PR
    gold_patch: str  # diff base..merge


@dataclass
class ChainRepo:
    path: Path
    prs: dict[int, PRCommitInfo] = field(default_factory=dict)


OPS_V0 = """def add(a, b):
    return a + b
"""

TEST_V0 = """from calc.ops import add


def test_add():
    assert add(2, 3) == 5
"""


def _write(repo: Path, rel: str, text: str) -> None:
    target = repo / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(text)


def _squash(
    repo: Path, number: int, title: str, body: str, files: dict[str, str], date: str
) -> PRCommitInfo:
    base = git(repo, "rev-parse", "HEAD")
    for rel, text in files.items():
        _write(repo, rel, text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", f"{title} (#{number})\n\n{body}", date=date)
    merge = git(repo, "rev-parse", "HEAD")
    return PRCommitInfo(number, title, base, merge, git(repo, "diff", base, merge))


def _merge(
    repo: Path,
    number: int,
    title: str,
    branch: str,
    commits: list[tuple[str, dict[str, str]]],
    date: str,
) -> PRCommitInfo:
    base = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "-b", branch)
    for message, files in commits:
        for rel, text in files.items():
            _write(repo, rel, text)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", message, date=date)
    git(repo, "checkout", "-q", "main")
    # An unrelated commit on main first, so the merge is a real two-parent merge.
    _write(repo, "CHANGELOG.md", f"- {title}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "Update changelog", date=date)
    base = git(repo, "rev-parse", "HEAD")
    git(
        repo,
        "merge",
        "-q",
        "--no-ff",
        branch,
        "-m",
        f"Merge pull request #{number} from dev/{branch}\n\n{title}",
        date=date,
    )
    merge = git(repo, "rev-parse", "HEAD")
    return PRCommitInfo(number, title, base, merge, git(repo, "diff", base, merge))


def _initial_repo(path: Path, remote: str | None, files: dict[str, str], *, date: str) -> ChainRepo:
    """A new repository on `main` (with `remote` as origin) whose first commit holds `files`."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    if remote:
        git(path, "remote", "add", "origin", remote)
    for name, text in files.items():
        _write(path, name, text)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "Initial commit", date=date)
    return ChainRepo(path)


def _with_multiply(ops: str, refused: str, message: str) -> str:
    """`ops` (which has subtract) with an operand check refusing `refused` values put inside
    subtract, between its two lines, and a multiply that checks its operands too."""
    check = "    _check_numbers(a, b)\n"
    return (
        ops.replace("def subtract(a, b):\n", "def subtract(a, b):\n" + check)
        + "\n\ndef multiply(a, b):\n"
        + check
        + "    return a * b\n"
        + "\n\ndef _check_numbers(a, b):\n"
        + f"    if isinstance(a, {refused}) or isinstance(b, {refused}):\n"
        + f"        raise TypeError({message!r})\n"
    )


def make_chain_repo(
    path: Path, *, remote: str | None = "https://github.com/acme/calc.git"
) -> ChainRepo:
    """A small Python project whose history holds a 3-PR reference chain (#1 ← #2 ← #3) and noise.

    #1 adds subtract; #2 ("Follow-up to #1") adds multiply and an operand check it also puts inside
    subtract; #3 (a merge commit, "Fixes #2") adds divide, which uses that check; #4 is an
    unrelated docs PR.
    """
    repo = _initial_repo(
        path,
        remote,
        {
            "calc/__init__.py": "",
            "calc/ops.py": OPS_V0,
            "tests/test_ops.py": TEST_V0,
            "README.md": "# calc\n",
        },
        date="2024-01-01T10:00:00",
    )
    ops1 = OPS_V0 + "\n\ndef subtract(a, b):\n    return a - b\n"
    repo.prs[1] = _squash(
        path,
        1,
        "Add subtract operation",
        "Users asked for subtraction.",
        {
            "calc/ops.py": ops1,
            "tests/test_ops.py": TEST_V0
            + "\n\ndef test_subtract():\n    from calc.ops import subtract\n    assert subtract(5, 3) == 2\n",
        },
        "2024-01-02T10:00:00",
    )
    # #2 builds on #1's code: its operand check goes inside subtract, between #1's two lines.
    ops2 = _with_multiply(ops1, "str", "calc works on numbers")
    repo.prs[2] = _squash(
        path,
        2,
        "Add multiply operation",
        "Follow-up to #1, built on top of it: the calculator also needs products.",
        {"calc/ops.py": ops2},
        "2024-01-03T10:00:00",
    )
    repo.prs[4] = _squash(
        path,
        4,
        "Document the calculator",
        "Docs only.",
        {"README.md": "# calc\n\nA tiny calculator.\n"},
        "2024-01-04T10:00:00",
    )
    ops3 = (
        ops2
        + "\n\ndef divide(a, b):\n    _check_numbers(a, b)\n    if b == 0:\n"
        + "        raise ZeroDivisionError('divide by zero')\n    return a / b\n"
    )
    repo.prs[3] = _merge(
        path,
        3,
        "Add divide operation",
        "divide",
        [
            (
                "Add divide\n\nFixes #2 by completing the arithmetic set on top of it.",
                {"calc/ops.py": ops3},
            )
        ],
        "2024-01-05T10:00:00",
    )
    return repo


SHAPES_V0 = """def square_area(side):
    return side * side
"""

SHAPES_TEST_V0 = """from geo.shapes import square_area


def test_square_area():
    assert square_area(3) == 9
"""

CIRCLE = """

def circle_area(radius):
    return round(3.14159 * radius * radius, 5)
"""

CIRCLE_TESTS = """

import os

import pytest


@pytest.mark.parametrize(("radius", "expected"), [(1, 3.14159), (2, 12.56636)], ids=["unit - r", "r=2"])
def test_circle_area(radius, expected):
    from geo.shapes import circle_area

    assert circle_area(radius) == expected


def test_coin_flip():
    # Flaky on purpose: passes and fails on alternate runs in the same sandbox.
    flag = "/tmp/geo-coin"
    if os.path.exists(flag):
        os.remove(flag)
        raise AssertionError("tails")
    open(flag, "w").close()
"""

RECTANGLE = """

def rectangle_area(width, height):
    _check_size(width, height)
    return width * height


def _check_size(*sizes):
    if any(size < 0 for size in sizes):
        raise ValueError("sizes are never negative")
"""

RECTANGLE_TESTS = """

def test_rectangle_area():
    from geo.shapes import rectangle_area

    assert rectangle_area(2, 3) == 6
"""

# The gold patch of #3 is wrong on purpose: its own new test fails with it applied.
PERIMETER = """

def perimeter(width, height):
    _check_size(width, height)
    return width + height
"""

PERIMETER_TESTS = """from geo.shapes import perimeter


def test_perimeter():
    assert perimeter(2, 3) == 10
"""


def make_tested_repo(
    path: Path, *, remote: str | None = "https://github.com/acme/geo.git"
) -> ChainRepo:
    """A Python project whose PRs carry tests: a 3-PR chain (#1 ← #2 ← #3) for test verdicts.

    #1 adds circle_area with parametrised tests (FAIL_TO_PASS, ids with ` - ` inside) and a flaky
    test; #2 ("Built on #1", a merge commit) adds rectangle_area and its test, and a size check it
    also puts inside circle_area; #3 ("Built on #2") adds a perimeter (size-checked too) whose gold
    patch fails its own new test, so that stage is unusable.
    """
    files = {
        "geo/__init__.py": "",
        "geo/shapes.py": SHAPES_V0,
        "tests/test_shapes.py": SHAPES_TEST_V0,
        "README.md": "# geo\n",
    }
    repo = _initial_repo(path, remote, files, date="2024-02-01T10:00:00")
    shapes1, tests1 = SHAPES_V0 + CIRCLE, SHAPES_TEST_V0 + CIRCLE_TESTS
    repo.prs[1] = _squash(
        path,
        1,
        "Add circle area",
        "Circles are shapes too.",
        {"geo/shapes.py": shapes1, "tests/test_shapes.py": tests1},
        "2024-02-02T10:00:00",
    )
    # #2 builds on #1's code: its size check goes inside circle_area, between #1's two lines.
    checked = shapes1.replace("(radius):\n", "(radius):\n    _check_size(radius)\n")
    shapes2, tests2 = checked + RECTANGLE, tests1 + RECTANGLE_TESTS
    repo.prs[2] = _merge(
        path,
        2,
        "Add rectangle area",
        "rectangle",
        [
            (
                "Add rectangle area\n\nBuilt on #1: rectangles next to circles, in the same module.",
                {"geo/shapes.py": shapes2, "tests/test_shapes.py": tests2},
            )
        ],
        "2024-02-03T10:00:00",
    )
    repo.prs[3] = _squash(
        path,
        3,
        "Add perimeter",
        "Built on #2: rectangles need a perimeter as well.",
        {"geo/shapes.py": shapes2 + PERIMETER, "tests/test_perimeter.py": PERIMETER_TESTS},
        "2024-02-04T10:00:00",
    )
    return repo


SUBTRACT_TEST = """

def test_subtract():
    from calc.ops import subtract

    assert subtract(5, 3) == 2
"""
MULTIPLY_TESTS = """

def test_multiply():
    from calc.ops import multiply

    assert multiply(4, 3) == 12


def test_subtract_refuses_text():
    import pytest

    from calc.ops import subtract

    with pytest.raises(TypeError):
        subtract(True, 1)
"""


UNITS = {
    "calc/units.py": "def metres(feet):\n    return feet * 0.3048\n",
    "tests/test_units.py": "from calc.units import metres\n\n\ndef test_metres():\n"
    "    assert metres(10) == 3.048\n",
}


def make_lending_repo(
    path: Path, *, remote: str | None = "https://github.com/acme/tally.git", units: bool = False
) -> ChainRepo:
    """A 2-PR chain (#1 ← #2) whose first PR changes no test file: its tests come with #2.

    #1 adds subtract and no test; #2 ("Follow-up to #1") puts an operand check inside subtract,
    adds multiply, and tests both PRs' work: test_subtract (which #1 alone passes),
    test_multiply and test_subtract_refuses_text (which need #2). #3 is an unrelated docs PR.
    `units`: #2 also adds a module and a test module that imports it, which does not import at
    #1's stage (tokio #2279 was lent #2325's tests of the semaphore #2325 adds).
    """
    files = {
        "calc/__init__.py": "",
        "calc/ops.py": OPS_V0,
        "tests/test_ops.py": TEST_V0,
        "README.md": "# tally\n",
    }
    repo = _initial_repo(path, remote, files, date="2024-03-01T10:00:00")
    ops1 = OPS_V0 + "\n\ndef subtract(a, b):\n    return a - b\n"
    repo.prs[1] = _squash(
        path,
        1,
        "Add subtract operation",
        "Users asked for subtraction.",
        {"calc/ops.py": ops1},
        "2024-03-02T10:00:00",
    )
    ops2 = _with_multiply(ops1, "bool", "calc works on numbers, not truth values")
    repo.prs[2] = _squash(
        path,
        2,
        "Add multiply operation",
        "Follow-up to #1, built on top of it: products, and tests for both.",
        {"calc/ops.py": ops2, "tests/test_ops.py": TEST_V0 + SUBTRACT_TEST + MULTIPLY_TESTS}
        | (UNITS if units else {}),
        "2024-03-03T10:00:00",
    )
    repo.prs[3] = _squash(
        path,
        3,
        "Document the calculator",
        "Docs only.",
        {"README.md": "# tally\n\nA tiny calculator.\n"},
        "2024-03-04T10:00:00",
    )
    return repo
