"""Acceptance: an era is judged by what its stages test (issue 81).

A generated Go module of six packages, one era (its go.mod never changes): five build and pass,
`broken`'s test file calls a function no commit defines (ent's go1.20 eras: one package of a
hundred `[build failed]`). `prchain env setup` verifies the era on the five, with `broken` left
out and why; `prchain tests verify` finds stage 1's FAIL_TO_PASS in `calc` and makes stage 2,
whose only tests lie in `broken`, unusable with that reason, without a sandbox. One era image on
the shared Go toolchain layer, one verify run.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from prchain.dev.repos import git
from prchain.store.db import session_scope
from prchain.store.models import ChainStage, EnvRecipe, PullRequest, StageVerification
from prchain.store.opener import make_engine
from tests.support.era_runs import invoke, remove_repo_images, write_config
from tests.support.eras_repo import commit_files
from tests.support.go_proxy import GO_LINE

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.timeout(1200)]
REPO = f"go-left-out-test-{uuid.uuid4().hex[:8]}/split"  # per session: its images are its own
MODULE = "example.com/split"
BROKEN = "broken/broken_test.go:6:5: undefined: Three"


def _package(name: str, body: str, test: str) -> dict[str, str]:
    return {
        f"{name}/{name}.go": f"package {name}\n\n{body}\n",
        f"{name}/{name}_test.go": f'package {name}\n\nimport "testing"\n\n{test}\n',
    }


def _make(path: Path) -> Path:
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    files = {"go.mod": f"module {MODULE}\n\n{GO_LINE}\n"}
    for i in range(1, 5):
        files |= _package(
            f"p{i}",
            f"func N() int {{ return {i} }}",
            f'func TestN(t *testing.T) {{\n\tif N() != {i} {{\n\t\tt.Fatal("no")\n\t}}\n}}',
        )
    files |= _package(
        "calc",
        "// Two is two.\nfunc Two() int { return 2 }",
        'func TestTwo(t *testing.T) {\n\tif Two() != 2 {\n\t\tt.Fatal("no")\n\t}\n}',
    )
    files |= _package(
        "broken",
        "// Two is two.\nfunc Two() int { return 2 }",
        'func TestThree(t *testing.T) {\n\tif Three() != 3 {\n\t\tt.Fatal("no")\n\t}\n}',
    )
    commit_files(path, files, "Start split", "2024-03-01T12:00:00Z")
    add = "// Two is two.\nfunc Two() int { return 2 }\n\n// Add adds.\nfunc Add(a, b int) int { return a + b }"
    commit_files(
        path,
        {
            "calc/calc.go": f"package calc\n\n{add}\n",
            "calc/add_test.go": 'package calc\n\nimport "testing"\n\n'
            'func TestAdd(t *testing.T) {\n\tif Add(2, 3) != 5 {\n\t\tt.Fatal("no")\n\t}\n}\n',
        },
        "Add Add (#1)\n\nAdd numbers.",
        "2024-03-05T12:00:00Z",
    )
    # PR #2 builds on PR #1's lines (a link needs shared code); its only test is in `broken`.
    loud = add.replace("return a + b", "return b + a")
    commit_files(
        path,
        {
            "calc/calc.go": f"package calc\n\n{loud}\n",
            "broken/four_test.go": 'package broken\n\nimport "testing"\n\n'
            'func TestFour(t *testing.T) {\n\tif Two()+Two() != 4 {\n\t\tt.Fatal("no")\n\t}\n}\n',
        },
        "Add in the other order (#2)\n\nFollow-up to #1: b + a.",
        "2024-03-08T12:00:00Z",
    )
    return path


@pytest.fixture(scope="module")
def own_images(docker_client: Any) -> Iterator[None]:
    """Remove, afterwards, only the images this module built (labelled with its made-up repo)."""
    yield
    remove_repo_images(docker_client, REPO)


def test_a_package_that_cannot_build_is_left_out_and_its_stage_is_unusable_with_why(
    tmp_path: Path, own_images: None, base_image: str
) -> None:
    clone = _make(tmp_path / "split")
    url = f"sqlite:///{tmp_path / 'prchain.db'}"
    eras = {"go_proxy": "https://proxy.golang.org", "suites": {"bookworm": "3.11"}}
    config = write_config(tmp_path, {**eras, "extra_base_packages": []})
    common = ["--config", str(config), "--db", url]
    assert invoke("mine", "--source", "git", "--name", REPO, str(clone), *common).exit_code == 0
    built = invoke("chains", "build", "--min-len", "2", *common)
    assert built.exit_code == 0, built.output

    setup = invoke("env", "setup", *common)
    assert "1 eras for 2 stages: 1 verified (1 by planner)" in setup.output, setup.output
    assert "6/6 passed, 1 coll. err, 1 left out" in setup.output, setup.output
    with session_scope(make_engine(url)) as session:
        (recipe,) = session.scalars(select(EnvRecipe)).all()
        assert recipe.status == "verified" and recipe.ecosystem == "go"
        left_out = recipe.verification["excluded"]
        notes = list(recipe.notes)
    assert left_out == {f"{MODULE}/broken": f"build failed: {BROKEN}"}
    assert f"left out {MODULE}/broken: build failed: {BROKEN}" in notes

    verify = invoke("tests", "verify", "--gold-runs", "1", *common)
    assert verify.exit_code == 0, verify.output
    with session_scope(make_engine(url)) as session:
        found = {
            number: (v.status, v.reason, list(v.fail_to_pass))
            for v, number in session.execute(
                select(StageVerification, PullRequest.number)
                .join(ChainStage, ChainStage.id == StageVerification.chain_stage_id)
                .join(PullRequest, PullRequest.id == ChainStage.pr_id)
            )
        }
    assert found[1] == ("usable", found[1][1], [f"{MODULE}/calc::TestAdd"]), verify.output
    assert found[2] == (
        "unusable",
        f"its tests lie in {MODULE}/broken, which its era left out (build failed: {BROKEN})",
        [],
    ), verify.output
