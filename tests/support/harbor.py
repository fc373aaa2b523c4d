"""Harbor, the harness, in its own environment (.harbor/, Python >= 3.12): `make harbor` makes it,
and so does the first test that asks for it (scripts/setup-harbor.sh, idempotent)."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

from tests.support.planted import Room

ROOT = Path(__file__).resolve().parents[2]
HARBOR_PYTHON = ROOT / ".harbor" / "bin" / "python"
HARBOR = ROOT / ".harbor" / "bin" / "harbor"
# Set by bench/bench_harbor_rooms.py: every variant of each room's Harbor run, not only CI's gold
# and its room's sharpest attack.
EVERY_VARIANT = "PRCHAIN_HARBOR_EVERY_VARIANT"


def every_variant() -> bool:
    return os.environ.get(EVERY_VARIANT) == "1"


def ensure_harbor() -> Path:
    """The harbor CLI, set up first where it is missing."""
    if not HARBOR.exists():
        done = subprocess.run(
            ["bash", str(ROOT / "scripts" / "setup-harbor.sh")], capture_output=True, text=True
        )
        assert done.returncode == 0, f"setting up Harbor failed:\n{done.stdout}\n{done.stderr}"
    return HARBOR


def harbor_validates(model: str, rows: list[dict[str, Any]]) -> list[str]:
    """Each row validated by Harbor's own pydantic model `model` (a dotted path); the errors."""
    ensure_harbor()
    module, _, name = model.rpartition(".")
    script = (
        "import json, sys\n"
        f"from {module} import {name}\n"
        "for line in sys.stdin:\n"
        "    try:\n"
        f"        {name}.model_validate(json.loads(line))\n"
        "    except Exception as exc:\n"
        "        print(str(exc).replace(chr(10), ' '))\n"
    )
    done = subprocess.run(
        [str(HARBOR_PYTHON), "-c", script],
        input="".join(json.dumps(row) + "\n" for row in rows),
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.splitlines()


def variant(gold: Path, kind: str, solve: str) -> Path:
    """A copy of the task directory `gold` named `<gold>-<kind>` whose oracle runs `solve`."""
    copy = gold.parent / f"{gold.name}-{kind}"
    shutil.copytree(gold, copy)
    (copy / "solution" / "solve.sh").write_text(solve)
    toml = (copy / "task.toml").read_text()
    (copy / "task.toml").write_text(toml.replace(gold.name + '"', copy.name + '"', 1))
    return copy


def run_oracle(tasks: Path, jobs: Path, timeout: float = 1500) -> dict[str, Any]:
    """Harbor's oracle agent on every task under `tasks`, all at once: task name → its reward,
    and `_output` the tail of Harbor's own output."""
    argv = [str(ensure_harbor()), "run", "-p", str(tasks), "-a", "oracle", "-o", str(jobs),
            "-n", str(len(list(tasks.iterdir()))), "-y"]  # fmt: skip
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=timeout)
    found: dict[str, Any] = {}
    for trial in jobs.glob("*/*/result.json"):
        result = json.loads(trial.read_text())
        found[result["task_name"]] = (
            (result.get("verifier_result") or {}).get("rewards") or {}
        ).get("reward")
    found["_output"] = done.stdout[-3000:] + done.stderr[-3000:]
    return found


def verdicts(jobs: Path, name: str = "verdict.json") -> dict[str, Any]:
    """Each trial's verifier file `name` (verdict.json read, another as text), by its task
    directory's name (Harbor cuts a trial directory's name: its result.json names the task)."""
    found: dict[str, Any] = {}
    for path in jobs.glob(f"*/*/verifier/{name}"):
        task = json.loads((path.parents[1] / "result.json").read_text())["task_name"]
        text = path.read_text()
        found[task.removeprefix("prchain/")] = json.loads(text) if name.endswith(".json") else text
    return found


def remove_harbor_images(tasks: Path) -> None:
    """The images Harbor built for these tasks (named after them), none other."""
    names = {p.name.lower() for p in tasks.iterdir()}
    listed = subprocess.run(
        ["docker", "images", "--format", "{{.Repository}}:{{.Tag}}"],
        capture_output=True, text=True, check=False,
    ).stdout.split()  # fmt: skip
    ours = [i for i in listed if any(n in i for n in names)]
    if ours:
        subprocess.run(["docker", "rmi", "-f", *ours], capture_output=True, check=False)


def room_stage(docker_client: Any, room: Room, problem: str) -> dict[str, Any]:
    """The one stage of a generated room (tests/support/planted.py) as `tasks export --runnable`
    writes it: its sandbox image on the room's era image, the store's diffs."""
    from prchain.app.envsetup import sandbox_image
    from prchain.environments.carry import WORKDIR
    from prchain.environments.config import EnvironmentConfig
    from prchain.verdicts.runnable import checkout

    image = sandbox_image(EnvironmentConfig(), room.repo, str(room.clone), room.image)
    return {
        "idx": 1,
        "instance_id": f"{room.repo.replace('/', '__')}-1",
        "base_commit": room.base,
        # the diffs as a store holds them: `git diff`'s text, its last newline kept
        "patch": room.code.rstrip("\n") + "\n",
        "test_patch": room.test_patch.rstrip("\n") + "\n",
        "problem_statement": problem,
        "FAIL_TO_PASS": room.fail_to_pass,
        "PASS_TO_PASS": room.pass_to_pass,
        "environment": {
            "runnable": True, "not_runnable": "", "ecosystem": room.ecosystem,
            "log_parser": room.ecosystem, "image": image,
            "image_id": docker_client.image_id(image), "era": f"{room.ecosystem}-planted",
            "workdir": WORKDIR, "checkout": checkout(room.base),
            "setup_command": room.plan.setup_command, "test_command": room.command,
            "test_files": room.test_files,
        },
    }  # fmt: skip


def solve_sh(files: dict[str, str]) -> str:
    """An oracle's solve.sh that writes `files` (path → text) into the agent's tree."""
    lines = ["#!/bin/bash", "set -euo pipefail", "cd /work/repo"]
    for path, text in files.items():
        lines.append(f'mkdir -p "$(dirname {shlex.quote(path)})"')
        lines.append(f"printf %s {shlex.quote(text)} > {shlex.quote(path)}")
    return "\n".join(lines) + "\n"
