"""Harbor task directories from a runnable task file (`prchain tasks convert TASKS OUT --to harbor`).

One directory per runnable stage, as Harbor's task spec (harbor 0.26, `harbor.models.task`) reads
it: `instruction.md`, `task.toml`, `environment/Dockerfile` (`FROM` the stage image, the
repository checked out at `B_t` with no history and the image's mirror of the future removed),
`solution/solve.sh` (the gold patch) and `tests/` (test.sh and what it needs). The verdict is the
clean room's (docs/sandbox.md): the verifier runs in a *separate* container built from the same
environment, in which no agent process ever ran; the agent's change reaches it only as the bytes of
its diff (collected as the agent, after the agent phase), of which only what the room's allow-list
lets cross is applied, as the tester; the hidden tests are sealed, pytest keeps to the image's
plugins through the root-owned launcher, and the junit report goes through root's pipe. Reward 1
when every FAIL_TO_PASS and PASS_TO_PASS test passed, else 0.

The Python room's verdict is `prchain/verdicts/harbor_room.py`; the C, Go, Rust, Node and Java
rooms' is `prchain/verdicts/harbor_each.py` with the room's own report reader (prchain's modules,
shipped unchanged), both on the stage image's python3: the stage base's overrides of a test
library stay out (Go's `replace`, Rust's `[patch]` and path dependencies, what Node's runner
configuration loads), Go's report counts with root's witness, Node's and Java's with root's
canary failing (Java's a class of its own added to surefire's `-Dtest=`, written from the hidden
tests' texts as root applied them: `room.json`'s `hidden_files`), Rust's tests run each on its
own under root's tracer (`clean_room.RUN_EACH` with `witness.py`), C's under its harness's check.
A stage of a room not in `ROOMS` is not converted and says so. Chains keep their order in the
directory names and the metadata, each stage on its own base (its gold-carried state); Harbor's
multi-step tasks share one environment, which cannot move to a later stage base without the
future in it.
"""

from __future__ import annotations

import json
import re
import shlex
import sys
from collections.abc import Iterable
from importlib import import_module
from pathlib import Path, PurePosixPath
from typing import Any

from prchain.chains.reading import patches
from prchain.core.errors import PrchainError
from prchain.environments import carry, clean_room
from prchain.environments.eras import reports
from prchain.environments.eras.ecosystems import report_for
from prchain.environments.eras.go import overrides as go_overrides
from prchain.environments.eras.node import configs as node_configs
from prchain.environments.eras.node.packages import DEPS as NODE_DEPS
from prchain.environments.eras.node.report import REPORTERS, reporter_files
from prchain.environments.eras.python import seal
from prchain.environments.eras.python.report import Pytest
from prchain.environments.eras.reports import RunsEach
from prchain.environments.eras.rust import overrides as rust_overrides
from prchain.environments.eras.rust import witness
from prchain.environments.eras.sealed import COPY_DIRS
from prchain.verdicts import crossing
from prchain.verdicts.sandbox import build_part, joined, patch_paths
from prchain.verdicts.taskfile import ConvertSummary

FORMAT = "prchain.harbor/1"
CHANGE = "/logs/artifacts/prchain-change.diff"  # Harbor's artifacts convention dir
ROOM_SCRIPT = Path(__file__).with_name("harbor_room.py")
EACH_SCRIPT = Path(__file__).with_name("harbor_each.py")
ROOMS = (
    "python",
    "c",
    "go",
    "rust",
    "node",
    "java",
)  # the rooms whose verdict runs inside a Harbor verifier
# What a room's verifier reads with beside its reader: Node's reader names the tree's root
# (carry); the places the stage base's manifests give a test library are read by the clean
# room's own modules (Node's runner configuration, Go's and Rust's overrides).
SHIPPED = {
    "node": (carry.__name__, node_configs.__name__),
    "go": (go_overrides.__name__,),
    "rust": (rust_overrides.__name__,),
}


def _portable(pattern: re.Pattern[str]) -> str:
    """`pattern` as a string that compiles alike anywhere: its case flag written inline."""
    return f"(?i){pattern.pattern}" if pattern.flags & re.IGNORECASE else pattern.pattern


