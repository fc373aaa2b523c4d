"""A test patch of data alone (a fixture, no test code) is run through the test modules beside it.

svg/svgo (held out): its tests of 2014 are `test/plugins/_index.js`, which runs every
`test/plugins/*.svg` fixture; a PR adds one fixture and no test code, and verification found no
test module to run ("the gold test patch changes no test module the command could run"), so both
stages of its one chain were unusable. Here on real git repositories made in tmp dirs."""

from __future__ import annotations

from pathlib import Path

import pytest

from prchain.dev.repos import git
from prchain.environments.eras.node.report import JsReport
from prchain.environments.eras.python.report import Pytest
from prchain.verdicts.sandbox import DATA_MODULES, data_test_files
from prchain.verdicts.verify import StageJob, stage_test_files
from tests.support.eras_repo import commit_files


def _job(clone: Path) -> StageJob:
    base = git(clone, "rev-parse", "HEAD~1")
    patch = git(clone, "diff", "HEAD~1", "HEAD", "--", "test", "tests") + "\n"
    return StageJob(1, 1, 1, 1, "o/n", str(clone), base, "", patch)


def _history(path: Path, start: dict[str, str], pr: dict[str, str]) -> Path:
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    commit_files(path, start, "Start", "2014-01-01T12:00:00Z")
    commit_files(path, pr, "A fixture (#2)", "2014-01-08T12:00:00Z")
    return path


def test_a_fixture_alone_runs_the_test_module_that_reads_it(tmp_path: Path) -> None:
    start = {
        "lib/clean.js": "module.exports = (s) => s;\n",
        "test/plugins/_index.js": "require('fs').readdirSync(__dirname);\n",
        "test/plugins/clean.01.svg": "<svg/>\n",
        "test/config/_index.js": "// another directory's tests\n",
    }
    pr = {
        "lib/clean.js": "module.exports = (s) => s.trim();\n",
        "test/plugins/clean.02.svg": " <svg/>\n",
    }
    job = _job(_history(tmp_path / "svgo", start, pr))
    assert stage_test_files(job, JsReport()) == ["test/plugins/_index.js"]


def test_a_data_directory_without_modules_looks_one_level_up(tmp_path: Path) -> None:
    start = {
        "pkg/__init__.py": "",
        "tests/test_load.py": "def test_load():\n    pass\n",
        "tests/data/one.json": "{}\n",
    }
    job = _job(_history(tmp_path / "py", start, {"tests/data/two.json": "[]\n"}))
    assert stage_test_files(job, Pytest()) == ["tests/test_load.py"]
    # a test patch with a test module keeps its own scope
    both = {"tests/data/three.json": "1\n", "tests/test_new.py": "def test_new():\n    pass\n"}
    commit_files(Path(job.clone_path), both, "More (#3)", "2014-02-01T12:00:00Z")
    assert stage_test_files(_job(Path(job.clone_path)), Pytest()) == ["tests/test_new.py"]


def test_a_test_patch_that_only_deletes_test_modules_runs_none_of_them(tmp_path: Path) -> None:
    """marshmallow-code/apispec #323 (held out) moves its framework plugins to packages of their
    own and deletes their test modules: the deleted modules were taken for data and run by name,
    pytest stopped at the first missing one, and the verdict read "no test outcome"."""
    start = {
        "pkg/__init__.py": "",
        "pkg/flask.py": "X = 1\n",
        "tests/test_core.py": "def test_core():\n    pass\n",
        "tests/test_flask.py": "def test_flask():\n    pass\n",
    }
    path = _history(tmp_path / "py", start, {"pkg/__init__.py": "# plugins moved out\n"})
    git(path, "rm", "-q", "pkg/flask.py", "tests/test_flask.py")
    git(path, "commit", "-q", "--amend", "--no-edit")
    job = _job(path)
    assert "deleted file mode" in job.gold_test_patch
    assert stage_test_files(job, Pytest()) == []
    # a kept fixture beside a deleted module still runs the modules the base keeps
    gone = {"tests/test_gone.py": "def test_gone():\n    pass\n", "tests/data.json": "{}\n"}
    commit_files(path, gone, "Data (#3)", "2014-02-01T12:00:00Z")
    git(path, "rm", "-q", "tests/test_gone.py")
    commit_files(path, {"tests/data.json": "[]\n"}, "Less (#4)", "2014-03-01T12:00:00Z")
    assert stage_test_files(_job(path), Pytest()) == ["tests/test_core.py"]


