"""A dependency of the era that does not build here is taken as its first wheel for the interpreter.

Against the local index (real HTTP, PEP 691 JSON with upload times); the end-to-end test builds an
era image with uv in Docker: the era's `cext` is an sdist whose build fails, the plan is revised to
cext's first wheel for the suite's python and the era verifies, saying that it deviates.
"""

from __future__ import annotations

import platform
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from sqlalchemy import select

from prchain.cli import main
from prchain.dev.repos import git
from prchain.environments.eras.ecosystems import Plan
from prchain.environments.eras.wheels import failed_package, interpreter_tags, lifted
from prchain.store.db import session_scope
from prchain.store.models import EnvRecipe
from prchain.store.opener import make_engine
from tests.support.era_runs import offline_eras, remove_repo_images
from tests.support.fake_index import FakeIndex, Release, make_failing_sdist, make_wheel

ARCH = platform.machine()
UV_LOG = """+ uv pip install --exclude-newer 2021-02-01T12:00:00Z -r requirements.txt
Resolved 1 package in 10ms
  x Failed to build `cext==1.0`
  |-> The build backend returned an error
  `-> Call to `broken.build_wheel` failed (exit status: 1)
      RuntimeError: gcc: error: command failed with exit status 1
"""


def _releases(folder: Path, py: str) -> list[Release]:
    module = {"cext/__init__.py": "def version():\n    return '{}'\n"}

    def wheel(version: str, tag: str) -> Path:
        return make_wheel(
            folder, "cext", version, {k: v.format(version) for k, v in module.items()}, tag
        )

    return [
        Release("cext", "1.0", "2020-06-01T00:00:00Z",
                make_failing_sdist(folder, "cext", "1.0", "gcc: error: command failed")),
        # Wheels that do not install on the suite: another interpreter, a newer glibc.
        Release("cext", "1.1", "2021-03-01T00:00:00Z", wheel("1.1", f"cp27-cp27mu-manylinux1_{ARCH}")),
        Release("cext", "1.2", "2021-04-01T00:00:00Z", wheel("1.2", f"{py}-{py}-manylinux_2_99_{ARCH}")),
        Release("cext", "1.5", "2021-06-01T10:00:00.250000Z", wheel("1.5", f"{py}-{py}-manylinux_2_17_{ARCH}")),
        Release("cext", "2.0", "2023-06-01T00:00:00Z", wheel("2.0", f"{py}-{py}-manylinux_2_17_{ARCH}")),
    ]  # fmt: skip


def _plan(suite: str, interpreter: str) -> Plan:
    cutoff = "2021-02-01T12:00:00Z"
    return Plan(
        "python",
        suite,
        interpreter,
        cutoff,
        ["uv venv -q /opt/venv", f"uv pip install --exclude-newer {cutoff} -r requirements.txt"],
        "python -m pytest tests",
        notes=[f"python {interpreter} on {suite}"],
    )


def test_the_failed_dependency_is_read_from_uv_output() -> None:
    assert failed_package(UV_LOG) == ("cext", "1.0")
    assert failed_package("error: Failed to download and build `zope-interface==4.4.3`") == (
        "zope-interface",
        "4.4.3",
    )
    # The project itself, and the build tools (they have their own floor), are not lifted.
    assert failed_package("Failed to build `attrs @ file:///opt/prchain/src`") is None
    assert failed_package("Failed to build `setuptools==40.0.0`") is None
    assert failed_package("error: No solution found when resolving dependencies") is None


def test_the_tags_follow_the_suites_interpreter_and_glibc() -> None:
    tags = {str(t) for t in interpreter_tags("3.9", "bullseye")}
    assert f"cp39-cp39-manylinux_2_31_{ARCH}" in tags and f"cp39-abi3-manylinux1_{ARCH}" in tags
    assert "py3-none-any" in tags
    assert f"cp39-cp39-manylinux_2_34_{ARCH}" not in tags  # bullseye's glibc is 2.31
    assert not any(t.startswith("cp311") for t in tags)