def rules(room: str) -> dict[str, Any]:
    """The allow-list of `room` as data: crossing.py's tables and patterns, the room's sealed
    places, the test side (`prchain.chains.reading.patches`)."""
    sealed = crossing.sealed_places(room)
    return {
        "source_suffixes": sorted(crossing.SOURCE_SUFFIXES),
        "nested_data_suffixes": sorted(crossing.NESTED_DATA_SUFFIXES),
        "config_names": sorted(crossing.CONFIG_NAMES),
        "config_name_pattern": _portable(crossing._CONFIG_NAME),
        "metadata_dir_pattern": _portable(crossing._METADATA_DIR),
        "shadowed": sorted(frozenset(sys.stdlib_module_names) | crossing.RUNNER_MODULES),
        "import_roots": list(crossing.IMPORT_ROOTS),
        "test_dirs": sorted(patches.TEST_DIRS),
        "test_dir_pattern": patches._TEST_DIR.pattern,
        "test_name_pattern": patches.test_name_pattern().pattern,
        "test_path_pattern": patches.test_path_pattern().pattern,
        "test_config_files": sorted(patches.TEST_CONFIG_FILES),
        "sealed": {
            "dirs": sorted(sealed.dirs),
            "top_dirs": sorted(sealed.top_dirs),
            "namespaces": list(sealed.namespaces),
            "libraries": sorted(sealed.libraries),
            "copy_dirs": sorted(COPY_DIRS),
        },
    }


def _tester_env() -> str:
    return " ".join(f"{k}={shlex.quote(v)}" for k, v in clean_room.TESTER_ENV.items())


def _as_tester(script: str) -> str:
    """A root shell line running `script` as the tester, in the tree, with the tester's
    environment only."""
    return (
        f"setpriv --reuid={carry.TESTER} --regid={carry.TESTER} --init-groups --no-new-privs "
        f"env -i {_tester_env()} bash -c {shlex.quote(script)}"
    )


