"""The era key and the Python planner, on real git repositories made here (no container)."""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from prchain.dev.repos import git
from prchain.environments.eras.config import ErasConfig
from prchain.environments.eras.ecosystems import Plan
from prchain.environments.eras.era import era_of
from prchain.environments.eras.manifests import Snapshot
from prchain.environments.eras.python import (
    REQUIREMENTS,
    choose_interpreter,
    constraint_set,
    extras,
    poetry_dev,
    requirement_files,
    tox_deps,
    tox_env_deps,
    written_lines,
)
from prchain.environments.eras.python import (
    tests_require as read_tests_require,
)
from prchain.environments.eras.python.nox_sessions import NoxInstalls, nox_installs
from prchain.environments.images import DOCKERFILE

SETUP_2016 = """from setuptools import setup
setup(
    name="oldpkg",
    version="1.2.0",
    install_requires=["six"],
    extras_require={"tests": ["pytest", "mock"], "docs": ["sphinx"]},
    classifiers=[
        "Programming Language :: Python :: 2.7",
        "Programming Language :: Python :: 3.5",
    ],
)
"""
TOX = "[tox]\nenvlist = py27,py35\n\n[testenv]\ndeps =\n    pytest\n    py27: mock\n    git+https://example.com/x.git\n    {[base]deps}\ncommands = pytest {posargs}\n"
PYPROJECT_2024 = """[project]
name = "newpkg"
version = "3.0"
requires-python = ">=3.10"
dependencies = ["attrs>=23"]

[project.optional-dependencies]
testing = ["pytest>=8", "hypothesis"]

[tool.pytest.ini_options]
testpaths = ["tests"]

[tool.setuptools_scm]
write_to = "src/newpkg/_version.py"

[tool.ruff]
line-length = 100
"""
WORKFLOW = """on: push
jobs:
  test:
    strategy:
      matrix:
        python-version: ["3.10", "3.11", "3.12"]
"""


def _written(plan: Plan, path: str = REQUIREMENTS) -> list[str]:
    """The reconciled requirements a plan's build writes."""
    found = [written_lines(c, path) for c in plan.commands]
    return next((lines for lines in found if lines is not None), [])


def _commit(repo: Path, files: dict[str, str], date: str) -> str:
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "change", date=date)
    return git(repo, "rev-parse", "HEAD")


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    git(tmp_path, "init", "-q", "-b", "main")
    return tmp_path


def test_a_2016_setup_py_project_gets_the_oldest_suite_and_a_tooling_floor(repo: Path) -> None:
    sha = _commit(
        repo,
        {"setup.py": SETUP_2016, "tox.ini": TOX, "oldpkg/__init__.py": "", "testing/test_a.py": ""},
        "2016-05-02T10:00:00Z",
    )
    era = era_of(repo, sha)
    assert era.ecosystem is not None and era.ecosystem.name == "python"
    assert extras(era.snap) == ["tests"]
    assert tox_deps(era.snap) == ["pytest", "mock"]  # factor kept, URL and substitution left out
    plans = era.ecosystem.plans(era.snap, ErasConfig())
    assert [p.variant for p in plans] == ["dated", "interpreter-floor"]
    dated = plans[0]
    assert (dated.suite, dated.interpreter) == ("bullseye", "3.9")
    assert dated.cutoff == "2016-05-02T10:00:00Z"
    assert dated.test_command == "python -m pytest -p no:cacheprovider testing"
    install = next(c for c in dated.commands if "'.[tests]'" in c)
    assert "--exclude-newer 2016-05-02T10:00:00Z" in install and install.endswith(
        f"'.[tests]' -r {REQUIREMENTS} setuptools"  # every virtualenv had setuptools then
    )
    assert _written(dated) == ["pytest", "mock"]
    tools = next(c for c in dated.commands if c.startswith("uv pip install"))
    assert "--exclude-newer 2021-01-01T00:00:00Z" in tools  # pytest of 2016 does not run on 3.9
    # uv's fallback build backend needs setuptools>=40.8 (2019); old sdists need it before 46 (2020)
    assert "--exclude-newer-package setuptools=2020-03-01T00:00:00Z" in install
    assert "/work/repo >" in " ".join(dated.commands)  # flat layout: the repo root is imported


def test_a_2024_pyproject_project(repo: Path) -> None:
    files = {
        "pyproject.toml": PYPROJECT_2024,
        ".github/workflows/ci.yml": WORKFLOW,
        "src/newpkg/__init__.py": "",
        "requirements/tests.txt": "pytest-xdist\n",
        "requirements/docs.txt": "sphinx\n",
    }
    era = era_of(repo, _commit(repo, files, "2024-11-20T10:00:00Z"))
    assert era.ecosystem is not None
    (plan,) = era.ecosystem.plans(era.snap, ErasConfig())
    assert (plan.suite, plan.interpreter) == ("bookworm", "3.11")  # CI tests up to 3.12
    assert plan.test_command == "python -m pytest -p no:cacheprovider"  # testpaths configured
    assert requirement_files(era.snap) == ["requirements/tests.txt"]
    assert "/work/repo/src >" in " ".join(plan.commands)
    assert plan.setup_command.startswith("[ -e src/newpkg/_version.py ] || printf")
    assert choose_interpreter(era.snap, {"trixie": "3.13"})[0] == "trixie"


