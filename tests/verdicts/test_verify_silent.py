"""A stage whose run reports no test says why: a Maven module whose POM skips its tests (nacos's
naming module until 2021) ran none, with no error to read.

A real git history and verify_stage itself, on the host; the test command prints the output of a
real Maven run of such a module (tests/data/root_errors/maven-tests-skipped.out) and writes no
surefire report, as that run did; or that output cut in the middle, as a sandbox keeps a long
one (nacos's reactor printed 90 kB), where only the module's POM tells.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from prchain.verdicts.config import RepoTests, VerdictsConfig
from prchain.verdicts.verify import verify_stage
from tests.support.host_checkout import HostCheckout, one_pr_stage

MAVEN_RUN = Path(__file__).parent.parent / "data" / "root_errors" / "maven-tests-skipped.out"
HALF = "package s;\n\npublic final class Half {\n  public static int half(int n) {\n    return n / 2;\n  }\n}\n"
HALF_TEST = (
    "package s;\n\nimport static org.junit.Assert.assertEquals;\n\nimport org.junit.Test;\n\n"
    "public class HalfTest {\n  @Test\n  public void halves() {\n"
    "    assertEquals(4, Half.half(8));\n  }\n}\n"
)


SKIPPING_POM = """<project>
  <artifactId>skipping</artifactId>
  <build><plugins>
    <plugin><artifactId>maven-surefire-plugin</artifactId>
      <configuration><skipTests>true</skipTests></configuration></plugin>
  </plugins></build>
</project>
"""


@pytest.mark.parametrize("cut", [False, True])
def test_a_run_with_no_test_names_the_module_whose_build_skips_them(
    tmp_path: Path, cut: bool
) -> None:
    run = MAVEN_RUN
    if cut:
        lines = MAVEN_RUN.read_text().splitlines(keepends=True)
        run = tmp_path / "cut.out"
        run.write_text(
            "".join(lines[:20])
            + "[... 70000 bytes of output truncated ...]\n"
            + "".join(lines[-12:])
        )
        assert "Tests are skipped" not in run.read_text()
    job = one_pr_stage(
        tmp_path / "reactor",
        # the whole output tells; where it was cut, the module's POM does
        {"pom.xml": "<project/>\n", "skipping/pom.xml": SKIPPING_POM if cut else "<project/>\n"},
        {
            "skipping/src/main/java/s/Half.java": HALF,
            "skipping/src/test/java/s/HalfTest.java": HALF_TEST,
        },
        "skipping/src/main",
        "acme/reactor",
    )

    done = verify_stage(
        HostCheckout(tmp_path / "reactor"),  # type: ignore[arg-type]
        job,
        RepoTests(test=f"cat {run}; : {{files}}", ecosystem="java"),
        VerdictsConfig(gold_runs=1, report_path=str(tmp_path / "report.xml")),
    )

    assert done.runs["gold"] == [{}]
    assert done.found.status == "unusable"
    assert done.found.reason == (
        "the gold run reported no test outcome (does the test command run?): "
        + (
            "the build skips the tests of the stage's module (skipping/pom.xml says so)"
            if cut
            else "the build skips the tests of skipping (surefire: Tests are skipped.)"
        )
    )
