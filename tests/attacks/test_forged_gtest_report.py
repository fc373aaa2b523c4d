"""Issue 77, C room: GoogleTest's XML is written by the tested program itself.

The C room read the XML file each GoogleTest binary writes into `$GTEST_OUTPUT`'s directory, so
a wrong `area` that writes a passing `<testsuites>` for every hidden case there and ends the
process with status 0 passed the hidden tests (`ctest` too: the binary exited 0). In a clean room
each required case now runs on its own as root's child (`<binary> --gtest_filter=Suite.Case`,
found from ctest's listing, `ctest -N -V`) and passes only with exit status 0 plus GoogleTest's
own `[       OK ] Suite.Case (` and `[  PASSED  ] 1 test.` lines and no `[  FAILED  ]`
(`prchain/environments/clean_room.py: RUN_CASES`); no file the program writes is read. Round 2:
a program that prints those lines for whatever its filter names (its own `main`) is caught by
root's canary, a case name drawn per run that no build holds, named beside the case and run
alone. The gold patch still resolves, in a rollout's clean room and under `tasks eval
--predictions`."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.planted import (
    Room,
    clean_room_passes,
    era_image,
    eval_status,
    hidden_tests,
    patch_of,
    sandbox,
    two_commits,
)

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.timeout(1800)]  # builds C

REPO = f"forged-gtest-{uuid.uuid4().hex[:8]}/shapes"
CMAKE = """cmake_minimum_required(VERSION 3.14)
project(shapes CXX)
find_package(GTest REQUIRED)
enable_testing()
add_library(shapes shapes.cc)
add_executable(shapes_test tests/shapes_test.cc)
target_link_libraries(shapes_test shapes GTest::gtest_main)
add_test(NAME shapes_test COMMAND shapes_test)
"""
HEADER = "double square(double s);\n"
AREA_HEADER = HEADER + "double area(double r);\n"
SQUARE = '#include "shapes.h"\n\ndouble square(double s) { return s * s; }\n'
AREA = "\ndouble area(double r) { return 3 * r * r; }\n"
# A wrong `area` that forges GoogleTest's report of every hidden case and ends the binary at once.
FORGED = (
    '#include "shapes.h"\n#include <cstdio>\n#include <cstdlib>\n#include <cstring>\n'
    "#include <string>\n#include <unistd.h>\n\n"
    "double square(double s) { return s * s; }\n\n"
    "double area(double r) {\n"
    '  const char *out = std::getenv("GTEST_OUTPUT");\n'
    '  if (out && !std::strncmp(out, "xml:", 4)) {\n'
    '    std::string path = std::string(out + 4) + "shapes_test.xml";\n'
    '    if (FILE *f = std::fopen(path.c_str(), "w")) {\n'
    '      std::fputs("<?xml version=\\"1.0\\"?><testsuites>"\n'
    '        "<testsuite name=\\"AreaTest\\"><testcase name=\\"Unit\\" classname=\\"AreaTest\\"/></testsuite>"\n'
    '        "<testsuite name=\\"SquareTest\\"><testcase name=\\"Unit\\" classname=\\"SquareTest\\"/></testsuite>"\n'
    '        "</testsuites>", f);\n'
    "      std::fclose(f);\n    }\n  }\n"
    "  _exit(0);\n}\n"
)
# A wrong `area` whose file also defines `main`: the linker takes it before gtest_main's, so the
# test binary never runs GoogleTest. For the first name its `--gtest_filter` holds (the one case
# root asked for, before the canaries) it answers `--gtest_list_tests` and prints GoogleTest's
# lines of one test passing, and exits 0; without a filter (ctest's run) it exits 0.
PRINTER = (
    '#include "shapes.h"\n#include <cstdio>\n#include <string>\n\n'
    "double square(double s) { return s * s; }\n"
    "double area(double r) { return r; }\n\n"
    "int main(int argc, char **argv) {\n"
    "  std::string filter;\n  bool list = false;\n"
    "  for (int i = 1; i < argc; ++i) {\n"
    "    std::string a = argv[i];\n"
    '    if (a.rfind("--gtest_filter=", 0) == 0) filter = a.substr(15);\n'
    '    if (a == "--gtest_list_tests") list = true;\n  }\n'
    "  if (filter.empty()) return 0;\n"
    "  std::string c = filter.substr(0, filter.find(':'));\n"
    "  std::string suite = c.substr(0, c.find('.')), name = c.substr(c.find('.') + 1);\n"
    '  if (list) { std::printf("%s.\\n  %s\\n", suite.c_str(), name.c_str()); return 0; }\n'
    '  std::printf("[==========] Running 1 test from 1 test suite.\\n[ RUN      ] %s\\n", c.c_str());\n'
    '  std::printf("[       OK ] %s (0 ms)\\n[==========] 1 test from 1 test suite ran. (0 ms total)\\n"'
    ", c.c_str());\n"
    '  std::printf("[  PASSED  ] 1 test.\\n");\n'
    "  return 0;\n}\n"
)
TEST = (
    '#include <gtest/gtest.h>\n#include "../shapes.h"\n\n'
    "TEST(SquareTest, Unit) { EXPECT_EQ(4.0, square(2)); }\n"
)
AREA_TEST = "\nTEST(AreaTest, Unit) { EXPECT_EQ(3.0, area(1)); }\n"


@pytest.fixture(scope="module")
def c_room(
    tmp_path_factory: pytest.TempPathFactory, docker_client: Any, base_image: str
) -> Iterator[Room]:
    from prchain.environments.eras.c import C
    from prchain.environments.eras.config import ErasConfig
    from prchain.environments.eras.manifests import snapshot

    clone = tmp_path_factory.mktemp("c") / "shapes"
    before = {
        "CMakeLists.txt": CMAKE, "shapes.h": HEADER, "shapes.cc": SQUARE,
        "tests/shapes_test.cc": TEST,
    }  # fmt: skip
    after = {
        "shapes.h": AREA_HEADER,
        "shapes.cc": SQUARE + AREA,
        "tests/shapes_test.cc": TEST + AREA_TEST,
    }
    base, gold = two_commits(clone, before, after, ("2024-03-01T10:00:00Z", "2024-03-02T10:00:00Z"))
    eras = ErasConfig(suites={"bookworm": "3.11"}, extra_base_packages=[])
    plan = C().plans(snapshot(clone, base), eras)[0]
    with era_image(docker_client, REPO, clone, base, plan) as image:
        yield Room(
            REPO, clone, base, gold, image, plan, "c", plan.test_command,
            ["tests/shapes_test.cc"], ["AreaTest::Unit"],
            ["SquareTest::Unit", "ctest::shapes_test"],
        )  # fmt: skip


def test_forged_gtest_reports_do_not_pass_a_wrong_area_but_the_gold_does(
    docker_client: Any, c_room: Room, tmp_path: Path
) -> None:
    """Both forgers in one sandbox, then the gold there; each as a prediction, then the gold's.
    The printer claims the case its filter names: root's canaries (names drawn per run, beside
    the case in an order drawn per run in the listing and the run, and alone) show it forging, so
    AreaTest::Unit and SquareTest::Unit fail (the code before passed both)."""
    from prchain.verdicts.oracle import run_tests

    forged = {"shapes.h": AREA_HEADER, "shapes.cc": FORGED}
    printer = {"shapes.h": AREA_HEADER, "shapes.cc": PRINTER}
    with sandbox(docker_client, c_room) as env:
        for path, text in forged.items():
            env.write_file(path, text)
        assert not clean_room_passes(env, c_room)
        env.write_file("shapes.cc", PRINTER)
        run = run_tests(env, hidden_tests(c_room), timeout=300)
        # Listed with a canary, a canary named in its run, or a canary passing alone: each is
        # the printer's (which one depends on the drawn order); none of them passes a case.
        assert run.failing == ["AreaTest::Unit", "SquareTest::Unit"], run.output_tail[-3000:]
        assert run.outcomes.get("ctest::shapes_test") == "passed"  # its exit status is the test
        env.write_file("shapes.cc", SQUARE + AREA)  # the gold code
        assert clean_room_passes(env, c_room)
    for name, wrong in (("forged", forged), ("printer", printer)):
        (tmp_path / name).mkdir()
        prediction = patch_of(c_room.clone, c_room.base, wrong, tmp_path / name)
        assert eval_status(docker_client, c_room, prediction).startswith("unresolved")
    assert eval_status(docker_client, c_room, c_room.code) == "resolved"


@pytest.mark.bench  # bench/bench_harbor_rooms.py: CI's Harbor runs are Node's and Rust's
def test_harbor_judges_the_c_room_as_its_clean_room(
    docker_client: Any, c_room: Room, tmp_path: Path
) -> None:
    """The real Harbor, oracle agent, on the stage as `tasks convert --to harbor` writes it
    (docs/export-formats.md): the gold scores 1 and the forged report 0; with every variant
    (bench/bench_harbor_rooms.py) a wrong `area` with the hidden test rewritten to pass scores 0
    too (the test side never crosses)."""
    from prchain.verdicts import harbor
    from tests.support.harbor import (
        every_variant,
        remove_harbor_images,
        room_stage,
        run_oracle,
        solve_sh,
        variant,
        verdicts,
    )

    tasks = tmp_path / "tasks"
    stage = room_stage(docker_client, c_room, "Add `area(r)`: three times r squared.")
    chain = {"chain_id": 3, "repo": REPO, "stages": [stage]}
    gold = tasks / harbor.write([chain], tasks, timeout=300, cap=1 << 20).written[0]
    assert (gold / "tests" / "build.sh").read_text().count("ctest -N -V") == 1
    variant(gold, "forged", solve_sh({"shapes.h": AREA_HEADER, "shapes.cc": FORGED}))
    expected = {gold.name: 1.0, f"{gold.name}-forged": 0.0}
    if every_variant():
        wrong = SQUARE + "\ndouble area(double r) { return r; }\n"
        rewritten = {"shapes.h": AREA_HEADER, "shapes.cc": wrong,
                     "tests/shapes_test.cc": TEST + "\nTEST(AreaTest, Unit) {}\n"}  # fmt: skip
        variant(gold, "rewritten", solve_sh(rewritten))
        expected[f"{gold.name}-rewritten"] = 0.0
    try:
        rewards = run_oracle(tasks, tmp_path / "jobs")
        output = rewards.pop("_output")
        assert rewards == {f"prchain/{name}": r for name, r in expected.items()}, output
        found = verdicts(tmp_path / "jobs")
        for name, reward in expected.items():
            area = found[name]["outcomes"]["AreaTest::Unit"]
            assert area == ("passed" if reward else "failed"), (name, area)
    finally:
        remove_harbor_images(tasks)