def test_an_interpreter_the_ci_tried_before_its_release_is_not_the_eras(repo: Path) -> None:
    """flask 2022-05: CI ran "3.11-dev"; cffi 1.15.0 (pinned) has no 3.11 wheel and no build."""
    workflow = (
        "jobs:\n  t:\n    strategy:\n      matrix:\n        python: ['3.9', '3.10', '3.11-dev']\n"
    )
    files = {"setup.py": "", ".github/workflows/tests.yaml": workflow, "src/app/__init__.py": ""}
    era = era_of(repo, _commit(repo, files, "2022-05-12T10:00:00Z"))
    suites = {"bullseye": "3.9", "bookworm": "3.11"}
    assert choose_interpreter(era.snap, suites)[:2] == ("bullseye", "3.9")


def test_the_era_key_follows_the_environment_not_every_change(repo: Path) -> None:
    files = {"pyproject.toml": PYPROJECT_2024, "src/newpkg/__init__.py": ""}
    first = era_of(repo, _commit(repo, files, "2024-02-01T10:00:00Z")).key
    code = _commit(repo, {"src/newpkg/core.py": "x = 1\n"}, "2024-02-02T10:00:00Z")
    bumped = _commit(
        repo,
        {
            "pyproject.toml": PYPROJECT_2024.replace('version = "3.0"', 'version = "3.1"').replace(
                "line-length = 100", "line-length = 90"
            )
        },
        "2024-03-01T10:00:00Z",
    )
    assert era_of(repo, code).key == first
    assert era_of(repo, bumped).key == first  # a version bump and a linter setting are no new era
    deps = _commit(
        repo,
        {"pyproject.toml": PYPROJECT_2024.replace("attrs>=23", "attrs>=24")},
        "2024-03-02T10:00:00Z",
    )
    assert era_of(repo, deps).key != first
    later = _commit(repo, {"README": "x\n"}, "2024-09-01T10:00:00Z")
    assert era_of(repo, later).key != era_of(repo, deps).key  # another half-year


def test_tox_factor_alternatives_give_one_requirement_per_package() -> None:
    """pluggy 2015: `pytest27: pytest>=2.7,<2.8` and `pytest: pytest>=2.8.0.dev1` are alternatives."""

    tox = (
        "[testenv]\ndeps=\n    pytest27: pytest>=2.7.0,<2.8.0\n    pytest: pytest>=2.8.0.dev1\n"
        "    mock\n    py26: Mock==1.0\n    coverage\n"
    )
    snap = Snapshot("0" * 40, datetime(2015, 5, 28, tzinfo=UTC), {"tox.ini": tox})
    assert tox_deps(snap) == ["pytest>=2.8.0.dev1", "mock", "coverage"]

    # flask 2021: `click7: click<8` is the env on the previous click; the era's own comes from
    # requirements/tests.txt (click==8.0.1), and both at once ask for the impossible.
    tox = "[testenv]\ndeps =\n    -r requirements/tests.txt\n    click7: click<8\n    py36: mock\n"
    snap = Snapshot("0" * 40, datetime(2021, 5, 21, tzinfo=UTC), {"tox.ini": tox})
    assert tox_deps(snap) == ["mock"]


def test_a_pinned_requirements_file_does_not_pin_the_project_itself(repo: Path) -> None:
    files = {
        "setup.py": 'from setuptools import setup\nsetup(name="click", version="8.0.dev")\n',
        "requirements/dev.txt": "Click==7.1.2\nclick-log==0.3\npip-tools==5.5.0\n",
        "src/click/__init__.py": "",
    }
    era = era_of(repo, _commit(repo, files, "2021-02-01T10:00:00Z"))
    assert era.ecosystem is not None
    plan = era.ecosystem.plans(era.snap, ErasConfig())[0]
    assert _written(plan) == ["click-log==0.3", "pip-tools==5.5.0"]
    assert "requirements/dev.txt: `Click==7.1.2` left out (the project itself)" in plan.notes
    assert f"-r {REQUIREMENTS}" in " ".join(plan.commands)


def test_extras_assigned_by_subscript_count(repo: Path) -> None:
    setup_py = (
        'EXTRAS_REQUIRE = {"docs": ["sphinx"], "tests_no_zope": ["hypothesis", "pytest"]}\n'
        'EXTRAS_REQUIRE["tests"] = EXTRAS_REQUIRE["tests_no_zope"] + ["zope.interface"]\n'
        "from setuptools import setup\nsetup(name='attrs', extras_require=EXTRAS_REQUIRE)\n"
    )
    era = era_of(repo, _commit(repo, {"setup.py": setup_py}, "2021-08-10T10:00:00Z"))
    assert extras(era.snap) == ["tests"]


