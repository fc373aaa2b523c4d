"""Root's rewrite of the hidden Rust tests' standard macros (qualify.py; issue 77, round 5).

The rewrite is text in, text out; these cases are the places where a naive search-and-replace
goes wrong. The last tests compile the rewritten tests with the host's rustc, when it has one, against
a crate that shadows `assert_eq!` in each way qualify.py's table names."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from prchain.environments.eras.rust import qualify
from prchain.environments.eras.rust.qualify import compiled, qualified

STD, CORE = qualify.aliases("X")
DECLARED = f" extern crate std as {STD}; extern crate core as {CORE}; "


def body(text: str) -> str:
    """The rewrite of `text`, with the file's own declarations taken out again."""
    out = qualified(text, "X")
    assert out.startswith(DECLARED.lstrip()), out
    return out.replace(DECLARED.lstrip(), "", 1)


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("assert_eq!(a, b);", f"{STD}::assert_eq!(a, b);"),
        ("assert_eq ! {a, b}", f"{STD}::assert_eq ! {{a, b}}"),
        ("let v = vec![1];", f"let v = {STD}::vec![1];"),
        ("r#assert!(x);", f"{STD}::assert!(x);"),
        ("std::assert_eq!(a, b);", f"{STD}::assert_eq!(a, b);"),
        ("::std::assert!(x);", f"{STD}::assert!(x);"),
        ("core::assert_ne!(a, b);", f"{CORE}::assert_ne!(a, b);"),
        ('::core::panic!("x");', f'{CORE}::panic!("x");'),
        ('return ::std::panic!("x")', f'return {STD}::panic!("x")'),
        ("assert!(matches!(x, Some(_)));", f"{STD}::assert!({STD}::matches!(x, Some(_)));"),
    ],
)
def test_standard_invocations_go_through_roots_names(code: str, expected: str) -> None:
    assert body(code) == expected


@pytest.mark.parametrize(
    "code",
    [
        '"assert_eq!(a, b)"',  # a string a test compares with: its expectation, not code
        'r#"panic!("x")"#',
        'br"assert!(x)"',
        "b'a'",
        "// assert_eq!(a, b)",
        "/* assert!(x) /* nested */ assert!(y) */",
        "/// assert_eq!(1, 2) in a doc test",
        "$crate::assert_eq!(a, b)",
        "crate::assert_eq!(a, b)",
        "pretty_assertions::assert_eq!(a, b)",
        "a::std::assert_eq!(a, b)",
        "my_assert_eq!(a, b)",
        "x.assert_eq(a)",
        "assert_eq != x",
        "fn assert(x: bool) {}",
        '#[doc = concat!("a", "b")]',
        '#![doc = include_str!("README.md")]',
        "macro_rules! assert_eq { ($($t:tt)*) => {}; }\nassert_eq!(a, b);",
        "use pretty_assertions::{assert_eq, assert_ne};\nassert_eq!(a, b); assert_ne!(a, b);",
    ],
)
def test_what_is_not_a_standard_invocation_is_left_alone(code: str) -> None:
    out = qualified(code, "X").replace(DECLARED, "").replace(DECLARED.lstrip(), "")
    assert STD not in out and CORE not in out


def test_a_literal_beside_code_stays_as_it_was() -> None:
    code = "let c = '\"'; let l: &'a str = \"}\"; assert!(c != 'x'); 'outer: loop { break 'outer; }"
    assert body(code) == code.replace("assert!", f"{STD}::assert!")


def test_stringify_keeps_its_input_and_is_itself_rewritten() -> None:
    assert body("stringify!(assert!(x))") == f"{STD}::stringify!(assert!(x))"


def test_a_renamed_import_leaves_the_name_to_the_prelude() -> None:
    code = "use pretty_assertions::assert_eq as peq;\nassert_eq!(a, b);"
    assert body(code).endswith(f"{STD}::assert_eq!(a, b);")


def test_a_macro_rules_transcriber_is_rewritten_and_its_matcher_is_not() -> None:
    code = "macro_rules! check { (assert!($e:expr)) => { assert!($e) }; ($e:expr) => { panic!() } }"
    assert body(code) == (
        f"macro_rules! check {{ (assert!($e:expr)) => {{ {STD}::assert!($e) }}; "
        f"($e:expr) => {{ {STD}::panic!() }} }}"
    )


