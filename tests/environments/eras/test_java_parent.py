"""A Maven build whose parent POM is a development version (`-SNAPSHOT`): issue 78's jackson-core,
whose eras asked for `jackson-base:2.1x.0-SNAPSHOT` from Sonatype's snapshot repository and were
all lost. A release stands in for it: the parent the project's last release named (its root POM at
the newest tag reachable from B_t), else the newest release below the snapshot.

The plan's revision and the stand-in script run on real git repositories and a repository served
over HTTP on 127.0.0.1; the Docker test builds a real era whose first build fails on the parent
(Maven Central serves `org.sonatype.oss:oss-parent` 1–9 and no snapshot of it).
"""

from __future__ import annotations

import functools
import http.server
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from prchain.dev.repos import git
from prchain.environments.eras.config import ErasConfig
from prchain.environments.eras.java import (
    Java,
    Parent,
    _parents,
    enforced_maven,
)
from prchain.environments.eras.java import parent_standin as standin
from prchain.environments.eras.manifests import snapshot
from tests.support.calc_maven import CALC_POM
from tests.support.eras_repo import commit_files

ERAS = ErasConfig(suites={"bookworm": "3.11"}, extra_base_packages=[])
# calc's POM (tests/support/calc_maven.py) with a parent, at a version of its own
POM = CALC_POM.replace(
    "  <groupId>org.acme</groupId>",
    "  <parent>\n    <groupId>org.sonatype.oss</groupId><artifactId>oss-parent</artifactId>"
    "<version>{parent}</version>\n  </parent>\n  <groupId>org.acme</groupId>",
).replace("<version>1.0</version>", "<version>{version}</version>", 1)
CODE = {
    "src/main/java/org/acme/Twice.java": (
        "package org.acme;\n\npublic final class Twice {\n  private Twice() {}\n\n"
        "  public static int of(int x) {\n    return 2 * x;\n  }\n}\n"
    ),
    "src/test/java/org/acme/TwiceTest.java": (
        "package org.acme;\n\nimport static org.junit.Assert.assertEquals;\n\n"
        "import org.junit.Test;\n\npublic class TwiceTest {\n  @Test\n"
        "  public void doubles() {\n    assertEquals(6, Twice.of(3));\n  }\n}\n"
    ),
}
# What Maven 3.8.7 printed on jackson-core at 8a83ffe2 (2023-02-26), its parent renamed.
MAVEN_SAYS = (
    "[FATAL] Non-resolvable parent POM for org.acme:calc:1.1-SNAPSHOT: Could not transfer "
    "artifact org.sonatype.oss:oss-parent:pom:8-SNAPSHOT from/to sonatype-nexus-snapshots "
    "(https://oss.sonatype.org/content/repositories/snapshots): transfer failed for https://oss."
    "sonatype.org/content/repositories/snapshots/org/sonatype/oss/oss-parent/8-SNAPSHOT/oss-"
    "parent-8-SNAPSHOT.pom and 'parent.relativePath' points at wrong local POM @ line 4, column 3"
)

# Maven 3.9.9's words, on jackson-core's 2023-08 era.
MAVEN_39_SAYS = (
    "[FATAL] Non-resolvable parent POM for org.acme:calc:1.1-SNAPSHOT: The following artifacts "
    "could not be resolved: org.sonatype.oss:oss-parent:pom:8-SNAPSHOT (absent): Could not "
    "transfer artifact org.sonatype.oss:oss-parent:pom:8-SNAPSHOT from/to sonatype-nexus-snapshots"
)


def _history(path: Path, tagged: bool) -> str:
    """Release 1.0 on oss-parent 7 (tagged v1.0 when `tagged`), then 1.1-SNAPSHOT on 8-SNAPSHOT."""
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    commit_files(path, {**CODE, "pom.xml": POM.format(parent="7", version="1.0")}, "1.0",
                 "2023-01-10T10:00:00Z")  # fmt: skip
    if tagged:
        git(path, "tag", "v1.0")
    commit_files(path, {"pom.xml": POM.format(parent="8-SNAPSHOT", version="1.1-SNAPSHOT")},
                 "next", "2023-02-10T10:00:00Z")  # fmt: skip
    return git(path, "rev-parse", "HEAD").strip()