def test_the_extras_ci_installs_for_its_tests_are_installed(repo: Path) -> None:
    """python-lsp-server 2022: its workflow runs `pip install -e .[all,test]`, and the tests of
    its plugins import rope and pycodestyle, which only `all` brings (7 modules did not import).
    A docs job's extra is not the suite's, nor a release workflow's (it runs no tests), nor is an
    extra the project does not declare."""
    pyproject = (
        '[project]\nname = "python-lsp-server"\n\n[project.optional-dependencies]\n'
        'all = ["rope>=0.10.5", "pycodestyle"]\ndocs = ["sphinx"]\ntest = ["pytest"]\n'
    )
    workflow = (
        "jobs:\n  test:\n    steps:\n      - run: pip install -e .[all,test]\n      - run: pytest\n"
        '  docs:\n    steps:\n      - run: pip install ".[docs, plugins]"\n'
    )
    release = "jobs:\n  publish:\n    steps:\n      - run: pip install .[release]\n"
    files = {
        "pyproject.toml": pyproject.replace(
            'docs = ["sphinx"]', 'docs = ["sphinx"]\nrelease = ["twine"]'
        ),
        ".github/workflows/test-linux.yml": workflow,
        ".github/workflows/release.yml": release,
    }
    era = era_of(repo, _commit(repo, files, "2022-11-03T10:00:00Z"))
    assert extras(era.snap) == ["test", "all"]


NOXFILE = """import nox
from nox_poetry import Session, session

INTEGRATIONS = ["flask"]


@session(python=["3.11"], name="Tests", tags=["tests"])
def tests(session: Session) -> None:
    session.run_always("poetry", "install", external=True)
    session.install("-e.[cli]", "-r", "requirements/ci.txt", "--upgrade", "pip")
    session.run("pytest", "-n", "auto")


@session(python=["3.11"], name="CLI tests")
def tests_cli(session: Session) -> None:
    session._session.install("uvicorn")
    session.run("pip", "install", "starlette>=0.18")
    session.run("python", "-m", "pytest", "tests/cli")


@nox.session
@nox.parametrize("django", ["4.2.0"])
def tests_django(session, django):
    session.install(f"django~={django}")
    session.install(*INTEGRATIONS)
    session.install("pytest-django")
    for integration in INTEGRATIONS:
        session.install("pytest-" + integration)
    if django == "4.2.0":
        session.install("pytest-django-queries")
    session.run("pytest", "-m", "django")


@nox.session
def minimums(session):
    session.install("mypy", "--resolution=lowest-direct")
    session.run("pytest")


@nox.session
def lint(session):
    session.install("ruff")
    session.run("ruff", "check", ".")
"""


def test_what_the_nox_sessions_that_run_pytest_install_is_installed(repo: Path) -> None:
    """strawberry 2023: its "CLI tests" session installs uvicorn and starlette, which no
    dependency group names; without them every test of tests/cli failed to import (#2911's new
    tests were gold-failing). Only literal installs at the top level of a session named for tests
    count: a lint session's, a variant's (`minimums`, a parametrized session's `pytest-django`
    without its Django, an f-string, an install under `for` or `if`) are other envs, and pip is
    the era's. CI runs nox, so its requirements rank as tox's do when
    tox is the run."""
    files = {
        "pyproject.toml": '[project]\nname = "berry"\n\n[project.optional-dependencies]\n'
        'cli = ["typer"]\ndocs = ["sphinx"]\n',
        "noxfile.py": NOXFILE,
        "requirements/ci.txt": "coverage==7.2.0\n",
        ".github/workflows/test.yml": "jobs:\n  test:\n    steps:\n      - run: nox -t tests\n",
    }
    era = era_of(repo, _commit(repo, files, "2023-08-24T10:00:00Z"))
    found = nox_installs(era.snap)
    assert found.requirements == ["uvicorn", "starlette>=0.18"]
    assert (found.files, found.extras, found.sessions) == (["requirements/ci.txt"], ["cli"], ["tests", "tests_cli"])  # fmt: skip
    assert "cli" in extras(era.snap)
    wanted = constraint_set(era.snap, "3.11", relax=False)
    assert {"uvicorn", "starlette>=0.18", "coverage==7.2.0"} <= set(wanted.requirements)
    left_out = {"ruff", "pytest-django", "pytest-django-queries", "pytest-flask", "mypy", "pip"}
    assert not left_out & set(wanted.requirements)
    assert (
        "noxfile.py: uvicorn, starlette>=0.18 from its test sessions (tests, tests_cli)"
        in wanted.notes
    )
    (repo / "noxfile.py").write_text("def broken(:\n")  # a file that does not parse adds nothing
    era = era_of(repo, _commit(repo, {}, "2023-08-25T10:00:00Z"))
    assert nox_installs(era.snap) == NoxInstalls()


