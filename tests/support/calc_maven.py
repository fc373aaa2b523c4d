"""A made-up Maven project as small as the Java room allows (issue 77): JUnit 4 only, one era.

`calc` starts with `Calc.square` and its test; PR #1 adds `Calc.twice` and TwiceTest, PR #2
`Calc.half` and HalfTest. Both stages share one era image.
"""

from __future__ import annotations

from pathlib import Path

from prchain.dev.repos import git
from tests.support.eras_repo import commit_files

PACKAGE = "src/main/java/org/acme/calc"
TESTS = "src/test/java/org/acme/calc"
# JUnit and the two plugins a run needs, pinned: the fewest downloads that still run surefire.
CALC_POM = """\
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>org.acme</groupId>
  <artifactId>calc</artifactId>
  <version>1.0</version>
  <properties>
    <maven.compiler.release>17</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <dependencies>
    <dependency>
      <groupId>junit</groupId><artifactId>junit</artifactId><version>4.13.2</version>
      <scope>test</scope>
    </dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin><artifactId>maven-compiler-plugin</artifactId><version>3.11.0</version></plugin>
      <plugin><artifactId>maven-surefire-plugin</artifactId><version>3.2.5</version></plugin>
    </plugins>
  </build>
</project>
"""
SQUARE = "  public static int square(int n) {\n    return n * n;\n  }\n"
TWICE = "\n  public static int twice(int n) {\n    return 2 * n;\n  }\n"
TWICE_V2 = TWICE.replace("2 * n", "n + n")  # PR #2 builds on #1's line: the two PRs chain
HALF = "\n  public static int half(int n) {\n    return n / 2;\n  }\n"


def calc(*methods: str) -> str:
    body = "".join(methods)
    return (
        f"package org.acme.calc;\n\npublic final class Calc {{\n  private Calc() {{}}\n\n{body}}}\n"
    )


def a_test(name: str, method: str, call: str, expected: int) -> str:
    return (
        "package org.acme.calc;\n\nimport static org.junit.Assert.assertEquals;\n\n"
        f"import org.junit.Test;\n\npublic class {name} {{\n  @Test\n  public void {method}() {{\n"
        f"    assertEquals({expected}, Calc.{call});\n  }}\n}}\n"
    )


TWICE_ID, SQUARE_ID = "org.acme.calc.TwiceTest::doubles", "org.acme.calc.SquareTest::squares"


def make_calc(path: Path) -> Path:
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    (path / ".gitignore").write_text("target/\n")
    start = {"pom.xml": CALC_POM, f"{PACKAGE}/Calc.java": calc(SQUARE)}
    start[f"{TESTS}/SquareTest.java"] = a_test("SquareTest", "squares", "square(3)", 9)
    commit_files(path, start, "Start calc", "2024-03-01T12:00:00Z")
    commit_files(
        path,
        {
            f"{PACKAGE}/Calc.java": calc(SQUARE, TWICE),
            f"{TESTS}/TwiceTest.java": a_test("TwiceTest", "doubles", "twice(4)", 8),
        },
        "Twice a number (#1)\n\nDouble it.",
        "2024-03-05T12:00:00Z",
    )
    commit_files(
        path,
        {
            f"{PACKAGE}/Calc.java": calc(SQUARE, TWICE_V2, HALF),
            f"{TESTS}/HalfTest.java": a_test("HalfTest", "halves", "half(8)", 4),
        },
        "Half a number (#2)\n\nFollow-up to #1, built on top of it: halve it.",
        "2024-03-08T12:00:00Z",
    )
    return path
