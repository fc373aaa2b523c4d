"""Acceptance (issue 81): an era whose build needs a Debian `-dev` package no toolchain layer has
verifies with no LLM, and its recipe names what was added and the line that asked for it.

The failed build's missing file is looked up in a real excerpt of bookworm's Contents index
(served over local HTTP); the package itself is installed from Debian's archive in the era's layer.
- Rust: `sound` depends on alsa-sys, whose build script asks pkg-config for `alsa`. The table's
  entry for alsa-sys is removed by the user's configuration, so only the failed build can tell.
- Python: `seclab`'s C extension includes `<selinux/selinux.h>`; its per-stage build fails until
  the revision installs libselinux1-dev.
- Go: `seclabel` is a cgo package including `<selinux/selinux.h>` beside a plain package; its
  era's first suite run verifies on the plain package alone, leaving seclabel out, and a fuller
  try installs libselinux1-dev.
- Node: `pqnode` depends on libpq (npm), an addon node-gyp builds against libpq-dev with make and
  g++; the table names all three, and node-gyp finds the release's headers in the toolchain layer
  (offline: it never downloads them). `twice` is an addon itself (node-canvas's shape): its
  tests load build/Release/twice.node, which each stage builds from its own sources, so a PR's C++
  fix is what its test sees.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.era_runs import (
    invoke,
    recipes_by_pr,
    remove_repo_images,
    verdicts_by_pr,
    write_config,
)
from tests.support.native_repos import (
    make_pqnode,
    make_seclab,
    make_seclabel,
    make_sound,
    make_twice,
    serve_archive,
)

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.timeout(1800)]
TAG = uuid.uuid4().hex[:8]
SOUND = f"native-eras-test-{TAG}/sound"
SECLABEL = f"native-eras-test-{TAG}/seclabel"
SECLAB = f"native-eras-test-{TAG}/seclab"
PQNODE = f"native-eras-test-{TAG}/pqnode"
TWICE = f"native-eras-test-{TAG}/twice"


@pytest.fixture(scope="module")
def own_images(docker_client: Any) -> Iterator[None]:
    """Remove, afterwards, only the images this module built and its build-cache volumes."""
    yield
    for repo in (SOUND, SECLABEL, SECLAB, PQNODE, TWICE):
        remove_repo_images(docker_client, repo, ("repo", "era", "sandbox"))


def _setup(tmp_path: Path, repo: str, clone: Path, sqlite_url: str, eras: dict[str, Any]) -> str:
    common = ["--config", str(write_config(tmp_path, eras)), "--db", sqlite_url]
    assert invoke("mine", "--source", "git", "--name", repo, str(clone), *common).exit_code == 0
    built = invoke(
        "chains", "build", "--strategy", "single", "--min-len", "1", "--max-len", "1", *common
    )
    assert built.exit_code == 0, built.output
    return invoke("env", "setup", *common).output


def _verified_by_native(
    tmp_path: Path, repo: str, clone: Path, sqlite_url: str, revised: bool = True, **eras: Any
) -> tuple[Any, list[str]]:
    """`repo`'s one era set up against the served Contents excerpt: its recipe, verified (with a
    native revision of a failed build when `revised`, else as planned from the table), and the
    recipe's `native:` notes."""
    with serve_archive() as archive:
        settings = {
            "suites": {"bookworm": "3.11"},
            "debian_archive": archive,
            "contents_cache": str(tmp_path / "contents"),
            **eras,
        }
        output = _setup(tmp_path, repo, clone, sqlite_url, settings)
    recipe = recipes_by_pr(sqlite_url)[1]
    why = (recipe.root_error, recipe.verification.get("attempts"), recipe.log[-3000:])
    assert "1 eras for 1 stages: 1 verified (1 by planner), 0 not" in output, why
    assert recipe.status == "verified", recipe.variant
    assert recipe.variant.endswith("+native") is revised, recipe.variant
    return recipe, [n for n in recipe.notes if n.startswith("native: ")]