# Root, in the separate verifier container, from `/`: the clean room's steps (oracle.run_tests)
# with its own scripts, up to the hidden tests' run (the room's tail: PYTEST_RUN or EACH_RUN). A
# failure of any step leaves reward 0 and says which in verdict.json.
HIDDEN_LAYER = "tests/hidden-layer.tar"
TEST_SH = """#!/bin/bash
# prchain's clean room for one stage ({format}); docs/export-formats.md, "Harbor task directories".
set -uo pipefail
V=/logs/verifier; T=/tests; R={room}; W=/var/lib/prchain/harbor
mkdir -p "$V" && echo 0 > "$V/reward.txt"
fail() {{ printf '{{"resolved": false, "error": "%s"}}\\n' "$1" > "$V/verdict.json"; echo "$1" >&2; exit 0; }}
cd / && mkdir -p -m 0700 "$W" || fail "no room for root"
PY=$(command -v python3 || command -v python) || fail "the image has no Python"
# What the stage's hidden side adds to its era (its tests' new requirements), root's alone.
if [ -f "$T/{layer}" ]; then tar -xf "$T/{layer}" -C / --exclude='*.wh.*' || fail "unpacking the hidden tests' requirements failed"; fi
# The tree: B_t as the image checked it out, outside any repository, handed to the tester.
rm -rf {workdir}/.git && mkdir -p {tester_home} && chown -R {tester}:{tester} "$(dirname {workdir})" {tester_home}
# Root, before the change is there: the launcher, the reporters and the image's pytest plugins.
reporters=(); for f in "$T"/reporters/*; do [ -f "$f" ] && reporters+=("${{f##*/}}" "$(cat "$f")"); done
bash -c {prepare} prchain "$(cat "$T/launcher.py")" ${{reporters[@]+"${{reporters[@]}}"}} > "$W/probe" 2>/dev/null || fail "preparing the room failed"
# The agent's change, as the room's allow-list lets it cross (dropped paths are named).
C={change}; [ -f "$C" ] || {{ C="$W/none.diff"; : > "$C"; }}
"$PY" -I "$T/prchain_room.py" filter "$T/room.json" "$C" "$W/crossed.diff" 2> "$V/dropped.txt" || fail "reading the change failed"
# Nor what the stage base's manifests make part of the room's test machinery (oracle._overrides).
if [ -f "$T/prchain_each.py" ]; then
  "$PY" -I "$T/prchain_each.py" overrides "$T/room.json" {workdir} "$W/crossed.diff" "$W/kept.diff" 2>> "$V/dropped.txt" || fail "reading the stage base's manifests failed"
  mv "$W/kept.diff" "$W/crossed.diff"
fi
eval "$("$PY" -I "$T/prchain_room.py" env "$T/room.json" "$W/probe")"
export {tester_env}
cd {workdir}
{apply} < "$W/crossed.diff" > "$V/apply.log" 2>&1 || fail "the agent's change does not apply on the stage base"
if [ -s "$T/setup.sh" ]; then
  CAP={cap} bash -c {sealed_run} prchain {timeout}s "$(cat "$T/setup.sh")" > "$V/setup.log" 2>&1 || fail "the setup command failed"
fi
install -m 0644 "$T/test.patch" {tester_home}/test.patch
{apply_tests} > "$V/test-patch.log" 2>&1 || fail "the test patch does not apply"
mapfile -t hidden < "$T/sealed-paths.txt"
# Root's own tests where the tested process writes its report itself (oracle._plant_witness:
# Go's witness; oracle._plant_canary: Node's canary, and the suite's script run with it).
if [ -f "$T/prchain_each.py" ]; then
  "$PY" -I "$T/prchain_each.py" plant "$T/room.json" {workdir} "$W" > "$W/planted" || fail "planting root's tests failed"
  mapfile -t planted < "$W/planted"
  hidden+=(${{planted[@]+"${{planted[@]}}"}})
fi
cd / && bash -c {seal_tests} prchain {rewrite} "${{hidden[@]}}" || fail "sealing the hidden tests failed"
"""
# The Python room: pytest's junit report through root's pipe, read by prchain_room.py.
PYTEST_RUN = """cd {workdir} && CAP={cap} bash -c {sealed_run} prchain {timeout}s "$(cat "$T/run.sh")" > "$V/test-output.log" 2>&1
cd / && "$PY" -I "$T/prchain_room.py" decide "$T/room.json" {report}.xml "$V"
"""
# Another room (oracle._sealed_run), read by the room's own reader (prchain_each.py): where the
# reader runs each test on its own (build.sh: cargo's executables, ctest's listing), the build
# without running anything and its listing through root's pipe, then each required test alone
# under root's watch (clean_room.RUN_EACH with root's tracer and witness.py for libtest,
# RUN_CASES for a harness with its own check) and the tests it cannot run alone from the suite's
# sealed run (run.sh); else the suite's sealed run and its report through the pipe.
EACH_RUN = """if [ -s "$T/build.sh" ]; then
  cd {workdir} && CAP={cap} bash -c {sealed_run} prchain {timeout}s "$(cat "$T/build.sh")" > "$V/build-output.log" 2>&1
  cd / && {{ cat {report}.xml 2>/dev/null || :; }} > "$W/listing"
  "$PY" -I "$T/prchain_each.py" each "$T/room.json" "$W/listing" "$W/each.args" "$W/apart" "$W/each.kind" || fail "reading the test listing failed"
  mapfile -d '' -t cases < "$W/each.args"
  if [ "$(cat "$W/each.kind")" = libtest ]; then
    bash -c {run_each} prchain {seconds} "$(cat "$T/witness.py")" ${{cases[@]+"${{cases[@]}}"}} > "$V/each-output.log" 2>&1
  else
    bash -c {run_cases} prchain {seconds} ${{cases[@]+"${{cases[@]}}"}} > "$V/each-output.log" 2>&1
  fi
fi
if [ ! -s "$T/build.sh" ] || [ -s "$W/apart" ]; then
  S="$T/run.sh"; [ -s "$W/run.sh" ] && S="$W/run.sh"
  cd {workdir} && CAP={cap} bash -c {sealed_run} prchain {timeout}s "$(cat "$S")" > "$V/test-output.log" 2>&1
  cd / && {{ cat {report}.xml 2>/dev/null || :; }} > "$W/report"
fi
cd / && "$PY" -I "$T/prchain_each.py" decide "$T/room.json" "$V" "$W"
"""


