"""A stage whose gold patch adds the test dependency its own tests import (strawberry #1655 adds
`pytest-snapshot` to poetry's dev group with the tests that use it): its hidden tests run on the
era image plus that requirement (the grader's layer), in `tests verify`, a rollout's clean room and
`tasks eval`, while the agent's sandbox stays the era's, without it.

#1 adds `area`; #2, based on #1, adds `perimeter` and tests that check it with `snapshotkit`, which
it adds to requirements-dev.txt. snapshotkit is served by a local index, dated before the history.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import docker
import pytest

from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.dev.repos import git
from prchain.environments.config import EnvironmentConfig
from prchain.environments.eras.config import ErasConfig
from prchain.environments.eras.hidden import Unresolvable, ensure_hidden_layer, hidden_requirements
from prchain.environments.eras.manifests import Snapshot
from prchain.environments.eras.python.hidden_needs import added_requirements
from prchain.llm.config import LLMConfig
from prchain.verdicts.sandbox import build_part
from tests.support.era_runs import (
    gold_resolves_in_tasks_eval,
    gold_rollout,
    invoke,
    mined_to_verified,
    offline_eras,
    recipes_by_pr,
    remove_repo_images,
    verdicts_by_pr,
    write_config,
)
from tests.support.fake_index import FakeIndex, Release, make_wheel
from tests.support.harbor import remove_harbor_images, run_oracle
from tests.support.history import History

REPO = f"hidden-layer-test-{uuid.uuid4().hex[:8]}/shapes"  # images are this run's own

SHAPES_0 = "def side(square):\n    return square\n"
SHAPES_1 = SHAPES_0 + "\n\ndef area(square):\n    return square * square\n"
# #2 rewrites #1's line (both through `side`) and adds perimeter beside it
SHAPES_2 = SHAPES_1.replace("return square * square", "return side(square) * side(square)") + (
    "\n\ndef perimeter(square):\n    return 4 * side(square)\n"
)
AREA_TEST = "from shapes.core import area\n\n\ndef test_area():\n    assert area(3) == 9\n"
PERIMETER_TEST = (
    "from snapshotkit import matches\n\nfrom shapes.core import perimeter\n\n\n"
    "def test_perimeter():\n    assert matches(perimeter(2), 8)\n"
)
SNAPSHOTKIT = "def matches(value, expected):\n    return value == expected\n"


def make_shapes(path: Path) -> History:
    repo = History(path)
    repo.commit(
        "Initial commit",
        {
            "shapes/__init__.py": "",
            "shapes/core.py": SHAPES_0,
            "requirements-dev.txt": "# what the tests need\n",
            "tests/test_side.py": "from shapes.core import side\n\n\n"
            "def test_side():\n    assert side(2) == 2\n",
        },
    )
    repo.pr(1, "Add area", {"shapes/core.py": SHAPES_1, "tests/test_area.py": AREA_TEST})
    repo.pr(
        2,
        "Add perimeter",
        {
            "shapes/core.py": SHAPES_2,
            "tests/test_perimeter.py": PERIMETER_TEST,
            "requirements-dev.txt": "# what the tests need\nsnapshotkit>=1.0\n",
        },
        body="Based on #1: the perimeter beside the area, checked with snapshotkit.",
    )
    return repo


def test_what_a_gold_patch_adds_to_the_test_requirements_is_read(tmp_path: Path) -> None:
    repo = make_shapes(tmp_path / "shapes")
    base, merged = repo.prs[1], repo.prs[2]
    gold = git(repo.path, "diff", base, merged) + "\n"
    held = build_part(gold, "python")
    assert "requirements-dev.txt" in held and "shapes/core.py" not in held
    assert hidden_requirements(repo.path, base, held, "python", "3.11") == ["snapshotkit>=1.0"]
    # the first PR's build part adds nothing, and a room whose needs are not read adds nothing
    first = git(repo.path, "diff", f"{base}~1", base) + "\n"
    assert (
        hidden_requirements(repo.path, f"{base}~1", build_part(first, "python"), "python", "3.11")
        == []
    )
    assert hidden_requirements(repo.path, base, held, "rust", "3.11") == []
    # a requirements file of the test patch counts too, and a test module beside it is not read
    tests_side = (
        "diff --git a/tests/requirements.txt b/tests/requirements.txt\nnew file mode 100644\n"
        "--- /dev/null\n+++ b/tests/requirements.txt\n@@ -0,0 +1 @@\n+snapshotkit>=1.0\n"
        "diff --git a/tests/test_x.py b/tests/test_x.py\n--- a/tests/test_x.py\n"
        "+++ b/tests/test_x.py\n@@ -1 +1 @@\n-missing at the base\n+import snapshotkit\n"
    )
    assert hidden_requirements(repo.path, base, tests_side, "python", "3.11") == [
        "snapshotkit>=1.0"
    ]


POETRY_BASE = """[tool.poetry]
name = "berry"

[tool.poetry.dependencies]
python = "^3.8"
graphql-core = "^3.2"
click = {version = ">=7.0", optional = true}

[tool.poetry.dev-dependencies]
pytest = "^7.2"

