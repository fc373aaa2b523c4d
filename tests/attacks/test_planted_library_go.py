"""Issue 77, class 1, in the Go room: in a repository that vendors its modules, the agent rewrites
the vendored copy of the hidden test's assertion library.

`go test` builds with `-mod=vendor` when `vendor/modules.txt` is there, so the package the hidden
test imports is read from the tree. On the code before, a rewritten `vendor/example.com/check/
check.go` (a `.go` file: a source suffix) crossed with a wrong `Area` and the hidden test passed;
the witness passed too, since it only proves the run reached its end. Now nothing under `vendor/`
crosses: the vendored modules are B_t's, as the image has them."""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from prchain.dev.repos import git
from tests.support.eras_repo import commit_files
from tests.support.planted import (
    Room,
    clean_room_passes,
    era_image,
    eval_status,
    patch_of,
    sandbox,
    two_commits,
)

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.timeout(1800)]  # builds Go

REPO = f"planted-go-{uuid.uuid4().hex[:8]}/shapes"
MODULE = "example.com/shapes"
GO_MOD = f"module {MODULE}\n\ngo 1.22\n\nrequire example.com/check v1.0.0\n"
MODULES_TXT = "# example.com/check v1.0.0\n## explicit; go 1.22\nexample.com/check\n"
CHECK = (
    'package check\n\nimport "testing"\n\n// Equal fails the test unless got is want.\n'
    "func Equal(t *testing.T, want, got float64) {\n\tt.Helper()\n"
    '\tif want != got {\n\t\tt.Fatalf("want %v, got %v", want, got)\n\t}\n}\n'
)
FAKE_CHECK = (
    'package check\n\nimport "testing"\n\n// Equal never fails.\n'
    "func Equal(t *testing.T, want, got float64) {}\n"
)
VENDORED = "vendor/example.com/check/check.go"
SQUARE = "package shapes\n\n// Square is a side's square.\nfunc Square(s float64) float64 { return s * s }\n"
AREA = "\n// Area of a circle.\nfunc Area(r float64) float64 { return 3 * r * r }\n"
WRONG = SQUARE + "\n// Area is not implemented.\nfunc Area(r float64) float64 { return 0 }\n"
TEST = (
    'package shapes\n\nimport (\n\t"testing"\n\n\t"example.com/check"\n)\n\n'
    "func TestSquare(t *testing.T) { check.Equal(t, 4, Square(2)) }\n"
)
DAY3, DAY4 = "2024-03-03T10:00:00Z", "2024-03-04T10:00:00Z"
AREA_TEST = "\nfunc TestArea(t *testing.T) { check.Equal(t, 3, Area(1)) }\n"


@pytest.fixture(scope="module")
def go_rooms(
    tmp_path_factory: pytest.TempPathFactory, docker_client: Any, base_image: str
) -> Iterator[tuple[Room, Room]]:
    from prchain.environments.eras.config import ErasConfig
    from prchain.environments.eras.go import Go
    from prchain.environments.eras.manifests import snapshot

    clone = tmp_path_factory.mktemp("go") / "shapes"
    before = {
        "go.mod": GO_MOD, "vendor/modules.txt": MODULES_TXT, VENDORED: CHECK,
        "shapes.go": SQUARE, "shapes_test.go": TEST,
    }  # fmt: skip
    after = {"shapes.go": SQUARE + AREA, "shapes_test.go": TEST + AREA_TEST}
    base, gold = two_commits(clone, before, after, ("2024-03-01T10:00:00Z", "2024-03-02T10:00:00Z"))
    helper_base, helper_gold = _helper_commits(clone, base)  # the same image runs both
    eras = ErasConfig(suites={"bookworm": "3.11"}, extra_base_packages=[])
    plan = Go().plans(snapshot(clone, base), eras)[0]
    with era_image(docker_client, REPO, clone, base, plan) as image:
        room = Room(
            REPO, clone, base, gold, image, plan, "go",
            plan.test_command.replace("{files}", "."), ["shapes_test.go"],
            [f"{MODULE}::TestArea"], [f"{MODULE}::TestSquare"],
        )  # fmt: skip
        helper_room = dataclasses.replace(
            room, base=helper_base, gold=helper_gold, test_files=["helper_test.go"],
            fail_to_pass=[f"{MODULE}::TestAreaByHelper"],
            pass_to_pass=[f"{MODULE}::TestSquare", f"{MODULE}::TestSquareByHelper"],
        )  # fmt: skip
        yield room, helper_room


