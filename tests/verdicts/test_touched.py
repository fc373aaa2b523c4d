"""Which tests a gold test patch touches, read from the patch alone (prchain/verdicts/touched.py)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from prchain.dev.repos import git
from prchain.environments.eras.go.report import GoTest
from prchain.environments.eras.java.report import Surefire
from prchain.environments.eras.node.report import JsReport
from prchain.environments.eras.python.report import Pytest
from prchain.environments.eras.rust.report import Cargo
from prchain.verdicts.touched import UNNAMED, UNREADABLE, touched_by


def diff(tmp_path: Path, path: str, before: str, after: str) -> str:
    """The patch git writes for `path` going from `before` to `after`."""
    repo = tmp_path / "repo"
    repo.mkdir(parents=True)
    git(repo, "init", "-q")
    (repo / path).parent.mkdir(parents=True, exist_ok=True)
    (repo / path).write_text(before)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    (repo / path).write_text(after)
    return subprocess.run(
        ["git", "diff"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout


def _go_test(name: str, body: str) -> str:
    return f"func {name}(t *testing.T) {{\n\t{body}\n\tif x != y {{\n\t\tt.Fatal(x)\n\t}}\n}}\n"


GO_BASE = 'package g\n\nimport "testing"\n\n' + "\n".join(
    _go_test(name, f"x, y := compute({i}), 1")
    for i, name in enumerate(("TestWelcome", "TestShort", "TestLong"))
)
GO_AFTER = (
    GO_BASE.replace("x, y := compute(1), 1", "x, y := compute(1), 2")
    + "\n// TestFarewell says goodbye.\n"
    + _go_test("TestFarewell", "x, y := Farewell(), 1")
)


def test_a_changed_body_touches_its_function_and_an_appended_test_only_itself(
    tmp_path: Path,
) -> None:
    patch = diff(tmp_path, "g_test.go", GO_BASE, GO_AFTER)
    assert "@@ func TestWelcome(" in patch and "@@ func TestLong(" in patch  # git's headers
    touched = touched_by(patch, GoTest().names)
    assert touched("example.com/g::TestShort") == "TestShort"  # its body changed
    assert touched("example.com/g::TestFarewell/with_name") == "TestFarewell"  # new
    assert touched("example.com/g::TestLong") is None  # the appended test's hunk starts in it
    assert touched("example.com/g::TestWelcome") is None  # a hunk's header, no change of its own
    assert touched("example.com/g::(package)") == UNNAMED


def test_indented_definitions_are_touched_through_their_class_or_module(tmp_path: Path) -> None:
    java = (
        "package x;\n\npublic class FooTest {\n"
        + "".join(
            f"    @Test\n    void {m}() {{\n        check({m}, 1);\n        done();\n    }}\n\n"
            for m in ("bar", "baz", "qux")
        )
        + "}\n"
    )
    patch = diff(tmp_path, "src/test/java/x/FooTest.java", java, java.replace("qux, 1", "qux, 2"))
    touched = touched_by(patch, Surefire().names)
    assert touched("x.FooTest::bar") == "FooTest"  # the whole class: errs towards FAIL_TO_PASS
    assert touched("x.OtherTest::bar") is None
    rust = (
        "pub fn a() {}\n\n#[cfg(test)]\nmod tests {\n"
        + "".join(
            f"    #[test]\n    fn {f}() {{\n        a();\n        b();\n    }}\n\n"
            for f in ("one", "two")
        )
        + "}\n"
    )
    patch = diff(
        tmp_path / "r", "src/lib.rs", rust, rust.replace("b();\n    }\n\n}", "c();\n    }\n\n}")
    )
    assert touched_by(patch, Cargo().names)("digits::tests::one") == "tests"
    assert touched_by(patch, Cargo().names)("digits/cli::one") is None  # another target


@pytest.mark.parametrize(
    ("reader", "test_id", "names"),
    [
        (GoTest(), "m/p::TestA/sub_b", ["TestA"]),
        (Cargo(), "mylib(doc)::src/lib.rs - Foo::bar", ["Foo", "bar"]),
        (Surefire(), "a.b.FooTest$Inner::t(int)[1]", ["FooTest", "Inner", "t"]),
        (Pytest(), "tests/test_x.py::TestX::test_y[1-2]", ["TestX", "test_y"]),
        (JsReport(), "test/a.test.ts::parser > reads a line", ["parser", "reads a line"]),
    ],
)
def test_each_room_names_a_test_as_its_source_does(
    reader: object, test_id: str, names: list[str]
) -> None:
    assert reader.names(test_id) == names  # type: ignore[attr-defined]


def test_an_unreadable_patch_touches_every_test() -> None:
    assert touched_by("not a diff at all\n", GoTest().names)("m::TestA") == UNREADABLE
