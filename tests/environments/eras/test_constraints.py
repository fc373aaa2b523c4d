"""One constraint set per era: manifests that disagree are reconciled by stated rules, every line
left out is said, nested requirement files are read like top-level ones. On repositories made here;
the reconciled set is resolved by uv against a local index (real HTTP)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from uv import find_uv_bin

from prchain.dev.repos import git
from prchain.environments.eras.config import ErasConfig
from prchain.environments.eras.ecosystems import Plan
from prchain.environments.eras.era import era_of
from prchain.environments.eras.manifests import snapshot
from prchain.environments.eras.python import (
    CONSTRAINTS,
    REQUIREMENTS,
    constraint_set,
    written_lines,
)
from tests.support.fake_index import FakeIndex, Release, make_wheel

CI_PIP = """jobs:
  test:
    steps:
      - run: python -m pip install -r requirements/test.txt
      - run: python -m pytest
  docs:
    steps:
      - run: pip install -r requirements/docs.txt
"""


def _era(repo: Path, files: dict[str, str], date: str = "2024-06-01T10:00:00Z") -> Plan:
    """The dated plan of a one-commit repository holding `files` (and a module)."""
    repo.mkdir(exist_ok=True)
    files = {"pkg/__init__.py": "", **files}
    git(repo, "init", "-q", "-b", "main")
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "start", date=date)
    era = era_of(repo, git(repo, "rev-parse", "HEAD"))
    assert era.ecosystem is not None
    return era.ecosystem.plans(era.snap, ErasConfig(suites={"bookworm": "3.11"}))[0]


def _written(plan: Plan, path: str = REQUIREMENTS) -> list[str]:
    found = [written_lines(c, path) for c in plan.commands]
    return next((lines for lines in found if lines is not None), [])


def test_the_file_the_test_run_installs_wins_over_tox_and_tests_require(tmp_path: Path) -> None:
    """requests 2016 and the issue's tox case: `pytest-httpbin==0.0.7` in tests_require against
    `==0.2.0` in requirements.txt; `coverage<5` in tox deps against `coverage>=7` in the file CI
    installs. Concatenated, the era cannot resolve."""
    setup_py = (
        "from setuptools import setup\n"
        "setup(name='req', tests_require=['pytest-httpbin==0.0.7', 'pytest-mock'])\n"
    )
    files = {
        "setup.py": setup_py,
        "requirements.txt": "pytest-httpbin==0.2.0\n",
        "requirements/test.txt": "coverage>=7\npytest-mock>=3,<4\n",
        "requirements/docs.txt": "sphinx==1.0\ncoverage==4.0\n",
        "tox.ini": "[testenv]\ndeps =\n    coverage<5\n    pytest-mock>=3.2\n",
        ".github/workflows/ci.yml": CI_PIP,
    }
    plan = _era(tmp_path, files)
    assert _written(plan) == ["pytest-httpbin==0.2.0", "pytest-mock<4,>=3,>=3.2", "coverage>=7"]
    notes = "\n".join(plan.notes)
    assert (
        "setup.py tests_require: `pytest-httpbin==0.0.7` left out for `pytest-httpbin==0.2.0` of "
        "requirements.txt (the nearer source wins)" in notes
    )
    assert (
        "tox.ini [testenv]: `coverage<5` left out for `coverage>=7` of requirements/test.txt "
        "(the test run installs that)" in notes
    )
    assert "sphinx" not in " ".join(plan.commands)  # the docs job's file is no test requirement


def test_a_pin_wins_over_a_range_of_the_same_rank(tmp_path: Path) -> None:
    files = {
        "requirements-test.txt": "attrs>=21\nsix<1.10\n",
        "requirements-dev.txt": "attrs==19.3.0\nsix==1.16.0 ; python_version >= '3'\nmock ; python_version < '3'\n",
    }  # fmt: skip
    plan = _era(tmp_path, files)
    assert _written(plan) == ["attrs==19.3.0", 'six==1.16.0; python_version >= "3"']
    notes = "\n".join(plan.notes)
    assert "requirements-test.txt: `attrs>=21` left out for `attrs==19.3.0`" in notes
    assert "(a pin wins over a range)" in notes
    assert "`six<1.10` left out for `six==1.16.0 ; python_version >= '3'`" in notes


def test_nested_files_are_cleaned_like_top_level_ones(tmp_path: Path) -> None:
    """The issue's three instances: tests.txt includes `-r` a file holding `-e .[testutil]`; the
    era's setuptools cannot build the tree editable, so the extra goes to the project's install."""
    files = {
        "setup.py": "from setuptools import setup\nsetup(name='Pkg', extras_require={'testutil': []})\n",
        "requirements/tests.txt": "-r base.txt\n-c constraints.txt\npytest-xdist  # parallel\n",
        "requirements/base.txt": "-e .[testutil]\n-e git+https://x/y.git#egg=y\n--index-url https://x\n"
        "idna==2.8 \\\n    --hash=sha256:abc\npkg==1.0\n-r missing.txt\n",
        "requirements/constraints.txt": "idna<3\nurllib3<1.26\n",
    }  # fmt: skip
    plan = _era(tmp_path, files)
    assert _written(plan) == ["idna==2.8", "pytest-xdist"]
    assert _written(plan, CONSTRAINTS) == ["urllib3<1.26"]
    install = plan.commands[-4]
    assert f"'.[testutil]' -r {REQUIREMENTS} -c {CONSTRAINTS}" in install
    assert "-e" not in install.split() and "requirements/base.txt" not in install
    notes = "\n".join(plan.notes)
    for left in ("-e git+https://x/y.git#egg=y", "--index-url https://x", "pkg==1.0",
                 "-r missing.txt"):  # fmt: skip
        assert f"`{left}` left out" in notes, left


def test_factors_that_test_a_floor_or_an_integration_are_not_the_eras(tmp_path: Path) -> None:
    """attrs 2017: `oldattrs: attrs==17.4.0` tests the floor; a `twisted` factor an integration
    whose old sdists the resolver refuses. The runner's own factor stays."""
    tox = (
        "[testenv]\ndeps =\n    oldattrs: attrs==17.4.0\n    twisted: twisted\n"
        "    pytest: pytest>=3\n    py3: mock\n    attrs>=19\n"
    )
    plan = _era(tmp_path, {"tox.ini": tox})
    assert _written(plan) == ["pytest>=3", "mock", "attrs>=19"]
    notes = "\n".join(plan.notes)
    assert "`oldattrs: attrs==17.4.0` left out (a factor's env" in notes
    assert "`twisted: twisted` left out" in notes


