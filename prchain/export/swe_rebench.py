"""SWE-rebench V2 rows from a runnable task file (`prchain tasks convert TASKS OUT --to swe-rebench-v2`).

SWE-rebench V2 (Badertdinov et al. 2026; nebius/SWE-rebench-V2 on the Hugging Face Hub) is one
self-contained row per task: the SWE-bench fields, `language`, `image_name` (an instance image with
the repository at `/<repo name>` on `base_commit`) and `install_config` (`base_image_name`,
`pre_install`, `install`, `test_cmd`, `log_parser`). Its own runner (SWE-rebench-V2's
`scripts/eval.py`) starts `image_name` in `/<repo name>`, runs `git reset --hard HEAD`, applies
`patch` and `test_patch`, runs `test_cmd` and reads the output with the parser `log_parser` names
(its `lib/agent/log_parsers.py`); a task is resolved when the tests that passed are exactly
FAIL_TO_PASS and PASS_TO_PASS.

Each runnable stage becomes such a row and its instance image is built here from the stage image:
`pre_install` puts `B_t` in the sandbox's work directory from the image's own mirror (where V2
clones from GitHub), `install` replaces its history by one commit of `B_t`'s files, removes the
mirror of the future and links `/<repo name>` to it. A stage is written only where a V2 parser
reads its test runner's output as prchain's reader does (`PARSERS`) and every required test's id
survives that parser (V2's pytest parsers split a line on whitespace, so an id such as
`test_area[unit - r]` cannot be read back); the others are counted.
Chain order and carry-forward live in `meta.prchain` (V2 evaluates each row on its own image, so a
model's own change cannot be carried from row to row: docs/export-formats.md).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime
from pathlib import Path
from typing import Any

from prchain.core.errors import PrchainError
from prchain.core.files import write_text_atomically
from prchain.environments.carry import ORIGIN_DIR, WORKDIR
from prchain.verdicts.taskfile import ConvertSummary

FORMAT = "prchain.swe-rebench-v2/1"
TASKS_FILE = "tasks.json"  # a JSON list: what SWE-rebench V2's `scripts/eval.py --json` reads
# prchain's report reader → the V2 log parser that reads the same runner's output into the same ids
# (parse_log_pytest reads `-rA`'s `PASSED <node id>` lines, which every pytest test script prints).
PARSERS = {"pytest": "parse_log_pytest"}
LANGUAGES = {"python": "python"}  # prchain ecosystem → V2 `language`


def workdir(repo: str) -> str:
    """Where V2 runs a task: `/<repo name>` (its eval.py: `f"/{repo.split('/')[1]}"`)."""
    return "/" + repo.split("/")[1]


def image_name(chain: dict[str, Any], stage: dict[str, Any]) -> str:
    """The instance image's name: the stage image's repository, one tag per stage."""
    image = stage["environment"]["image"]
    slash = image.rfind("/")
    colon = image.rfind(":")
    repository = image[:colon] if colon > slash else image
    return f"{repository}-swe-rebench-v2:c{chain['chain_id']}-s{stage['idx']}"


def why_not(chain: dict[str, Any], stage: dict[str, Any]) -> str:
    """Why a stage gets no row ("" when it gets one)."""
    env = stage["environment"]
    if not env["runnable"]:
        return f"not runnable ({env['not_runnable']})"
    if env["log_parser"] not in PARSERS or env["ecosystem"] not in LANGUAGES:
        return f"no SWE-rebench V2 log parser reads {env['log_parser']}'s output as prchain does"
    if any(len(test.split()) > 1 for test in [*stage["FAIL_TO_PASS"], *stage["PASS_TO_PASS"]]):
        return "a required test's id holds whitespace, which V2's pytest parsers split"
    if stage.get("entry", "revert") == "propagate":
        return "entered by the propagate fallback: its start is not the commit base_commit"
    if "/" not in chain["repo"] or WORKDIR.startswith(workdir(chain["repo"]) + "/"):
        return f"its V2 work directory {workdir(chain['repo'])} is the sandbox's own"
    return ""


def _created_at(value: str) -> int | None:
    """V2's `created_at`: milliseconds since the epoch."""
    try:
        return int(datetime.fromisoformat(value).timestamp() * 1000)
    except ValueError:
        return None