[tool.poetry.extras]
cli = ["click"]
"""


def test_poetry_dev_additions_are_hidden_needs_and_bumps_or_unused_extras_are_not() -> None:
    """strawberry's shape: #1655 adds `pytest-snapshot = "^0.8.1"` to the dev group; an optional
    dependency of an extra the era does not install, or a new bound on a package the base names
    already, adds nothing."""
    base = Snapshot("b" * 40, datetime(2023, 1, 1, tzinfo=UTC), {"pyproject.toml": POETRY_BASE})
    gold_text = (
        POETRY_BASE.replace('pytest = "^7.2"', 'pytest = "^7.3"\npytest-snapshot = "^0.8.1"')
        .replace(
            'click = {version = ">=7.0", optional = true}',
            'typer = {version = ">=0.7", optional = true}',
        )
        .replace('cli = ["click"]', 'cli = ["typer"]')
    )
    gold = replace(base, files={"pyproject.toml": gold_text})
    assert added_requirements(base, gold, "3.11") == ["pytest-snapshot<0.9.0,>=0.8.1"]
    assert added_requirements(gold, gold, "3.11") == []


@pytest.fixture(scope="module")
def shapes(
    tmp_path_factory: pytest.TempPathFactory, docker_client: Any, base_image: str
) -> Iterator[tuple[list[str], str, Path, str]]:
    work = tmp_path_factory.mktemp("hidden-layer")
    repo = make_shapes(work / "shapes")
    wheels = work / "wheels"
    wheels.mkdir()
    wheel = make_wheel(wheels, "snapshotkit", "1.0", {"snapshotkit.py": SNAPSHOTKIT})
    with FakeIndex([Release("snapshotkit", "1.0", "2020-01-01T00:00:00Z", wheel)]) as index:
        config = write_config(work, offline_eras(index.url))
        try:
            common, url = mined_to_verified(work, config, REPO, repo.path)
            yield common, url, work, index.url
        finally:
            remove_repo_images(docker_client, REPO, kinds=("repo", "hidden-layer", "era"))


@pytest.mark.docker
@pytest.mark.slow
def test_hidden_tests_run_with_what_their_gold_patch_adds_and_the_agent_never_has_it(
    shapes: tuple[list[str], str, Path, str],
    docker_client: Any,
    fake_llm: ScriptedLLMServer,
    llm_config: LLMConfig,
) -> None:
    common, url, work, _ = shapes
    verdicts = verdicts_by_pr(url)
    assert verdicts[1].status == "usable" and verdicts[1].runs["hidden_requirements"] == []
    second = verdicts[2]
    assert second.status == "usable", second.reason
    assert second.runs["hidden_requirements"] == ["snapshotkit>=1.0"]
    assert any("test_perimeter" in t for t in second.fail_to_pass)

    # the era image (every agent's sandbox) lacks the package; the grader's layer holds it
    era = recipes_by_pr(url)[2].image
    layers = docker_client.images({"prchain.repo": REPO, "prchain.kind": "hidden-layer"})
    assert len(layers) == 1
    engine = docker.from_env()
    probe = ["/opt/venv/bin/python", "-c", "import snapshotkit"]
    with pytest.raises(docker.errors.ContainerError):
        engine.containers.run(era, probe, remove=True, network_mode="none")
    engine.containers.run(layers[0]["tags"][0], probe, remove=True, network_mode="none")

    # a rollout's clean room judges both stages with it, and `tasks eval` resolves both
    judged = gold_rollout(common, url, llm_config, fake_llm)
    assert [(idx, passed) for idx, passed, _ in judged] == [(1, True), (2, True)], judged
    said = gold_resolves_in_tasks_eval(common, work)
    assert "2 of 2" in said, said
    rows = [json.loads(line) for line in (work / "tasks.jsonl").read_text().splitlines()]
    stages = {s["idx"]: s["environment"] for row in rows for s in row["stages"]}
    assert stages[1]["room_image"] == "" and stages[2]["room_image"]
    assert stages[2]["hidden_requirements"] == ["snapshotkit>=1.0"]

    # Harbor's oracle on both stages: stage 2's verifier unpacks the layer before its tests
    out = work / "harbor"
    converted = invoke("tasks", "convert", str(work / "tasks.jsonl"), str(out), "--to", "harbor")
    assert converted.exit_code == 0, converted.output
    names = sorted(p.name for p in out.iterdir())
    assert len(names) == 2 and (out / names[1] / "tests" / "hidden-layer.tar").is_file()
    assert not (out / names[0] / "tests" / "hidden-layer.tar").exists()
    try:
        rewards = run_oracle(out, work / "jobs")
        said = rewards.pop("_output")
        assert rewards == {f"prchain/{name}": 1.0 for name in names}, said
    finally:
        remove_harbor_images(out)


@pytest.mark.docker
@pytest.mark.slow
def test_requirements_the_index_cannot_meet_say_so_in_one_line(
    shapes: tuple[list[str], str, Path, str], docker_client: Any
) -> None:
    """No release of snapshotkit ≥ 2 exists: the layer is refused as unresolvable (`tests verify`
    stores such a stage unusable), and no image is left behind."""
    _, url, _, index_url = shapes
    era = recipes_by_pr(url)[2].image
    eras = ErasConfig.model_validate(offline_eras(index_url))
    before = docker_client.images({"prchain.repo": REPO, "prchain.kind": "hidden-layer"})
    with pytest.raises(Unresolvable, match=r"snapshotkit>=2\.0\) do not resolve .* 2024-01-02"):
        ensure_hidden_layer(
            docker_client, EnvironmentConfig(), eras, REPO, era, ["snapshotkit>=2.0"],
            "2024-01-02T00:00:00Z",
        )  # fmt: skip
    after = docker_client.images({"prchain.repo": REPO, "prchain.kind": "hidden-layer"})
    assert len(after) == len(before)