def test_poetry_dev_groups_keep_their_constraints() -> None:
    """strawberry 2023-06: `channels = "^3.0.5"` in its dev group, read as a bare name, installed
    channels 4.0 under the era's date cutoff, and its test helpers' daphne import failed. A caret,
    a table with extras and a python marker, a list of constraints and a path dependency."""
    pyproject = (
        '[tool.poetry]\nname = "strawberry-graphql"\n\n[tool.poetry.dependencies]\n'
        'python = "^3.7"\n\n[tool.poetry.group.dev.dependencies]\nchannels = "^3.0.5"\n'
        'pytest-xdist = {extras = ["psutil"], version = "^3.1.0"}\n'
        'starlite = {version = ">=1.48.0", python = ">=3.8", extras = ["testing"]}\n'
        'numpy = [{version = "^1.21", python = "<3.12"}, {version = "^1.26", python = ">=3.12"}]\n'
        'local-helper = {path = "./helper"}\nrequests = "*"\n\n'
        '[tool.poetry.group.docs.dependencies]\nsphinx = "^6"\n'
    )
    snap = Snapshot("0" * 40, datetime(2023, 6, 1, tzinfo=UTC), {"pyproject.toml": pyproject})
    assert poetry_dev(snap) == [
        "channels<4.0.0,>=3.0.5",
        "pytest-xdist[psutil]<4.0.0,>=3.1.0",
        'starlite[testing]>=1.48.0; python_version >= "3.8"',
        'numpy<2.0,>=1.21; python_version < "3.12"',
        'numpy<2.0,>=1.26; python_version >= "3.12"',
        "local-helper",
        "requests",
    ]
    found = constraint_set(snap, "3.11", relax=False)
    assert "channels<4.0.0,>=3.0.5" in found.requirements


def test_tests_require_and_the_tox_env_of_the_interpreter_are_installed(repo: Path) -> None:
    """marshmallow 2013: unittest2 only in tests_require, unittest2py3k only in [testenv:py33]."""
    setup_py = (
        "TESTS = ['nose', 'unittest2']\nfrom setuptools import setup\n"
        "setup(name='old', tests_require=TESTS, classifiers=['Programming Language :: Python :: 3.3'])\n"
    )
    tox = (
        "[testenv]\ndeps = nose\n\n[testenv:py27]\ndeps = unittest2\n\n"
        "[testenv:py33]\ndeps =\n    unittest2py3k\n    nose==1.3\n"
    )
    files = {"setup.py": setup_py, "tox.ini": tox, "setup.cfg": "[options]\ntests_require = pytz\n"}
    era = era_of(repo, _commit(repo, files, "2013-12-18T10:00:00Z"))
    assert era.ecosystem is not None
    assert read_tests_require(era.snap) == ["pytz", "nose", "unittest2"]
    assert tox_env_deps(era.snap, "3.9") == ["unittest2py3k", "nose==1.3"]
    plan = era.ecosystem.plans(era.snap, ErasConfig())[0]
    assert plan.commands[-4].endswith(f" . -r {REQUIREMENTS} setuptools")
    # One line per package; the interpreter's tox env pins nose (a pin wins over a range).
    assert _written(plan) == ["pytz", "nose==1.3", "unittest2", "unittest2py3k"]


def test_a_stage_older_than_its_interpreter_drops_the_runners_pins(repo: Path) -> None:
    """marshmallow 2015 pins pytest==2.8.0, which does not run on 3.9; a 2023 stage keeps its pins."""
    reqs = (
        "pytest==2.8.0\npytest-cov==2.2.0\npy==1.4.30 ; python_version > '3'\n"
        "iniconfig==1.0.0\nPluggy[dev]>=0.3,<0.4\nsix==1.10.0\n"
    )
    files = {"setup.py": "from setuptools import setup\nsetup(name='old')\n"}
    files["dev-requirements.txt"] = reqs
    files["tox.ini"] = "[testenv]\ndeps =\n    pytest>=2.7,<2.9\n    mock==1.0\n"
    era = era_of(repo, _commit(repo, files, "2015-10-01T10:00:00Z"))
    assert era.ecosystem is not None
    for plan in era.ecosystem.plans(era.snap, ErasConfig()):
        # The file wins over tox's deps (rank); the runner's pins go, other pins stay.
        assert _written(plan) == [
            "pytest",
            "mock==1.0",
            "pytest-cov==2.2.0",
            'py; python_version > "3"',
            "iniconfig",
            "Pluggy[dev]",
            "six==1.10.0",
        ]
    later = era_of(
        repo, _commit(repo, {"setup.py": files["setup.py"] + "#\n"}, "2023-06-01T10:00:00Z")
    )
    assert later.ecosystem is not None
    (plan,) = later.ecosystem.plans(later.snap, ErasConfig())
    # Its own time's pins stay: the file's pin wins over tox's range, which it satisfies.
    assert _written(plan)[:2] == ["pytest==2.8.0", "mock==1.0"]


def test_a_pair_of_test_runs_takes_the_side_that_installs_more(repo: Path) -> None:
    """pyjwt 2021: the tests run with and without the `crypto` extra; the planner took `tests`
    alone and every test of the stage's files skipped (`cryptography` missing). A lone env with a
    factor of its own (`mypy`) is still no test run."""
    tox = (
        "[tox]\nenvlist =\n    lint\n    py{36,37,38,39}-{crypto,nocrypto}\n    mypy\n\n"
        "[testenv]\nextras =\n    tests\n    crypto: crypto\n    mypy: tests-mypy\n"
    )
    setup = (
        "from setuptools import setup\nsetup(name='jwtlike', extras_require="
        "{'tests': [], 'crypto': ['cryptography'], 'tests-mypy': []})\n"
    )
    era = era_of(repo, _commit(repo, {"setup.py": setup, "tox.ini": tox}, "2021-03-01T10:00:00Z"))
    assert era.ecosystem is not None
    assert extras(era.snap) == ["tests", "crypto"]