def test_a_sys_crate_gets_its_library_from_the_failed_build(
    tmp_path: Path, own_images: None, base_image: str, sqlite_url: str
) -> None:
    clone = make_sound(tmp_path / "sound")
    recipe, added = _verified_by_native(
        tmp_path,
        SOUND,
        clone,
        sqlite_url,
        extra_base_packages=[],
        native_packages={"rust": {"alsa-sys": []}},  # the failed build must say it
    )
    assert added == [
        "native: libasound2-dev (Debian bookworm, /usr/lib/x86_64-linux-gnu/pkgconfig/alsa.pc) "
        "for the pkg-config module `alsa`, asked by: Package alsa was not found in the pkg-config "
        "search path."
    ], recipe.notes
    first, second = recipe.verification["attempts"][:2]
    assert first["root_error"].startswith("build failed"), first
    assert second["counts"]["passed"] >= 1 and second["counts"]["failed"] == 0, second
    assert recipe.commands[0].endswith("# prchain: native packages")


def test_a_cgo_package_gets_its_header_from_the_failed_run(
    tmp_path: Path, own_images: None, base_image: str, sqlite_url: str
) -> None:
    clone = make_seclabel(tmp_path / "seclabel")
    # Half the packages built is enough here, so the first run verifies with seclabel left out,
    # as gopacket's 2020 eras did without pcap at the default share (10 of 12 packages).
    recipe, added = _verified_by_native(tmp_path, SECLABEL, clone, sqlite_url, pass_share=0.5)
    assert len(added) == 1 and added[0].startswith(
        "native: libselinux1-dev (Debian bookworm, /usr/include/selinux/selinux.h) for the header "
        "`selinux/selinux.h`, asked by: "
    ), recipe.notes
    assert "fatal error: selinux/selinux.h: No such file or directory" in added[0]
    assert recipe.verification["passed"] >= 2 and recipe.verification["failed"] == 0
    # the first run verified on `plain` alone, seclabel left out; the fuller try left none out
    first, fuller = recipe.verification["attempts"][:2]
    assert list(first["counts"]["excluded"]) == ["example.com/seclabel"], first
    assert recipe.verification["excluded"] == {}, recipe.verification


def test_a_c_extension_gets_its_header_from_the_failed_build(
    tmp_path: Path, own_images: None, base_image: str, sqlite_url: str
) -> None:
    clone = make_seclab(tmp_path / "seclab")
    recipe, added = _verified_by_native(tmp_path, SECLAB, clone, sqlite_url, extra_base_packages=[])
    assert len(added) == 1 and added[0].startswith(
        "native: libselinux1-dev (Debian bookworm, /usr/include/selinux/selinux.h) for the header "
        "`selinux/selinux.h`, asked by: "
    ), recipe.notes
    assert recipe.verification["passed"] >= 1 and recipe.verification["failed"] == 0


def test_a_node_addon_gets_its_library_and_compiler_from_the_table(
    tmp_path: Path, own_images: None, base_image: str, sqlite_url: str
) -> None:
    clone = make_pqnode(tmp_path / "pqnode")
    recipe, added = _verified_by_native(tmp_path, PQNODE, clone, sqlite_url, revised=False)
    assert added == [
        "native: libpq-dev make g++ for libpq (known native dependencies)",
        "native: make g++ for nan (known native dependencies)",  # libpq's addon helper
    ], recipe.notes
    assert recipe.verification["passed"] >= 1 and recipe.verification["failed"] == 0


def test_a_project_that_is_an_addon_builds_it_in_each_stage(
    tmp_path: Path, own_images: None, base_image: str, sqlite_url: str
) -> None:
    clone = make_twice(tmp_path / "twice")
    recipe, added = _verified_by_native(tmp_path, TWICE, clone, sqlite_url, revised=False)
    assert added == [
        "native: make g++ for nan (known native dependencies)",
        "native: make g++ for binding.gyp (known native dependencies)",
    ], recipe.notes
    assert recipe.setup_command.endswith("node-gyp.js rebuild --nodedir=/usr/local")
    assert (recipe.verification["passed"], recipe.verification["failed"]) == (1, 0)
    config = str(tmp_path / "prchain.yaml")
    verified = invoke("tests", "verify", "--config", config, "--db", sqlite_url)
    assert verified.exit_code == 0, verified.output
    found = verdicts_by_pr(sqlite_url)[1]
    # the C++ fix, rebuilt after the gold patch, is what turns the new test green
    assert found.fail_to_pass == ["test/twice.test.js::twice of 21 is 42"], found.runs
