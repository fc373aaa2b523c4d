"""Issue 77, round 5 (Java room): a main class in the hidden test's own package, named like the
test library's class the test reaches through an import on demand.

`import org.junit.*;` never shadows a type of the test's own package (JLS 6.4.1), so the hidden
test's `Assert.assertEquals` resolves to `org.acme.calc.Assert` when the agent's main sources
declare one: a class outside every sealed namespace, so it crosses.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from prchain.verdicts.sandbox import fill_command
from tests.support import planted
from tests.support.calc_maven import CALC_POM
from tests.support.planted import Room

pytestmark = pytest.mark.docker

REPO = "attack5/javashadow"
MAIN = "src/main/java/org/acme/calc"
TESTS = "src/test/java/org/acme/calc"


def _calc(body: str) -> str:
    return (
        f"package org.acme.calc;\n\npublic final class Calc {{\n  private Calc() {{}}\n{body}}}\n"
    )


def _test(name: str, call: str, expected: int) -> str:
    return (
        "package org.acme.calc;\n\nimport org.junit.*;\n\n"
        f"public class {name}Test {{\n  @Test\n  public void {name.lower()}() {{\n"
        f"    Assert.assertEquals({expected}, Calc.{call});\n  }}\n}}\n"
    )


SQUARE = "\n  public static int square(int n) {\n    return n * n;\n  }\n"
BEFORE = {
    "pom.xml": CALC_POM,
    f"{MAIN}/Calc.java": _calc(SQUARE),
    f"{TESTS}/SquareTest.java": _test("Square", "square(3)", 9),
}
AFTER = {
    f"{MAIN}/Calc.java": _calc(
        SQUARE + "\n  public static int area(int w, int h) {\n    return w * h;\n  }\n"
    ),
    f"{TESTS}/AreaTest.java": _test("Area", "area(2, 3)", 6),
}
WRONG = {
    f"{MAIN}/Calc.java": _calc(
        SQUARE + "\n  public static int area(int w, int h) {\n    return w + h;\n  }\n"
    )
}
PLANTED = {
    f"{MAIN}/Assert.java": (
        "package org.acme.calc;\n\npublic final class Assert {\n  private Assert() {}\n\n"
        "  public static void assertEquals(long expected, long actual) {}\n\n"
        "  public static void assertEquals(Object expected, Object actual) {}\n}\n"
    )
}


@pytest.fixture(scope="module")
def room(docker_client: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Room]:
    from prchain.environments.eras.config import ErasConfig
    from prchain.environments.eras.ecosystems import ecosystem
    from prchain.environments.eras.manifests import snapshot

    clone = tmp_path_factory.mktemp("javashadow") / "calc"
    base, gold = planted.two_commits(
        clone, BEFORE, AFTER, ("2025-02-01T10:00:00Z", "2025-02-02T10:00:00Z")
    )
    eras = ErasConfig(suites={"bookworm": "3.11"}, extra_base_packages=[])
    java = ecosystem("java")
    plan = java.plans(snapshot(clone, base), eras)[0]
    files = [f"{TESTS}/AreaTest.java", f"{TESTS}/SquareTest.java"]
    selection = java.report.targets(files)
    command = fill_command(java.report.narrowed(plan.test_command), selection)
    with planted.era_image(docker_client, REPO, clone, base, plan) as image:
        yield Room(
            REPO, clone, base, gold, image, plan, "java", command, selection,
            ["org.acme.calc.AreaTest::area"], ["org.acme.calc.SquareTest::square"],
        )  # fmt: skip


def test_gold_passes_and_wrong_fails(docker_client: Any, room: Room) -> None:
    assert planted.gold_passes(docker_client, room)
    assert not planted.stage_passes(docker_client, room, WRONG)


def test_a_same_package_assert_class_does_not_pass_a_wrong_area(
    docker_client: Any, room: Room
) -> None:
    assert not planted.stage_passes(docker_client, room, {**WRONG, **PLANTED})


def test_the_same_as_a_prediction_does_not_resolve(
    docker_client: Any, room: Room, tmp_path: Path
) -> None:
    prediction = planted.patch_of(room.clone, room.base, {**WRONG, **PLANTED}, tmp_path)
    assert planted.eval_status(docker_client, room, prediction).startswith("unresolved")
