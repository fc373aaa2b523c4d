"""Acceptance: `prchain env setup` falls back to the scripted setup agent where the planner cannot
finish, and the agent's recipe is rebuilt and verified like a planner recipe.

The index on 127.0.0.1 serves `tinylib` 2.0 only. The repository asks for `tinylib>=3`, which no
index has, while its code runs on 2.0: the planner's dated resolution fails; the agent tries the
requirement as written (fails, rolled back), installs 2.0, and the rebuilt image verifies.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result
from sqlalchemy import select

from prchain.cli import main
from prchain.dev.repos import git
from prchain.environments.eras.build import cache_volume
from prchain.environments.eras.config import ErasConfig
from prchain.store.db import session_scope
from prchain.store.models import EnvRecipe
from prchain.store.opener import make_engine
from tests.support.era_runs import offline_eras
from tests.support.fake_index import FakeIndex, Release, make_wheel

pytestmark = [pytest.mark.docker]
REPO = f"setupagent-test-{uuid.uuid4().hex[:8]}/waver"  # this run's own: its images go by it
LIB = "def hello(name):\n    return 'hello ' + name\n"
CODE = "import tinylib\n\n\ndef welcome(name):\n    return tinylib.hello(name)\n"
TEST = (
    "from waver import welcome\n\n\ndef test_welcome():\n    assert welcome('ada') == 'hello ada'\n"
)
VENV = "uv venv -q --system-site-packages --python /usr/bin/python3 /opt/venv"
AS_WRITTEN = "uv pip install 'tinylib>=3'"
PINNED = "uv pip install tinylib==2.0"
TESTS = "python -m pytest -p no:cacheprovider tests"


def make_waver(path: Path) -> Path:
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    for rel, text in {
        "requirements.txt": "tinylib>=3\n",
        "waver/__init__.py": CODE,
        "tests/test_welcome.py": TEST,
    }.items():
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        (path / rel).write_text(text)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "Start waver", date="2023-03-01T12:00:00Z")
    (path / "waver/__init__.py").write_text(
        CODE + "\n\ndef loud(name):\n    return welcome(name).upper()\n"
    )
    (path / "tests/test_loud.py").write_text(
        "from waver import loud\n\n\ndef test_loud():\n    assert loud('ada') == 'HELLO ADA'\n"
    )
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "Be loud (#1)\n\nShout it.", date="2023-04-01T12:00:00Z")
    return path


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory) -> Iterator[FakeIndex]:
    folder = tmp_path_factory.mktemp("wheels")
    wheel = make_wheel(folder, "tinylib", "2.0", {"tinylib/__init__.py": LIB})
    with FakeIndex([Release("tinylib", "2.0", "2022-06-01T00:00:00Z", wheel)]) as served:
        yield served


@pytest.fixture
def own_images(docker_client: Any) -> Iterator[None]:
    """Remove, afterwards, only the images and build-cache volume this test made (by its made-up
    repo)."""
    yield
    for image in docker_client.images({"prchain.repo": REPO}):
        for tag in image["tags"]:
            docker_client.remove_image(tag)
    docker_client.remove_volume(cache_volume(ErasConfig(), REPO))


def _invoke(*args: str) -> Result:
    return CliRunner().invoke(main, list(args), catch_exceptions=False)


def _config(tmp_path: Path, index: FakeIndex) -> Path:
    config = tmp_path / "prchain.yaml"
    roles = {"env_setup": "env_setup"}
    config.write_text(
        yaml.safe_dump(
            {
                "eras": offline_eras(index.url),
                "environment": {"log_dir": str(tmp_path / "logs")},
                "chains": {"min_chain_code_lines": 0},
                "llm": {"models": roles, "prices": {"*": {"prompt_per_million": 1.0}}},
            }
        )
    )
    return config


def call(name: str, **args: str) -> list[dict[str, Any]]:
    return [{"name": name, "arguments": args}]


def test_the_agent_repairs_what_the_planner_cannot_and_its_recipe_verifies(
    tmp_path: Path, index: FakeIndex, own_images: None, base_image: str, fake_llm: Any
) -> None:
    for reply in (
        call("inspect", command="cat requirements.txt"),
        call("run", command=VENV),
        call("run", command=AS_WRITTEN),
        call("rollback"),
        call("run", command=PINNED),
        call("inspect", command=f"/opt/venv/bin/{TESTS}"),
        call("finish", test_command=TESTS),
    ):
        fake_llm.push(model="env_setup", tool_calls=reply)
    clone = make_waver(tmp_path / "waver")
    url = f"sqlite:///{tmp_path / 'store.db'}"
    common = ["--config", str(_config(tmp_path, index)), "--db", url]
    assert _invoke("mine", "--source", "git", "--name", REPO, str(clone), *common).exit_code == 0
    built = _invoke(
        "chains", "build", "--strategy", "single", "--min-len", "1", "--max-len", "1", *common
    )
    assert built.exit_code == 0, built.output

    setup = _invoke("env", "setup", *common)
    assert setup.exit_code == 0, setup.output
    assert "1 verified (1 by agent)" in setup.output
    assert not fake_llm.pending()
    with session_scope(make_engine(url)) as session:
        recipe = session.scalars(select(EnvRecipe)).one()
        session.expunge(recipe)
    assert recipe.status == "verified" and recipe.method == "agent" and recipe.cost > 0
    assert recipe.commands[:2] == [VENV, PINNED] and AS_WRITTEN not in recipe.commands
    assert recipe.test_command == TESTS and recipe.verification["passed"] == 1
    assert any("1 rolled back" in note for note in recipe.notes)
    # The planner's failure is on record beside the agent's success.
    attempts = recipe.verification["attempts"]
    assert attempts[0]["method"] == "planner" and "tinylib>=3" in attempts[0]["root_error"]
    assert attempts[-1]["method"] == "agent"


def test_an_unverified_eras_root_error_is_past_what_a_revision_got_past() -> None:
    """pmd's 2021 era: each JDK's plan failed on a class its test module missed under `mvn test`,
    and each plan's revision (Maven to `package`) got past it and failed on a dependency only
    jcenter served. The era's root error is the revision's, which the kept log shows; a failure no
    revision followed still comes first."""
    from prchain.setup.ladder import _first_root_error
    from prchain.verdicts.outcomes import Counts

    missed, jcenter = "build failed: … cannot access org.jaxen", "build failed: … kotlinx-html-jvm"
    attempts = [
        {"method": "planner", "variant": "dated", "root_error": missed},
        {"method": "planner", "variant": "dated+package", "root_error": jcenter},
        {"method": "planner", "variant": "newer-jdk", "root_error": missed},
        {"method": "planner", "variant": "newer-jdk+package", "root_error": jcenter},
    ]
    assert _first_root_error(attempts, Counts()) == jcenter
    other = [{"method": "planner", "variant": "newer-jdk", "root_error": missed}]
    assert _first_root_error(attempts[:1] + other, Counts()) == missed
