"""A non-Python room's verdict inside a Harbor verifier: shipped verbatim as `tests/prchain_each.py`.

The verifier of a Harbor task runs in a container with no prchain in it, on the stage image's own
`python3` (every prchain image has one: the base image is python3 + git, and each era starts from a
Debian suite's, 3.9 and newer). What of the clean room's judging runs in Python runs here with the
room's own report reader, prchain's module shipped beside this file unchanged (`lib/`, standard
library only: `tests/verdicts/test_harbor_room.py` holds the reader modules to that), so a
Harbor reward is read by the same code as `tests verify` and `tasks eval`. The root shell around
it (`prchain/verdicts/harbor.py: EACH_SH`) is the clean room's own scripts.

Its steps mirror `prchain.verdicts.oracle.run_tests`: the paths the stage base's manifests make
part of the room's test machinery never cross (`oracle._overrides`, `crossing.overridden_dirs`:
Go's local `replace` of a test library, Rust's `[patch]` and path overrides, the files Node's
runner configuration loads and its links into the tree), the witness a
report the tested process writes itself needs (`oracle._plant_witness`: Go's), root's canary
(`oracle._plant_canary`: Node's jest and `node --test`, Java's Maven run selecting its hidden
classes, each run with it; the reader reads the hidden test files as root applied them), then
`oracle._sealed_run` for a reader that runs each test on its own (`reports.RunsEach`: Rust's
libtest under root's tracer, C's ctest and GoogleTest) and `sandbox.run_suite` for one whose
report root reads from its pipe:

    python3 -I prchain_each.py overrides ROOM_JSON TREE IN OUT   the change without the overridden
                                                                paths (named on stderr)
    python3 -I prchain_each.py plant ROOM_JSON TREE WORK_DIR   root's witness or canary written
                                                                (their paths on stdout)
    python3 -I prchain_each.py each ROOM_JSON LISTING ARGS APART KIND   RUN_EACH's or RUN_CASES's
                                      arguments (NUL-separated), the tests read from the suite's
                                      run, which of the two scripts (`libtest` or `cases`)
    python3 -I prchain_each.py decide ROOM_JSON VERIFIER_DIR WORK_DIR   reward.txt and verdict.json
"""

from __future__ import annotations

import json
import os
import secrets
import subprocess
import sys
from importlib import import_module
from typing import Any

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.join(HERE, "lib"), HERE]  # the room's reader; prchain_room.py beside

EACH_LOG = "prchain-each-log"  # clean_room.EACH_LOG: what RUN_CASES prints before its log's tail
MISSING = "missing"  # oracle.MISSING
NONCE = "witness.nonce"  # in WORK_DIR: the name of the witness root planted
CANARY = "canary.id"  # in WORK_DIR: the test id of the canary root planted
# oracle.FIND_MANIFESTS: the directories the build tool ignores, never searched for manifests
_PRUNED = frozenset({".git", "vendor", "testdata", "node_modules"})


def reader(room: dict[str, Any]) -> Any:
    """The room's report reader: `module:Class` of the shipped lib."""
    module, _, name = room["reader"].partition(":")
    return getattr(import_module(module), name)()


def _read(path: str, cap: int | None = None) -> str | None:
    """A file's text, None when absent or empty; ValueError past `cap` bytes."""
    try:
        with open(path, "rb") as handle:
            data = handle.read() if cap is None else handle.read(cap + 1)
    except OSError:
        return None
    if cap is not None and len(data) > cap:
        raise ValueError(f"the test report is over {cap:,} bytes: not read")
    return data.decode("utf-8", "replace") or None


def manifests(room: dict[str, Any], tree: str) -> dict[str, str]:
    """oracle._read_base for the room: Go's go.mod and go.work at any depth (outside the pruned
    directories), the other rooms' named files at the tree's root; path → text."""
    names = list(room["override_manifests"])
    found: dict[str, str] = {}
    if room["links_name"] in names:  # Node: the image's node_modules links into the tree
        names.remove(room["links_name"])
        done = subprocess.run(["sh", "-c", room["links_command"]], capture_output=True, text=True)
        found[room["links_name"]] = done.stdout
    if room["override_anywhere"]:
        for top, dirs, files in os.walk(tree):
            dirs[:] = sorted(d for d in dirs if d not in _PRUNED)
            for name in sorted(set(files) & set(names)):
                rel = os.path.relpath(os.path.join(top, name), tree).replace(os.sep, "/")
                found[rel] = _read(os.path.join(top, name)) or ""
        return found
    for name in names:
        if os.path.isfile(os.path.join(tree, name)):
            found[name] = _read(os.path.join(tree, name)) or ""
    return found