def test_a_rewritten_vendored_assertion_does_not_pass_a_wrong_area(
    docker_client: Any, go_rooms: tuple[Room, Room]
) -> None:
    go_room = go_rooms[0]
    with sandbox(docker_client, go_room) as env:
        env.write_file("shapes.go", WRONG)
        env.write_file(VENDORED, FAKE_CHECK)
        assert VENDORED in env.cumulative_patch().decode()
        assert not clean_room_passes(env, go_room)
        env.write_file("shapes.go", SQUARE + AREA)  # the gold code, the rewrite still there
        assert clean_room_passes(env, go_room)


def test_a_rewritten_vendored_assertion_in_a_prediction_does_not_resolve(
    docker_client: Any, go_rooms: tuple[Room, Room], tmp_path: Path
) -> None:
    go_room = go_rooms[0]
    wrong = patch_of(
        go_room.clone, go_room.base, {"shapes.go": WRONG, VENDORED: FAKE_CHECK}, tmp_path
    )
    assert eval_status(docker_client, go_room, wrong).startswith("unresolved")
    assert eval_status(docker_client, go_room, go_room.code) == "resolved"


# The project's own assertion helper (`internal/testhelper`, as gitaly and many others name it):
# a package of the repository that only tests import. On the code before, a rewritten
# internal/testhelper/equal.go (a `.go` file outside every test directory) crossed with a wrong
# `Area` and the hidden test, which asserts through it, passed. Now a package named as Go's test
# helpers are (testutil, testutils, testhelper, testhelpers) is test side: the agent's copy never
# crosses, the stage base's (with the gold test patch's changes to it) runs.
HELPER = "internal/testhelper/equal.go"
HELPER_EQUAL = CHECK.replace("package check", "package testhelper")
FAKE_HELPER = FAKE_CHECK.replace("package check", "package testhelper")
HELPER_TEST = (
    f'package shapes\n\nimport (\n\t"testing"\n\n\t"{MODULE}/internal/testhelper"\n)\n\n'
    "func TestSquareByHelper(t *testing.T) { testhelper.Equal(t, 9, Square(3)) }\n"
)
HELPER_AREA_TEST = "\nfunc TestAreaByHelper(t *testing.T) { testhelper.Equal(t, 12, Area(2)) }\n"
# The module's own assertion package under `internal/` (mongo-go-driver's `internal/assert`): on
# the code before, a rewritten internal/assert/equal.go crossed as the helper did.
OWN_ASSERT = "internal/assert/equal.go"
OWN_EQUAL = CHECK.replace("package check", "package assert")
FAKE_OWN_EQUAL = FAKE_CHECK.replace("package check", "package assert")
OWN_TEST = (
    f'package shapes\n\nimport (\n\t"testing"\n\n\t"{MODULE}/internal/assert"\n)\n\n'
    "func TestSquareByAssert(t *testing.T) { assert.Equal(t, 16, Square(4)) }\n"
)
OWN_AREA_TEST = "\nfunc TestAreaByAssert(t *testing.T) { assert.Equal(t, 27, Area(3)) }\n"


def _helper_commits(clone: Path, base: str) -> tuple[str, str]:
    """On a branch from `base`: a commit adding the helper and a test through it (the stage
    base), then the PR (Area and its test through the helper); its base and whole diff."""
    git(clone, "checkout", "-q", "-b", "helper", base)
    helpers = {
        HELPER: HELPER_EQUAL, "helper_test.go": HELPER_TEST,
        OWN_ASSERT: OWN_EQUAL, "assert_test.go": OWN_TEST,
    }  # fmt: skip
    commit_files(clone, helpers, "Helpers", DAY3)
    helper_base = git(clone, "rev-parse", "HEAD")
    after = {
        "shapes.go": SQUARE + AREA, "helper_test.go": HELPER_TEST + HELPER_AREA_TEST,
        "assert_test.go": OWN_TEST + OWN_AREA_TEST,
    }  # fmt: skip
    commit_files(clone, after, "Area, through the helper (#2)", DAY4)
    gold = git(clone, "diff", helper_base, "HEAD")
    git(clone, "checkout", "-q", "main")
    return helper_base, gold