def test_a_fixture_tree_far_from_its_test_module_runs_the_modules_that_name_it(
    tmp_path: Path,
) -> None:
    """sqlfluff/sqlfluff (held out): a PR adds `test/fixtures/parser/snowflake/*.sql` and no test
    code; `test/dialects/dialects_test.py` walks `test/fixtures/parser`, two directories away from
    any fixture. Before, the stage read "changes no test module the command could run"."""
    start = {
        "src/dialect.py": "X = 1\n",
        "test/fixtures/parser/ansi/select.sql": "select 1\n",
        "test/dialects/dialects_test.py": '"""Every file of test/fixtures/parser is parsed."""\n',
        "test/dialects/other_test.py": "def test_other():\n    pass\n",
        "test/core/fixtures_test.py": "PATH = 'test/fixtures/cli'\n",
    }
    pr = {
        "src/dialect.py": "X = 2\n",
        "test/fixtures/parser/snowflake/copy_into.sql": "copy into t\n",
        "test/fixtures/parser/snowflake/copy_into.yml": "file: {}\n",
    }
    job = _job(_history(tmp_path / "sqlfluff", start, pr))
    assert stage_test_files(job, Pytest(("*_test.py",))) == ["test/dialects/dialects_test.py"]


def test_no_narrow_scope_when_too_many_modules_would_run() -> None:
    tracked = [f"tests/test_{i}.py" for i in range(DATA_MODULES + 1)]
    patch = "diff --git a/tests/x.json b/tests/x.json\n--- a/tests/x.json\n+++ b/tests/x.json\n@@ -1 +1 @@\n-1\n+2\n"
    assert data_test_files(patch, tracked, Pytest()) == []
    assert data_test_files(patch, tracked[:3], Pytest()) == tracked[:3]


@pytest.mark.parametrize(
    ("prefixes", "runs"),
    [
        ("const cases = ['grid-template', 'grid-area'];\n", "test/prefixes.test.js"),
        ("// no case named\n", "test/browsers.test.js"),  # none names the stem: its directory
    ],
)
def test_past_the_limit_the_modules_that_name_the_data_run(
    tmp_path: Path, prefixes: str, runs: str
) -> None:
    """postcss/autoprefixer (held out): its PRs of 2018 change `test/cases/grid-template.css` and
    its expected output, and no module; `test/` holds 14 modules, of which `autoprefixer.test.js`
    reads each case by name. Before, past DATA_MODULES nothing ran: both stages unusable."""
    start = {f"test/{name}.test.js": "it('works', () => {});\n" for name in "abcdefghijkl"}
    start |= {
        "lib/grid.js": "module.exports = (s) => s;\n",
        "test/cases/grid-template.css": "a {}\n",
        "test/cases/grid-template.out.css": "a {}\n",
        "test/prefixes.test.js": prefixes,
        "test/browsers.test.js": "const config = 'cases/config/test.css';\n",
    }
    pr = {
        "lib/grid.js": "module.exports = (s) => s.trim();\n",
        "test/cases/grid-template.css": "a { grid-template: 1fr }\n",
        "test/cases/grid-template.out.css": "a { -ms-grid: 1fr; grid-template: 1fr }\n",
    }
    job = _job(_history(tmp_path / "autoprefixer", start, pr))
    assert stage_test_files(job, JsReport()) == [runs]


@pytest.mark.parametrize(
    ("config", "text"),
    [
        ("pyproject.toml", '[tool.pytest.ini_options]\npython_files = "tests/*.py"\n'),
        ("setup.cfg", "[tool:pytest]\npython_files = check_*.py tests/*.py\n"),
    ],
)
def test_test_modules_named_as_the_project_s_pytest_config_names_them(
    tmp_path: Path, config: str, text: str
) -> None:
    """PyGithub (held out): its test modules are `tests/Authentication.py` and the like, collected
    through `python_files = "tests/*.py"`; the stages' test patches (a module and its replay data)
    ran nothing: every stage of its three chains unusable."""
    start = {
        config: text,
        "github/Auth.py": "KIND = 'app'\n",
        "tests/Authentication.py": "def testApp():\n    pass\n",
        "tests/ReplayData/Authentication.testApp.txt": "GET\n",
    }
    pr = {
        "github/Auth.py": "KIND = 'app-key'\n",
        "tests/Authentication.py": "def testApp():\n    pass\n\n\ndef testKey():\n    pass\n",
        "tests/ReplayData/Authentication.testKey.txt": "POST\n",
    }
    job = _job(_history(tmp_path / "pygithub", start, pr))
    assert stage_test_files(job, Pytest()) == ["tests/Authentication.py"]
