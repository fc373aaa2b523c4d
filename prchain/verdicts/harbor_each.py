"""A non-Python room's verdict inside a Harbor verifier: shipped verbatim as `tests/prchain_each.py`.

The verifier of a Harbor task runs in a container with no prchain in it, on the stage image's own
`python3` (every prchain image has one: the base image is python3 + git, and each era starts from a
Debian suite's, 3.9 and newer). What of the clean room's judging runs in Python runs here with the
room's own report reader, prchain's module shipped beside this file unchanged (`lib/`, standard
library only: `tests/verdicts/test_harbor_room.py` holds the reader modules to that), so a
Harbor reward is read by the same code as `tests verify` and `tasks eval`. The root shell around
it (`prchain/verdicts/harbor.py: EACH_SH`) is the clean room's own scripts.

Its steps mirror `prchain.verdicts.oracle._sealed_run` for a reader that runs each test on its own
(`reports.RunsEach`: C's ctest and GoogleTest) and `sandbox.run_suite` for one whose report root
reads from its pipe:

    python3 -I prchain_each.py each ROOM_JSON LISTING ARGS APART   RUN_CASES's arguments (NUL-separated)
                                                                and the tests read from the suite's run
    python3 -I prchain_each.py decide ROOM_JSON VERIFIER_DIR WORK_DIR   reward.txt and verdict.json
"""

from __future__ import annotations

import json
import os
import sys
from importlib import import_module
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "lib"))

EACH_LOG = "prchain-each-log"  # clean_room.EACH_LOG: what RUN_CASES prints before its log's tail
MISSING = "missing"  # oracle.MISSING


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


def required(room: dict[str, Any]) -> list[str]:
    return list(room["FAIL_TO_PASS"]) + list(room["PASS_TO_PASS"])


def each_args(room: dict[str, Any], listing: str) -> tuple[list[str], list[str]]:
    """RUN_CASES's nine fields per required test the listing holds (clean_room.run_each, root's
    canary with them), and the required tests read from the suite's run instead
    (RunsEach.apart)."""
    found = reader(room)
    runs = found.each(listing, required(room))
    if any(run.check is None for run in runs):
        raise ValueError("a test run on its own without its harness's check (libtest's witness)")
    args = [
        part
        for run in runs
        for part in (
            run.directory,
            run.check.listed,
            run.check.run,
            run.check.ok,
            run.check.summary,
            run.check.failed,
            run.check.canary,
            run.check.canary_shows,
            run.check.canary_never,
        )
    ]
    return args, found.apart(listing, required(room))


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
    from prchain.environments.eras.reports import judged_only, record

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
        suite = found.parse(_read(os.path.join(work, "report"), cap), output)
        if not room["each"]:
            outcomes = suite
        for test in apart:
            if test in suite:
                outcomes[test] = suite[test]
    judged = judged_only(found, dict.fromkeys(required(room), ""))
    for test in sorted(set(required(room)) - set(judged)):
        outcomes[test] = "failed"
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
    if command == "each":
        listing = _read(argv[2], int(room["max_report_bytes"])) or ""
        args, apart = each_args(room, listing)
        with open(argv[3], "wb") as out:
            out.write(b"".join(part.encode("utf-8") + b"\0" for part in args))
        with open(argv[4], "w", encoding="utf-8") as out:
            out.write("".join(f"{test}\n" for test in apart))
        return 0
    result = decide(room, argv[2], argv[3])
    with open(os.path.join(argv[2], "verdict.json"), "w", encoding="utf-8") as out:
        json.dump(result, out, indent=1)
    with open(os.path.join(argv[2], "reward.txt"), "w", encoding="utf-8") as out:
        out.write("1\n" if result["resolved"] else "0\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