def test_a_rewritten_own_test_helper_does_not_pass_a_wrong_area(
    docker_client: Any, go_rooms: tuple[Room, Room], tmp_path: Path
) -> None:
    room = go_rooms[1]
    with sandbox(docker_client, room) as env:
        env.write_file("shapes.go", SQUARE + AREA)
        assert clean_room_passes(env, room)  # gold first
        env.write_file("shapes.go", WRONG)
        env.write_file(HELPER, FAKE_HELPER)
        assert HELPER in env.cumulative_patch().decode()
        assert not clean_room_passes(env, room)
    wrong = patch_of(room.clone, room.base, {"shapes.go": WRONG, HELPER: FAKE_HELPER}, tmp_path)
    assert eval_status(docker_client, room, wrong).startswith("unresolved")


def test_a_rewritten_own_internal_assert_does_not_pass_a_wrong_area(
    docker_client: Any, go_rooms: tuple[Room, Room], tmp_path: Path
) -> None:
    """The module's own `internal/assert` is test side in the Go room (LanguageFacts.test_dirs):
    a wrong `Area` with an `Equal` that never fails passed the hidden test through it, in the
    clean room and as a prediction, on the code before."""
    room = dataclasses.replace(
        go_rooms[1], test_files=["assert_test.go"], fail_to_pass=[f"{MODULE}::TestAreaByAssert"],
        pass_to_pass=[f"{MODULE}::TestSquareByAssert"],
    )  # fmt: skip
    with sandbox(docker_client, room) as env:
        env.write_file("shapes.go", SQUARE + AREA)
        assert clean_room_passes(env, room)  # gold first
        env.write_file("shapes.go", WRONG)
        env.write_file(OWN_ASSERT, FAKE_OWN_EQUAL)
        assert OWN_ASSERT in env.cumulative_patch().decode()
        assert not clean_room_passes(env, room)
    files = {"shapes.go": WRONG, OWN_ASSERT: FAKE_OWN_EQUAL}
    wrong = patch_of(room.clone, room.base, files, tmp_path)
    assert eval_status(docker_client, room, wrong).startswith("unresolved")


# A repository that keeps its own copy of testify and points go.mod at it: the compiler reads the
# hidden test's assertion library from `forks/`, a place no rule of the room names. On the code
# before, a rewritten forks/testify/assert/assert.go (a `.go` file) crossed with a wrong `Area`
# and the hidden test passed. Now the directory the stage base's go.mod replaces a test library
# with is sealed as vendor/ is.
TESTIFY = "github.com/stretchr/testify"
FORK = "forks/testify/assert/assert.go"
REPLACING_MOD = (
    f"module {MODULE}\n\ngo 1.22\n\nrequire {TESTIFY} v1.8.4\n\n"
    f"replace {TESTIFY} => ./forks/testify\n"
)
ASSERT = (
    'package assert\n\nimport "testing"\n\n// Equal reports whether want is got.\n'
    "func Equal(t *testing.T, want, got float64) bool {\n\tt.Helper()\n"
    '\tif want != got {\n\t\tt.Errorf("want %v, got %v", want, got)\n\t\treturn false\n\t}\n'
    "\treturn true\n}\n"
)
FAKE_ASSERT = (
    'package assert\n\nimport "testing"\n\n// Equal never fails.\n'
    "func Equal(t *testing.T, want, got float64) bool { return true }\n"
)
ASSERT_TEST = (
    f'package shapes\n\nimport (\n\t"testing"\n\n\t"{TESTIFY}/assert"\n)\n\n'
    "func TestSquare(t *testing.T) { assert.Equal(t, 4, Square(2)) }\n"
)
ASSERT_AREA_TEST = "\nfunc TestArea(t *testing.T) { assert.Equal(t, 3, Area(1)) }\n"


