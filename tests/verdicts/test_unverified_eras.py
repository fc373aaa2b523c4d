"""Messages that tell the truth about an era `env setup` could not verify, and one rule for its
image: never used (not by `tests verify`, not by rollouts). On a repository mined here; the
recipes are written by recipe memory's own writer, as `env setup` leaves them."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from prchain.cli import main
from prchain.dev.repos import git
from prchain.environments.eras.memory import save_recipe
from prchain.setup.ladder import plan_eras
from prchain.store.opener import make_engine
from prchain.verdicts.stage import stage_setup

REPO = "py51-unverified/app"
ROOT = "ModuleNotFoundError: No module named 'cext'"


def _invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def _repository(path: Path) -> Path:
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    (path / "app").mkdir()
    (path / "tests").mkdir()
    (path / "app/__init__.py").write_text("def one():\n    return 1\n")
    (path / "tests/test_one.py").write_text(
        "from app import one\n\n\ndef test_one():\n    assert one()\n"
    )
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "Start", date="2024-02-01T12:00:00Z")
    (path / "app/__init__.py").write_text(
        "def one():\n    return 1\n\n\ndef two():\n    return 2\n"
    )
    (path / "tests/test_two.py").write_text(
        "from app import two\n\n\ndef test_two():\n    assert two()\n"
    )
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "Add two (#1)\n\nTwo.", date="2024-03-01T12:00:00Z")
    return path


@pytest.mark.parametrize("image", ["", "prchain/era-py51-unverified-app:none"])
def test_a_stage_of_an_unverified_era_says_why_and_its_image_is_never_used(
    tmp_path: Path, sqlite_url: str, image: str
) -> None:
    """Without an image (its build failed) and with one (its suite ran, too few passed): the same
    answer. The made-up image does not exist: opening a sandbox on it would fail loudly."""
    common = ["--db", sqlite_url]
    clone = _repository(tmp_path / "repo")
    assert _invoke("mine", "--source", "git", "--name", REPO, str(clone), *common).exit_code == 0
    built = _invoke("chains", "build", "--strategy", "single", "--min-len", "1", "--max-len", "1",
                    "--set", "chains.min_chain_code_lines=0", *common)  # fmt: skip
    assert built.exit_code == 0, built.output
    engine = make_engine(sqlite_url)
    ((repo_id, job, era, _),) = plan_eras(engine)
    save_recipe(engine, {
        "repo_id": repo_id, "era_key": era.key, "ecosystem": "python", "era_date": era.snap.date.isoformat(),
        "base_sha": job.base_sha, "status": "unverified", "method": "planner", "image": image,
        "test_command": "python -m pytest -p no:cacheprovider tests", "root_error": ROOT,
    })  # fmt: skip
    stage = stage_setup(engine, job.stage_id)
    assert stage is not None and stage.usable_era is None  # the one rule, for every user
    assert stage.era is not None and stage.era.root_error == ROOT

    verify = _invoke("tests", "verify", *common)
    assert verify.exit_code == 1, verify.output
    assert "era-unverified" in verify.output and "unconfigured" not in verify.output
    assert "1 stages: 1 era-unverified;" in verify.output
    assert "'cext');" in verify.output and "did not" in verify.output  # the era's root error
    shown = _invoke("tests", "show", f"{job.chain_id}:1", *common).output
    assert "not verified yet" not in shown
    assert "not verified: its era did not verify in `prchain env setup`" in " ".join(shown.split())
    assert ROOT in " ".join(shown.split())