def test_the_reconciled_set_resolves_where_the_concatenation_does_not(tmp_path: Path) -> None:
    """uv against a local index: the manifests' lines as they are ask for coverage<5 and >=7."""
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    releases = [
        Release(n, v, d, make_wheel(wheels, n, v, {f"{n}/__init__.py": ""}))
        for n, v, d in (
            ("coverage", "4.5", "2019-01-01T00:00:00Z"),
            ("coverage", "7.0", "2021-01-01T00:00:00Z"),
        )
    ]
    files = {
        "requirements/test.txt": "coverage>=7\n",
        "tox.ini": "[testenv]\ndeps =\n    coverage<5\n",
        ".github/workflows/ci.yml": CI_PIP,
    }
    plan = _era(tmp_path / "repo", files)
    era = era_of(tmp_path / "repo", git(tmp_path / "repo", "rev-parse", "HEAD"))
    assert constraint_set(era.snap, "3.11", False).requirements == ["coverage>=7"]
    target = tmp_path / "reqs.txt"
    write = next(c for c in plan.commands if c.endswith(REQUIREMENTS))
    subprocess.run(write.replace(REQUIREMENTS, str(target)), shell=True, check=True)
    with FakeIndex(releases) as index:

        def resolve(*args: str) -> subprocess.CompletedProcess[str]:
            command = [find_uv_bin(), "pip", "install", "--dry-run", "--no-cache"]
            command += ["--python", sys.executable, "--index-url", index.url, *args]
            return subprocess.run(command, capture_output=True, text=True)

        assert resolve("coverage<5", "-r", str(tmp_path / "repo/requirements/test.txt")).returncode
        done = resolve("-r", str(target))
    assert done.returncode == 0 and "coverage==7.0" in done.stderr, done.stderr


@pytest.mark.parametrize("ci", ["", "      - run: pip install tox\n      - run: tox -e py\n"])
def test_tox_is_the_test_run_when_ci_runs_it_or_says_nothing(tmp_path: Path, ci: str) -> None:
    files = {
        "requirements/test.txt": "coverage>=7\n",
        "tox.ini": "[testenv]\ndeps =\n    -r{toxinidir}/requirements/test.txt\n    coverage<5\n",
    }
    if ci:
        files[".github/workflows/ci.yml"] = "jobs:\n  t:\n    steps:\n" + ci
    plan = _era(tmp_path, files)
    # tox names the file: it is the run's own and wins over tox's plain line.
    assert _written(plan) == ["coverage>=7"]