def overridden_dirs(room: dict[str, Any], texts: dict[str, str]) -> list[str]:
    """crossing.overridden_dirs for the Go, Rust and Node rooms (room.json:
    `override_manifests`), by the room's own module, shipped (harbor.SHIPPED)."""
    if not texts:
        return []
    libraries = frozenset(room["rules"]["sealed"]["libraries"])
    if room["ecosystem"] == "node":
        from prchain.environments.eras.node.configs import sealed

        return sealed(texts, libraries)
    if room["ecosystem"] == "rust":
        from prchain.environments.eras.rust import overrides as rust

        return rust.overridden_dirs(texts, libraries)
    from prchain.environments.eras.go import overrides as go

    return go.overridden_dirs(texts, libraries)


def without_dirs(patch: bytes, dirs: list[str]) -> tuple[bytes, list[str]]:
    """sandbox.without_dirs: `patch` without the sections naming a path below one of `dirs`."""
    from prchain_room import _BYTE_SECTION, section_paths

    starts = [m.start() for m in _BYTE_SECTION.finditer(patch)]
    kept, dropped = [], []
    for i, start in enumerate(starts):
        section = patch[start : starts[i + 1] if i + 1 < len(starts) else len(patch)]
        paths = section_paths(section.decode("utf-8", "replace"))
        if any(p == d or p.startswith(d + "/") for p in paths for d in dirs):
            dropped += paths
        else:
            kept.append(section)
    return b"".join(kept), dropped


def plant(room: dict[str, Any], tree: str, work: str) -> list[str]:
    """Root's own tests, written into `tree` before any tested code runs (sealed with the hidden
    tests by the caller): the witness and the canary, where the room's reader has them; their
    paths."""
    return plant_witness(room, tree, work) + plant_canary(room, tree, work)


def plant_canary(room: dict[str, Any], tree: str, work: str) -> list[str]:
    """oracle._plant_canary: root's canary test (reports.Canaried) with a nonce of this run, and
    the suite's script run with it (`work`/run.sh, else the task's run.sh runs); its files."""
    found = reader(room)
    if not hasattr(found, "canary"):
        return []
    texts = _texts(tree, room["hidden_files"])
    nonce = secrets.token_hex(8)
    canary = found.canary(room["test_command"], room["test_files"], nonce, texts)
    if canary is None:
        return []
    _write(tree, canary.files)
    script = found.script(canary.command, room["report_path"])
    for image_path, room_path in room.get("script_paths", []):  # clean_room.room_script
        script = script.replace(image_path, room_path)
    with open(os.path.join(work, "run.sh"), "w", encoding="utf-8") as out:
        out.write(script)
    with open(os.path.join(work, CANARY), "w", encoding="utf-8") as out:
        out.write(canary.test_id)
    return list(canary.files)


def plant_witness(room: dict[str, Any], tree: str, work: str) -> list[str]:
    """oracle._plant_witness: the witness files of a reader whose report the tested process
    writes itself, written into `tree` with a nonce of this run (kept in `work`); their paths."""
    found = reader(room)
    if not hasattr(found, "witness_files"):
        return []
    nonce = secrets.token_hex(8)
    files = found.witness_files(_texts(tree, room["test_files"]), nonce, room["test_command"])
    _write(tree, files)
    if files:
        with open(os.path.join(work, NONCE), "w", encoding="utf-8") as out:
            out.write(found.witness_name(nonce))
    return list(files)


def _texts(tree: str, paths: list[str]) -> dict[str, str]:
    """The texts of `paths` the tree has (the hidden test files, as root applied them)."""
    found = {}
    for path in paths:
        text = _read(os.path.join(tree, path))
        if text is not None:
            found[path] = text
    return found


def _write(tree: str, files: dict[str, str]) -> None:
    """Root's files (path → text) into `tree`, their directories made (Java's canary sits in a
    package of its own)."""
    for path, text in files.items():
        target = os.path.join(tree, path)
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "w", encoding="utf-8") as out:
            out.write(text)


def required(room: dict[str, Any]) -> list[str]:
    return list(room["FAIL_TO_PASS"]) + list(room["PASS_TO_PASS"])


def each_args(room: dict[str, Any], listing: str) -> tuple[list[str], list[str], str]:
    """clean_room.run_each's arguments for the required tests the listing holds: RUN_EACH's four
    fields a test (libtest's, witnessed by root's tracer) unless every test has its harness's
    check, then RUN_CASES's nine (root's canary with them); the required tests read from the
    suite's run instead (RunsEach.apart); which script."""
    from prchain.environments.eras.reports import each_arguments

    found = reader(room)
    args, kind = each_arguments(found.each(listing, required(room)))
    return args, found.apart(listing, required(room)), kind


