"""What the planted-library attacks share (issue 77, class 1): a tiny generated repository per
room with one PR, its era image built once per module, and the two ways a wrong patch with a
planted test library is judged: the clean room after an agent's stage, and `tasks eval
--predictions` (prchain.verdicts.golden, as the CLI calls it, on a one-stage task row).

Every image and volume made here is labelled with the module's own made-up repository and removed
by it; toolchain layers are shared by recipe and stay, like the suite's base."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prchain.chains.reading.patches import split_patch
from prchain.dev.repos import git
from prchain.environments.eras.ecosystems import Plan
from tests.support.era_runs import remove_repo_images
from tests.support.eras_repo import commit_files

LABELS = {"prchain.test": "planted-libraries"}


@dataclass(frozen=True)
class Room:
    """A generated repository with one PR, and its era image built at the PR's base."""

    repo: str
    clone: Path
    base: str
    gold: str  # the PR's whole diff
    image: str
    plan: Plan
    ecosystem: str
    command: str  # the hidden tests' command as run
    test_files: list[str]
    fail_to_pass: list[str]
    pass_to_pass: list[str]

    @property
    def code(self) -> str:
        return split_patch(self.gold).code

    @property
    def test_patch(self) -> str:
        return split_patch(self.gold).test


def two_commits(
    path: Path, before: dict[str, str], after: dict[str, str], dates: tuple[str, str]
) -> tuple[str, str]:
    """A repository at `path` whose first commit has `before` and second adds `after`."""
    path.mkdir(parents=True)
    git(path, "init", "-q", "-b", "main")
    commit_files(path, before, "Start", dates[0])
    base = git(path, "rev-parse", "HEAD")
    commit_files(path, after, "The PR (#1)", dates[1])
    return base, git(path, "diff", base, "HEAD")


@contextlib.contextmanager
def era_image(docker_client: Any, repo: str, clone: Path, base: str, plan: Plan) -> Iterator[str]:
    """The era image of `plan` at `base`; its images and cache volume removed afterwards."""
    from prchain.environments.config import EnvironmentConfig
    from prchain.environments.eras.build import ensure_era_image
    from prchain.environments.eras.config import ErasConfig

    eras = ErasConfig(suites={"bookworm": "3.11"}, extra_base_packages=[])
    try:
        built = ensure_era_image(
            docker_client, EnvironmentConfig(), eras, repo=repo, clone=clone, sha=base,
            plan=plan, era_key=f"{plan.ecosystem}-planted",
        )  # fmt: skip
        assert built.image_id, built.log[-3000:]
        yield built.tag
    finally:
        remove_repo_images(docker_client, repo)


@contextlib.contextmanager
def sandbox(docker_client: Any, room: Room) -> Iterator[Any]:
    """The room's stage 1 in a sandbox, entered, as the agent starts it."""
    from prchain.environments.config import EnvironmentConfig
    from prchain.environments.docker_env import DockerEnvironment

    with DockerEnvironment(
        EnvironmentConfig(), repo=room.repo, clone_path=str(room.clone), stages=[_spec(room)],
        labels=LABELS, client=docker_client,
    ) as env:  # fmt: skip
        env.enter_stage(1)
        yield env


def hidden_tests(room: Room) -> Any:
    """The stage's hidden side as `stage_tests` reads it from a store: its tests and the gold
    code patch's build part."""
    from prchain.verdicts.oracle import StageTests
    from prchain.verdicts.sandbox import build_part

    return StageTests(
        room.fail_to_pass, room.pass_to_pass, room.command, room.test_files, room.test_patch,
        build_part(room.code, room.ecosystem), ecosystem=room.ecosystem,
    )  # fmt: skip


def clean_room_passes(env: Any, room: Room) -> bool:
    """T(p̂) on the sandbox's current state: the hidden tests in a clean room."""
    from prchain.verdicts.oracle import run_tests

    return bool(run_tests(env, hidden_tests(room), timeout=300).passed)


def stage_passes(docker_client: Any, room: Room, files: dict[str, str]) -> bool:
    """A sandbox on the room's base with `files` written, judged in its clean room."""
    with sandbox(docker_client, room) as env:
        for rel, text in files.items():
            env.write_file(rel, text)
        return clean_room_passes(env, room)


def gold_passes(docker_client: Any, room: Room) -> bool:
    """The room's gold code patch, judged in its clean room (gold first, before any attack)."""
    from prchain.verdicts.sandbox import apply_patch

    with sandbox(docker_client, room) as env:
        assert apply_patch(env, room.code, reset=False) is None
        return clean_room_passes(env, room)


def _spec(room: Room) -> Any:
    from prchain.environments.protocol import StageSpec

    return StageSpec(
        1, room.base, room.code, image=room.image, test_command=room.plan.test_command,
        setup_command=room.plan.setup_command,
    )  # fmt: skip


def _task_row(room: Room, image_id: str) -> dict[str, Any]:
    """The room's PR as `tasks export --runnable` writes a one-stage chain."""
    environment = {
        "image": room.image, "image_id": image_id, "test_command": room.command,
        "setup_command": room.plan.setup_command, "runnable": True, "reason": "",
        "not_runnable": "", "test_files": room.test_files, "ecosystem": room.ecosystem,
    }  # fmt: skip
    stage = {
        "idx": 1, "instance_id": f"{room.repo}-1", "base_commit": room.base, "patch": room.code,
        "test_patch": room.test_patch, "FAIL_TO_PASS": room.fail_to_pass,
        "PASS_TO_PASS": room.pass_to_pass, "environment": environment,
    }  # fmt: skip
    return {"chain_id": 1, "repo": room.repo, "stages": [stage]}


def eval_status(docker_client: Any, room: Room, prediction: str) -> str:
    """`tasks eval --predictions`' status for a model whose patch of the stage is `prediction`
    (the gold code patch when it is that)."""
    from prchain.environments.config import EnvironmentConfig
    from prchain.environments.docker_env import DockerEnvironment
    from prchain.verdicts.golden import EvalSettings, evaluate_chain
    from prchain.verdicts.oracle import DEFAULT_REPORT_PATH
    from prchain.verdicts.taskfile import Patches

    image_id = docker_client.image_id(room.image)

    def open_env(repo: str, specs: list[Any], labels: dict[str, str]) -> Any:
        return DockerEnvironment(
            EnvironmentConfig(), repo=repo, clone_path=str(room.clone), stages=specs,
            labels={**labels, **LABELS}, client=docker_client,
        )  # fmt: skip

    patches = Patches("model", {f"{room.repo}-1": prediction})
    settings = EvalSettings(300, DEFAULT_REPORT_PATH)
    [result] = evaluate_chain(
        _task_row(room, image_id), patches, open_env, lambda _: image_id, settings
    )
    return f"{result.status} {result.reason}".strip()


def patch_of(clone: Path, base: str, files: dict[str, str], tmp: Path) -> str:
    """A model's patch: `files` written on `base` in a copy of the clone, ignored ones too."""
    copy = tmp / "prediction"
    git(tmp, "clone", "-q", str(clone), str(copy))
    git(copy, "checkout", "-q", base)
    for rel, text in files.items():
        (copy / rel).parent.mkdir(parents=True, exist_ok=True)
        (copy / rel).write_text(text)
    git(copy, "add", "-A", "-f", ".")
    return git(copy, "diff", "--cached", "--binary", "HEAD") + "\n"