def test_the_plan_is_lifted_to_the_first_wheel_that_installs(tmp_path: Path) -> None:
    with FakeIndex(_releases(tmp_path, "cp39")) as index:
        revised = lifted(_plan("bullseye", "3.9"), UV_LOG, index.url)
        assert revised is not None
        flags = "--exclude-newer-package cext=2021-06-01T10:00:01Z --only-binary cext "
        assert revised.commands[0] == "uv venv -q /opt/venv"
        assert revised.commands[1].startswith(f"uv pip install {flags}--exclude-newer 2021-02-01")
        assert revised.variant == "dated+cext-wheel"
        assert "cext==1.0" in revised.notes[-1] and "1.5 of 2021-06-01" in revised.notes[-1]
        assert "deviates from the era" in revised.notes[-1]
        # Lifted once already: it failed again, nothing more to try.
        assert lifted(revised, UV_LOG, index.url) is None
        # No wheel for this interpreter at all (3.13 on trixie): no revision.
        assert lifted(_plan("trixie", "3.13"), UV_LOG, index.url) is None
        # The index does not know the package: no revision either.
        assert lifted(_plan("bullseye", "3.9"), UV_LOG.replace("cext", "nosuch"), index.url) is None


# ---- end to end: env setup revises the plan and the era verifies ------------------------------------

REPO = f"eras-test-{uuid.uuid4().hex[:8]}/uses-cext"


def _repository(path: Path) -> Path:
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    files = {
        "requirements.txt": "cext\n",
        "app/__init__.py": "import cext\n\n\ndef which():\n    return cext.version()\n",
        "tests/test_which.py": "from app import which\n\n\ndef test_which():\n    assert which()\n",
    }
    for message, date in (("Start", "2021-02-01T12:00:00Z"), ("Add a check (#1)\n\nMore.", "")):
        for rel, text in files.items():
            (path / rel).parent.mkdir(parents=True, exist_ok=True)
            (path / rel).write_text(text)
        git(path, "add", "-A")
        git(path, "commit", "-q", "-m", message, date=date or "2021-03-01T12:00:00Z")
        files = {"tests/test_more.py": "from app import which\n\n\ndef test_more():\n    assert which() == '1.5'\n"}  # fmt: skip
    return path


@pytest.fixture
def own_images(docker_client: Any) -> Iterator[None]:
    """Remove, afterwards, the era and the repository image this test built, and nothing else."""
    yield
    remove_repo_images(docker_client, REPO)


@pytest.mark.docker
@pytest.mark.slow
def test_env_setup_takes_the_first_wheel_when_the_eras_sdist_does_not_build(
    tmp_path: Path, own_images: None, base_image: str, sqlite_url: str
) -> None:
    (tmp_path / "files").mkdir()
    with FakeIndex(_releases(tmp_path / "files", "cp311")) as index:
        config = tmp_path / "prchain.yaml"
        eras = offline_eras(index.url)
        config.write_text(yaml.safe_dump({"eras": eras, "chains": {"min_chain_code_lines": 0}}))
        common = ["--config", str(config), "--db", sqlite_url]
        clone = _repository(tmp_path / "repo")
        for args in (
            ["mine", "--source", "git", "--name", REPO, str(clone)],
            ["chains", "build", "--strategy", "single", "--min-len", "1", "--max-len", "1"],
            ["env", "setup"],
        ):
            result = CliRunner().invoke(main, [*args, *common], catch_exceptions=False)
            assert result.exit_code == 0, result.output
    assert "1 eras for 1 stages: 1 verified (1 by planner), 0 not" in result.output
    with session_scope(make_engine(sqlite_url)) as session:
        recipe = session.scalars(select(EnvRecipe)).one()
        session.expunge_all()
    attempts = recipe.verification["attempts"]
    assert [a["variant"] for a in attempts] == ["dated", "dated+cext-wheel"]
    assert "Failed to build `cext==1.0`" in attempts[0]["root_error"]
    assert recipe.variant == "dated+cext-wheel" and recipe.verification["passed"] == 1
    assert "cext==1.5" in recipe.log and "cext==2.0" not in recipe.log
    assert "deviates from the era" in recipe.notes[-1]