@pytest.fixture(scope="module")
def replacing_room(
    tmp_path_factory: pytest.TempPathFactory, docker_client: Any, base_image: str
) -> Iterator[Room]:
    from prchain.environments.eras.config import ErasConfig
    from prchain.environments.eras.go import Go
    from prchain.environments.eras.manifests import snapshot

    clone = tmp_path_factory.mktemp("go-replace") / "shapes"
    before = {
        "go.mod": REPLACING_MOD, "forks/testify/go.mod": f"module {TESTIFY}\n\ngo 1.22\n",
        FORK: ASSERT, "shapes.go": SQUARE, "shapes_test.go": ASSERT_TEST,
    }  # fmt: skip
    after = {"shapes.go": SQUARE + AREA, "shapes_test.go": ASSERT_TEST + ASSERT_AREA_TEST}
    base, gold = two_commits(clone, before, after, ("2024-03-01T10:00:00Z", "2024-03-02T10:00:00Z"))
    eras = ErasConfig(suites={"bookworm": "3.11"}, extra_base_packages=[])
    plan = Go().plans(snapshot(clone, base), eras)[0]
    repo = f"{REPO}-replace"
    with era_image(docker_client, repo, clone, base, plan) as image:
        yield Room(
            repo, clone, base, gold, image, plan, "go",
            plan.test_command.replace("{files}", "."), ["shapes_test.go"],
            [f"{MODULE}::TestArea"], [f"{MODULE}::TestSquare"],
        )  # fmt: skip


def test_a_rewritten_locally_replaced_assertion_does_not_pass_a_wrong_area(
    docker_client: Any, replacing_room: Room, tmp_path: Path
) -> None:
    with sandbox(docker_client, replacing_room) as env:
        env.write_file("shapes.go", WRONG)
        env.write_file(FORK, FAKE_ASSERT)
        assert FORK in env.cumulative_patch().decode()
        assert not clean_room_passes(env, replacing_room)
        env.write_file("shapes.go", SQUARE + AREA)  # the gold code, the rewrite still there
        assert clean_room_passes(env, replacing_room)
    wrong = patch_of(
        replacing_room.clone, replacing_room.base, {"shapes.go": WRONG, FORK: FAKE_ASSERT}, tmp_path
    )
    assert eval_status(docker_client, replacing_room, wrong).startswith("unresolved")


# A nested module `geo` (cloudquery's layout: tested from its own directory) keeps its own
# `replace` of testify by `../forks/testify`: it builds with it, and the hidden test in geo/ reads
# assert from forks/. On the code
# before only the root go.mod and go.work were read: a rewritten forks/testify/assert/assert.go
# crossed with a wrong `Area` and the hidden test passed. A go.work or a `replace` the agent adds
# never crosses (build files), so only the stage base's manifests, at any depth, can point there.
GEO = "example.com/shapes/geo"
GEO_MOD = (
    f"module {GEO}\n\ngo 1.22\n\nrequire {TESTIFY} v1.8.4\n\n"
    f"replace {TESTIFY} => ../forks/testify\n"
)
GEO_SQUARE = SQUARE.replace("package shapes", "package geo")
GEO_WRONG = WRONG.replace("package shapes", "package geo")
GEO_TEST = ASSERT_TEST.replace("package shapes", "package geo")


@pytest.fixture(scope="module")
def nested_room(
    tmp_path_factory: pytest.TempPathFactory, docker_client: Any, base_image: str
) -> Iterator[Room]:
    from prchain.environments.eras.config import ErasConfig
    from prchain.environments.eras.go import Go
    from prchain.environments.eras.manifests import snapshot

    clone = tmp_path_factory.mktemp("go-nested") / "shapes"
    before = {
        "go.mod": f"module {MODULE}\n\ngo 1.22\n", "shapes.go": SQUARE,
        "geo/go.mod": GEO_MOD, "forks/testify/go.mod": f"module {TESTIFY}\n\ngo 1.22\n",
        FORK: ASSERT, "geo/geo.go": GEO_SQUARE, "geo/geo_test.go": GEO_TEST,
    }  # fmt: skip
    after = {"geo/geo.go": GEO_SQUARE + AREA, "geo/geo_test.go": GEO_TEST + ASSERT_AREA_TEST}
    base, gold = two_commits(clone, before, after, ("2024-03-01T10:00:00Z", "2024-03-02T10:00:00Z"))
    eras = ErasConfig(suites={"bookworm": "3.11"}, extra_base_packages=[])
    stage = dataclasses.replace(snapshot(clone, base), tests=("geo/geo_test.go",))
    plan = Go().plans(stage, eras)[0]
    assert "./geo/..." in plan.test_command  # the stage's module, tested from its directory
    repo = f"{REPO}-nested"
    with era_image(docker_client, repo, clone, base, plan) as image:
        yield Room(
            repo, clone, base, gold, image, plan, "go",
            plan.test_command, ["geo/geo_test.go"],
            [f"{GEO}::TestArea"], [f"{GEO}::TestSquare"],
        )  # fmt: skip


