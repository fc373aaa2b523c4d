"""Issue 77, class 1, in the Java room: the agent adds its own `org.junit.Assert` to the main
sources.

Maven compiles it into target/classes, and surefire's test classpath puts target/test-classes,
then target/classes, then the dependency jars: the agent's class answers before JUnit's own. On
the code before, a `src/main/java/org/junit/Assert.java` whose `assertEquals` never fails crossed
with a wrong `area` (a `.java` file: a source suffix) and the hidden test passed. Now nothing in
a test framework's namespace crosses: JUnit is the image's."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from prchain.verdicts.sandbox import fill_command
from tests.support.maven_repo import POM
from tests.support.planted import (
    Room,
    clean_room_passes,
    era_image,
    eval_status,
    patch_of,
    sandbox,
    two_commits,
)

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.timeout(1800)]  # builds Java

REPO = f"planted-java-{uuid.uuid4().hex[:8]}/shapes"
# The yamlconf pom (JUnit 4.13.2, pinned plugins, Java 17) without its snakeyaml dependency.
PACKAGE = "src/main/java/org/acme/shapes/Shapes.java"
SQUARE = "  public static long square(long s) {\n    return s * s;\n  }\n"
AREA = "\n  public static long area(long r) {\n    return 3 * r * r;\n  }\n"
WRONG = "\n  public static long area(long r) {\n    return 0;\n  }\n"
TEST_FILE = "src/test/java/org/acme/shapes/ShapesTest.java"
TEST = (
    "package org.acme.shapes;\n\nimport static org.junit.Assert.assertEquals;\n\n"
    "import org.junit.Test;\n\npublic class ShapesTest {\n  @Test\n  public void squares() {\n"
    "    assertEquals(4, Shapes.square(2));\n  }\n"
)
AREA_TEST = (
    "\n  @Test\n  public void computesTheArea() {\n    assertEquals(3, Shapes.area(1));\n  }\n"
)
# JUnit's Assert as the agent writes it: nothing ever fails.
PLANT = "src/main/java/org/junit/Assert.java"
FAKE_ASSERT = (
    "package org.junit;\n\npublic class Assert {\n"
    "  public static void assertEquals(long expected, long actual) {}\n"
    "  public static void assertEquals(Object expected, Object actual) {}\n}\n"
)


def _pom() -> str:
    pom = POM.format(version="1.0", yaml="")
    start = pom.index("    <dependency>\n      <groupId>org.yaml")
    end = pom.index("</dependency>", start) + len("</dependency>\n")
    return pom[:start] + pom[end:]


def _shapes(*methods: str) -> str:
    return "package org.acme.shapes;\n\npublic final class Shapes {\n" + "".join(methods) + "}\n"


@pytest.fixture(scope="module")
def java_room(
    tmp_path_factory: pytest.TempPathFactory, docker_client: Any, base_image: str
) -> Iterator[Room]:
    from prchain.environments.eras.config import ErasConfig
    from prchain.environments.eras.java import Java
    from prchain.environments.eras.manifests import snapshot

    clone = tmp_path_factory.mktemp("java") / "shapes"
    before = {
        "pom.xml": _pom(), ".gitignore": "target/\n", PACKAGE: _shapes(SQUARE),
        TEST_FILE: TEST + "}\n",
    }  # fmt: skip
    after = {PACKAGE: _shapes(SQUARE, AREA), TEST_FILE: TEST + AREA_TEST + "}\n"}
    base, gold = two_commits(clone, before, after, ("2024-03-01T10:00:00Z", "2024-03-02T10:00:00Z"))
    java = Java()
    plan = java.plans(snapshot(clone, base), ErasConfig(suites={"bookworm": "3.11"}))[0]
    command = fill_command(plan.test_command, java.report.targets([TEST_FILE]))
    with era_image(docker_client, REPO, clone, base, plan) as image:
        yield Room(
            REPO, clone, base, gold, image, plan, "java", command, [TEST_FILE],
            ["org.acme.shapes.ShapesTest::computesTheArea"],
            ["org.acme.shapes.ShapesTest::squares"],
        )  # fmt: skip


def test_a_planted_junit_assert_does_not_pass_a_wrong_area(
    docker_client: Any, java_room: Room
) -> None:
    with sandbox(docker_client, java_room) as env:
        env.write_file(PACKAGE, _shapes(SQUARE, WRONG))
        env.write_file(PLANT, FAKE_ASSERT)
        assert PLANT in env.cumulative_patch().decode()
        assert not clean_room_passes(env, java_room)
        env.write_file(PACKAGE, _shapes(SQUARE, AREA))  # the gold code, the plant still there
        assert clean_room_passes(env, java_room)


def test_a_planted_junit_assert_in_a_prediction_does_not_resolve(
    docker_client: Any, java_room: Room, tmp_path: Path
) -> None:
    files = {PACKAGE: _shapes(SQUARE, WRONG), PLANT: FAKE_ASSERT}
    wrong = patch_of(java_room.clone, java_room.base, files, tmp_path)
    assert eval_status(docker_client, java_room, wrong).startswith("unresolved")
    assert eval_status(docker_client, java_room, java_room.code) == "resolved"