@pytest.mark.parametrize(
    ("tagged", "says"),
    [(True, MAVEN_SAYS), (False, MAVEN_SAYS), (True, MAVEN_39_SAYS)],
    ids=["tagged", "untagged", "maven-3.9"],
)
def test_the_parent_the_last_release_named_stands_in(
    tmp_path: Path, tagged: bool, says: str
) -> None:
    clone = tmp_path / "twice"
    snap = snapshot(clone, _history(clone, tagged))
    java = Java()
    first = java.plans(snap, ERAS)[0]
    assert not _parents(first)
    revised = java.revise(snap, ERAS, first, says, False)
    assert revised is not None and revised.variant == f"{first.variant}+parent"
    release = "7" if tagged else "-"  # untagged: the newest below 8, chosen while it builds
    assert _parents(revised) == (Parent("org.sonatype.oss", "oss-parent", "8-SNAPSHOT", release),)
    stand_in = next(i for i, c in enumerate(revised.commands) if c.startswith("python3 - "))
    run = next(i for i, c in enumerate(revised.commands) if " test -pl" in c or " test -D" in c)
    assert stand_in < run
    assert any("oss-parent:8-SNAPSHOT" in note for note in revised.notes)
    assert (revised.suite, revised.interpreter, revised.test_command) == (
        first.suite, first.interpreter, first.test_command
    )  # fmt: skip
    # the same failure again is not revised twice; another revision keeps the stand-in
    assert java.revise(snap, ERAS, revised, says, False) is None
    newer = enforced_maven(
        java,
        snap,
        ERAS,
        revised,
        "Detected Maven Version: 3.8.7 is not in the allowed range [3.9.6,)",
    )
    assert newer is not None and _parents(newer) == _parents(revised)