def test_every_module_declares_the_names_after_its_inner_attributes() -> None:
    code = (
        "//! Tests.\n#![allow(dead_code)] // why\nuse super::*;\n"
        "mod inner {\n    #![allow(unused)]\n    fn f() { unreachable!() }\n}\n"
        "macro_rules! m { ($n:ident) => { mod $n { fn g() { assert!(true) } } } }\n"
    )
    out = qualified(code, "X")
    assert out.splitlines()[1] == f"#![allow(dead_code)]{DECLARED} // why"
    assert out.splitlines()[4] == f"    #![allow(unused)]{DECLARED}"
    assert f"mod $n {{{DECLARED} fn g()" in out
    assert len(out.splitlines()) == len(code.splitlines())  # line!() and panic lines stay


def test_a_file_starting_with_code_declares_the_names_on_its_first_line() -> None:
    out = qualified("use super::*;\nassert!(x);\n", "X")
    assert out == f"{DECLARED.lstrip()}use super::*;\n{STD}::assert!(x);\n"


def test_an_inner_doc_comment_at_the_end_gets_a_line_of_its_own() -> None:
    assert qualified("mod m { //! doc", "X") == "mod m { //! doc"  # nothing to rewrite
    out = qualified("assert!(x); mod m { //! doc", "X")
    assert out.endswith(f"mod m {{ //! doc\n{DECLARED.lstrip()}")


def test_a_file_without_standard_invocations_is_unchanged() -> None:
    code = "use super::*;\n#[test]\nfn t() { my_check(area(2, 3)); }\n"
    assert qualified(code, "X") == code


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("src/tests/mod.rs", True),
        ("src/geo/tests.rs", True),
        ("crates/geo/src/lib_tests.rs", True),
        ("tests/cli.rs", True),
        ("benches/speed.rs", True),
        ("tests/it/main.rs", True),
        ("tests/it/shapes.rs", True),  # tests/it/main.rs exists
        ("tests/common/mod.rs", True),
        ("tests/fixtures/input.rs", False),
        ("tests/ui/missing.rs", False),
        ("src/tests/data/sample.rs", False),
        ("src/data/tests.rs", True),  # a module named data
        ("tests/project/src/lib.rs", False),  # a crate a test builds
        ("tests/cases/loose.rs", False),
        ("tests/loose/thing.rs", False),  # no main.rs or mod.rs beside it
        ("geo_test.rs", True),
        ("build.rs", False),
        ("tests/cli.txt", False),
    ],
)
def test_only_files_compiled_into_the_tests_are_rewritten(path: str, expected: bool) -> None:
    present = {"tests/it/main.rs", "tests/common/mod.rs"}
    assert compiled(path, present.__contains__) is expected


def test_one_run_gives_every_file_the_same_names_and_another_run_others() -> None:
    files = {"src/tests/mod.rs": "assert!(x);", "tests/cli.rs": "assert!(y);", "tests/a.txt": ""}
    written: dict[str, str] = {}

    def run() -> set[str]:
        done = qualify.rewrite(
            list(files), files.__getitem__, written.__setitem__, files.__contains__
        )
        assert done == ["src/tests/mod.rs", "tests/cli.rs"]
        return {text.split(" as ")[1].split(";")[0] for text in written.values()}

    first, second = run(), run()
    assert len(first) == 1 and len(second) == 1 and first != second


