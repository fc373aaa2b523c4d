"""The deterministic gates in front of the judge, on real git diffs made in a tmp repository."""

from __future__ import annotations

from pathlib import Path

import pytest

from prchain.agent.gates import before_judge, changed_paths, leaking_query
from prchain.chains.reading.patches import is_test_config_path
from prchain.dev.repos import git

GOLD = """diff --git a/calc/ops.py b/calc/ops.py
--- a/calc/ops.py
+++ b/calc/ops.py
@@ -1,2 +1,5 @@
 def add(a, b):
     return a + b
+
+def subtract(a, b):
+    return a - b
"""


def diff_after(tmp_path: Path, files: dict[str, str], mode: str | None = None) -> str:
    """The `git diff` of a real repository after writing `files` over its first commit."""
    repo = tmp_path / "repo"
    (repo / "calc").mkdir(parents=True)
    (repo / "calc/ops.py").write_text("def add(a, b):\n    return a + b\n")
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "base")
    for path, text in files.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    if mode:
        (repo / mode).chmod(0o755)
    git(repo, "add", "-A")
    return git(repo, "diff", "--cached")


def test_no_change_whitespace_or_mode_only_fail_unjudged(tmp_path: Path) -> None:
    assert "changed nothing" in str(before_judge(1, "", GOLD))
    spaced = diff_after(tmp_path, {"calc/ops.py": "def add(a,  b):\n\n    return a + b  \n"})
    assert spaced and changed_paths(spaced) == []
    assert "changed nothing" in str(before_judge(1, spaced, GOLD))


def test_a_mode_change_alone_is_no_change(tmp_path: Path) -> None:
    chmod = diff_after(tmp_path, {}, mode="calc/ops.py")
    assert "old mode" in chmod and "changed nothing" in str(before_judge(2, chmod, GOLD))


def test_only_tests_or_test_configuration_where_gold_changes_code(tmp_path: Path) -> None:
    forcing = "import pytest\n\n@pytest.hookimpl(hookwrapper=True)\ndef pytest_runtest_makereport():\n    yield\n"
    diff = diff_after(
        tmp_path, {"conftest.py": forcing, "tests/test_ops.py": "def test_x(): pass\n"}
    )
    reason = before_judge(1, diff, GOLD)
    assert reason is not None and "only tests or test configuration" in reason
    assert "conftest.py" in reason
    # A test-only gold patch leaves test work to the judge.
    assert before_judge(1, diff, diff) is None


def test_a_real_code_change_is_judged(tmp_path: Path) -> None:
    diff = diff_after(
        tmp_path,
        {"calc/ops.py": "def add(a, b):\n    return a + b\n\ndef sub(a, b):\n    return a - b\n"},
    )
    assert before_judge(1, diff, GOLD) is None
    empty_init = diff_after(tmp_path / "second", {"calc/__init__.py": ""})
    assert changed_paths(empty_init) == ["calc/__init__.py"]  # a new empty file is a change


def test_test_configuration_paths() -> None:
    assert all(
        map(is_test_config_path, ["conftest.py", "a/b/conftest.py", "tox.ini", "pytest.ini"])
    )
    assert not any(map(is_test_config_path, ["calc/ops.py", "setup.py", "pyproject.toml"]))


def test_a_leaking_query_names_its_leaks() -> None:
    assert leaking_query(1, ()) is None
    reason = leaking_query(2, ("subtract", "minuend"))
    assert reason is not None and "minuend, subtract" in reason and "--redo-leaking" in reason


@pytest.mark.parametrize(
    ("diff", "unreadable"),
    [
        (
            "diff --git a/p/__pycache__/m.cpython-311.pyc b/p/__pycache__/m.cpython-311.pyc\n"
            "new file mode 100644\nGIT binary patch\nliteral 10\n",
            True,
        ),
        (
            "diff --git a/p/_speed.so b/p/_speed.so\nBinary files a/p/_speed.so and b/p/_speed.so differ\n",
            True,
        ),
        ("diff --git a/p/m.py b/p/m.py\nBinary files a/p/m.py and b/p/m.py differ\n", True),
        (
            "diff --git a/.gitattributes b/.gitattributes\n--- a/.gitattributes\n+++ b/.gitattributes\n"
            "@@ -1 +1,2 @@\n *.sh text eol=lf\n+*.py -diff\n",
            True,
        ),
        (
            "diff --git a/.gitattributes b/.gitattributes\n--- a/.gitattributes\n+++ b/.gitattributes\n"
            "@@ -0,0 +1 @@\n+*.sh text eol=lf\n",
            False,
        ),
        (
            "diff --git a/logo.png b/logo.png\nBinary files a/logo.png and b/logo.png differ\n",
            False,
        ),
    ],
)
def test_what_the_judge_cannot_read_fails_unjudged(diff: str, unreadable: bool) -> None:
    from prchain.agent.gates import unreadable as gate

    assert (gate(1, diff) is not None) is unreadable


def test_a_reorder_is_a_change_and_whitespace_is_not() -> None:
    from prchain.agent.gates import is_substantive

    head = "diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -1,3 +1,3 @@\n"
    assert is_substantive(head + "-a = 1\n b = a\n+a = 1\n")
    assert not is_substantive(head + "-a = 1\n+a  =  1\n b = a\n")