def verifier_script(timeout: float, cap: int, ecosystem: str = "python") -> str:
    """test.sh of a stage of `ecosystem`'s room."""
    apply_tests = _as_tester(
        f"cd {carry.WORKDIR} && git apply --whitespace=nowarn {carry.TESTER_HOME}/test.patch"
    )
    tail = PYTEST_RUN if ecosystem == "python" else EACH_RUN
    return (TEST_SH + tail).format(
        format=FORMAT,
        layer=PurePosixPath(HIDDEN_LAYER).name,
        room=clean_room.ROOM,
        workdir=carry.WORKDIR,
        tester=carry.TESTER,
        tester_home=carry.TESTER_HOME,
        tester_env=_tester_env(),
        prepare=shlex.quote(clean_room.PREPARE),
        change=CHANGE,
        apply=_as_tester(carry.ROOM_APPLY),
        apply_tests=apply_tests,
        sealed_run=shlex.quote(clean_room.SEALED_RUN),
        seal_tests=shlex.quote(clean_room.SEAL_TESTS),
        rewrite=shlex.quote(clean_room.sealing_rewrite(ecosystem)),
        run_cases=shlex.quote(clean_room.RUN_CASES),
        run_each=shlex.quote(clean_room.RUN_EACH),
        timeout=f"{timeout:g}",
        seconds=int(timeout),
        cap=cap,
        report=clean_room.REPORT,
    )


def dockerfile(env: dict[str, Any]) -> str:
    """The agent's environment: the stage image at B_t, the tree the agent's own (a repository
    with B_t's files as its one commit), and nothing after B_t in it."""
    checkout = " && ".join(env["checkout"])
    workdir = env["workdir"]
    fresh = (
        f"rm -rf {workdir}/.git && git -C {workdir} init -q && git -C {workdir} add -A && "
        f"git -C {workdir} -c user.name=prchain -c user.email=prchain@localhost "
        "commit -q --no-verify -m base"
    )
    return (
        f"# {FORMAT}: the stage image {env['image_id']}\n"
        f"FROM {env['image']}\n"
        "USER root\n"
        f"RUN {checkout} && {fresh} && rm -rf {carry.ORIGIN_DIR} && "
        f"chown -R agent:agent {workdir} && mkdir -p /logs/artifacts && chmod 0777 /logs/artifacts\n"
        f"WORKDIR {workdir}\n"
    )


def collect_command(workdir: str) -> str:
    """The agent's change as bytes, read as the agent (its own git, as prchain's step 1 reads it)."""
    git = f"git -c core.hooksPath=/dev/null {carry.DIFF_FORMAT}"
    return (
        f"cd {workdir} && {git} add -A && {git} diff --cached --binary {carry.DIFF_OPTIONS} HEAD "
        f"> {CHANGE}"
    )


def task_toml(chain: dict[str, Any], stage: dict[str, Any], timeout: float) -> str:
    env = stage["environment"]
    name = f"prchain/{task_name(chain, stage)}"
    metadata = {
        "format": FORMAT,
        "instance_id": stage["instance_id"],
        "repo": chain["repo"],
        "chain_id": chain["chain_id"],
        "stage_idx": stage["idx"],
        "chain_length": len(chain["stages"]),
        "base_commit": stage["base_commit"],
        "image": env["image"],
        "image_id": env["image_id"],
        "era": env["era"],
    }
    lines = [
        'schema_version = "1.4"',
        "",
        "[task]",
        f"name = {json.dumps(name)}",
        f"description = {json.dumps('stage ' + str(stage['idx']) + ' of chain ' + str(chain['chain_id']) + ' of ' + chain['repo'])}",  # noqa: E501
        "",
        "[metadata]",
        *(f"{k} = {json.dumps(v)}" for k, v in metadata.items()),
        "",
        "[agent]",
        'user = "agent"',
        "",
        "[verifier]",
        'environment_mode = "separate"',
        f"timeout_sec = {timeout + 600:g}",
        "",
        "[[verifier.collect]]",
        f"command = {json.dumps(collect_command(env['workdir']))}",
        'user = "agent"',
        "",
    ]
    return "\n".join(lines)


def task_name(chain: dict[str, Any], stage: dict[str, Any]) -> str:
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", chain["repo"]).strip("-.").lower()
    return f"{slug}-c{chain['chain_id']}-s{stage['idx']}"


