"""Issue 52, class 2: a repository that is itself a pytest plugin, judged in the sealed room.

The room turns plugin autoloading off and the image holds no entry point of the project's (its
.dist-info is stripped), so a plugin repository's suite lost its own fixtures: every stage failed,
a real fix included. The stage base's `pytest11` declaration is what registers it now, read on the
host from B_t; an entry point the agent adds (in pyproject.toml, setup.cfg or a .dist-info of its
tree) loads nothing."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from prchain.chains.reading.patches import split_patch
from prchain.dev.repos import git
from prchain.verdicts.oracle import StageTests, run_tests
from prchain.verdicts.sandbox import collected_test_files, fill_command
from tests.attacks.test_sandbox_clean_room import FORCE_PASS

pytestmark = pytest.mark.docker

REPO = f"acme-{uuid.uuid4().hex[:8]}/pytest-plug"  # this run's own: its images go by it
PYPROJECT = """[project]
name = "pytest-plug"
version = "1.0"

[project.entry-points.pytest11]
plug = "plugpkg.plugin"
"""
PLUGIN = """import pytest

from plugpkg.core import value


@pytest.fixture
def plug_value():
    return value()
"""
TEST_V0 = (
    "from plugpkg.testing import assert_answer\n\n\n"
    "def test_is_int(plug_value):\n    assert isinstance(plug_value, int)\n"
)
TEST_V1 = TEST_V0 + "\n\ndef test_answer(plug_value):\n    assert_answer(plug_value)\n"
# The project's own assertion helper, which the hidden tests import (not in a test directory).
HELPER = "def assert_answer(value):\n    assert value == 42, value\n"
FIX = "def value():\n    return 42\n"
F2P, P2P = ["tests/test_plug.py::test_answer"], ["tests/test_plug.py::test_is_int"]
COMMAND = "python3 -m pytest -p no:cacheprovider {files}"
# The agent's own entry points, each in a place some tool reads them from.
FORCE_ENTRY = "[pytest11]\nforce = plugpkg.force\n"
ATTACK = {
    "plugpkg/force.py": FORCE_PASS,
    "pyproject.toml": PYPROJECT + 'force = "plugpkg.force"\n',
    "setup.cfg": "[options.entry_points]\npytest11 =\n    force = plugpkg.force\n",
    "pytest_plug-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: pytest-plug\nVersion: 1\n",
    "pytest_plug-1.0.dist-info/entry_points.txt": FORCE_ENTRY,
    "pytest_plug.egg-info/entry_points.txt": FORCE_ENTRY,
}


def _commit(path: Path, files: dict[str, str], date: str) -> str:
    for rel, text in files.items():
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        (path / rel).write_text(text)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", f"change of {date}", date=date)
    return git(path, "rev-parse", "HEAD").strip()


@pytest.fixture(scope="module")
def plug_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, str]:
    """(clone, B_1, gold patch): the PR makes the plugin's fixture answer 42 and tests it."""
    path = tmp_path_factory.mktemp("plug") / "plug"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    files = {
        "pyproject.toml": PYPROJECT,
        "plugpkg/__init__.py": "",
        "plugpkg/core.py": "def value():\n    return 1\n",
        "plugpkg/plugin.py": PLUGIN,
        "plugpkg/testing.py": HELPER,
        "tests/test_plug.py": TEST_V0,
    }
    base = _commit(path, files, "2024-05-01T10:00:00Z")
    merged = _commit(
        path, {"plugpkg/core.py": FIX, "tests/test_plug.py": TEST_V1}, "2024-05-02T10:00:00Z"
    )
    return path, base, git(path, "diff", base, merged)


@pytest.fixture(scope="module")
def own_images(docker_client: Any) -> Iterator[None]:
    """Remove, afterwards, the repository image the sandboxes of this module made."""
    yield
    for image in docker_client.images({"prchain.repo": REPO, "prchain.kind": "repo"}):
        for tag in image["tags"]:
            docker_client.remove_image(tag)


@pytest.fixture
def plug_stage(
    docker_client: Any, base_image: str, plug_repo: Any, own_images: None
) -> Iterator[Any]:
    from prchain.environments.config import EnvironmentConfig
    from prchain.environments.docker_env import DockerEnvironment
    from prchain.environments.protocol import StageSpec

    clone, base, gold = plug_repo
    with DockerEnvironment(
        EnvironmentConfig(),
        repo=REPO,
        clone_path=str(clone),
        stages=[StageSpec(1, base, split_patch(gold).code)],
        labels={"prchain.test": "sandbox-attacks"},
        client=docker_client,
    ) as env:
        env.enter_stage(1)
        yield env