def each_outcomes(room: dict[str, Any], listing: str, printed: str) -> dict[str, str]:
    """clean_room.run_each: test id → passed or failed from RUN_CASES's status lines."""
    runs = reader(room).each(listing, required(room))
    statuses = printed.partition(f"\n{EACH_LOG}\n")[0]
    outcomes: dict[str, str] = {}
    for line in statuses.splitlines():
        _, index, status = (line.split() + ["", "", ""])[:3]
        if line.startswith("prchain-each ") and index.isdigit() and status != "missing":
            if int(index) >= len(runs):
                continue
            test = runs[int(index)].test_id
            if outcomes.get(test) != "failed":
                outcomes[test] = "passed" if status == "0" else "failed"
    return outcomes


def outcomes_of(room: dict[str, Any], verifier: str, work: str) -> tuple[dict[str, str], str]:
    """Every judged test's outcome (oracle._sealed_run), and why the run could not be judged."""
    from prchain.environments.eras.reports import (
        canaried,
        judged_only,
        record,
        reported_passes,
        witnessed,
    )

    found = reader(room)
    cap = int(room["max_report_bytes"])
    outcomes: dict[str, str] = {}
    apart: list[str] = []
    if room["each"]:
        built = _read(os.path.join(verifier, "build-output.log")) or ""
        outcomes = {t: o for t, o in found.parse(None, built).items() if o == "error"}
        listing = _read(os.path.join(work, "listing"), cap) or ""
        printed = _read(os.path.join(verifier, "each-output.log")) or ""
        for test, outcome in each_outcomes(room, listing, printed).items():
            record(outcomes, test, outcome)
        apart = found.apart(listing, required(room))
    if not room["each"] or apart:
        output = _read(os.path.join(verifier, "test-output.log")) or ""
        report = _read(os.path.join(work, "report"), cap)
        # the console is the tested code's too: only the report can pass a test (sandbox.run_suite)
        suite = reported_passes(
            found.parse(report, output), found.parse(report, "") if report else {}
        )
        if not room["each"]:
            outcomes = suite
        for test in apart:
            if test in suite:
                outcomes[test] = suite[test]
    judged = judged_only(found, dict.fromkeys(required(room), ""))
    for test in sorted(set(required(room)) - set(judged)):
        outcomes[test] = "failed"
    name = _read(os.path.join(work, NONCE))
    if name:
        outcomes = witnessed(outcomes, required(room), name)
    canary = _read(os.path.join(work, CANARY))
    if canary:
        outcomes = canaried(outcomes, required(room), canary)
    return outcomes, ""


def decide(room: dict[str, Any], verifier: str, work: str) -> dict[str, Any]:
    """oracle.verdict: every required test (FAIL_TO_PASS and PASS_TO_PASS) reported passing."""
    from prchain.environments.eras.reports import is_passing

    try:
        outcomes, error = outcomes_of(room, verifier, work)
    except ValueError as exc:
        outcomes, error = {}, str(exc)
    seen = {test: outcomes.get(test, MISSING) for test in required(room)}
    failing = [test for test in required(room) if not is_passing(seen[test])]
    resolved = bool(required(room)) and not failing and not error
    return {"resolved": resolved, "failing": failing, "outcomes": seen, "error": error}


def main(argv: list[str]) -> int:
    command, room_path = argv[0], argv[1]
    with open(room_path, encoding="utf-8") as handle:
        room = json.load(handle)
    if command == "overrides":
        with open(argv[3], "rb") as handle:
            kept, dropped = without_dirs(
                handle.read(), overridden_dirs(room, manifests(room, argv[2]))
            )
        with open(argv[4], "wb") as out:
            out.write(kept)
        for path in dropped:
            sys.stderr.write(f"left out of the clean room (a test library's override): {path}\n")
        return 0
    if command == "plant":
        print("\n".join(plant(room, argv[2], argv[3])))
        return 0
    if command == "each":
        listing = _read(argv[2], int(room["max_report_bytes"])) or ""
        args, apart, kind = each_args(room, listing)
        with open(argv[3], "wb") as out:
            out.write(b"".join(part.encode("utf-8") + b"\0" for part in args))
        with open(argv[4], "w", encoding="utf-8") as out:
            out.write("".join(f"{test}\n" for test in apart))
        with open(argv[5], "w", encoding="utf-8") as out:
            out.write(kind)
        return 0
    result = decide(room, argv[2], argv[3])
    with open(os.path.join(argv[2], "verdict.json"), "w", encoding="utf-8") as out:
        json.dump(result, out, indent=1)
    with open(os.path.join(argv[2], "reward.txt"), "w", encoding="utf-8") as out:
        out.write("1\n" if result["resolved"] else "0\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