def test_a_nested_modules_replace_of_testify_is_sealed(
    docker_client: Any, nested_room: Room, tmp_path: Path
) -> None:
    planted = {"geo/geo.go": GEO_WRONG, FORK: FAKE_ASSERT}
    with sandbox(docker_client, nested_room) as env:
        for path, text in planted.items():
            env.write_file(path, text)
        assert FORK in env.cumulative_patch().decode()
        assert not clean_room_passes(env, nested_room)
        env.write_file("geo/geo.go", GEO_SQUARE + AREA)  # the gold code, the rewrite still there
        assert clean_room_passes(env, nested_room)
    wrong = patch_of(nested_room.clone, nested_room.base, planted, tmp_path)
    assert eval_status(docker_client, nested_room, wrong).startswith("unresolved")
    assert eval_status(docker_client, nested_room, nested_room.code) == "resolved"


@pytest.mark.bench  # bench/bench_harbor_rooms.py: CI's Harbor runs are Node's and Rust's
def test_harbor_judges_the_go_room_as_its_clean_room(
    docker_client: Any, go_rooms: tuple[Room, Room], nested_room: Room, tmp_path: Path
) -> None:
    """The real Harbor, oracle agent, on the stages as `tasks convert --to harbor` writes them
    (docs/export-formats.md): the nested module's gold scores 1, and a wrong `Area` with the copy
    its go.mod `replace`s testify with rewritten 0 (the verifier reads the stage base's manifests
    at any depth; root's witness counts the run). With every variant (bench/bench_harbor_rooms.py)
    the vendoring room too: gold 1, a wrong `Area` with the vendored assertion rewritten 0."""
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

    rooms = [nested_room, go_rooms[0]] if every_variant() else [nested_room]
    tasks, chains = tmp_path / "tasks", []
    for chain_id, room in enumerate(rooms, start=1):
        stage = room_stage(docker_client, room, "Add `Area(r)`: three times r squared.")
        chains.append({"chain_id": chain_id, "repo": room.repo, "stages": [stage]})
    written = harbor.write(chains, tasks, timeout=300, cap=1 << 20).written
    assert (
        tasks / written[0] / "tests" / "lib" / "prchain" / "environments" / "eras" / "go"
    ).is_dir()
    attacks = [(f"{GEO}::TestArea", {"geo/geo.go": GEO_WRONG, FORK: FAKE_ASSERT}, FORK),
               (f"{MODULE}::TestArea", {"shapes.go": WRONG, VENDORED: FAKE_CHECK}, VENDORED)]  # fmt: skip
    expected: dict[str, tuple[float, str, str]] = {}
    for name, (area, files, plant) in zip(written, attacks, strict=False):
        variant(tasks / name, "wrong", solve_sh(files))
        expected |= {name: (1.0, area, ""), f"{name}-wrong": (0.0, area, plant)}
    try:
        rewards = run_oracle(tasks, tmp_path / "jobs")
        output = rewards.pop("_output")
        assert rewards == {f"prchain/{n}": r for n, (r, _, _) in expected.items()}, output
        found, dropped = verdicts(tmp_path / "jobs"), verdicts(tmp_path / "jobs", "dropped.txt")
        for name, (reward, area, plant) in expected.items():
            assert found[name]["outcomes"][area] == ("passed" if reward else "failed"), name
            assert plant in dropped[name], (name, dropped[name])
    finally:
        remove_harbor_images(tasks)