def test_other_unresolvable_parents_are_not_stood_in(tmp_path: Path) -> None:
    clone = tmp_path / "twice"
    snap = snapshot(clone, _history(clone, True))
    first = Java().plans(snap, ERAS)[0]
    released = MAVEN_SAYS.replace("8-SNAPSHOT", "8")  # a release Central lacks: nothing to stand in
    assert Java().revise(snap, ERAS, first, released, False) is None


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 (the base's name)
        return


@pytest.fixture
def repository(tmp_path: Path) -> Iterator[tuple[Path, str]]:
    """A Maven repository directory served over HTTP on 127.0.0.1."""
    root = tmp_path / "repository"
    root.mkdir()
    handler = functools.partial(_Quiet, directory=str(root))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield root, f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


PARENT_POM = """\
<?xml version="1.0" encoding="UTF-8"?>
<!-- a comment -->
<project xmlns="http://maven.apache.org/POM/4.0.0" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
  <modelVersion>4.0.0</modelVersion>
  <parent><groupId>org.acme</groupId><artifactId>acme-bom</artifactId><version>{v}</version></parent>
  <artifactId>acme-base</artifactId>
  {own}
  <dependencyManagement><dependencies><dependency>
    <groupId>junit</groupId><artifactId>junit</artifactId><version>4.13.2</version>
  </dependency></dependencies></dependencyManagement>
</project>
"""


def _publish(root: Path, versions: dict[str, bool]) -> None:
    """acme-base at `versions` (version → whether its POM states its own version)."""
    where = root / "org" / "acme" / "acme-base"
    listed = "".join(f"<version>{v}</version>" for v in versions)
    where.mkdir(parents=True)
    (where / "maven-metadata.xml").write_text(
        f"<metadata><groupId>org.acme</groupId><artifactId>acme-base</artifactId><versioning>"
        f"<versions>{listed}</versions></versioning></metadata>"
    )
    for version, own in versions.items():
        (where / version).mkdir()
        text = PARENT_POM.format(v=version, own=f"<version>{version}</version>" if own else "")
        (where / version / f"acme-base-{version}.pom").write_text(text)


def _stand_in(m2: Path, url: str, release: str) -> subprocess.CompletedProcess[str]:
    """The script as the era build runs it: its text on python3's standard input."""
    args = [str(m2), url, "org.acme", "acme-base", "2.15.0-SNAPSHOT", release]
    script = Path(standin.__file__).read_text()
    return subprocess.run(
        [sys.executable, "-", *args], input=script, capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize(
    ("release", "used"), [("-", "2.14.10"), ("2.14.2", "2.14.2")], ids=["newest-below", "named"]
)
def test_the_stand_in_is_the_release_under_the_snapshots_coordinates(
    tmp_path: Path, repository: tuple[Path, str], release: str, used: str
) -> None:
    root, url = repository
    versions = ["2.13.0", "2.14.2", "2.14.10", "2.15.0-rc1", "2.15.0", "2.16.1", "2.9.9.20190807"]
    _publish(root, {v: v != "2.14.10" for v in versions})  # 2.14.10 inherits its version
    m2 = tmp_path / "m2"
    done = _stand_in(m2, url, release)
    assert done.returncode == 0, done.stdout + done.stderr
    assert done.stdout.strip() == (
        f"parent POM org.acme:acme-base:2.15.0-SNAPSHOT stood in by its release {used}"
    )
    where = m2 / "org" / "acme" / "acme-base" / "2.15.0-SNAPSHOT"
    pom = standin.ET.fromstring((where / "acme-base-2.15.0-SNAPSHOT.pom").read_text())
    ns = "{http://maven.apache.org/POM/4.0.0}"
    assert pom.findtext(f"{ns}version") == "2.15.0-SNAPSHOT"
    assert pom.findtext(f"{ns}parent/{ns}version") == used  # its own parent stays the release's
    tags = [child.tag for child in pom]
    assert tags.count(f"{ns}version") == 1  # set where it was, after <parent> where inherited
    assert tags.index(f"{ns}version") == (2 if used == "2.14.10" else 3)
    assert pom.find(f".//{ns}dependencyManagement") is not None
    metadata = (where / "maven-metadata-local.xml").read_text()
    assert "<localCopy>true</localCopy>" in metadata and "2.15.0-SNAPSHOT" in metadata


def test_no_release_below_is_one_error_line_and_nothing_written(
    tmp_path: Path, repository: tuple[Path, str]
) -> None:
    root, url = repository
    _publish(root, {"2.15.0": True, "3.0.0": True})
    m2 = tmp_path / "m2"
    for release in ("-", "2.14.2"):  # none below; a named release the repository lacks (404)
        done = _stand_in(m2, url, release)
        assert done.returncode == 1
        [line] = done.stdout.splitlines()
        assert line.startswith(
            "error: no stand-in for the parent POM org.acme:acme-base:2.15.0-SNAPSHOT"
        )
    assert not m2.exists()


def test_newest_below_skips_qualified_versions() -> None:
    versions = ["1.0", "1.1-rc1", "1.1.pr1", "1.0.5", "1.1", "1.2-SNAPSHOT", "0.9"]
    assert standin.newest_below(versions, "1.1-SNAPSHOT") == "1.0.5"
    assert standin.newest_below(versions, "1.2-SNAPSHOT") == "1.1"
    assert standin.newest_below(versions, "0.9-SNAPSHOT") == ""


@pytest.mark.docker
@pytest.mark.timeout(1800)
def test_an_era_on_a_development_parent_builds_and_its_tests_run_offline(
    tmp_path: Path, docker_client: Any, base_image: str
) -> None:
    """The first build stops on the parent Maven cannot fetch; the revision builds the era with
    the stand-in, and the image's offline `mvn test` resolves the parent from /opt/m2."""
    from prchain.environments.config import EnvironmentConfig
    from prchain.environments.eras.build import ensure_era_image
    from tests.support.era_runs import remove_repo_images

    clone = tmp_path / "twice"
    sha = _history(clone, True)
    snap, java = snapshot(clone, sha), Java()
    repo = f"java-parent-test-{uuid.uuid4().hex[:8]}/twice"
    build = functools.partial(
        ensure_era_image, docker_client, EnvironmentConfig(), ERAS, repo=repo, clone=clone,
        sha=sha, era_key="java-parent", notify=lambda line: None,
    )  # fmt: skip
    try:
        first = java.plans(snap, ERAS)[0]
        failed = build(plan=first)
        assert not failed.image_id
        assert (
            "Non-resolvable parent POM" in failed.log and "oss-parent:pom:8-SNAPSHOT" in failed.log
        )
        revised = java.revise(snap, ERAS, first, failed.log, False)
        assert revised is not None
        built = build(plan=revised)
        assert built.image_id, built.log[-3000:]
        assert "stood in by its release 7" in built.log
        tree = tmp_path / "tree"
        tree.mkdir()
        subprocess.run(f"git -C {clone} archive {sha} | tar -x -C {tree}", shell=True, check=True)
        script = f"cp -r /tmp/twice /tmp/w && cd /tmp/w && {revised.test_command}"
        container, code, log = docker_client.run_to_end(
            built.tag, ["/bin/bash", "-c", script],
            name=f"java-parent-test-{uuid.uuid4().hex[:8]}", labels={"prchain.test": "java-parent"},
            environment={}, binds={str(tree): ("/tmp/twice", "ro")}, network_mode="none",
            timeout=600,
        )  # fmt: skip
        docker_client.remove_container(container)
        assert code == 0 and "Tests run: 1, Failures: 0, Errors: 0" in log, log[-3000:]
    finally:
        remove_repo_images(docker_client, repo)