def room_json(stage: dict[str, Any], cap: int) -> dict[str, Any]:
    env = stage["environment"]
    found = report_for(env["ecosystem"])
    return {
        "format": FORMAT,
        "instance_id": stage["instance_id"],
        "FAIL_TO_PASS": list(stage["FAIL_TO_PASS"]),
        "PASS_TO_PASS": list(stage["PASS_TO_PASS"]),
        "test_command": env["test_command"],
        # the reporters the room's runs use (clean_room.room_script): this prchain's, not the image's
        "script_paths": [[f"{REPORTERS}/", f"{clean_room.ROOM_REPORTERS}/"]],
        "own_plugins": [],
        "max_report_bytes": cap,
        "rules": rules(env["ecosystem"]),
        "reader": f"{type(found).__module__}:{type(found).__name__}",
        "each": _build_script(env) is not None,
        "ecosystem": env["ecosystem"],
        "test_files": list(env["test_files"]),
        # oracle._plant_canary: the hidden test files whose texts the room's canary reads
        "hidden_files": list(
            dict.fromkeys([*env["test_files"], *patch_paths(stage["test_patch"])])
        ),
        # oracle._overrides: the manifests read before the agent's change (Go's at any depth)
        "override_manifests": list(crossing.OVERRIDE_MANIFESTS.get(env["ecosystem"], ())),
        "override_anywhere": env["ecosystem"] == "go",
        "links_name": node_configs.LINKS,
        "links_command": node_configs.links_command(NODE_DEPS),
        "report_path": clean_room.REPORT,
    }


def _build_script(env: dict[str, Any]) -> str | None:
    """The room's build-and-list script where its reader runs each test on its own."""
    found = report_for(env["ecosystem"])
    if not isinstance(found, RunsEach):
        return None
    return found.build_script(env["test_command"], clean_room.REPORT)


def reader_files(ecosystem: str) -> dict[str, str]:
    """The room's report reader as `tests/lib/` ships it: prchain's own modules, unchanged (the
    reader's and `eras/reports.py`, standard library only), their packages empty."""
    names = [reports.__name__, type(report_for(ecosystem)).__module__, *SHIPPED.get(ecosystem, ())]
    files: dict[str, str] = {}
    for name in names:
        parts = name.split(".")
        for depth in range(1, len(parts)):
            files.setdefault("/".join(parts[:depth]) + "/__init__.py", "")
        source = import_module(name).__file__
        assert source is not None
        files["/".join(parts) + ".py"] = Path(source).read_text(encoding="utf-8")
    return files


def why_not(stage: dict[str, Any]) -> str:
    """Why a stage gets no Harbor directory ("" when it gets one)."""
    env = stage["environment"]
    if not env["runnable"]:
        return f"not runnable ({env['not_runnable']})"
    if env["ecosystem"] not in ROOMS:
        return f"the {env['ecosystem']} room's verdict has no in-container form"
    if env["ecosystem"] == "python" and env["log_parser"] != "pytest":
        return f"its report reader is {env['log_parser']}, not pytest"
    return ""


def _hidden_layer(env: dict[str, Any]) -> bytes | str | None:
    """What a stage's hidden side adds to its era (environments/eras/hidden.py), as the filesystem
    diff of the room's era image, which test.sh unpacks as root in the verifier's container
    before anything of the agent's arrives; None when the stage has none, a reason when it cannot
    be read here."""
    if not env.get("room_image"):
        return None
    if not env.get("room_era_image"):
        return "its hidden tests' room names no era image (export it again)"
    from prchain.environments.docker_client import DockerClient

    try:
        return DockerClient().top_layer(env["room_era_image"])
    except PrchainError as exc:
        return f"its hidden tests' requirements could not be read: {exc}"


