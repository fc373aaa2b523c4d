"""An era that recipe memory's image verifies while leaving test modules out gets its own plan
tried too, and keeps whichever leaves fewer out.

encode/starlette's 2019 era verified on its 2018 era's image: five test modules could not import
what the 2019 requirements.txt had added (aiofiles, graphene, …), every form test failed for want
of python-multipart, and the share still passed. Here the ladder itself (`setup_era`), a real
store, a real git history and the era's real Python plan; the build and the image are the seams':
an "image" is a directory on the host's PYTHONPATH, the suite runs with the host's pytest.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from sqlalchemy import Engine

from prchain.dev.repos import git
from prchain.environments.eras.config import ErasConfig
from prchain.environments.eras.ecosystems import Plan
from prchain.environments.eras.era import Era, era_of
from prchain.environments.protocol import ExecResult
from prchain.setup.ladder import REPORT_PATH, Setup, setup_era
from prchain.store.db import session_scope
from prchain.store.models import EnvRecipe, Repo
from prchain.verdicts.verify import StageJob
from tests.support.eras_repo import commit_files
from tests.support.host_checkout import HostCheckout

REPO = "acme/forms"
MODULES = ("a", "b", "c", "d", "e")  # five: one left out still passes the units' share


class HostImage(HostCheckout):
    """A checkout run with an "image": a directory of packages first on PYTHONPATH, and a
    `python` that is the host's."""

    def __init__(self, where: Path, packages: Path, bin_dir: Path) -> None:
        super().__init__(where)
        self.prefix = f"export PYTHONPATH={packages} PATH={bin_dir}:$PATH; "
        self.report = str(bin_dir.parent / "report.xml")  # the host's, not a sandbox's /tmp

    def execute(self, command: str, timeout: float | None = None) -> ExecResult:
        return super().execute(self.prefix + command.replace(REPORT_PATH, self.report), timeout)

    def read_file(self, path: str) -> str:
        return super().read_file(self.report if path == REPORT_PATH else path)


def _history(path: Path) -> str:
    """A project whose test module e imports `forms_extra`, which its requirements name."""
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    files = {"forms/__init__.py": "", "requirements.txt": "pytest\nforms_extra\n"}
    for name in MODULES:
        body = f"def test_{name}():\n    assert True\n"
        files[f"tests/test_{name}.py"] = ("import forms_extra\n\n\n" if name == "e" else "") + body
    commit_files(path, files, "start", "2024-05-01T12:00:00Z")
    return git(path, "rev-parse", "HEAD")


def _images(root: Path) -> dict[str, Path]:
    """memory's image lacks forms_extra; the one this era's plan builds has it."""
    images = {"prchain/era-forms:memory": root / "memory", "prchain/era-forms:own": root / "own"}
    for packages in images.values():
        packages.mkdir(parents=True)
    (root / "own/forms_extra.py").write_text("")
    return images


@pytest.mark.parametrize("own_builds", [True, False])
def test_memory_that_left_a_module_out_gives_way_to_the_eras_own_plan(
    tmp_path: Path, sqlite_engine: Engine, own_builds: bool
) -> None:
    """Where this era's own plans all fail to build, memory's image stays, verified."""
    clone = tmp_path / "forms"
    sha = _history(clone)
    images = _images(tmp_path / "images")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(sys.executable)
    era = era_of(clone, sha)
    config = ErasConfig(suites={"bookworm": f"{sys.version_info[0]}.{sys.version_info[1]}"})
    assert era.ecosystem is not None
    plan = era.ecosystem.plans(era.snap, config)[0]
    with session_scope(sqlite_engine) as session:
        repo = Repo(full_name=REPO, source="git", clone_path=str(clone))
        session.add(repo)
        session.flush()
        repo_id = repo.id
        session.add(_remembered(repo_id, plan))
    built: list[str] = []

    def build(job: StageJob, era: Era, plan: Plan) -> tuple[str, float, str, str]:
        built.append(era.key)
        if not own_builds:  # starlette 2019's: codecov, which its plan named, is gone from PyPI
            return "", 10.0, "no solution for `codecov`\n", "no solution for `codecov`"
        return "prchain/era-forms:own", 12.0, "", ""

    @contextlib.contextmanager
    def open_on(repo: str, clone_path: str, sha: str, image: str) -> Iterator[HostImage]:
        git(clone_path, "checkout", "-q", sha)
        yield HostImage(Path(clone_path), images[image], bin_dir)

    setup = Setup(sqlite_engine, config, build, open_on, image_exists=lambda tag: True)  # type: ignore[arg-type]
    job = StageJob(1, 1, 1, 1, REPO, str(clone), sha, "", "")
    report = setup_era(setup, repo_id, job, era, 1)

    assert report.result == "verified", report
    assert report.method == ("planner" if own_builds else "memory")
    assert built == [era.key]
    with session_scope(sqlite_engine) as session:
        recipe = session.query(EnvRecipe).filter_by(era_key=era.key).one()
        attempts = recipe.verification["attempts"]
        assert [a["method"] for a in attempts] == ["memory", "planner"]
        assert list(attempts[0]["counts"]["excluded"]) == ["tests/test_e.py"]
        if own_builds:
            assert (recipe.image, recipe.verification["excluded"]) == ("prchain/era-forms:own", {})
        else:
            assert recipe.image == "prchain/era-forms:memory"
            assert attempts[1]["root_error"] == "build failed: no solution for `codecov`"


def _remembered(repo_id: int, plan: Plan) -> EnvRecipe:
    """A verified era a month earlier whose image is memory's."""
    return EnvRecipe(
        repo_id=repo_id,
        era_key="earlier",
        ecosystem="python",
        era_date="2024-04-01T12:00:00+00:00",
        base_sha="0" * 40,
        status="verified",
        method="planner",
        suite=plan.suite,
        interpreter=plan.interpreter,
        cutoff=plan.cutoff,
        commands=list(plan.commands),
        test_command=plan.test_command,
        setup_command=plan.setup_command,
        image="prchain/era-forms:memory",
    )