def test_tox_extras_vcs_lines_floor_factors_and_date_tags(repo: Path) -> None:
    """envval's flask and marshmallow roots: what a plan must not install, and what it must."""
    files = {
        "setup.py": "from setuptools import setup\nsetup(name='flask', extras_require={'tests': []})\n",
        "setup.cfg": "[egg_info]\ntag_build = .dev\ntag_date = 1\n\n[aliases]\nrelease = x\n",
        "tox.ini": "[testenv]\nextras =\n    tests,reco\n    mypy: tests-mypy\n    py311-tests: cov\ndeps =\n    greenlet\n    lowest: Jinja2==2.4\n"
        "    py27-lowest: Werkzeug==0.7\n    release: blinker\n",
        "requirements-dev.txt": "-e .\ngit+git://github.com/x/werkzeug.git#egg=Werkzeug\n"
        "Werkzeug @ https://example.com/w.zip\nhg+https://h/x\nsix==1.10.0\n",
        ".travis-devel-requirements.txt": "git+git://github.com/mitsuhiko/jinja2.git\n",
        # flask 2022: the floor and the development-heads variants of the tests' pins
        "requirements/tests-pallets-min.txt": "click==8.0.0\n",
        "requirements/tests-pallets-dev.txt": "click @ https://github.com/pallets/click/x.tar.gz\n",
    }
    era = era_of(repo, _commit(repo, files, "2025-02-01T10:00:00Z"))
    assert era.ecosystem is not None
    assert extras(era.snap) == ["tests", "reco", "cov"]
    assert tox_deps(era.snap) == ["greenlet", "blinker"]
    assert requirement_files(era.snap) == ["requirements-dev.txt"]
    (plan,) = era.ecosystem.plans(era.snap, ErasConfig(suites={"trixie": "3.13"}))
    for command in plan.commands:
        if command.startswith("sed"):
            subprocess.run(command.replace("/opt/prchain/src/", f"{repo}/"), shell=True, check=True)
    assert _written(plan) == ["greenlet", "blinker", "six==1.10.0"]
    assert (repo / "setup.cfg").read_text() == "[egg_info]\n\n[aliases]\nrelease = x\n"
    assert plan.commands[-4].endswith(f"'.[tests,reco,cov]' -r {REQUIREMENTS}")
    left = "\n".join(plan.notes)
    for line in ("lowest: Jinja2==2.4", "git+git://github.com/x/werkzeug.git#egg=Werkzeug",
                 "Werkzeug @ https://example.com/w.zip", "hg+https://h/x"):  # fmt: skip
        assert f"`{line}` left out" in left, line


def test_a_copy_of_the_project_from_the_index_never_shadows_the_agents_tree(
    repo: Path, tmp_path: Path
) -> None:
    """A test tool that needs a newer project than the stage's (hypothesis ← attrs) may bring the
    project from the index; its files go like the tree's own install, so /work/repo imports."""
    from uv import find_uv_bin

    from prchain.environments.eras.python import finish_commands
    from tests.support.fake_index import make_wheel

    files = {"setup.py": "from setuptools import setup\nsetup(name='My.Lib')\n"}
    era = era_of(repo, _commit(repo, files, "2021-02-01T10:00:00Z"))
    venv, wheels = tmp_path / "venv", tmp_path / "wheels"
    wheels.mkdir()
    subprocess.run([find_uv_bin(), "venv", "-q", str(venv)], check=True)
    for name in ("my_lib", "other"):
        wheel = make_wheel(wheels, name, "9.0", {f"{name}/__init__.py": "X = 1\n"})
        subprocess.run(
            [find_uv_bin(), "pip", "install", "-q", "--python", str(venv), str(wheel)], check=True
        )
    strip = finish_commands(era.snap)[0].replace("/opt/venv", str(venv))
    done = subprocess.run(strip, shell=True, check=True, capture_output=True, text=True)
    assert "kept only the name of my_lib" in done.stdout
    site = next(venv.glob("lib/python3*/site-packages"))
    assert not (site / "my_lib").exists() and (site / "other/__init__.py").exists()
    info = site / "my_lib-9.0.dist-info"
    assert [p.name for p in info.iterdir()] == ["METADATA"]  # no RECORD, README or entry points
    assert (info / "METADATA").read_text().splitlines()[1:] == ["Name: my_lib", "Version: 0+sealed"]


