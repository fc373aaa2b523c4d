"""Acceptance: Java eras from Maven Central, on a made-up history spanning two dependency eras.

The yamlconf repository (tests/support/maven_repo.py) pins snakeyaml 1.33, then 2.0, which removed
the constructor the older code calls. `prchain env setup` must give each era its own /opt/m2 (era
1's image cannot build era 2: offline, Maven finds no snakeyaml 2.0 there), `tests verify`
must find FAIL_TO_PASS in each with surefire's ids, and a chain crossing the eras carries the
agent's change from era 1's image to era 2's, where the agent's offline `mvn test` compiles and
runs it against snakeyaml 2.0.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.era_runs import (
    chain_sandbox,
    invoke,
    recipes_by_pr,
    remove_repo_images,
    verdicts_by_pr,
    write_config,
)
from tests.support.maven_repo import KEYS, PACKAGE, TESTS, make_yamlconf
from tests.support.maven_repo import config as config_java

# Two era builds, five suite runs and a two-stage rollout: minutes on a loaded machine.
pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.timeout(1800)]
REPO = f"java-eras-test-{uuid.uuid4().hex[:8]}/yamlconf"  # this session's own images
# The agent's change: a class of its own (a new file carries into any stage base) and its test.
SIZES = """\
package org.acme.yamlconf;

public final class Sizes {
  private Sizes() {}

  public static int size(String text) {
    return Config.load(text).size();
  }
}
"""
SIZE_TEST = """\
package org.acme.yamlconf;

import static org.junit.Assert.assertEquals;

import org.junit.Test;

public class SizeTest {
  @Test
  public void countsTheKeys() {
    assertEquals(2, Sizes.size("a: 1\\nb: 2"));
  }
}
"""


@pytest.fixture(scope="module")
def own_images(docker_client: Any) -> Iterator[None]:
    """Remove, afterwards, only the images this module built (labelled with its made-up repo);
    the toolchain layer stays, shared as the product shares it."""
    yield
    remove_repo_images(docker_client, REPO)


def _config(tmp_path: Path) -> Path:
    return write_config(
        tmp_path, {"suites": {"bookworm": "3.11"}, "extra_base_packages": []}, max_gap_days=1000
    )


def test_each_era_gets_its_own_repository_and_the_agents_change_crosses_them(
    tmp_path: Path, own_images: None, base_image: str, sqlite_url: str
) -> None:
    clone = make_yamlconf(tmp_path / "yamlconf")
    common = ["--config", str(_config(tmp_path)), "--db", sqlite_url]
    assert invoke("mine", "--source", "git", "--name", REPO, str(clone), *common).exit_code == 0
    built = invoke("chains", "build", "--min-len", "2", "--max-len", "2", *common)
    assert built.exit_code == 0, built.output

    setup = invoke("env", "setup", *common)
    assert "2 eras for 2 stages: 2 verified (2 by planner), 0 not" in setup.output, setup.output
    recipes = recipes_by_pr(sqlite_url)
    assert recipes[1].image != recipes[2].image
    # Era 1's image, tried first for era 2, holds no snakeyaml 2.0: offline Maven says so.
    remembered = recipes[2].verification["attempts"][0]
    assert remembered["method"] == "memory" and remembered["counts"]["collection_errors"] == 1
    assert "snakeyaml:jar:2.0 has not been downloaded" in remembered["counts"]["first_error"]

    invoke("tests", "verify", "--gold-runs", "1", *common)
    verdicts = verdicts_by_pr(sqlite_url)
    assert verdicts[1].fail_to_pass == ["org.acme.yamlconf.KeysTest::listsTheKeys"]
    assert verdicts[2].fail_to_pass == ["org.acme.yamlconf.DumpTest::dumpsAMapping"]

    with chain_sandbox(sqlite_url, tmp_path / "logs", REPO, clone) as env:
        env.enter_stage(1)
        assert env.execute("ls /opt/m2/org/yaml/snakeyaml").output.split() == ["1.33"]
        # The agent does stage 1's task (the keys its hidden test asks for) and adds a class.
        env.write_file(f"/work/repo/{PACKAGE}/Config.java", config_java(False, KEYS))
        env.write_file(f"/work/repo/{PACKAGE}/Sizes.java", SIZES)
        env.write_file(f"/work/repo/{TESTS}/SizeTest.java", SIZE_TEST)
        first = env.run_tests()
        assert first is not None and "BUILD SUCCESS" in first.output, first and first.output
        assert "Tests run: 2, Failures: 0" in first.output  # ConfigTest and the agent's SizeTest
        assert env.execute("ls /sys/class/net").output.split() == ["lo"]  # no network

        moved = env.enter_stage(2)
        assert moved.outcome == "clean" and moved.image != env.stages[1].image
        assert env.execute("ls /opt/m2/org/yaml/snakeyaml").output.split() == ["2.0"]
        assert "size(String text)" in env.execute(f"cat {PACKAGE}/Sizes.java").output
        merged = env.execute(f"cat {PACKAGE}/Config.java").output
        assert "new LoaderOptions()" in merged and "keys(String text)" in merged
        second = env.run_tests()
        assert second is not None and "BUILD SUCCESS" in second.output, second and second.output
        assert "Tests run: 3, Failures: 0" in second.output  # ConfigTest, KeysTest, SizeTest