def install_config(chain: dict[str, Any], stage: dict[str, Any]) -> dict[str, Any]:
    env = stage["environment"]
    git = f"git -C {WORKDIR}"
    fresh = [
        f"rm -rf {WORKDIR}/.git && {git} init -q && {git} add -A",
        f"{git} -c user.name=prchain -c user.email=prchain@localhost commit -q --no-verify -m base",
        f"rm -rf {ORIGIN_DIR}",
        f"ln -sT {WORKDIR} {workdir(chain['repo'])}",
    ]
    return {
        "base_image_name": env["image"],
        "docker_specs": None,
        "pre_install": list(env["checkout"]),
        "install": fresh,
        "log_parser": PARSERS[env["log_parser"]],
        "log_parsers": None,
        "test_cmd": [c for c in (env["setup_command"], env["test_script"]) if c],
    }


def task_row(chain: dict[str, Any], stage: dict[str, Any], earlier: list[str]) -> dict[str, Any]:
    """One stage as a V2 row; `earlier` are the instance ids of the chain's stages before it."""
    env = stage["environment"]
    return {
        "instance_id": stage["instance_id"],
        "repo": chain["repo"],
        "base_commit": stage["base_commit"],
        "patch": stage["patch"],
        "test_patch": stage["test_patch"],
        "problem_statement": stage["problem_statement"],
        # The PR's own words: its title and body where the stage has no written query (then the
        # problem statement is they), else its title (the task file holds no body beside a query).
        "pr_description": stage["title"] if stage.get("query") else stage["problem_statement"],
        "interface": "",  # V2's LLM-extracted interface of the tested code; prchain writes none
        "created_at": _created_at(stage["created_at"]),
        "language": LANGUAGES[env["ecosystem"]],
        "FAIL_TO_PASS": list(stage["FAIL_TO_PASS"]),
        "PASS_TO_PASS": list(stage["PASS_TO_PASS"]),
        "image_name": image_name(chain, stage),
        "install_config": install_config(chain, stage),
        "meta": {"prchain": _chain_facts(chain, stage, earlier)},
    }


def _chain_facts(
    chain: dict[str, Any], stage: dict[str, Any], earlier: list[str]
) -> dict[str, Any]:
    env = stage["environment"]
    return {
        "format": FORMAT,
        "chain_id": chain["chain_id"],
        "stage_idx": stage["idx"],
        "chain_length": len(chain["stages"]),
        # base_commit holds these stages' gold patches: their changes are carried into this one
        "carried_from": list(earlier),
        "entry": stage.get("entry", "revert"),
        "pr_number": stage["pr_number"],
        "merged_at": stage["merged_at"],
        "stage_image": env["image"],
        "stage_image_id": env["image_id"],
        "era": env["era"],
        "report_path": env["report_path"],
    }


def dockerfile(row: dict[str, Any]) -> str:
    """The instance image: `base_image_name`, then `pre_install` and `install` as root."""
    config = row["install_config"]
    steps = " && ".join([*config["pre_install"], *config["install"]])
    return (
        f"# {FORMAT}: {row['instance_id']} on the stage image {row['meta']['prchain']['stage_image_id']}\n"
        f"FROM {config['base_image_name']}\n"
        "USER root\n"
        f"RUN {steps}\n"
        f"WORKDIR {workdir(row['repo'])}\n"
    )