def write_task(
    root: Path,
    chain: dict[str, Any],
    stage: dict[str, Any],
    timeout: float,
    cap: int,
    layer: bytes | None = None,
) -> str:
    """One stage's task directory under `root`; its name. `layer`: what the stage's hidden side
    adds to its era, unpacked by test.sh (`tests/hidden-layer.tar`)."""
    env = stage["environment"]
    name = task_name(chain, stage)
    task = root / name
    for sub in ("environment", "solution", "tests"):
        (task / sub).mkdir(parents=True, exist_ok=True)
    python = env["ecosystem"] == "python"
    reader = Pytest() if python else report_for(env["ecosystem"])
    # the stage's hidden side: its gold test patch and the gold code patch's build part
    hidden = joined(build_part(stage["patch"] or "", env["ecosystem"]), stage["test_patch"])
    files = {
        "instruction.md": instruction(stage, env["workdir"]),
        "task.toml": task_toml(chain, stage, timeout),
        "environment/Dockerfile": dockerfile(env),
        "solution/gold.patch": stage["patch"],
        "solution/solve.sh": SOLVE_SH.format(workdir=env["workdir"]),
        "tests/test.sh": verifier_script(timeout, cap, env["ecosystem"]),
        "tests/prchain_room.py": ROOM_SCRIPT.read_text(encoding="utf-8"),
        "tests/room.json": json.dumps(room_json(stage, cap), indent=1),
        "tests/launcher.py": seal.LAUNCHER_SOURCE,
        "tests/test.patch": hidden,
        "tests/setup.sh": seal.launched(env["setup_command"], clean_room.LAUNCHER),
        "tests/run.sh": seal.launched(
            clean_room.room_script(reader.script(env["test_command"], clean_room.REPORT)),
            clean_room.LAUNCHER,
        ),
        "tests/sealed-paths.txt": "".join(
            f"{p}\n" for p in dict.fromkeys([*patch_paths(hidden), *env["test_files"]])
        ),
    }
    if not python:
        files["tests/prchain_each.py"] = EACH_SCRIPT.read_text(encoding="utf-8")
        files["tests/build.sh"] = _build_script(env) or ""
        files |= {f"tests/lib/{rel}": text for rel, text in reader_files(env["ecosystem"]).items()}
        if env["ecosystem"] == "node":  # as this prchain has them (PREPARE)
            files |= {f"tests/reporters/{name}": text for name, text in reporter_files().items()}
        if isinstance(reader, RunsEach):  # root's witness of a libtest pass (RUN_EACH)
            files["tests/witness.py"] = witness.source()
        if env["ecosystem"] == "rust":  # C's cases run untraced (RUN_CASES)
            files["environment/docker-compose.yaml"] = TRACER_COMPOSE
    for rel, text in files.items():
        (task / rel).parent.mkdir(parents=True, exist_ok=True)
        (task / rel).write_text(text, encoding="utf-8")
    if layer is not None:
        (task / HIDDEN_LAYER).write_bytes(layer)
    for script in ("solution/solve.sh", "tests/test.sh"):
        (task / script).chmod(0o755)
    return name


# The containers of a stage judged by root's tracer (both, the verifier being built from the same
# environment): root may trace the tester's processes from their start, so the tracer follows
# the test process alone, as in prchain's rooms (clean_room.RUN_EACH). The agent runs as `agent`
# and holds no capability.
TRACER_COMPOSE = """services:
  main:
    cap_add:
      - SYS_PTRACE
"""


SOLVE_SH = """#!/bin/bash
# The gold patch of the stage (prchain's oracle).
set -euo pipefail
cd {workdir}
git apply --whitespace=nowarn /solution/gold.patch
"""


def instruction(stage: dict[str, Any], workdir: str) -> str:
    return (
        f"{stage['problem_statement'].strip()}\n\n"
        f"The repository is checked out at `{workdir}`. Change its code so that the issue above "
        "is resolved; hidden tests decide.\n"
    )


def write(
    chains: Iterable[dict[str, Any]], out: str | Path, *, timeout: float, cap: int
) -> ConvertSummary:
    """A task directory under `out` for every stage Harbor can judge; the others counted."""
    root = Path(out)
    root.mkdir(parents=True, exist_ok=True)
    summary = ConvertSummary()
    for chain in chains:
        for stage in chain["stages"]:
            reason = why_not(stage)
            layer = _hidden_layer(stage["environment"]) if not reason else None
            if reason or isinstance(layer, str):
                summary.skipped[reason or str(layer)] += 1
            else:
                summary.written.append(write_task(root, chain, stage, timeout, cap, layer))
    return summary
