"""The C room under the real Harbor (`make harbor`): a generated CMake repository's stage, exported
by `prchain tasks convert --to harbor`, run by Harbor's `oracle` agent. The verifier runs the
clean room's steps with prchain's own ctest reader on the image's python3: the gold patch scores
1; a wrong `area` scores 0, and so does a change that rewrites the hidden test to pass (the test
side never crosses, and the test patch then lands on the stage base's test)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from prchain.environments.carry import WORKDIR
from prchain.verdicts import harbor
from prchain.verdicts.runnable import checkout
from tests.support.harbor import ensure_harbor
from tests.support.planted import Room, era_image, two_commits

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.timeout(1800)]  # builds C

REPO = f"harbor-c-{uuid.uuid4().hex[:8]}/shapes"
CMAKE = """cmake_minimum_required(VERSION 3.14)
project(shapes C)
enable_testing()
add_library(shapes shapes.c)
file(GLOB tests RELATIVE ${CMAKE_SOURCE_DIR}/tests tests/test_*.c)
foreach(t ${tests})
  get_filename_component(n ${t} NAME_WE)
  add_executable(${n} tests/${t})
  target_link_libraries(${n} shapes)
  add_test(NAME ${n} COMMAND ${n})
endforeach()
"""
HEADER = "int square(int s);\n"
AREA_HEADER = HEADER + "int area(int r);\n"
SQUARE = '#include "shapes.h"\n\nint square(int s) { return s * s; }\n'
AREA = "\nint area(int r) { return 3 * r * r; }\n"
SQUARE_TEST = '#include "../shapes.h"\n\nint main(void) { return square(2) == 4 ? 0 : 1; }\n'
AREA_TEST = '#include "../shapes.h"\n\nint main(void) { return area(2) == 12 ? 0 : 1; }\n'
WRONG = """#!/bin/bash
set -euo pipefail
cd /work/repo
printf 'int square(int s);\\nint area(int r);\\n' > shapes.h
printf '#include "shapes.h"\\nint square(int s) { return s * s; }\\nint area(int r) { return r; }\\n' > shapes.c
"""
FORGED = """#!/bin/bash
set -euo pipefail
cd /work/repo
printf 'int square(int s);\\nint area(int r);\\n' > shapes.h
printf '#include "shapes.h"\\nint square(int s) { return s * s; }\\nint area(int r) { return r; }\\n' > shapes.c
printf 'int main(void) { return 0; }\\n' > tests/test_area.c
"""


@pytest.fixture(scope="module")
def c_stage(
    tmp_path_factory: pytest.TempPathFactory, docker_client: Any, base_image: str
) -> Iterator[tuple[Room, dict[str, Any]]]:
    from prchain.app.envsetup import sandbox_image
    from prchain.environments.config import EnvironmentConfig
    from prchain.environments.eras.c import C
    from prchain.environments.eras.config import ErasConfig
    from prchain.environments.eras.manifests import snapshot

    clone = tmp_path_factory.mktemp("c") / "shapes"
    before = {
        "CMakeLists.txt": CMAKE, "shapes.h": HEADER, "shapes.c": SQUARE,
        "tests/test_square.c": SQUARE_TEST,
    }  # fmt: skip
    after = {"shapes.h": AREA_HEADER, "shapes.c": SQUARE + AREA, "tests/test_area.c": AREA_TEST}
    base, gold = two_commits(clone, before, after, ("2024-03-01T10:00:00Z", "2024-03-02T10:00:00Z"))
    eras = ErasConfig(suites={"bookworm": "3.11"}, extra_base_packages=[])
    plan = C().plans(snapshot(clone, base), eras)[0]
    with era_image(docker_client, REPO, clone, base, plan) as era:
        image = sandbox_image(EnvironmentConfig(), REPO, str(clone), era)
        room = Room(
            REPO, clone, base, gold, image, plan, "c", plan.test_command,
            ["tests/test_area.c"], ["ctest::test_area"], ["ctest::test_square"],
        )  # fmt: skip
        stage = {
            "idx": 1,
            "instance_id": "harbor-c__shapes-1",
            "base_commit": base,
            # the diffs as a store holds them: `git diff`'s text, its last newline kept
            "patch": room.code.rstrip("\n") + "\n",
            "test_patch": room.test_patch.rstrip("\n") + "\n",
            "problem_statement": "Add `area(r)`: three times r squared.",
            "FAIL_TO_PASS": room.fail_to_pass,
            "PASS_TO_PASS": room.pass_to_pass,
            "environment": {
                "runnable": True, "not_runnable": "", "ecosystem": "c", "log_parser": "ctest",
                "image": image, "image_id": docker_client.image_id(image), "era": "c-planted",
                "workdir": WORKDIR, "checkout": checkout(base),
                "setup_command": plan.setup_command, "test_command": plan.test_command,
                "test_files": room.test_files,
            },
        }  # fmt: skip
        yield room, stage


def _rewards(jobs: Path) -> dict[str, Any]:
    found = {}
    for trial in jobs.glob("*/*/result.json"):
        result = json.loads(trial.read_text())
        found[result["task_name"]] = (
            (result.get("verifier_result") or {}).get("rewards") or {}
        ).get("reward")
    return found


def test_the_gold_scores_1_and_a_wrong_or_forged_change_0_under_harbor(
    c_stage: tuple[Room, dict[str, Any]], tmp_path: Path
) -> None:
    _room, stage = c_stage
    tasks = tmp_path / "tasks"
    chain = {"chain_id": 3, "repo": REPO, "stages": [stage]}
    summary = harbor.write([chain], tasks, timeout=300, cap=1 << 20)
    assert summary.written == [harbor.task_name(chain, stage)]
    gold = tasks / summary.written[0]
    assert (gold / "tests" / "build.sh").read_text().count("ctest -N -V") == 1
    for kind, solve in (("wrong", WRONG), ("forged", FORGED)):
        copy = tasks / f"{gold.name}-{kind}"
        shutil.copytree(gold, copy)
        (copy / "solution" / "solve.sh").write_text(solve)
        toml = (copy / "task.toml").read_text()
        (copy / "task.toml").write_text(toml.replace(gold.name + '"', copy.name + '"', 1))

    jobs = tmp_path / "jobs"
    argv = [str(ensure_harbor()), "run", "-p", str(tasks), "-a", "oracle", "-o", str(jobs),
            "-n", "3", "-y"]  # fmt: skip
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=1500)
    try:
        assert _rewards(jobs) == {
            f"prchain/{gold.name}": 1.0,
            f"prchain/{gold.name}-wrong": 0.0,
            f"prchain/{gold.name}-forged": 0.0,
        }, done.stdout[-3000:] + done.stderr[-3000:]
        verdicts = {
            p.parents[1].name.split("__")[0]: json.loads(p.read_text())
            for p in jobs.glob("*/*/verifier/verdict.json")
        }
        assert any(v["resolved"] and v["outcomes"]["ctest::test_area"] == "passed"
                   for v in verdicts.values())  # fmt: skip
        assert sum(v["outcomes"]["ctest::test_area"] == "failed" for v in verdicts.values()) == 2
    finally:
        _remove_harbor_images(tasks)


def _remove_harbor_images(tasks: Path) -> None:
    """The images Harbor built for these tasks (named after them), none other."""
    names = {p.name.lower() for p in tasks.iterdir()}
    listed = subprocess.run(
        ["docker", "images", "--format", "{{.Repository}}:{{.Tag}}"],
        capture_output=True, text=True, check=False,
    ).stdout.split()  # fmt: skip
    ours = [i for i in listed if any(n in i for n in names)]
    if ours:
        subprocess.run(["docker", "rmi", "-f", *ours], capture_output=True, check=False)