def test_a_python_2_only_project_says_so_with_its_failure(repo: Path) -> None:
    """flask 2012: classifiers and tox name Python 2 only; the one line names that first."""
    from prchain.setup.ladder import _first_root_error
    from prchain.verdicts.outcomes import Counts

    setup_py = (
        "from setuptools import setup\nsetup(name='flask', classifiers=[\n"
        "    'Programming Language :: Python :: 2.5', 'Programming Language :: Python :: 2.7'])\n"
    )
    files = {"setup.py": setup_py, "tox.ini": "[tox]\nenvlist = py25,py26,py27,pypy\n"}
    era = era_of(repo, _commit(repo, files, "2012-06-25T10:00:00Z"))
    assert era.ecosystem is not None
    plans = era.ecosystem.plans(era.snap, ErasConfig())
    caveat = "declares Python 2.5, 2.6, 2.7 only; no Python 2 here"
    assert [p.caveat for p in plans] == [caveat, caveat]
    attempts = [
        {"method": "planner", "caveat": caveat, "root_error": "build failed: SyntaxError: x"},
        {"method": "planner", "caveat": caveat, "root_error": "build failed: other"},
    ]
    assert _first_root_error(attempts, Counts()) == f"{caveat} — build failed: SyntaxError: x"
    # A later attempt that built and ran the suite names the real blocker (flask 2014: greenlet).
    ran = {"method": "planner", "counts": {"passed": 4}, "root_error": "ModuleNotFoundError: x"}
    assert _first_root_error([attempts[1], ran], Counts()) == "ModuleNotFoundError: x"
    # A project that names Python 3 anywhere has no caveat.
    later = era_of(
        repo, _commit(repo, {"tox.ini": "[tox]\nenvlist = py27,py33\n"}, "2013-06-01T10:00:00Z")
    )
    assert later.ecosystem is not None
    assert {p.caveat for p in later.ecosystem.plans(later.snap, ErasConfig())} == {""}


def test_a_legacy_pytest_section_in_setup_cfg_runs_from_an_ini_of_the_image(
    repo: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """flask 2015: `[pytest]` in setup.cfg, which pytest >= 4 refuses; the stage keeps its files."""
    import sys

    from prchain.environments.eras.python import LEGACY_INI, finish_commands

    files = {
        "setup.cfg": "[pytest]\naddopts = -q\npython_files =\n    check_*.py\n",
        "tests/check_a.py": "def test_a():\n    assert True\n",
    }
    era = era_of(repo, _commit(repo, files, "2015-04-01T10:00:00Z"))
    image = tmp_path_factory.mktemp("image")  # outside the repository
    venv, bin_dir = Path(sys.executable).parent.parent, image / "bin"
    bin_dir.mkdir()
    paths = {
        "/opt/venv": str(venv),
        "/usr/local/bin": str(bin_dir),
        LEGACY_INI: str(image / "pytest.ini"),
        "/work/repo": str(repo),
    }
    for command in finish_commands(era.snap)[2:]:  # the ini and the wrappers
        for old, new in paths.items():
            command = command.replace(old, new)
        subprocess.run(command, shell=True, check=True)
    assert (image / "pytest.ini").read_text().startswith("[pytest]\naddopts = -q\n")
    plain = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "tests"],
        cwd=repo, capture_output=True, text=True,
    )  # fmt: skip
    assert plain.returncode != 0 and "no longer supported" in plain.stdout + plain.stderr
    wrapped = subprocess.run(
        [str(bin_dir / "python"), "-m", "pytest", "-p", "no:cacheprovider", "tests"],
        cwd=repo, capture_output=True, text=True,
    )  # fmt: skip
    assert wrapped.returncode == 0 and "1 passed" in wrapped.stdout, wrapped.stdout
    assert git(repo, "status", "--porcelain") == ""  # the stage's files are untouched
    # The agent and the hidden tests run as other users: the ini must not sit in a root-only
    # directory of the repository image (its Dockerfile makes /opt/prchain 0700).
    assert "chmod 0700 /opt/prchain" in DOCKERFILE and not LEGACY_INI.startswith("/opt/prchain/")


def test_an_import_hook_failure_is_retried_without_assertion_rewriting(repo: Path) -> None:
    """flask 2014–2018: get_root_path asks pytest's rewriting hook for is_package()."""
    era = era_of(
        repo, _commit(repo, {"setup.py": "", "tests/test_a.py": ""}, "2018-02-01T10:00:00Z")
    )
    assert era.ecosystem is not None
    plan = era.ecosystem.plans(era.snap, ErasConfig())[0]
    log = (
        "E   AttributeError: AssertionRewritingHook.is_package() method is missing but is required"
    )
    assert era.ecosystem.revise(era.snap, ErasConfig(), plan, "E   KeyError: x", True) is None
    revised = era.ecosystem.revise(era.snap, ErasConfig(), plan, log, True)
    assert revised is not None and revised.commands == plan.commands  # the same image
    assert revised.test_command == "python -m pytest -p no:cacheprovider --assert=plain tests"
    assert revised.variant.endswith("+assert-plain")
    assert era.ecosystem.revise(era.snap, ErasConfig(), revised, log, True) is None  # once
    # tests verify narrows the command to the stage's files and keeps the flag.
    assert era.ecosystem.report.narrowed(revised.test_command) == (
        "python -m pytest -p no:cacheprovider --assert=plain {files}"
    )