def write(
    chains: Iterable[dict[str, Any]], out: str | Path, *, timeout: float, cap: int
) -> ConvertSummary:
    """OUT/tasks.json (a row per stage V2 can run) and each row's instance image, built from its
    Dockerfile in OUT/dockerfiles/<instance_id>/; the other stages counted by why. `timeout` and
    `cap` are the clean room's, which V2's runner has no place for."""
    from prchain.environments.docker_client import DockerClient

    root = Path(out)
    root.mkdir(parents=True, exist_ok=True)
    client, summary = DockerClient(), ConvertSummary()
    rows: list[dict[str, Any]] = []
    for chain in chains:
        earlier: list[str] = []
        for stage in chain["stages"]:
            reason = why_not(chain, stage) or _stage_image_missing(client, stage)
            if not reason:
                row = task_row(chain, stage, earlier)
                reason = _build(client, root, chain, row)
            if reason:
                summary.skipped[reason] += 1
            else:
                rows.append(row)
                summary.written.append(row["instance_id"])
            earlier.append(stage["instance_id"])
    text = json.dumps(rows, indent=1, ensure_ascii=False) + "\n"
    write_text_atomically(root / TASKS_FILE, text)
    return summary


def _stage_image_missing(client: Any, stage: dict[str, Any]) -> str:
    env = stage["environment"]
    found = client.image_info(env["image"])
    if found is None:
        return "its stage image is not in the Docker engine (`prchain tasks images load`)"
    if env["image_id"] and found.id != env["image_id"]:
        return "the engine's image under its stage image's name has other content"
    return ""


def _build(client: Any, root: Path, chain: dict[str, Any], row: dict[str, Any]) -> str:
    """Build the row's instance image; why not ("" when built)."""
    context = root / "dockerfiles" / row["instance_id"]
    context.mkdir(parents=True, exist_ok=True)
    (context / "Dockerfile").write_text(dockerfile(row), encoding="utf-8")
    labels = {"prchain.repo": chain["repo"], "prchain.format": FORMAT}
    try:
        client.build(str(context), row["image_name"], labels, network=False)
    except PrchainError as exc:
        return f"its instance image did not build: {str(exc).splitlines()[0]}"
    return ""


# ---- the row check: SWE-rebench V2's published row, as its runner reads it ----------------------

_COMMANDS = {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}
ROW_SCHEMA: dict[str, Any] = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "type": "object",
    "required": [
        "instance_id", "repo", "base_commit", "patch", "test_patch", "problem_statement",
        "FAIL_TO_PASS", "PASS_TO_PASS", "image_name", "language", "install_config",
    ],
    "properties": {
        "instance_id": {"type": "string", "minLength": 1},
        "repo": {"type": "string", "pattern": "^[^/]+/[^/]+$"},
        "base_commit": {"type": "string", "pattern": "^[0-9a-f]{40}$"},
        "patch": {"type": "string", "minLength": 1},
        "test_patch": {"type": "string", "minLength": 1},
        "problem_statement": {"type": "string"},
        "pr_description": {"type": "string"},
        "interface": {"type": "string"},
        "created_at": {"type": ["integer", "null"]},
        "language": {"type": "string", "minLength": 1},
        "FAIL_TO_PASS": {"type": "array", "items": {"type": "string"}, "minItems": 1},
        "PASS_TO_PASS": {"type": "array", "items": {"type": "string"}},
        "image_name": {"type": "string", "minLength": 1},
        "meta": {"type": ["object", "null"]},
        "install_config": {
            "type": "object",
            "required": ["test_cmd", "log_parser"],
            "properties": {
                "base_image_name": {"type": "string"},
                "docker_specs": {"type": ["object", "null"]},
                "pre_install": {"type": ["array", "null"], "items": {"type": "string"}},
                "install": _COMMANDS,
                "log_parser": {"type": "string", "pattern": "^parse_"},
                "log_parsers": {"type": ["object", "array", "null"]},
                "test_cmd": {
                    "anyOf": [
                        {"type": "string", "minLength": 1},
                        {"type": "array", "items": {"type": "string"}, "minItems": 1},
                    ]
                },
            },
        },
    },
}  # fmt: skip


def check_row(row: dict[str, Any]) -> None:
    """Raise jsonschema.ValidationError when a row breaks V2's row as its runner reads it: the
    fields of its published rows (SWE-rebench-V2's sample.json) with their types, a repository
    `owner/name`, a non-empty test command and a parser of its `log_parsers.py` by name."""
    import jsonschema  # a dev dependency: tests and checks only

    jsonschema.validate(row, ROW_SCHEMA)