def test_the_script_rewrites_files_in_place_as_root_runs_it(tmp_path: Path) -> None:
    (tmp_path / "src" / "tests").mkdir(parents=True)
    (tmp_path / "src" / "tests" / "mod.rs").write_text("assert_eq!(1, 1);\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "link.rs").symlink_to(tmp_path / "src" / "tests" / "mod.rs")
    argv = [sys.executable, "-I", "-S", "-c", qualify.source(), "src/tests/mod.rs"]
    subprocess.run([*argv, "tests/link.rs", "src/absent.rs"], cwd=tmp_path, check=True)
    text = (tmp_path / "src" / "tests" / "mod.rs").read_text()
    assert text.startswith("extern crate std as __prchain_std_") and "::assert_eq!(1, 1)" in text
    assert text.count("__prchain_std_") == 2  # the link was not followed a second time


# ---- the rewritten tests under rustc -----------------------------------------------------------

RUSTC = shutil.which("rustc")
TESTS = """//! The hidden tests.
#![allow(unused_imports)]
use super::*;

#[test]
fn areas() {
    assert_eq!(area(2, 3), 6);
    assert!(matches!(Some(area(1, 1)), Some(1)));
    std::assert_ne!(area(2, 2), 5);
    core::assert_eq!(area(1, 2), 2);
    if area(2, 2) != 4 {
        panic!("bad area {}", area(2, 2));
    }
}

mod nested {
    #[test]
    fn squares() {
        assert_eq!(super::super::area(3, 3), 9);
    }
}
"""
GOLD = "#![deny(warnings, rust_2018_idioms, unused_qualifications, unused_extern_crates)]\n"
AREA = "pub fn area(w: u64, h: u64) -> u64 {{ {} }}\n#[cfg(test)]\nmod tests;\n"
NO_OPS = "".join(
    f"macro_rules! {name} {{ ($($t:tt)*) => {{}}; }}\n"
    for name in ("assert_eq", "assert_ne", "assert", "panic")
)
SHADOWS = {
    "macro_rules above mod tests": NO_OPS,
    "core and std renamed to the crate": "extern crate self as core;\nextern crate self as std;\n"
    "#[macro_export] macro_rules! assert_eq { ($($t:tt)*) => {}; }\n"
    "#[macro_export] macro_rules! assert_ne { ($($t:tt)*) => {}; }\n",
}


def _test_run(tmp_path: Path, edition: str, lib: str) -> subprocess.CompletedProcess[str]:
    assert RUSTC is not None
    (tmp_path / "lib.rs").write_text(lib)
    (tmp_path / "tests.rs").write_text(qualified(TESTS, "X"))
    built = subprocess.run(
        [RUSTC, "--edition", edition, "--test", "--crate-name", "geo", "lib.rs", "-o", "t"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert built.returncode == 0, built.stderr
    return subprocess.run(["./t"], cwd=tmp_path, capture_output=True, text=True, timeout=60)


@pytest.mark.skipif(RUSTC is None, reason="no rustc on this host")
@pytest.mark.parametrize("edition", ["2015", "2021"])
def test_gold_with_strict_lints_passes_the_rewritten_tests(tmp_path: Path, edition: str) -> None:
    done = _test_run(tmp_path, edition, GOLD + AREA.format("w * h"))
    assert done.returncode == 0 and "2 passed" in done.stdout, done.stdout


@pytest.mark.skipif(RUSTC is None, reason="no rustc on this host")
@pytest.mark.parametrize("edition", ["2015", "2021"])
@pytest.mark.parametrize("shadow", list(SHADOWS))
def test_no_shadow_of_the_crate_passes_a_wrong_area(
    tmp_path: Path, edition: str, shadow: str
) -> None:
    if edition == "2015" and "self as core" in SHADOWS[shadow]:
        pytest.skip("`extern crate self` is 2018's")
    done = _test_run(tmp_path, edition, SHADOWS[shadow] + AREA.format("w + h"))
    assert done.returncode != 0 and "0 passed; 2 failed" in done.stdout, done.stdout


class _Tree:
    """A sandbox's files as `tests verify` reads and writes them."""

    def __init__(self, files: dict[str, str]) -> None:
        self.files = files

    def read_file(self, path: str) -> str:
        if path not in self.files:
            raise FileNotFoundError(path)
        return self.files[path]

    def write_file(self, path: str, content: str) -> None:
        self.files[path] = content


@pytest.mark.parametrize(("ecosystem", "rewritten"), [("rust", True), ("python", False)])
def test_tests_verify_rewrites_the_gold_test_patch_as_roots_seal_does(
    ecosystem: str, rewritten: bool
) -> None:
    from prchain.verdicts.verify import qualify_tests

    patch = (
        "diff --git a/src/tests/mod.rs b/src/tests/mod.rs\n--- a/src/tests/mod.rs\n"
        "+++ b/src/tests/mod.rs\n@@ -1 +1,2 @@\n use super::*;\n+assert!(x);\n"
    )
    tree = _Tree({"src/tests/mod.rs": "use super::*;\nassert!(x);\n", "src/lib.rs": "assert!(y);"})
    qualify_tests(tree, patch, [], ecosystem)  # type: ignore[arg-type]
    assert ("::assert!(x)" in tree.files["src/tests/mod.rs"]) is rewritten
    assert tree.files["src/lib.rs"] == "assert!(y);"  # the agent's side: never