def _hidden(gold: str) -> StageTests:
    patch = split_patch(gold).test
    files = collected_test_files(patch)
    return StageTests(F2P, P2P, fill_command(COMMAND, files), files, patch)


def test_a_plugin_repositorys_suite_runs_with_its_own_plugin(plug_stage, plug_repo) -> None:
    hidden = _hidden(plug_repo[2])
    verdict = run_tests(plug_stage, hidden, timeout=120)
    assert verdict.outcomes.get(P2P[0]) == "passed", verdict.outcomes  # the fixture is there
    assert not verdict.passed and verdict.failing == F2P
    plug_stage.write_file("plugpkg/core.py", FIX)
    assert run_tests(plug_stage, hidden, timeout=120).passed


def test_an_entry_point_the_agent_adds_loads_nothing(plug_stage, plug_repo) -> None:
    for path, text in ATTACK.items():
        plug_stage.write_file(path, text)
    verdict = run_tests(plug_stage, _hidden(plug_repo[2]), timeout=120)
    assert not verdict.passed and verdict.failing == F2P, verdict.outcomes


def test_the_projects_own_plugin_module_rewritten_by_the_agent_forces_nothing(
    plug_stage, plug_repo
) -> None:
    """Issue 77: the module B_t declares as its `pytest11` plugin is loaded with `-p` before any
    test; the agent's copy of it (a `.py`, which crossed) forced every report to pass. The room
    runs the stage base's copy, as it runs the stage base's conftest.py."""
    plug_stage.write_file("plugpkg/plugin.py", PLUGIN + FORCE_PASS)
    verdict = run_tests(plug_stage, _hidden(plug_repo[2]), timeout=120)
    assert not verdict.passed and verdict.failing == F2P, verdict.outcomes
    assert verdict.outcomes.get(P2P[0]) == "passed"  # the base's plugin and its fixture are there
    plug_stage.write_file("plugpkg/core.py", FIX)  # the gold code, the rewritten plugin kept
    assert run_tests(plug_stage, _hidden(plug_repo[2]), timeout=120).passed


def test_the_projects_own_assertion_helper_rewritten_by_the_agent_passes_nothing(
    plug_stage, plug_repo
) -> None:
    """Issue 77: the hidden test calls `plugpkg.testing.assert_answer`; the agent's copy that never
    fails (a `.py` outside any test directory, which crossed) passed a wrong value. A test-support
    module the hidden tests import is sealed like them: the stage base's copy runs."""
    plug_stage.write_file("plugpkg/testing.py", "def assert_answer(value):\n    pass\n")
    verdict = run_tests(plug_stage, _hidden(plug_repo[2]), timeout=120)
    assert not verdict.passed and verdict.failing == F2P, verdict.outcomes
    plug_stage.write_file("plugpkg/core.py", FIX)
    assert run_tests(plug_stage, _hidden(plug_repo[2]), timeout=120).passed


@pytest.mark.parametrize(
    ("files", "modules"),
    [
        ({"pyproject.toml": PYPROJECT}, ("plugpkg.plugin",)),
        (
            {"pyproject.toml": '[tool.poetry.plugins."pytest11"]\nx = "pkg.plug:main"\n'},
            ("pkg.plug",),
        ),
        (
            {"setup.cfg": "[options.entry_points]\npytest11 =\n    mock = pytest_mock\n"},
            ("pytest_mock",),
        ),
        (
            {"setup.py": "setup(entry_points={'pytest11': ['xdist = xdist.plugin'], 'x': []})"},
            ("xdist.plugin",),
        ),
        ({"setup.py": "setup(entry_points=ENTRY)"}, ()),  # not a literal: nothing
        ({"pyproject.toml": '[project.entry-points.pytest11]\nx = "a; rm -rf /"\n'}, ()),
    ],
)
def test_the_stage_bases_plugins_are_read_from_its_manifests(files, modules) -> None:
    """(unit) which modules a stage base declares as pytest plugins."""
    from datetime import UTC, datetime

    from prchain.environments.eras.manifests import Snapshot
    from prchain.environments.eras.python.seal import project_plugins

    snap = Snapshot("0" * 40, datetime(2024, 1, 1, tzinfo=UTC), files, list(files), "")
    assert project_plugins(snap) == modules