def test_a_requirements_file_below_the_root_that_tox_names_is_read_with_what_it_names(
    tmp_path: Path,
) -> None:
    """pyinstaller 2020: tox installs `-r {toxinidir}/tests/requirements-tools.txt`, which holds
    flaky (its setup.cfg passes `--force-flaky` to pytest) and names `../requirements.txt`; the
    snapshot read requirement files at the root only, so flaky was never installed and every run
    stopped on pytest's usage error. A file no manifest names stays out, and out of the era."""
    files = {
        "requirements.txt": "altgraph\n",
        "tests/requirements-tools.txt": "-r ../requirements.txt\npytest\nflaky\n",
        "tests/requirements-heavy.txt": "-r requirements-tools.txt\nPySide2==5.14.0\n",
        "docs/requirements.txt": "sphinx\n",
        "tox.ini": (
            "[testenv]\ndeps =\n    -r {toxinidir}/tests/requirements-tools.txt\n\n"
            "[testenv:docs]\ndeps =\n    -r {toxinidir}/docs/requirements.txt\n"
        ),
    }
    plan = _era(tmp_path / "repo", files)
    assert _written(plan) == ["altgraph", "pytest", "flaky"]
    snap = snapshot(tmp_path / "repo", "HEAD")
    assert "tests/requirements-heavy.txt" not in snap.files
    before = era_of(tmp_path / "repo", "HEAD").key
    (tmp_path / "repo/tests/requirements-tools.txt").write_text("-r ../requirements.txt\npytest\n")
    (tmp_path / "repo/tests/requirements-heavy.txt").write_text("PySide2==5.15.0\n")
    git(tmp_path / "repo", "commit", "-q", "-am", "tools", date="2024-06-02T10:00:00Z")
    assert era_of(tmp_path / "repo", "HEAD").key != before  # flaky went: another environment
    (tmp_path / "repo/tests/requirements-heavy.txt").write_text("PySide2==5.15.2\n")
    (tmp_path / "repo/docs/requirements.txt").write_text("sphinx\nfuro\n")  # docs' own env
    git(tmp_path / "repo", "commit", "-q", "-am", "heavy", date="2024-06-03T10:00:00Z")
    assert "docs/requirements.txt" in snapshot(tmp_path / "repo", "HEAD").files
    assert era_of(tmp_path / "repo", "HEAD").key == era_of(tmp_path / "repo", "HEAD~1").key


def test_the_projects_own_line_in_tox_deps_gives_its_extras(tmp_path: Path) -> None:
    """tenacity 2021: tox installs `.[doc]`, whose extra holds tornado, which the tests import;
    its version comes from pbr, which reads git (absent from the build's tree) unless told."""
    setup_cfg = "[metadata]\nname = pkg\n\n[options.extras_require]\ndoc =\n    tornado\n"
    tox = "[testenv]\ndeps =\n    .[doc]\n    -e {toxinidir}[speed]\n    pytest\n"
    plan = _era(tmp_path, {"setup.py": "import setuptools\nsetuptools.setup(pbr=True)\n",
                           "setup.cfg": setup_cfg, "tox.ini": tox})  # fmt: skip
    install = plan.commands[-4]
    assert f"'.[doc,speed]' -r {REQUIREMENTS}" in install and "PBR_VERSION=0.0.0 " in install
    assert _written(plan) == ["pytest"]


PDM_2024 = """[project]
name = "pkg"
requires-python = ">=3.8"
dependencies = ["attrs>=23.1.0"]

[tool.pdm.dev-dependencies]
lint = ["black>=23.3.0"]
test = ["hypothesis>=6.79.4", "pytest>=7.4.0", "-e file:///${PROJECT_ROOT}/#egg=pkg"]
docs = ["sphinx>=5.3.0"]
"""


@pytest.mark.parametrize(
    ("pyproject", "wanted"),
    [
        # cattrs 2024: hypothesis is named only in pdm's test group (tox runs `pdm sync -G test`).
        (PDM_2024, ["hypothesis>=6.79.4", "pytest>=7.4.0"]),
        ('[project]\nname = "pkg"\n\n[tool.uv]\ndev-dependencies = ["pytest-mock>=3"]\n',
         ["pytest-mock>=3"]),
    ],
)  # fmt: skip
def test_dev_groups_of_pdm_and_uv_are_the_test_runs(
    tmp_path: Path, pyproject: str, wanted: list[str]
) -> None:
    """Tools' dev groups from before PEP 735 are read; lint and docs groups are not the run's."""
    plan = _era(tmp_path, {"pyproject.toml": pyproject})
    assert _written(plan) == wanted
    assert not any("black" in c or "sphinx" in c for c in plan.commands)