def test_the_projects_console_scripts_are_on_the_agents_path(repo: Path, tmp_path: Path) -> None:
    """python-dotenv 2016: its tests run the `dotenv` command; every program of the venv gets a
    wrapper like python and pytest do (the activation scripts do not)."""
    from prchain.environments.eras.python import finish_commands

    era = era_of(repo, _commit(repo, {"setup.py": ""}, "2016-03-16T10:00:00Z"))
    venv, bin_dir = tmp_path / "venv", tmp_path / "bin"
    (venv / "bin").mkdir(parents=True)
    bin_dir.mkdir()
    for name, text in {"dotenv": "#!/bin/sh\necho env:$1\n", "activate": "x", "python": ""}.items():
        (venv / "bin" / name).write_text(text)
        (venv / "bin" / name).chmod(0o755)
    wrappers = finish_commands(era.snap)[-1]
    wrappers = wrappers.replace("/opt/venv", str(venv)).replace("/usr/local/bin", str(bin_dir))
    subprocess.run(wrappers, shell=True, check=True)
    assert sorted(p.name for p in bin_dir.iterdir()) == ["dotenv", "python"]
    done = subprocess.run([str(bin_dir / "dotenv"), "list"], capture_output=True, text=True)
    assert done.stdout == "env:list\n"


def test_a_suite_of_modules_not_named_test_star_is_collected_again(repo: Path) -> None:
    """arrow 2016 (`tests/api_tests.py`), markupsafe 2017 (`tests.py`): pytest ran no test; the
    suite runs again on the same image collecting every *test*.py, and tests verify keeps that."""
    import sys

    files = {"setup.py": "", "tests/api_tests.py": "def test_api():\n    assert True\n"}
    era = era_of(repo, _commit(repo, files, "2016-11-27T10:00:00Z"))
    assert era.ecosystem is not None
    plan = era.ecosystem.plans(era.snap, ErasConfig())[0]
    command = plan.test_command.replace("python", sys.executable, 1).split()
    before = subprocess.run(command, cwd=repo, capture_output=True, text=True)
    assert before.returncode == 5 and "no tests ran" in before.stdout
    revised = era.ecosystem.revise(era.snap, ErasConfig(), plan, before.stdout, True)
    assert revised is not None and revised.commands == plan.commands  # the same image
    assert revised.variant == "dated+any-test-file"
    command = revised.test_command.replace("python", sys.executable, 1).split()
    after = subprocess.run(command, cwd=repo, capture_output=True, text=True)
    assert after.returncode == 0 and "1 passed" in after.stdout, after.stdout
    assert era.ecosystem.revise(era.snap, ErasConfig(), revised, before.stdout, True) is None
    narrowed = era.ecosystem.report.narrowed(revised.test_command)
    assert (
        narrowed
        == "python -m pytest -p no:cacheprovider --override-ini=python_files=*test*.py {files}"
    )


def test_a_nested_project_is_not_the_suite_when_pytest_walks_the_whole_tree(repo: Path) -> None:
    """bitarray 2023: its tests live in the package (no tests/ directory, no testpaths), and
    examples/puff is another project with its own setup.py and C extension, which its test imports:
    collected with the suite, it fails the whole verification with a collection error."""
    files = {
        "setup.py": "from setuptools import setup, Extension\nsetup(name='bits')\n",
        "bits/__init__.py": "ONE = 1\n",
        "bits/test_bits.py": "from bits import ONE\n\n\ndef test_one():\n    assert ONE == 1\n",
        "examples/puff/setup.py": "from setuptools import setup, Extension\nsetup(name='puff')\n",
        "examples/puff/test_puff.py": "import _puff\n\n\ndef test_puff():\n    assert _puff\n",
        "examples/puff/sub/pyproject.toml": "[project]\nname = 'inner'\n",
        "examples/growth/test.py": "",
    }
    era = era_of(repo, _commit(repo, files, "2023-08-05T10:00:00Z"))
    assert era.ecosystem is not None
    plan = era.ecosystem.plans(era.snap, ErasConfig())[0]
    assert plan.test_command == "python -m pytest -p no:cacheprovider --ignore=examples/puff"
    run = subprocess.run(
        [sys.executable, *plan.test_command.split()[1:]], cwd=repo, capture_output=True, text=True
    )
    assert run.returncode == 0 and "1 passed" in run.stdout, run.stdout


BANDIT_LIKE_CFG = """[metadata]
name = my-lib

[entry_points]
console_scripts =
    mytool = my_lib.cli:main
my_lib.plugins =
    # one plugin, as pbr's projects comment them
    shout = my_lib.plugins:shout
pytest11 =
    mine = my_lib.pytest_plugin
"""


# The names in two groups, as Python 3.9 (a dict of groups) and 3.10 on (`select`) give them.
ENTRY_POINTS_OF = """import importlib.metadata as m
found = m.entry_points()
named = lambda g: [e.name for e in (found.select(group=g) if hasattr(found, "select") else found.get(g, []))]
print(named("my_lib.plugins"), named("pytest11"))
"""


def _oldest_era_python() -> str:
    """The interpreter of the oldest suite an era starts from (own_points.py runs on it), when
    this machine has it (pyenv's builds); else this one, which still checks the behaviour."""
    oldest = min(ErasConfig().suites.values(), key=lambda v: tuple(map(int, v.split("."))))
    found = sorted(Path.home().glob(f".pyenv/versions/{oldest}.*/bin/python{oldest}"))
    return str(found[-1]) if found else shutil.which(f"python{oldest}") or sys.executable


