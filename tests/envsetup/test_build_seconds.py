"""A recipe keeps the build time of the build that made its image (issue 50): `env setup --redo`
that finds the image instead of building it, and an era that takes an earlier era's image from
recipe memory, record that build, not a 0-second one that would pull `prchain stats`' mean build
seconds per era down; a `--redo` that does not verify keeps the verified recipe it tried to
replace. Real builds on a repository made here."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner
from sqlalchemy import select
from sqlalchemy.orm import Session

from prchain.cli import main
from prchain.dev.repos import git
from prchain.store.db import session_scope
from prchain.store.models import EnvRecipe
from prchain.store.opener import make_engine
from prchain.verdicts.era_stats import collect
from tests.support.era_runs import offline_eras, remove_repo_images
from tests.support.fake_index import FakeIndex

pytestmark = [pytest.mark.docker, pytest.mark.slow]
REPO = f"py50-seconds-{uuid.uuid4().hex[:8]}/tiny"  # only this module's images carry it
BUILD_SECONDS = "prchain.build_seconds"  # the label an era image records its build time in
TEST = "def test_ok():\n    assert 1 + 1 == 2\n"


def _repository(path: Path) -> Path:
    """Two PRs whose bases are half a year apart: two eras with the same manifests, so the later
    one takes the earlier one's image from recipe memory."""
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    for rel, text in {"app/__init__.py": "", "tests/test_ok.py": TEST}.items():
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        (path / rel).write_text(text)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "Start", date="2024-02-01T12:00:00Z")
    for number, day in ((1, "2024-08-01"), (2, "2024-09-01")):
        (path / f"tests/test_pr{number}.py").write_text(TEST)
        git(path, "add", "-A")
        git(path, "commit", "-q", "-m", f"Check (#{number})\n\nMore.", date=f"{day}T12:00:00Z")
    return path


@pytest.fixture
def own_images(docker_client: Any) -> Iterator[None]:
    yield
    remove_repo_images(docker_client, REPO)


def _recipes(url: str) -> list[EnvRecipe]:
    """The store's recipes, oldest era first."""
    with session_scope(make_engine(url)) as session:
        found = list(session.scalars(select(EnvRecipe).order_by(EnvRecipe.era_date)))
        session.expunge_all()
    return found


def _forget_build_time(docker_client: Any, tag: str) -> None:
    """The same image under the same tag without its build time: one an older prchain built."""
    container = docker_client.api.create_container(tag, ["true"])["Id"]
    try:
        docker_client.api.commit(
            container, *tag.rsplit(":", 1), changes=[f"LABEL {BUILD_SECONDS}="]
        )
    finally:
        docker_client.remove_container(container)


def test_a_reused_image_keeps_the_build_that_made_it(
    tmp_path: Path, own_images: None, base_image: str, sqlite_url: str, docker_client: Any
) -> None:
    clone = _repository(tmp_path / "repo")
    with FakeIndex([]) as index:
        eras = offline_eras(index.url)
        config = tmp_path / "prchain.yaml"
        config.write_text(yaml.safe_dump({"eras": eras, "chains": {"min_chain_code_lines": 0}}))
        common = ["--config", str(config), "--db", sqlite_url]

        def run(*args: str) -> None:
            result = CliRunner().invoke(main, [*args, *common], catch_exceptions=False)
            assert result.exit_code == 0, result.output

        run("mine", "--source", "git", "--name", REPO, str(clone))
        run("chains", "build", "--strategy", "single", "--min-len", "1", "--max-len", "1")
        run("env", "setup")
        built, reused = _recipes(sqlite_url)
        assert (built.method, reused.method) == ("planner", "memory")
        assert built.status == reused.status == "verified" and built.build_seconds > 0
        assert reused.image == built.image and reused.build_seconds == built.build_seconds

        run("env", "setup", "--redo")  # the same recipes: the image is found, not built
        again = _recipes(sqlite_url)
        assert again[0].image == built.image and "building" not in again[0].log
        assert [r.build_seconds for r in again] == [built.build_seconds] * 2  # was 0.0 and 0.0
        labelled = docker_client.image_labels(built.image)[BUILD_SECONDS]
        assert float(labelled) == built.build_seconds  # the image says how long it took

        _forget_build_time(docker_client, built.image)
        run("env", "setup", "--redo")  # an image that does not say: the store's attempts do
        assert [r.build_seconds for r in _recipes(sqlite_url)] == [built.build_seconds] * 2

        # set up again where nothing can verify: the try is said, the verified recipes stay
        failed = CliRunner().invoke(
            main, ["env", "setup", "--redo", "--set", "eras.verify_memory=8m", *common]
        )
        assert failed.exit_code == 1, failed.output
        said = " ".join(failed.output.replace("│", " ").split())  # the table's cells
        assert said.count("the stored verified recipe stays; set up again: ") == 2
        kept = _recipes(sqlite_url)
        assert [(r.status, r.image) for r in kept] == [("verified", built.image)] * 2

    with Session(make_engine(sqlite_url)) as session:
        assert collect(session)["env_build_seconds_per_era"] == built.build_seconds
