"""Every room's Harbor run with every variant: the real `harbor` CLI, oracle agent, on the tasks
`prchain tasks convert --to harbor` writes for each room's generated repository.

Each room's test runs its gold and its sharpest attack (tests/attacks/, beside the room's
clean-room attacks, and Java's beside its clean-room test in tests/environments/eras/, on the era
images their module builds anyway); CI runs Rust's and Node's, and C's, Go's and Java's are marked
`bench` (run here only). This runs the tests with `PRCHAIN_HARBOR_EVERY_VARIANT=1`, which adds the
rest:

| room | test | gold and sharpest attack | added here |
| --- | --- | --- | --- |
| C | test_forged_gtest_report.py | gold 1, forged GoogleTest report 0 | hidden test rewritten 0 |
| Go | test_planted_library_go.py | nested module's gold 1, its replaced testify rewritten 0 | vendoring room: gold 1, vendored assertion rewritten 0 |
| Rust | test_rust_report.py | stage 1 gold 1, overridden pretty_assertions rewritten 0, panic hook 0 | stage 2 gold 1 |
| Node | test_planted_library_node.py | `node --test` gold 1, forged report 0 | planted chai 0; jest gold 1, jest setup file rewritten 0; vitest gold 1, forged report 0 |
| Java | test_java_clean_room.py (tests/environments/eras/) | stage 1 gold 1, wrong `twice` 0, planted `org.junit.Assert` 0, forged report and halt 0 | stage 2 gold 1, shutdown hook that clears failures 0 |

Prints each test's outcome and its setup (era images) and call (the Harbor run) wall times.
Everything is built and removed by the tests themselves (their repositories are run-unique).

    python bench/bench_harbor_rooms.py [c go rust node java]
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = {
    "c": "tests/attacks/test_forged_gtest_report.py::test_harbor_judges_the_c_room_as_its_clean_room",
    "go": "tests/attacks/test_planted_library_go.py::test_harbor_judges_the_go_room_as_its_clean_room",
    "rust": "tests/attacks/test_rust_report.py::test_harbor_judges_the_rust_room_as_its_clean_room",
    "node": "tests/attacks/test_planted_library_node.py::test_harbor_judges_the_node_room_as_its_clean_room",
    "java": "tests/environments/eras/test_java_clean_room.py::test_harbor_judges_the_java_room_as_its_clean_room",
}  # fmt: skip


def run(room: str) -> tuple[str, str]:
    """One room's test with every variant: its outcome and its durations."""
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "junit.xml"
        env = {**os.environ, "PRCHAIN_HARBOR_EVERY_VARIANT": "1"}
        argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "--durations=0",
                f"--junitxml={report}", TESTS[room]]  # fmt: skip
        done = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True)
        times = {line.split()[1]: line.split()[0] for line in done.stdout.splitlines()
                 if line.endswith(TESTS[room]) and line.split()[1] in ("setup", "call")}  # fmt: skip
        case = ET.parse(report).getroot().find(".//testcase") if report.exists() else None
        failed = case is None or any(c.tag in ("failure", "error") for c in case)
        if failed:
            print(done.stdout[-4000:], file=sys.stderr)
        return ("failed" if failed else "passed"), f"{times.get('setup')} / {times.get('call')}"


def main(rooms: list[str]) -> int:
    print("| room | outcome | setup / call |\n| --- | --- | --- |")
    outcomes = []
    for room in rooms or list(TESTS):
        outcome, times = run(room)
        outcomes.append(outcome)
        print(f"| {room} | {outcome} | {times} |", flush=True)
    return 0 if all(o == "passed" for o in outcomes) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
