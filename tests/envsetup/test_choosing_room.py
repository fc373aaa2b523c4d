"""Which room a stage's era gets where the tree has several (a Python project with a package.json
for its JavaScript tests): the stage's test files choose, else the files its PR changes."""

from __future__ import annotations

from pathlib import Path

import pytest

from prchain.dev.repos import git
from prchain.environments.eras.era import era_of
from prchain.setup.ladder import choosing_paths
from prchain.verdicts.verify import StageJob
from tests.support.eras_repo import commit_files

FILES = {
    "pyproject.toml": '[project]\nname = "docs"\nversion = "1.0"\n',
    "docs/__init__.py": "def build():\n    return 'html'\n",
    "docs/theme.py": "STYLE = 'basic.css_t'\n",
    "tests/test_build.py": "from docs import build\n\n\ndef test_build():\n    assert build()\n",
    "package.json": '{"name": "docs-js", "devDependencies": {"jest": "29.7.0"}}\n',
    "tests/js/searchtools.test.js": "test('x', () => expect(1).toBe(1));\n",
}


def _diff(path: str) -> str:
    return f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-a\n+b\n"


def _job(clone: Path, sha: str, code: str, tests: str = "") -> StageJob:
    gold_tests = _diff(tests) if tests else ""
    return StageJob(1, 1, 1, 7, "acme/docs", str(clone), sha, _diff(code), gold_tests)


@pytest.mark.parametrize(
    ("code", "tests", "room"),
    [
        ("docs/__init__.py", "", "python"),  # sphinx's case: no test, Python code
        ("docs/__init__.py", "tests/test_build.py", "python"),
        ("sphinx/themes/basic/static/searchtools.js", "tests/js/searchtools.test.js", "node"),
        # a theme's static script is no Node package's code: the tree's most files choose
        ("sphinx/themes/basic/static/searchtools.js", "", "python"),
        ("sphinx/themes/basic/static/basic.css_t", "", "python"),  # no room's: the tree's most
    ],
)
def test_a_stage_without_tests_gets_the_room_of_the_code_it_changes(
    tmp_path: Path, code: str, tests: str, room: str
) -> None:
    clone = tmp_path / "docs"
    clone.mkdir()
    git(clone, "init", "-q", "-b", "main")
    commit_files(clone, FILES, "start", "2024-03-01T10:00:00Z")
    sha = git(clone, "rev-parse", "HEAD")
    era = era_of(clone, sha, choosing_paths(_job(clone, sha, code, tests)))
    assert era.ecosystem is not None and era.ecosystem.name == room
    if not tests:  # the test files alone (none): the room owning most of the tree's files
        alone = era_of(clone, sha, [])
        assert alone.ecosystem is not None and alone.ecosystem.name == "python"