@pytest.mark.parametrize("installed", [True, False])
def test_the_projects_entry_points_and_scripts_come_from_each_stages_tree(
    repo: Path, tmp_path: Path, installed: bool
) -> None:
    """PyCQA/bandit (held out): its plugins are entry points (loaded by stevedore) and its tests
    run `bandit`; with the project's .dist-info stripped, 73 of 263 tests of its 2022 era failed
    and the program came from Debian's `python3-bandit`. Here the real build steps run in a real
    venv, with the image's paths moved into tmp: the entry points and the console script are the
    tree's as each stage writes them, on the end of the agent's PATH, and a script its tree drops
    is no command any more; the image names no script. With the project not installed (a bare
    requirements build), a .dist-info of its name is made."""
    from uv import find_uv_bin

    from prchain.environments.eras.python import (
        OWN_POINTS_SCRIPT,
        finish_commands,
        own_points,
        setup_command,
    )
    from prchain.environments.sandbox_spec import AGENT_ENV
    from tests.support.fake_index import make_wheel

    tree = {
        "setup.cfg": BANDIT_LIKE_CFG,
        "setup.py": "from setuptools import setup\nsetup(setup_requires=['pbr'], pbr=True)\n",
        "my_lib/__init__.py": "",
        "my_lib/cli.py": "import sys\n\ndef main():\n    print('tool', sys.argv[1:])\n    return 3\n",
        "my_lib/plugins.py": "def shout(s):\n    return s.upper()\n",
    }
    era = era_of(repo, _commit(repo, tree, "2022-01-30T10:00:00Z"))
    venv, own = tmp_path / "venv", tmp_path / "own"
    uv = [find_uv_bin(), "venv", "-q", "--python", _oldest_era_python(), str(venv)]
    subprocess.run(uv, check=True)
    if installed:  # the build's install of the project, with its entry points and script
        wheel = make_wheel(tmp_path, "my-lib", "1.7.2", {"my_lib/__init__.py": "LATER = 1\n"})
        subprocess.run(
            [find_uv_bin(), "pip", "install", "-q", "--python", str(venv), str(wheel)], check=True
        )
    moved = {
        "/opt/venv": str(venv),
        OWN_POINTS_SCRIPT: str(tmp_path / "own_points.py"),
        own_points.POINTS: str(own / "points.txt"),
        own_points.BIN: str(own / "bin"),
        "/work/repo": str(repo),
    }
    path = AGENT_ENV["PATH"].replace(own_points.BIN, str(own / "bin"))
    assert path.endswith(f":{own / 'bin'}")

    def run(command: str, cwd: Path = tmp_path) -> subprocess.CompletedProcess[str]:
        for image_path, here in moved.items():
            command = command.replace(image_path, here)
        env = {"PATH": path, "HOME": str(tmp_path)}
        return subprocess.run(command, shell=True, cwd=cwd, env=env, capture_output=True, text=True)

    build = finish_commands(era.snap)
    assert not any("mytool" in command for command in build)
    for command in build:
        assert run(command).returncode == 0, command
    site = next(venv.glob("lib/python3*/site-packages"))
    infos = list(site.glob("my_lib-*.dist-info"))
    assert [(i / "entry_points.txt").readlink() for i in infos] == [own / "points.txt"]

    assert run(setup_command(era.snap), cwd=repo).returncode == 0  # a stage's own step
    found = run(f"{venv}/bin/python -c {shlex.quote(ENTRY_POINTS_OF)}")
    assert found.stdout == "['shout'] []\n"  # pytest11 stays the seal's
    tool = run("mytool one two")
    assert (tool.stdout, tool.returncode) == ("tool ['one', 'two']\n", 3)

    # a later stage's tree without the script: no such command
    (repo / "setup.cfg").write_text(BANDIT_LIKE_CFG.replace("    mytool = my_lib.cli:main\n", ""))
    assert run(setup_command(era.snap), cwd=repo).returncode == 0
    assert run("mytool").returncode == 127


def test_declared_entry_points_in_each_manifest_form() -> None:
    """setup.cfg (setuptools' and pbr's sections), a setup.py literal (inline or bound to a
    name), PEP 621 and poetry tables; pytest11 left to the seal; nothing without a declaration."""
    from prchain.environments.eras.python.own_points import declared

    texts = {
        "setup.py": "POINTS = {'console_scripts': ['a = p.cli:main']}\n"
        "setup(name='p', entry_points=POINTS)\nsetup(entry_points={'p.x': 'b = p.b'})\n",
        "pyproject.toml": '[project.scripts]\nc = "p.c:main"\n'
        '[project.entry-points."p.x"]\nd = "p.d"\n[tool.poetry.plugins.pytest11]\ne = "p.e"\n',
        "setup.cfg": "[options.entry_points]\nconsole_scripts =\n  f = p.f:Main\n",
    }
    assert declared(lambda path: texts.get(path, "")) == {
        "console_scripts": {"f": "p.f:Main", "a": "p.cli:main", "c": "p.c:main"},
        "p.x": {"b": "p.b", "d": "p.d"},
    }
    assert declared(lambda path: "") == {}
