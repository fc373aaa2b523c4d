"""P2T splits a gold patch as the chain side does, in every room: the hidden tests of a Rust, Go
or Java stage are its test part, and the test functions they add are guarded names."""

from __future__ import annotations

from prchain.p2t import patches
from prchain.p2t.patches import split_patch, touched_files


def _section(path: str, *added: str) -> str:
    body = "".join(f"+{line}\n" for line in added)
    return (
        f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n"
        f"@@ -1 +1,{len(added) + 1} @@\n context\n{body}"
    )


GOLD = "".join(
    (
        _section("src/lib.rs", "pub fn area() -> u32 { 4 }"),
        _section("tests/area.rs", "#[test]", "fn squares_have_area() {", "}"),
        _section("src/geo.rs", "#[tokio::test]", "async fn loads_a_map() {}"),
        _section("geom/area_test.go", "func TestArea(t *testing.T) {}"),
        _section("geom/area.go", "func Area() int { return 4 }"),
        _section("src/test/java/AreaTest.java", "    @Test", "    public void squares() {"),
        _section("pkg/test_area.py", "def test_square():", "    assert area() == 4"),
        _section("pkg/conftest.py", "import pytest"),
        _section("pkg/area.py", "def area():", "    return 4"),
    )
)


def test_every_rooms_tests_are_the_test_part() -> None:
    code, test = split_patch(GOLD)
    assert touched_files(code) == ["src/lib.rs", "src/geo.rs", "geom/area.go", "pkg/area.py"]
    assert touched_files(test) == [
        "tests/area.rs",
        "geom/area_test.go",
        "src/test/java/AreaTest.java",
        "pkg/test_area.py",
        "pkg/conftest.py",
    ]
    assert code + test != GOLD and sorted(touched_files(code + test)) == sorted(touched_files(GOLD))


def test_the_test_functions_a_patch_adds_are_named_in_each_language() -> None:
    assert patches.test_names(GOLD) == [
        "TestArea",
        "loads_a_map",
        "squares",
        "squares_have_area",
        "test_square",
    ]
    assert patches.test_names(_section("src/lib.rs", "fn helper() {}", "func Area() {}")) == []
