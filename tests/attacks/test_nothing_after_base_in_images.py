"""Issue 52, class 1 (acceptance 2): an era image is built on the era's latest stage base, so every
file the project's own install leaves in it must be gone. A generated repository whose later
commit changes the README (the long description), the package metadata (its version too) and a
console script; the era image is built on that later commit, as `env setup` does for an era. No
byte of it may be readable in the image, nor by the agent in the sandbox of the earlier stage.

Before the fix the image kept the project's .dist-info (METADATA with the README, RECORD, entry
points), its console scripts and the compiled modules of the later commit."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from prchain.dev.repos import git

REPO = f"seal-test-{uuid.uuid4().hex[:8]}/futurepkg"
MARKS = (
    "FUTUREREADME7f3a",
    "FUTUREMETA91bc",
    "FUTURECODE55e2",
    "futurepkg-later",
    "later_cli",
    "futurever7c1d",  # the later commit's version (a local label: letters no binary holds)
)
PYPROJECT = """[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "futurepkg"
version = "VERSION"
description = "DESCRIPTION"
readme = "README.md"

[project.scripts]
SCRIPTS
[tool.setuptools]
packages = ["futurepkg"]
"""
CLI = "def main():\n    print('hello')\n"
TEST = "from futurepkg.cli import main\n\n\ndef test_main():\n    assert main() is None\n"


def _commit(path: Path, files: dict[str, str], date: str) -> str:
    for rel, text in files.items():
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        (path / rel).write_text(text)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", f"change of {date}", date=date)
    return git(path, "rev-parse", "HEAD").strip()


def make_future_repo(path: Path) -> tuple[str, str]:
    """(B_1, B_2): the later commit's README, description and console script carry MARKS."""
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    first = _commit(
        path,
        {
            "pyproject.toml": PYPROJECT.replace("DESCRIPTION", "A package.")
            .replace("VERSION", "1.0")
            .replace("SCRIPTS", 'futurepkg-cli = "futurepkg.cli:main"\n'),
            "README.md": "# futurepkg\n",
            "futurepkg/__init__.py": "",
            "futurepkg/cli.py": CLI,
            "tests/test_cli.py": TEST,
        },
        "2024-03-01T12:00:00Z",
    )
    scripts = 'futurepkg-cli = "futurepkg.cli:main"\nfuturepkg-later = "futurepkg.later_cli:main"\n'
    later = _commit(
        path,
        {
            "pyproject.toml": PYPROJECT.replace("DESCRIPTION", "FUTUREMETA91bc")
            .replace("VERSION", "1.1+futurever7c1d")
            .replace("SCRIPTS", scripts),
            "README.md": "# futurepkg\n\nFUTUREREADME7f3a: tomorrow's changelog\n",
            "futurepkg/later_cli.py": "MARK = 'FUTURECODE55e2'\n\n\n" + CLI,
        },
        "2024-03-05T12:00:00Z",
    )
    return first, later


@pytest.fixture(scope="module")
def future(
    tmp_path_factory: pytest.TempPathFactory, docker_client: Any, base_image: str
) -> Iterator[tuple[Path, str, str, str]]:
    """The repository, its two commits, and the era image built on the later one."""
    from prchain.environments.config import EnvironmentConfig
    from prchain.environments.eras.build import cache_volume, ensure_era_image
    from prchain.environments.eras.config import ErasConfig
    from prchain.environments.eras.manifests import snapshot
    from prchain.environments.eras.python import Python

    clone = tmp_path_factory.mktemp("future") / "futurepkg"
    first, later = make_future_repo(clone)
    eras = ErasConfig(
        suites={"bookworm": "3.11"},
        extra_base_packages=[],
        test_packages=[],
        seed_packages=[],
        system_site_packages=True,
    )
    plan = Python().plans(snapshot(clone, later), eras)[0]
    built = ensure_era_image(
        docker_client,
        EnvironmentConfig(),
        eras,
        repo=REPO,
        clone=clone,
        sha=later,
        plan=plan,
        era_key="py311",
    )
    assert built.image_id, built.log[-3000:]
    yield clone, first, later, built.tag
    for kind in ("repo", "era"):
        for image in docker_client.images({"prchain.repo": REPO, "prchain.kind": kind}):
            for tag in image["tags"]:
                docker_client.remove_image(tag)
    docker_client.remove_volume(cache_volume(eras, REPO))


GREP = (
    "grep -rla --exclude-dir=proc --exclude-dir=sys --exclude-dir=dev "
    + " ".join(f"-e {m}" for m in MARKS)
    + " / 2>/dev/null; echo searched"
)


@pytest.mark.docker
@pytest.mark.slow
def test_no_file_of_the_era_image_holds_a_later_commit(docker_client: Any, future: Any) -> None:
    _clone, _first, _later, tag = future
    from prchain.environments.docker_client import ContainerSpec

    container = docker_client.run(
        ContainerSpec(
            image=tag,
            name=f"prchain-seal-{uuid.uuid4().hex[:8]}",
            labels={"prchain.test": "seal-future"},
            environment={},
        )
    )
    try:
        raw = docker_client.exec(
            container, ["sh", "-c", GREP], user="root", workdir="/", env={}, limit=1 << 20
        )
        found = raw.output.decode().split()
        assert found == ["searched"], found
        # The project's name stays, so importlib.metadata.version() still answers: with no
        # commit's version (the build's is the later commit's).
        raw = docker_client.exec(
            container,
            [
                "/opt/venv/bin/python",
                "-c",
                "import importlib.metadata as m; print(m.version('futurepkg'))",
            ],
            user="root",
            workdir="/",
            env={},
            limit=1 << 16,
        )
        assert raw.output.decode().strip() == "0+sealed"
    finally:
        docker_client.remove_container(container)


@pytest.mark.docker
@pytest.mark.slow
def test_the_earlier_stage_reads_nothing_of_the_later_commit(
    docker_client: Any, future: Any
) -> None:
    from prchain.environments.config import EnvironmentConfig
    from prchain.environments.docker_env import DockerEnvironment
    from prchain.environments.protocol import StageSpec

    clone, first, later, tag = future
    stages = [StageSpec(1, first, "", image=tag), StageSpec(2, later, "", image=tag)]
    with DockerEnvironment(
        EnvironmentConfig(),
        repo=REPO,
        clone_path=str(clone),
        stages=stages,
        labels={"prchain.test": "seal-future"},
        client=docker_client,
    ) as env:
        env.enter_stage(1)
        assert env.execute(GREP, timeout=300).output.split() == ["searched"]
        assert env.execute("python -m pytest -q -p no:cacheprovider tests").exit_code == 0


def test_recipe_memory_never_reuses_a_later_eras_image(engine: Any) -> None:
    """An image planned on a later stage base is no candidate for an earlier era."""
    from prchain.environments.eras.memory import nearest_verified, save_recipe
    from prchain.store.db import session_scope
    from prchain.store.models import Repo

    with session_scope(engine) as session:
        row = Repo(full_name=REPO, source="git", clone_path="/nonexistent")
        session.add(row)
        session.flush()
        repo_id = row.id
    for key, date in (("early", "2023-01-10"), ("late", "2023-06-01")):
        save_recipe(
            engine,
            dict(
                repo_id=repo_id,
                era_key=key,
                ecosystem="python",
                era_date=date,
                base_sha="0" * 40,
                status="verified",
                method="planner",
                image=f"prchain/era-x:{key}",
            ),
        )
    between = nearest_verified(engine, repo_id, "python", "2023-05-20", "now")
    assert between is not None and between["era_key"] == "early"  # "late" is nearer, but later
    assert nearest_verified(engine, repo_id, "python", "2022-12-01", "now") is None
