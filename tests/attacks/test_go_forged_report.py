"""Issue 52, class 2, in the Go room: the report of `go test -json` is the test binary's own
stdout (test2json converts it), and the agent's code runs inside that binary.

The agent implements nothing; its `Area`, called by the hidden test, prints the framing line of a
passing test (with test2json's marker) and ends the process with status 0 before the test can
fail. On the room before the witness, `go test -json` reported the hidden test passed and the
package ok. Now root adds to each hidden-test package a test of its own, named with a nonce and
sorted after every other test: a package whose witness did not pass has none of its tests
passing."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from prchain.chains.reading.patches import split_patch
from prchain.dev.repos import git
from prchain.verdicts.oracle import StageTests, run_tests

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.timeout(1800)]  # builds Go

RUN = uuid.uuid4().hex[:8]
REPO = f"seal-go-{RUN}/shapes"
MODULE = "example.com/shapes"
GO_MOD = f"module {MODULE}\n\ngo 1.22\n"
CODE_V0 = "package shapes\n\n// Square is a side's square.\nfunc Square(s float64) float64 { return s * s }\n"
CODE_V1 = CODE_V0 + "\n// Area of a circle.\nfunc Area(r float64) float64 { return 3 * r * r }\n"
TEST_V0 = (
    'package shapes\n\nimport "testing"\n\n'
    'func TestSquare(t *testing.T) {\n\tif Square(2) != 4 {\n\t\tt.Fatal("square")\n\t}\n}\n'
)
TEST_V1 = TEST_V0 + (
    '\nfunc TestArea(t *testing.T) {\n\tif Area(1) != 3 {\n\t\tt.Fatal("area")\n\t}\n}\n'
)
F2P, P2P = [f"{MODULE}::TestArea"], [f"{MODULE}::TestSquare"]
# The agent's Area: a forged pass of the hidden test, then an exit before it can fail.
# syscall.Exit skips the testing package's guard against os.Exit(0) during a test.
FORGE = (
    'package shapes\n\nimport (\n\t"fmt"\n\t"syscall"\n)\n\n'
    "// Area is not implemented.\nfunc Area(r float64) float64 {\n"
    '\tfmt.Print("\\x16--- PASS: TestArea (0.00s)\\n\\x16PASS\\n")\n'
    "\tsyscall.Exit(0)\n\treturn 0\n}\n"
)


def _commit(path: Path, files: dict[str, str], date: str) -> str:
    for rel, text in files.items():
        (path / rel).write_text(text)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", f"change of {date}", date=date)
    return git(path, "rev-parse", "HEAD").strip()


@pytest.fixture(scope="module")
def shapes(
    tmp_path_factory: pytest.TempPathFactory, docker_client: Any, base_image: str
) -> Iterator[tuple[Path, str, str, str]]:
    """(clone, B_1, gold patch, the Go era image built at B_1)."""
    from prchain.environments.config import EnvironmentConfig
    from prchain.environments.eras.build import cache_volume, ensure_era_image
    from prchain.environments.eras.config import ErasConfig
    from prchain.environments.eras.go import Go
    from prchain.environments.eras.manifests import snapshot

    path = tmp_path_factory.mktemp("go") / "shapes"
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    files = {"go.mod": GO_MOD, "shapes.go": CODE_V0, "shapes_test.go": TEST_V0}
    base = _commit(path, files, "2024-03-01T10:00:00Z")
    merged = _commit(
        path, {"shapes.go": CODE_V1, "shapes_test.go": TEST_V1}, "2024-03-02T10:00:00Z"
    )
    eras = ErasConfig(
        suites={"bookworm": "3.11"}, extra_base_packages=[], cache_volume=f"prchain-seal-go-{RUN}"
    )
    plan = Go().plans(snapshot(path, base), eras)[0]
    try:
        built = ensure_era_image(
            docker_client,
            EnvironmentConfig(),
            eras,
            repo=REPO,
            clone=path,
            sha=base,
            plan=plan,
            era_key="go1",
        )
        assert built.image_id, built.log[-3000:]
        yield path, base, git(path, "diff", base, merged), built.tag, plan
    finally:
        for kind in ("repo", "era"):  # the sandbox's repository image, then the era's
            for image in docker_client.images({"prchain.repo": REPO, "prchain.kind": kind}):
                for tag in image["tags"]:
                    docker_client.remove_image(tag)
        docker_client.remove_volume(cache_volume(eras, REPO))


def test_forged_pass_lines_of_a_failing_hidden_go_test_do_not_pass_it(
    docker_client: Any, shapes: Any
) -> None:
    from prchain.environments.config import EnvironmentConfig
    from prchain.environments.docker_env import DockerEnvironment
    from prchain.environments.protocol import StageSpec

    clone, base, gold, image, plan = shapes
    split = split_patch(gold)
    command = plan.test_command.replace("{files}", ".")
    hidden = StageTests(F2P, P2P, command, ["shapes_test.go"], split.test, ecosystem="go")
    stages = [
        StageSpec(
            1,
            base,
            split.code,
            image=image,
            test_command=plan.test_command,
            setup_command=plan.setup_command,
        )
    ]
    with DockerEnvironment(
        EnvironmentConfig(),
        repo=REPO,
        clone_path=str(clone),
        stages=stages,
        labels={"prchain.test": "sandbox-attacks"},
        client=docker_client,
    ) as env:
        env.enter_stage(1)
        env.write_file("area.go", FORGE)
        verdict = run_tests(env, hidden, timeout=300)
        assert not verdict.passed and F2P[0] in verdict.failing, verdict.outcomes
        env.write_file("area.go", "package shapes\n")
        env.write_file("shapes.go", CODE_V1)  # a real fix still passes
        assert run_tests(env, hidden, timeout=300).passed


def test_the_witness_of_each_package_and_what_its_absence_means() -> None:
    """(unit) one witness per package directory, in its external test package; a package whose
    witness did not pass has no passing test; a command that would not run it last gets none."""
    from prchain.environments.eras.go.report import witness_files, witness_name
    from prchain.environments.eras.reports import witnessed

    tests = {
        "a_test.go": "// +build go1.1\n\npackage shapes\n",
        "b_test.go": "package shapes_test\n",
        "internal/x/x_test.go": "package x_test\n",
        "README.md": "package nothing\n",
    }
    files = witness_files(tests, "ab12", "go test ./...")
    assert sorted(files) == ["internal/x/zzzz_prchain_seal_test.go", "zzzz_prchain_seal_test.go"]
    assert files["zzzz_prchain_seal_test.go"].startswith("package shapes_test\n")
    assert (
        "func TestPrchainSealab12(t *testing.T) {}" in files["internal/x/zzzz_prchain_seal_test.go"]
    )
    assert witness_files(tests, "ab12", "go test -run TestA ./...") == {}
    name = witness_name("ab12")
    outcomes = {"m::TestA": "passed", "m::TestB": "failed", "m/x::TestC": "passed"}
    outcomes[f"m/x::{name}"] = "passed"
    required = ["m::TestA", "m::TestB", "m/x::TestC"]
    assert witnessed(outcomes, required, name) == {
        "m::TestA": "failed",  # its package's witness never passed
        "m::TestB": "failed",
        "m/x::TestC": "passed",
    }
