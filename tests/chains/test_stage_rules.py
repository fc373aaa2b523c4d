"""Rules of round two, each on its own case: cue words only in the reference's sentence, the
substance every stage must have (comments and docstrings do not count), and reverts."""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from prchain.chains.building.build import build_chains
from prchain.chains.config import ChainsConfig
from prchain.chains.evidence.attributes import Attributes
from prchain.chains.evidence.changes import (
    CodeChange,
    no_stages,
    patch_code_change,
    patch_code_lines,
    read_blobs,
)
from prchain.chains.reading.cues import classify, reference_sentence, stacked_on, stacked_wording
from prchain.chains.reading.generated import marked_generated
from prchain.chains.reading.imports import _LONG_IMPORT, import_lines, is_import
from prchain.chains.reading.paths import (
    counts_as_code,
    counts_as_substance,
    is_config_path,
    is_doc_path,
    is_lockfile,
)
from prchain.chains.reading.substance import (
    WholeFile,
    code_line_flags,
    lexer_for,
    multiline_strings,
)
from prchain.chains.rules.filters import RELEASE_TITLE, is_dependency_bump, is_release
from prchain.core.git import CatFile
from prchain.dev.repos import git
from prchain.store.models import Chain, ChainLink
from tests.support.chain_store import StoreBuilder, file_diff
from tests.support.history import History


def test_cue_words_count_only_in_the_sentence_holding_the_reference() -> None:
    # The dependency wording belongs to another sentence: a plain mention.
    text = "This regressed in the last release. Unrelated cleanup: see #12 for the layout."
    assert reference_sentence(text, 12) == "Unrelated cleanup: see #12 for the layout."
    assert classify("mention", "Fixes the docs after the CI restore. Copied from #12.", 12)[0] == (
        "medium"
    )
    assert classify("mention", "The bug was introduced in #12. Tests added.", 12)[0] == "strong"
    # Whole words only: "restoration" is not "restore".
    assert classify("mention", "Part of the restoration effort, see #12", 12)[0] == "medium"
    assert classify("mention", "This restores the behaviour #12 removed", 12)[0] == "strong"
    # A list item keeps its lead-in line; version numbers and URLs do not end a sentence.
    assert reference_sentence("Builds on: | - #12", 12) == "Builds on: | - #12"
    # A line that ends a sentence is no lead-in (arrow-rs #10506: "restoring" was #10297's).
    restoring = "Reverts #11, restoring the names. | - Updates a test added by #12"
    assert reference_sentence(restoring, 12) == "- Updates a test added by #12"
    # Only a lead-in's last sentence introduces its list, and "the following" is no dependency
    # (tracing #312: "Most of the polish needed for 0.1. Please note the following:").
    polish = "This is the polish needed for 0.1. Please note the following: | * #12 breaks it."
    assert reference_sentence(polish, 12) == "Please note the following: | * #12 breaks it."
    assert classify("mention", polish, 12)[0] == "medium"
    assert classify("mention", "Following #12, the flag is gone.", 12)[0] == "strong"
    assert stacked_on("#12 changes the API, and I'd like to land that first.", 12)
    # Stack words that name another PR are said of that one.
    assert stacked_wording("Updates a test added by #12 after #11 merged", 12) == ""
    assert stacked_wording("Updates a test added by #12 after #12 merged", 12) == (
        "after #12 merged"
    )
    assert reference_sentence("Since v1.2.3 (see https://x.org/a.b/pull/12) it works.", 12) == (
        "Since v1.2.3 (see https://x.org/a.b/pull/12) it works."
    )


PY_DOCS_ONLY = '''diff --git a/src/core.py b/src/core.py
--- a/src/core.py
+++ b/src/core.py
@@ -1,3 +1,9 @@
 def area(width, height):
+    """The area of a rectangle.
+
+    Both sides are in the same unit.
+    """
+    # Multiplying is all there is to it.
+
     return width * height
'''

RS_MIXED = """diff --git a/crates/geo/src/lib.rs b/crates/geo/src/lib.rs
--- a/crates/geo/src/lib.rs
+++ b/crates/geo/src/lib.rs
@@ -1,2 +1,6 @@
 pub fn area(w: u32, h: u32) -> u32 {
-    w * h
+    /// Saturating, so huge rectangles do not wrap.
+    // see the overflow report
+    let product = w.saturating_mul(h);
+    product
 }
"""

CI_ONLY = """diff --git a/.github/workflows/ci.yml b/.github/workflows/ci.yml
--- a/.github/workflows/ci.yml
+++ b/.github/workflows/ci.yml
@@ -1 +1,2 @@
 on: push
+jobs: {}
"""


def _retune(places: int) -> str:
    """A Cython file whose `tol = 1e-15` changes to 1e-10 in `places` functions."""
    hunks = "".join(
        f"@@ -{10 * i + 1},3 +{10 * i + 1},3 @@\n"
        f" cdef double f{i}(double x):\n"
        "-    cdef double tol = 1e-15\n"
        "+    cdef double tol = 1e-10\n"
        f"     return search{i}(x, tol)\n"
        for i in range(places)
    )
    path = "scipy/special/_cdflib.pyx"
    return f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n{hunks}"


def test_a_line_written_the_same_in_many_places_is_one_change() -> None:
    """scipy #19931 sets the 14 `tol = 1e-15` of #8404 to 1e-10: one edit applied over and over,
    not 28 lines; a stage of it teaches nothing. Made once, the edit counts (its two lines), and
    distinct edits count one by one."""
    assert patch_code_lines(_retune(1)) == 2
    assert patch_code_lines(_retune(2)) == 2  # the same two lines, written twice
    assert patch_code_lines(_retune(14)) == 0
    varied = _retune(14).replace(
        "+    cdef double tol = 1e-10\n", "+    cdef double tol = 1e-10  \n"
    )
    assert patch_code_lines(varied) == 0  # white space is no difference
    distinct = "".join(
        line.replace("1e-10", f"{i + 2}e-15") if line.startswith("+") else line
        for i, line in enumerate(_retune(14).splitlines(keepends=True))
    )
    assert patch_code_lines(distinct) == 15


def _deprecated(removed: int, added: list[str]) -> str:
    """A Python file losing `removed` lines of a deprecated function (and gaining `added`)."""
    body = "".join(f"-    value_{i} = legacy_step(value, {i})\n" for i in range(removed))
    body += "".join(f"+{line}\n" for line in added)
    path = "distributed/client.py"
    return (
        f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n"
        f"@@ -1,{removed + 1} +1,{len(added) + 1} @@\n def run(value):\n{body}"
    )


def test_a_removed_line_counts_half() -> None:
    """distributed #9222 only deletes 16 lines of deprecated code: finding what to remove is half
    the work of writing it. So is it beside new code: a rewritten line is one and a half lines
    (bookkeeper #3646 makes a batch size configurable, 10 lines in and 2 out, 11 lines)."""
    assert patch_code_lines(_deprecated(16, [])) == 8
    assert patch_code_lines(_deprecated(15, [])) == 8
    assert patch_code_lines(_deprecated(16, ["    return modern_step(value)"])) == 1 + 8
    assert patch_code_lines(_deprecated(16, ["    # kept for one release"])) == 8  # no code
    rewritten = [f"    {name} = modern_step(value)" for name in ("size", "rank", "depth", "width")]
    assert patch_code_lines(_deprecated(4, rewritten)) == 4 + 2


RS_IMPORTS = """diff --git a/crates/ecs/src/world.rs b/crates/ecs/src/world.rs
--- a/crates/ecs/src/world.rs
+++ b/crates/ecs/src/world.rs
@@ -1,4 +1,9 @@
-    ptr::{OwningPtr, UnsafeCellDeref},
+use bevy_ptr::{OwningPtr, UnsafeCellDeref};
+use crate::{
+    storage::{Table, TableRow},
+    world::World,
+};
 pub fn spawn(world: &mut World) -> usize {
-    world.len()
+    let row = world.reserve();
+    row.index()
 }
"""


def test_imports_are_no_substance() -> None:
    """bevy #4653 moves `ptr` into its own crate and rewrites the imports of eleven files: 28
    changed lines, 22 of them imports. A hunk that starts inside a `use a::{ … };` does not show
    it is one (see the next test for the whole file)."""
    # The two new statements, and the removed one and `ptr::{…},` read alone (counted half).
    assert patch_code_lines(RS_IMPORTS) == 2 + 1
    python = (
        "diff --git a/ecs/world.py b/ecs/world.py\n--- a/ecs/world.py\n+++ b/ecs/world.py\n"
        "@@ -1,2 +1,6 @@\n+from .storage import (\n+    Table,\n+    TableRow,\n+)\n"
        " def spawn(world):\n-    return len(world)\n+    return world.reserve().index\n"
    )
    assert patch_code_lines(python) == 2


def test_an_import_is_known_by_its_first_words_in_each_language() -> None:
    imports = ["use crate::a;", "pub(crate) use super::{x, y};", "use ::std::io;", "import os"]
    imports += ["from . import x", "#include <a.h>", "package main", 'const x = require("y");']
    assert all(is_import(line) for line in imports)
    code = ["use = compute()", "package = 3", "x = use_it()", "important = True", "users.pop()"]
    assert not any(is_import(line) for line in code)


def _import_lines_everywhere(text: str) -> frozenset[int]:
    """`import_lines` as the pattern reads it tried at every newline (what the keyword search
    must find the same of)."""
    found: set[int] = set()
    for match in _LONG_IMPORT.finditer("\n" + text):
        line = text.count("\n", 0, match.start()) + 1
        found.update(range(line + 1, line + match.group(0).count("\n")))
    return frozenset(found)


def test_the_lines_of_long_imports_are_found_where_the_pattern_finds_them() -> None:
    """`import_lines` tries its pattern only at the lines that begin with an import's first word,
    not at every newline: the same lines, whatever the indentation, the `pub`, a keyword inside
    a word (`reuse`, `users`), a statement whose `pub` and `use` stand on two lines, or a `from`
    inside a long `use` (the next import is read from the last one's end)."""
    text = (
        "use a::{\n    B,\n    C,\n};\nfn reuse() {}\n\tpub(crate) use d::{\n\tE,\n};\n"
        "pub\nuse f::{\n    G,\n};\nlet users = 1;\n    use h::{\n    from x import (\n    I,\n};\n"
        "from .storage import (\n    Table,\n)\npub fn run() {}\nfrom y import z\n"
        "fromage::{\n  no,\n};\nuse j::{\n    K,\n"  # a use left open at the end
    )
    expected = {2, 3, 4, 7, 8, 10, 11, 12, 15, 16, 17, 19, 20}
    assert _import_lines_everywhere(text) == expected
    assert import_lines(text) == expected
    for cut in range(len(text)):  # every prefix and suffix, starting and ending anywhere
        for piece in (text[:cut], text[cut:]):
            assert import_lines(piece) == _import_lines_everywhere(piece), piece


MOVED_OUT = """diff --git a/src/index.py b/src/index.py
--- a/src/index.py
+++ b/src/index.py
@@ -1,12 +1,12 @@
+def sort_locations(locations):
+    files = []
+    for location in locations:
+        if location:
+            files.append(location)
+        else:
+            pass
+    return files
+
 class Finder:
-    @staticmethod
-    def _sort(locations):
-        files = []
-        for location in locations:
-            if location:
-                files.append(location)
-            else:
-                pass
-        return files
     def find(self):
         return []
"""


def test_short_lines_a_diff_moves_are_no_change() -> None:
    """pip #6913 moves a static method out of its class: its `else:` and `)` lines, removed
    in one place and added in another, were counted on both sides. Only the `def` lines and
    the decorator change (one added line and two removed, counted half)."""
    assert patch_code_lines(MOVED_OUT) == 1 + 1


def test_a_rust_files_test_module_is_tests(tmp_path: Path) -> None:
    """bevy #22425 fixes one line of its source and adds a 54-line test to the file's own test
    module: one changed line of code, read from the whole file or from the hunk alone."""
    tests = "".join(
        f"    #[test]\n    fn case_{i}() {{\n        assert_eq!(bump({i}), {i + 1});\n    }}\n"
        for i in range(3)
    )
    before = (
        "pub fn bump(x: u32) -> u32 {\n    x + 2\n}\n\n"
        + "".join(f"pub fn f{i}() -> u32 {{\n    {i}\n}}\n" for i in range(8))
        + f"\n#[cfg(test)]\nmod test {{\n    use super::*;\n\n{tests}}}\n"
    )
    added = "    #[test]\n    fn latching() {\n        let x = bump(1);\n        assert_eq!(x, 2);\n    }\n"
    after = before.replace("x + 2", "x + 1").replace(tests, tests + added)
    repo = History(tmp_path / "rust")
    base = repo.commit("Initial commit", {"src/visibility.rs": before})
    head = repo.pr(1, "Fix latching", {"src/visibility.rs": after})
    diff = git(repo.path, "diff", base, head) + "\n"
    assert diff.count("@@ -") == 2  # the fix and the test are hunks apart
    assert patch_code_lines(diff, str(repo.path)) == 2  # `x + 2` out, `x + 1` in
    # Without the clone, only the hunk that shows the module's start is known to be tests.
    shown = git(repo.path, "diff", "-U30", base, head) + "\n"
    assert patch_code_lines(shown) == 2
    assert patch_code_lines(diff) == 2 + 5  # the test's hunk starts inside the module: unknown


def test_a_hunk_inside_a_long_import_is_read_from_the_whole_file(tmp_path: Path) -> None:
    names = "".join(f"    storage::Column{i},\n" for i in range(12))
    before = f"use crate::{{\n{names}}};\n\npub fn width() -> usize {{\n    12\n}}\n"
    after = before.replace("Column9,", "Column9Ref,")
    repo = History(tmp_path / "imports")
    base = repo.commit("Initial commit", {"src/table.rs": before})
    head = repo.pr(1, "Rename a column type", {"src/table.rs": after})
    diff = git(repo.path, "diff", base, head) + "\n"
    assert "\n use crate" not in diff  # the hunk starts well inside the import
    assert patch_code_lines(diff) == 2  # read alone, both sides of the line look like code
    assert patch_code_lines(diff, str(repo.path)) == 0


def test_comments_docstrings_blank_lines_and_config_are_not_code() -> None:
    assert patch_code_lines(PY_DOCS_ONLY) == 0
    assert patch_code_lines(RS_MIXED) == 3  # the removed line and the two new statements
    assert patch_code_lines(CI_ONLY) == 0
    # Benchmarks measure the code, as tests check it (scipy's benchmarks/, a crate's benches/).
    for path in ("crates/geo/benches/area.rs", "benchmarks/src/lib.rs"):
        assert patch_code_lines(RS_MIXED.replace("crates/geo/src/lib.rs", path)) == 0
    # Build definitions say what to compile, not what the code does (scipy #18426's meson.build,
    # arrow-adbc #1042's pom.xml).
    for path in ("scipy/meson.build", "java/driver/pom.xml", "c/CMakeLists.txt", "c/cmake/x.cmake"):
        assert patch_code_lines(RS_MIXED.replace("crates/geo/src/lib.rs", path)) == 0
    assert (
        patch_code_lines(PY_DOCS_ONLY.replace("+    # Multiplying", "+    width = int(width)  #"))
        == 1
    )


def _presentation(lines: int) -> str:
    """A diff restyling and re-laying out a web app and changing its release script, each of its
    three files given `lines` new lines that a lexer reads as code."""
    files = {
        "web/src/styles/theme.less": ".card-{i} {{ border-radius: {i}px; }}",
        "web/src/app/monitor.component.html": '<div class="card-{i}">{{{{ monitor.name }}}}</div>',
        "scripts/extract-version.sh": 'VERSION_{i}=$(grep -m1 version "$1" | cut -d= -f{i})',
    }
    return "".join(
        f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1 +1,{lines + 1} @@\n"
        + " \n"
        + "".join(f"+{line.format(i=i)}\n" for i in range(lines))
        for path, line in files.items()
    )


def test_stylesheets_markup_and_shell_scripts_are_no_substance(engine: Engine) -> None:
    """hertzbeat #2140 unifies `border-radius` over .less and .html files; iggy #3125 hardens a
    release script. Their lines are code for line lineage, but no stage's substance."""
    diff = _presentation(20)
    assert patch_code_lines(diff) == 0
    # The same kind of lines in a source file are substance.
    script = diff.replace("scripts/extract-version.sh", "src/version.py")
    assert patch_code_lines(script.replace("VERSION_", "version_").replace("$(grep", "(")) > 0
    for path in ("web/src/styles/theme.less", "scripts/extract-version.sh"):
        assert counts_as_code(path) and not counts_as_substance(path)
    files = ["web/src/styles/theme.less", "web/src/app/monitor.component.html"]
    _assert_middle_is_no_stage(engine, [*files, "scripts/extract-version.sh"], diff)


def test_pictures_in_text_and_html_templates_are_no_substance() -> None:
    """crates.io #4154 redesigns a 404 page: a 21-line SVG and a Handlebars template, and the
    only script it touches loses lines. Both files are code for line lineage, no substance."""
    picture = '<path d="M{i} {i}h{i}v{i}z" fill="#f{i}a"/>'
    template = '<h1 class="title-{i}">{{{{this.title{i}}}}}</h1>'
    for path, line in (("public/assets/ferris.svg", picture), ("app/templates/404.hbs", template)):
        diff = f"diff --git a/{path} b/{path}\n--- a/{path}\n+++ b/{path}\n@@ -1 +1,31 @@\n \n"
        diff += "".join(f"+{line.format(i=i)}\n" for i in range(30))
        assert counts_as_code(path) and not counts_as_substance(path), path
        assert patch_code_lines(diff) == 0, path
        assert patch_code_lines(diff.replace(path, "app/pages/404.js")) > 0, path


def test_dependency_manifests_and_leftover_copies_are_no_code() -> None:
    """opentelemetry-collector #9091 points 13 go.mod files at a new module; opentelemetry-go
    #4358 deletes a `sum_test.go.bkup` that #4349 added by mistake."""
    for path in ("go.mod", "exporter/go.mod", "go.work", "Gemfile", "src/core.py.orig"):
        assert not counts_as_code(path), path
    # A Go module file under another name, and its sums (nats.go's `go_test.mod`, round 45).
    for path in ("go_test.mod", "tools/go.tools.mod", "go_test.sum", "go.work.sum"):
        assert not counts_as_code(path), path
    assert is_lockfile("go_test.sum") and is_lockfile("go.work.sum") and not is_lockfile("go.mod")
    assert counts_as_code("good.mod") and counts_as_code("lib/gopher.mod")
    for path in ("sdk/metric/sum.go.bkup", "src/core.py~", "src/lib.rs.rej", "a.c.bak"):
        assert not counts_as_code(path), path
    assert counts_as_code("src/gomod.go") and counts_as_code("internal/go.mod.go")
    assert patch_code_lines(file_diff("exporter/go.mod", 1, 30)) == 0
    assert patch_code_lines(file_diff("sdk/metric/sum.go.bkup", 1, 30)) == 0
    assert patch_code_lines(file_diff("sdk/metric/sum.go", 1, 30)) == 30


def test_fuzz_harnesses_and_vendored_copies_are_no_code(engine: Engine) -> None:
    """Round 35: simdjson #1272 reworks the fuzz harness #1220 wrote (`fuzz/fuzz_ondemand.cpp`),
    IPython #6088 updates the bundled pexpect #5687 updated before: each a stage judged thin.
    Fuzz harnesses exercise the code as tests do; a vendored copy is another project's code."""
    fuzz = ("fuzz/fuzz_ondemand.cpp", "fuzz/fuzz_targets/parse.rs", "oss-fuzz/build.c")
    # Round 37: immer #1186 and #1187 only change `perf-testing/immutability-benchmarks.mjs`.
    benches = ("perf-testing/immutability-benchmarks.mjs", "microbench/src/main/java/Bench.java")
    vendored = ("vendor/github.com/pkg/errors/errors.go", "src/pip/_vendor/rich/text.py")
    for path in (*fuzz, *benches, *vendored, "third_party/zlib/inflate.c"):
        assert not counts_as_code(path), path
        assert patch_code_lines(file_diff(path, 1, 30)) == 0, path
    # A word that only starts like one is code, and so is a directory that merely holds others'
    # names ("fuzzy" matching, an "external" API).
    for path in ("src/fuzzy.rs", "src/vendors/stripe.py", "sympy/external/gmpy.py"):
        assert counts_as_code(path), path
        assert patch_code_lines(file_diff(path, 1, 30)) == 30, path
    harness = file_diff("fuzz/fuzz_ondemand.cpp", 1, 40)
    _assert_middle_is_no_stage(engine, ["fuzz/fuzz_ondemand.cpp"], harness)


def test_a_bundled_copy_updated_is_a_dependency_bump() -> None:
    """IPython #6088 "Update bundled copy of pexpect to 3.3", after #5687's 3.2."""
    for title in (
        "Update bundled copy of pexpect to 3.3",
        "Sync vendored typeshed stubs",
        "Updating the bundled jQuery",
        "deps: bump vendored zlib",
    ):
        assert is_dependency_bump(title), title
    for title in ("Fix bundled config loading", "Add a bundled font option", "Update README"):
        assert not is_dependency_bump(title), title


def test_a_bump_under_a_scope_set_apart_is_a_dependency_bump() -> None:
    """Round 38: lit #4168, "feat (localize-tools): upgrade parse5 to 7.x", judged thin."""
    for title in (
        "feat (localize-tools): upgrade parse5 to 7.x",
        "chore(awc,web): upgrade const-str to v1.1",
    ):
        assert is_dependency_bump(title), title
    assert not is_dependency_bump("feat (parser): update the lexer to two passes")


C_HEADER = """diff --git a/mypyc/lib-rt/util.h b/mypyc/lib-rt/util.h
--- a/mypyc/lib-rt/util.h
+++ b/mypyc/lib-rt/util.h
@@ -1,2 +1,5 @@
 #include <Python.h>
+#ifndef CPY_LIKELY
+/* branch hints */
+#define CPY_LIKELY(x) __builtin_expect((x), 1)
+#endif
"""

MYPY_CASES = """diff --git a/test-data/unit/check-narrowing.test b/test-data/unit/check-narrowing.test
--- a/test-data/unit/check-narrowing.test
+++ b/test-data/unit/check-narrowing.test
@@ -1 +1,3 @@
 [case testNarrowing]
+x: int = 1
+reveal_type(x)
"""


def test_preprocessor_lines_are_code_and_test_data_is_not() -> None:
    """mypy: mypyc's C runtime changes are `#define`s; its cases live under test-data/."""
    assert patch_code_lines(C_HEADER) == 3  # the three directives; the comment is not code
    # A source a build step expands is read in its own language (numpy's loops.c.src).
    template = C_HEADER.replace("util.h", "loops.c.src")
    assert patch_code_lines(template) == 3
    assert patch_code_lines(MYPY_CASES) == 0


def _rust_diff(removed: list[str], added: list[str]) -> str:
    body = "".join(f"-{line}\n" for line in removed) + "".join(f"+{line}\n" for line in added)
    return (
        "diff --git a/src/token.rs b/src/token.rs\n--- a/src/token.rs\n+++ b/src/token.rs\n"
        f"@@ -1,{len(removed) + 2} +1,{len(added) + 2} @@\n define_punctuation! {{\n{body} }}\n"
    )


def test_a_line_whose_comment_alone_changes_is_no_change() -> None:
    """syn #1356 drops the `///` comment closing each line of a macro's input (101 lines) and
    writes one line: the code of those lines stays."""
    with_docs = [f'    "+{i}" pub struct Punct{i}/1 /// `+{i}`' for i in range(20)]
    bare = [line.split(" ///")[0] for line in with_docs]
    assert patch_code_lines(_rust_diff(with_docs, bare)) == 0
    assert patch_code_lines(_rust_diff(bare, with_docs)) == 0  # comments added
    reworded = [line.replace("`+", "the `+") for line in with_docs]
    assert patch_code_lines(_rust_diff(with_docs, reworded)) == 0
    # Code changed beside the comment is a change: 20 lines written, 20 removed.
    resized = [line.replace("/1", f"/{i + 2}") for i, line in enumerate(bare)]
    assert patch_code_lines(_rust_diff(with_docs, resized)) == 20 + 10
    python = (
        "diff --git a/src/core.py b/src/core.py\n--- a/src/core.py\n+++ b/src/core.py\n"
        "@@ -1,2 +1,2 @@\n-width = int(width)  # pixels\n-height = int(height)\n"
        "+width = int(width)  # in pixels, rounded down\n+height = int(height)  # likewise\n"
    )
    assert patch_code_lines(python) == 0


def test_a_rename_of_many_names_is_no_change() -> None:
    """syn #1355 renames 13 punctuation tokens (`Add` to `Plus`), each on its definition and
    its macro arm, and sorts the lines anew: no edit is repeated on three lines, which is what
    `prchain.chains.reading.carried` reads as applied over and over, yet every line only renames."""
    names = [(f"Old{i}", f"New{i}") for i in range(12)]

    def lines(side: int) -> list[str]:
        return [f'    "+{i}" pub struct {pair[side]}/1' for i, pair in enumerate(names)] + [
            f"    [+{i}] => {{ $crate::token::{pair[side]} }};" for i, pair in enumerate(names)
        ]

    assert patch_code_lines(_rust_diff(lines(0), list(reversed(lines(1))))) == 0
    # A name put for another on one line only is the PR's own edit.
    once = [line for line in lines(1) if "struct" in line]
    assert patch_code_lines(_rust_diff(lines(0)[:12], once)) == 12 + 6
    # Several names made one (four builders become one) is no rename: each line is an edit.
    merged = [f"    let builder_{i} = CodeBuilder::new();" for i in range(4)] * 1
    one = ["    let builder = CodeBuilder::new();"]
    uses = [f"    builder_{i}.push(line);" for i in range(4)]
    assert patch_code_lines(_rust_diff(merged + uses, one + ["    builder.push(line);"])) > 4


def test_the_repositorys_own_tooling_is_no_substance(engine: Engine) -> None:
    """Round 36: hatch #545 writes a coverage report script under `scripts/`, #552 splits it in
    two; both judges called both thin. Its lines count for line lineage, not for a stage."""
    for path in ("scripts/report_coverage.py", "hack/verify_codegen.go", "script/release.rb"):
        assert counts_as_code(path) and not counts_as_substance(path), path
        assert patch_code_lines(file_diff(path, 1, 30)) == 0, path
    # Only at the root: a package's own `scripts` module is its code.
    for path in ("src/hatch/scripts/run.py", "scripts.py"):
        assert counts_as_substance(path), path
    tooling = file_diff("scripts/report_coverage.py", 1, 40)
    _assert_middle_is_no_stage(engine, ["scripts/report_coverage.py"], tooling)


def test_tool_configuration_in_code_files_and_dot_directories_is_config() -> None:
    """Round 37: TanStack query #5579 turns each `.eslintrc` into `.eslintrc.cjs` and #5632 edits
    them; astro #15492 and #15493 rework an issue-triage script in `.flue/workflows/`; streamlit
    #954 is a release in the making. Each stage was judged thin."""
    for path in (
        ".eslintrc.cjs",
        "packages/query-core/.eslintrc.cjs",
        "lib/.babelrc",
        ".mocharc.js",
    ):
        assert is_config_path(path) and not counts_as_code(path), path
    for path in ("eslint.config.mjs", "prettier.config.js", ".flue/workflows/issue-triage.ts"):
        assert is_config_path(path) and not counts_as_code(path), path
        assert patch_code_lines(file_diff(path, 1, 30)) == 0, path
    # A dot directory inside the tree, a module named like a tool, and a build's own config stay.
    for path in ("src/.hidden/parse.py", "src/rc.ts", "src/npmrc.ts", "vite.config.ts"):
        assert counts_as_code(path), path


def test_a_root_deps_directory_is_vendored() -> None:
    """Round 37: redis #10606 and #10755 sync `deps/hdr_histogram`, judged thin and not
    dependent; redis keeps jemalloc and Lua there too."""
    assert not counts_as_code("deps/hdr_histogram/hdr_histogram.c")
    assert patch_code_lines(file_diff("deps/lua/src/lapi.c", 1, 30)) == 0
    assert counts_as_code("src/deps/resolve.c") and counts_as_code("deps.c")


def test_changelog_fragments_are_docs(engine: Engine) -> None:
    """Round 38: restic #5102 rewords four entries under `changelog/unreleased/` that #5098
    wrote; the files have no suffix, and were read as code. Both judges called both thin."""
    for path in (
        "changelog/unreleased/issue-4004",
        "newsfragments/1234.feature",
        "news/8812.bugfix",
        "Misc/NEWS.d/next/Library/2024-01-01.gh-issue-1.rst",
    ):
        assert is_doc_path(path) and not counts_as_code(path), path
        assert patch_code_lines(file_diff(path, 1, 30)) == 0, path
    # `news` and `changes` only at the root: elsewhere they name packages of code.
    for path in ("src/news/feed.py", "pkg/changes/diff.go"):
        assert counts_as_code(path) and not is_doc_path(path), path
    store = StoreBuilder(engine)
    store.pr(1, ["changelog/unreleased/pull-5047", "changelog/unreleased/issue-5050"], lines=30)
    store.pr(2, ["internal/backend/azure.go"], lines=30)
    store.write()
    summary = build_chains(ChainsConfig(), engine)
    assert summary.graph.filtered.removed["docs_only"] == 1


def test_certificates_and_keys_are_no_code(engine: Engine) -> None:
    """Round 39: webpack-dev-server #572 made the development server's certificates again after
    #436 had, and the two were linked through the lines of `ssl/server.crt`; both judges: not
    dependent, both stages thin."""
    for path in ("ssl/server.crt", "ssl/ca.key", "test/fixtures/ca.pem", "keys/release.asc"):
        assert not counts_as_code(path), path
        assert patch_code_lines(file_diff(path, 1, 30)) == 0, path
    for path in ("src/key.rs", "lib/crt.c", "pkg/sig/verify.go"):
        assert counts_as_code(path), path
    files = ["ssl/server.crt", "ssl/server.key", "ssl/ca.pem"]
    _assert_middle_is_no_stage(engine, files, "".join(file_diff(path, 2, 40) for path in files))


def test_a_release_in_progress_is_a_release() -> None:
    for title in ("WIP Release 0.53.0", "[WIP] Release v1.2.0", "Draft: release 2.0.1"):
        assert RELEASE_TITLE.match(title), title
    for title in ("WIP: add a pills widget", "Wipe the cache on release 1.2"):
        assert not RELEASE_TITLE.match(title), title


def test_release_preparation_without_a_version_is_a_release() -> None:
    """Round 38: restic #5098, "Prepare patch release", bundles backported fixes and changelog
    entries; both judges called it thin."""
    for title in ("Prepare patch release", "Prepare for release", "Preparing the next release"):
        assert is_release(title), title
    for title in ("Prepare release workflow for signing", "Prepare for releasing from CI"):
        assert not is_release(title), title


def _comment_only(lines: int) -> str:
    body = "".join(f"+    # note {i} about the parser\n" for i in range(lines))
    return (
        "diff --git a/src/core.py b/src/core.py\n--- a/src/core.py\n+++ b/src/core.py\n"
        f"@@ -1,2 +1,{2 + lines} @@\n def parse(text):\n{body}     return text\n"
    )


def _assert_middle_is_no_stage(engine: Engine, files: list[str], diff: str) -> None:
    """#1 ← #2 ← #3 stacked, and #3 also on #1, where #2 changes `files` by `diff` (40 lines by
    the file counts): #2 is no stage, so the one chain is #1 ← #3 and #2's links are dropped."""
    store = StoreBuilder(engine)
    store.pr(1, ["src/core.py"], lines=40)
    store.pr(2, files, lines=40)
    store.patches[-1]["diff"] = diff
    store.pr(3, ["src/core.py"], lines=40)
    # Stack wording: the links stand without shared lines, so the stage rule is what drops them.
    store.ref(2, 1, "follow_up", evidence="Stacked on #1")
    store.ref(3, 2, "follow_up", evidence="Stacked on #2")
    store.ref(3, 1, "follow_up", evidence="Also builds on #1")
    store.write()
    summary = build_chains(ChainsConfig(), engine)
    with Session(engine) as session:
        signatures = list(session.scalars(select(Chain.signature)))
        dropped = {
            (link.newer_pr_id, link.older_pr_id): link.rule
            for link in session.scalars(select(ChainLink))
        }
    pid = store.pr_id
    assert signatures == [f"{pid(1)}-{pid(3)}"]
    assert summary.graph.filtered.removed["stage_below_substance"] == 1
    assert dropped[pid(2), pid(1)] == dropped[pid(3), pid(2)] == "stage_below_substance"
    assert dropped[pid(3), pid(1)] is None


def test_a_comment_only_stage_is_no_stage(engine: Engine) -> None:
    _assert_middle_is_no_stage(engine, ["src/core.py"], _comment_only(40))


def test_an_end_that_can_be_no_stage_decides_a_dropped_link_too(engine: Engine) -> None:
    """A 3-line follow-up that the link rules drop (a plain mention, no shared line) is dropped
    for its size, as a filtered PR's link is, and so is a comment-only one, lexed for it: the link
    rules' drops keep the pairs that could have been chained, and the rule they applied stays in
    `why`."""
    store = StoreBuilder(engine)
    store.pr(1, ["src/core.py"], lines=40)
    store.pr(2, ["src/other.py"], lines=3)
    store.pr(3, ["src/other.py"], lines=40)
    store.pr(4, ["src/core.py"], lines=40, state="open", merged_at=None)  # never merged
    store.pr(5, ["src/core.py"], lines=40)
    store.patches[-1]["diff"] = _comment_only(40)  # 40 lines by file counts, no code (wgpu #3576)
    store.ref(5, 1, "mention", evidence="See #1.")
    store.ref(2, 1, "mention", evidence="See #1.")
    store.ref(3, 1, "mention", evidence="See #1.")
    store.ref(4, 1, "mention", evidence="See #1.")  # an unmerged end is no node: its own rule
    store.write()
    summary = build_chains(ChainsConfig(), engine)
    with Session(engine) as session:
        links = {
            (link.newer_pr_id, link.older_pr_id): link
            for link in session.scalars(select(ChainLink))
        }
    pid = store.pr_id
    thin, full = links[pid(2), pid(1)], links[pid(3), pid(1)]
    assert (thin.rule, thin.drop_kind) == ("stage_below_substance", "stage")
    assert thin.why.endswith(
        "the link rules dropped it too (plain_mention_without_shared_lines); no stage: #2: 3 lines"
        " of code, under 12"
    )
    assert (full.rule, full.drop_kind) == ("plain_mention_without_shared_lines", "link")
    assert links[pid(4), pid(1)].rule == "pr_filtered_or_not_mined"
    assert links[pid(5), pid(1)].rule == "stage_below_substance"
    assert summary.graph.dropped == {
        "stage_below_substance": 2,
        "plain_mention_without_shared_lines": 1,
        "pr_filtered_or_not_mined": 1,
    }


def _reverse(diff: str) -> str:
    """The diff that undoes `diff` (one hunk, as `file_diff` writes it)."""
    out = []
    for line in diff.splitlines(keepends=True):
        if line.startswith("@@"):
            old, new = line.split()[1:3]
            line = f"@@ -{new[1:]} +{old[1:]} @@\n"
        elif line[:1] in "+-" and not line.startswith(("+++", "---")):
            line = {"+": "-", "-": "+"}[line[0]] + line[1:]
        out.append(line)
    return "".join(out)


def test_a_stage_that_only_deletes_is_no_stage_but_a_revert_is(engine: Engine) -> None:
    """opentelemetry-collector #2012 removes a whole processor: 547 lines of code, each found, none
    written. A revert deletes only too, and stays the middle stage of a re-land."""
    deleted = _reverse(file_diff("src/core.py", 7, lines=40))
    assert (patch_code_change(deleted).added, patch_code_lines(deleted)) == (0, 20)
    _assert_middle_is_no_stage(engine, ["src/core.py"], deleted)
    with Session(engine) as session:
        why = session.scalars(select(ChainLink.why).where(ChainLink.rule.is_not(None))).first()
    assert why is not None and why.endswith(
        "no stage: #2: only deletes code (40 lines), writes none"
    )
    # A minimum of 0 turns the substance rules off, this one too; a revert stays a stage.
    only_deletes = {7: CodeChange(0, 40)}
    assert no_stages(only_deletes, 0) == {} and no_stages(only_deletes, 12, reverting={7}) == {}
    assert no_stages(only_deletes, 12) == {7: "only deletes code (40 lines), writes none"}


def _chain_labels(engine: Engine) -> dict[str, str | None]:
    """Each built chain's signature and label."""
    with Session(engine) as session:
        return {c.signature: c.label for c in session.scalars(select(Chain))}


def test_a_revert_that_only_deletes_stays_the_middle_of_a_reland(engine: Engine) -> None:
    store = StoreBuilder(engine)
    store.pr(11, ["src/b.py"], lines=40)
    store.pr(12, ["src/b.py"], title='Revert "Change 11"', lines=40)
    store.patches[-1]["diff"] = _reverse(store.patches[0]["diff"])  # 40 lines out, none in
    store.pr(13, ["src/b.py"], title="Change 11 again, with the fix", lines=40)
    store.patches[-1]["diff"] = store.patches[0]["diff"]  # writes back what the revert removed
    store.ref(12, 11, "reverts", evidence='Revert "Change 11 (#11)"')
    store.ref(13, 12, "mention", evidence="Re-lands #11, reverted in #12, with the crash fixed.")
    store.write()
    build_chains(ChainsConfig(revert_stages=True), engine)
    chains = _chain_labels(engine)
    pid = store.pr_id
    assert chains == {f"{pid(11)}-{pid(12)}-{pid(13)}": "revert_reland"}


def test_a_revert_pair_is_not_a_task_but_a_reland_is_kept_and_labelled(engine: Engine) -> None:
    store = StoreBuilder(engine)
    store.pr(1, ["src/a.py"])
    store.pr(2, ["src/a.py"], title='Revert "Change 1"')
    store.ref(2, 1, "reverts", evidence='Revert "Change 1 (#1)"')
    store.pr(11, ["src/b.py"])
    store.pr(12, ["src/b.py"], title='Revert "Change 11"')
    store.pr(13, ["src/b.py"], title="Change 11 again, with the fix")
    store.ref(12, 11, "reverts", evidence='Revert "Change 11 (#11)"')
    store.ref(13, 12, "mention", evidence="Re-lands #11, reverted in #12, with the crash fixed.")
    # Its base no longer holds #11: the re-land builds on the revert, never on #11 directly.
    store.ref(13, 11, "mention", evidence="Re-apply #11 without the crash.")
    store.write()
    summary = build_chains(ChainsConfig(revert_stages=True), engine)
    chains = _chain_labels(engine)
    with Session(engine) as session:
        rules = {(k.newer_pr_id, k.older_pr_id): k.rule for k in session.scalars(select(ChainLink))}
    pid = store.pr_id
    assert chains == {f"{pid(11)}-{pid(12)}-{pid(13)}": "revert_reland"}
    assert rules[pid(13), pid(11)] == "older_reverted_before" and rules[pid(13), pid(12)] is None
    assert summary.chains_dropped["revert_pair"] == 1
    kept = build_chains(ChainsConfig(revert_pairs=True), engine)
    assert kept.chains_dropped["revert_pair"] == 0 and kept.total == 2


def test_a_chain_is_cut_where_a_stage_reverts_the_one_before(engine: Engine) -> None:
    """Round 36: aiohttp #6143 reverts the llhttp switch #5364 and #6144 lands it again; httpx
    #423 reverts #369 and #484 builds on what it restored. Both judges called each revert stage
    thin. By default the chain is cut at the revert and keeps its longer side."""
    store = StoreBuilder(engine)
    prs = {
        11: ("src/b.py", "Change 11", None),
        12: ("src/b.py", 'Revert "Change 11"', ("reverts", 'Revert "Change 11 (#11)"')),
        13: ("src/b.py", "Change 11 again, with the fix", ("mention", "Re-lands #11, reverted")),
        21: ("src/c.py", "Change 21", None),
        22: ("src/c.py", "Extend 21", ("follow_up", "Follow-up to #21")),
        23: ("src/c.py", "Extend 22", ("follow_up", "Follow-up to #22")),
        24: ("src/c.py", 'Revert "Extend 22"', ("reverts", 'Revert "Extend 22 (#23)"')),
        25: ("src/c.py", "Build on the revert", ("follow_up", "Follow-up to #24")),
    }
    for number, (path, title, _) in prs.items():
        store.pr(number, [path], title=title)
    for number, (_, _, ref) in prs.items():
        if ref is not None:  # each refers to the PR before it
            store.ref(number, number - 1, ref[0], evidence=ref[1])
    store.write()
    summary = build_chains(ChainsConfig(), engine)
    chains = _chain_labels(engine)
    pid = store.pr_id
    # "A, revert A, A again" leaves nothing; #21 ← #22 ← #23 ← revert ← #25 keeps its older side.
    assert chains == {f"{pid(21)}-{pid(22)}-{pid(23)}": None}
    assert summary.chains_dropped["revert_stage"] == 1
    assert summary.links_in_dropped["revert_stage_cut"] == 2
    kept = build_chains(ChainsConfig(revert_stages=True), engine)
    assert kept.chains_dropped["revert_stage"] == 0
    labels = _chain_labels(engine)
    assert labels[f"{pid(11)}-{pid(12)}-{pid(13)}"] == "revert_reland"


def test_a_trailing_revert_is_cut_from_a_longer_chain(engine: Engine) -> None:
    store = StoreBuilder(engine)
    store.pr(1, ["src/a.py"])
    store.pr(2, ["src/a.py"])
    store.pr(3, ["src/a.py"], title='Revert "Change 2"')
    store.ref(2, 1, "follow_up", evidence="Follow-up to #1")
    store.ref(3, 2, "reverts", evidence='Revert "Change 2 (#2)"')
    store.write()
    summary = build_chains(ChainsConfig(), engine)
    with Session(engine) as session:
        chain = session.scalars(select(Chain)).one()
    assert chain.signature == f"{store.pr_id(1)}-{store.pr_id(2)}" and chain.label is None
    assert summary.links_in_dropped["trailing_revert_cut"] == 1


def test_a_chain_does_not_start_with_a_revert(engine: Engine) -> None:
    """A revert whose reverted PR is no stage of the chain ("Rollback #8204", then the roll
    forward) asks only to undo what the agent never saw: the revert is cut from the front."""
    store = StoreBuilder(engine)
    store.pr(1, ["docs/a.md"], lines=40)  # reverted, but no stage: a docs-only PR
    store.pr(2, ["src/a.py"], title='Revert "Change 1"')
    store.pr(3, ["src/a.py"], title="Roll forward #1 with the fix")
    store.ref(2, 1, "reverts", evidence='Revert "Change 1 (#1)"')
    store.ref(3, 2, "follow_up", evidence="Rolls forward the change #2 rolled back")
    store.pr(11, ["src/b.py"])
    store.pr(12, ["src/b.py"], title='Revert "Change 11"')
    store.pr(13, ["src/b.py"], title="Rework b")
    store.pr(14, ["src/b.py"], title="Rework b further")
    store.ref(12, 11, "reverts", evidence='Revert "Change 11 (#11)"')
    store.ref(13, 12, "follow_up", evidence="Follow-up to #12")
    store.ref(14, 13, "follow_up", evidence="Follow-up to #13")
    store.write()
    summary = build_chains(ChainsConfig(max_len=2), engine)
    with Session(engine) as session:
        signatures = {c.signature for c in session.scalars(select(Chain))}
    pid = store.pr_id
    # #11 ← #12 is "A, revert A" and #12 ← #13 starts with a revert: only #13 ← #14 is a task.
    assert signatures == {f"{pid(13)}-{pid(14)}"}
    assert summary.chains_dropped["leading_revert"] == 2  # #2 ← #3 and #12 ← #13
    assert summary.chains_dropped["revert_pair"] == 1
    # #11 ← #12 ← #13 ← #14: a re-land chain where revert stages are kept.
    longer = build_chains(ChainsConfig(revert_stages=True), engine)
    assert longer.links_in_dropped["leading_revert_cut"] == 0
    labels = _chain_labels(engine)
    assert labels[f"{pid(11)}-{pid(12)}-{pid(13)}-{pid(14)}"] == "revert_reland"


def test_a_hunk_inside_a_long_docstring_is_read_from_the_whole_file(tmp_path: Path) -> None:
    doc = "".join(f"    Line {i} of a long explanation.\n" for i in range(20))
    before = f'def area(w, h):\n    """Area.\n\n{doc}    """\n    return w * h\n'
    after = before.replace("Line 12 of", "Line twelve of").replace("Line 13 of", "Line 13, of")
    repo = History(tmp_path / "docs")
    base = repo.commit("Initial commit", {"src/geo.py": before})
    head = repo.pr(1, "Reword the docs", {"src/geo.py": after})
    diff = git(repo.path, "diff", base, head) + "\n"
    assert "@@ -13," in diff  # the hunk starts well inside the docstring
    # Read alone, the hunk looks like code: "Line twelve" in and "Line 12" out, and "Line 13"
    # out (its added twin only gains a comma: counted once); removed lines count half.
    assert patch_code_lines(diff) == 1 + 1
    assert patch_code_lines(diff, str(repo.path)) == 0
    code = after.replace("return w * h", "return abs(w * h)")
    head = repo.pr(2, "Areas are positive", {"src/geo.py": code})
    assert patch_code_lines(git(repo.path, "diff", "HEAD~1", head) + "\n", str(repo.path)) == 2


def test_only_a_hunk_that_cuts_through_a_multi_line_string_lexes_the_whole_file() -> None:
    """Lexing a large file whole for every hunk took 20 of the 24 minutes of mypy's build. A hunk
    that begins or ends inside a string spanning lines needs it; any other lexes alone."""
    text = (
        'HELP = """Usage:\n    run it\n"""\n'  # lines 1-3: a string over three lines
        'x = \'"""\'  # a quoted quote, and """ in a comment\n'  # 4: opens nothing
        "# it's a comment\n"  # 5
        'def f():\n    """One line."""\n    return f"""{x}\n    """\n'  # 6-9: an f-string over 8-9
        "tail = 1\n"  # 10
    )
    whole = WholeFile(text, lexer_for("src/tool.py"))
    assert multiline_strings(text) == [(1, 3), (8, 9)]
    assert not whole.cut(4, 4) and not whole.cut(5, 2) and not whole.cut(10, 1)
    assert whole._flags is None  # nothing lexed whole yet
    assert whole.cut(2, 3) and whole.cut(7, 2) and whole.cut(9, 2)
    # A side that ends on a string's last line may end inside it (a diff's last hunk reads one
    # more empty line than the file has there): it is lexed whole.
    assert whole.cut(1, 5) and whole.cut(6, 4)
    # A triple quote left open runs to the end of the file.
    assert multiline_strings('a = 1\nb = """open\nc = 2\n') == [(2, 4)]
    # Where no hunk cuts a string, reading the hunk alone gives what the whole file gives.
    lines = text.split("\n")
    assert code_line_flags(lines[3:7], whole.lexer) == whole.flags[3:7]


def test_a_last_hunk_ending_inside_a_docstring_is_read_from_the_whole_file(tmp_path: Path) -> None:
    """dask #1681 deletes `list2` and rewords the docstring of `quote` below it: the diff's one
    hunk starts above the docstring and stops a line before its closing quotes. Read alone, the
    reworded lines looked like code."""
    before = (
        "def list2(L):\n    return list(L)\n\n\ndef quote(x):\n"
        '    """Keep a value literal.\n\n    Remark one.\n    Remark two.\n    Remark three.\n'
        '    >>> quote(1)\n    """\n'
    )
    after = before.split("\n\n\n", 1)[1].replace("Remark one", "Remark 1")
    repo = History(tmp_path / "quote")
    base = repo.commit("Initial commit", {"src/core.py": before})
    head = repo.pr(1, "Drop list2", {"src/core.py": after})
    diff = git(repo.path, "diff", base, head) + "\n"
    assert diff.count("@@ -") == 1 and diff.rstrip("\n").endswith("     >>> quote(1)")
    assert patch_code_lines(diff) == 2 + 1  # alone: the reworded line, out and in, as code
    # The whole file: two lines of code removed, none added (counted half).
    assert patch_code_lines(diff, str(repo.path)) == 1


def test_generated_files_and_minified_lines_are_no_code(tmp_path: Path) -> None:
    """napi's bindings say "auto-generated" at the top, arrow-rs marks its protocol code
    `linguist-generated`, and a rebuilt bundle is one minified line: none is code anyone wrote."""
    exports = "".join(f"module.exports.fn{i} = nativeBinding.fn{i}\n" for i in range(30))
    protocol = "".join(f"pub const FIELD_{i}: u32 = {i};\n" for i in range(30))
    repo = History(tmp_path / "gen")
    base = repo.commit(
        "Initial commit",
        {
            ".gitattributes": "proto/*.rs linguist-generated\n",
            "src/binding.js": "/* eslint-disable */\n/* auto-generated by NAPI-RS */\n" + exports,
            "proto/flight.rs": protocol,
            "src/lib.rs": "pub fn parse() {}\n",
        },
    )
    head = repo.pr(
        1,
        "Expose the parser",
        {
            "src/binding.js": "/* eslint-disable */\n/* auto-generated by NAPI-RS */\n"
            + exports.replace("exports.fn25 ", "exports.parse "),
            "src/binding.d.ts": "/* auto-generated by NAPI-RS */\n"
            + "".join(f"export declare function fn{i}(): void\n" for i in range(20)),
            "proto/flight.rs": protocol.replace("FIELD_3", "FIELD_THREE"),
            "src/lib.rs": "pub fn parse(text: &str) -> usize {\n    text.len()\n}\n",
            "scripts/bundle.js": "function a(e,t){" + "e=t+1;" * 200 + "}\n",
        },
    )
    clone = str(repo.path)
    diff = git(clone, "diff", base, head) + "\n"
    with Attributes(clone) as attributes:
        assert attributes.generated(["proto/flight.rs", "src/lib.rs"]) == {"proto/flight.rs"}
        # lib.rs: one line removed, three added. The binding's hunk is far from its mark, the
        # new declarations show theirs.
        assert patch_code_lines(diff, clone, attributes) == 4
        copy = attributes._file
    assert copy is not None and not Path(copy).exists()
    # Without the attributes the protocol's two changed lines count; without the clone the
    # binding's too (its hunk does not show the file's first lines); the bundle never counts.
    assert patch_code_lines(diff, clone) == 4 + 1  # one line in, one out
    assert patch_code_lines(diff) == 5 + 2
    assert Attributes(None).generated(["proto/flight.rs"]) == set()


def test_a_file_whose_opening_comment_names_its_generator_is_no_code(tmp_path: Path) -> None:
    """mitmproxy's web filters (#1940, #1947, #1949, #1957, #2101) each add a rule to a PEG.js
    grammar and commit the parser PEG.js writes from it, which opens " * Generated by PEG.js
    0.9.0.": read as code, its renumbered states made each filter a stage and a code link to the
    last. A Django migration opens "# Generated by Django"; prose that says "generated by" is no
    mark."""
    states = "".join(f"  var peg$c{i} = peg$literalExpectation({i}, false);\n" for i in range(30))
    parser = "module.exports = (function() {\n  /*\n   * Generated by PEG.js 0.9.0.\n   */\n"
    told = "/* Tokens generated by the lexer are kept. */\n"
    repo = History(tmp_path / "filters")
    base = repo.commit(
        "Initial commit",
        {"web/filt.js": parser + states, "web/filters.js": told + "var marked = 1;\n"},
    )
    head = repo.pr(
        1,
        "Add the marked filter",
        {
            "web/filt.js": parser + states.replace("(2", "(9"),
            "web/filters.js": told + "var marked = 2;\nvar http = 3;\n",
        },
    )
    clone = str(repo.path)
    diff = git(clone, "diff", base, head) + "\n"
    # filters.js: one line out, two in; the parser's eleven renumbered states are none.
    assert patch_code_lines(diff, clone) == 3
    assert marked_generated(["# Generated by Django 4.2.1 on 2023-05-01 10:00"])
    assert not marked_generated(["# values generated by the server are kept"])
    assert marked_generated(["/* parser generated by jison 0.4.18 */"])
    assert not marked_generated(["// ids generated by uuid v4 are random"])


def test_a_temporal_chain_needs_no_reference_between_its_stages(engine: Engine) -> None:
    # Neighbours by date and file only: no edge of the reference graph joins them, and the revert
    # rule asked the graph for one (a KeyError before).
    store = StoreBuilder(engine)
    store.pr(1, ["src/a.py"])
    store.pr(2, ["src/a.py"])
    store.write()
    summary = build_chains(ChainsConfig(), engine, strategy="temporal", min_len=2, max_len=2)
    with Session(engine) as session:
        signatures = [c.signature for c in session.scalars(select(Chain))]
    assert summary.total == 1 and signatures == [f"{store.pr_id(1)}-{store.pr_id(2)}"]


def test_blobs_read_through_a_running_reader_are_those_of_one_batch(tmp_path: Path) -> None:
    """A build reads each PR's blobs through one running `git cat-file`: the same texts as one
    batch of them, missing and ambiguous names left out, bytes that are no UTF-8 replaced."""
    repo = History(tmp_path / "src")
    first = repo.commit("Initial commit", {"a.py": "A = 1\n", "b.py": "B = 2\n"})
    (repo.path / "latin.py").write_bytes(b"name = '\xe9t\xe9'\n")
    second = repo.commit("More", {"a.py": "A = 3\n"})
    blobs = [
        git(repo.path, "rev-parse", f"{rev}:{path}")
        for rev, path in ((first, "a.py"), (second, "a.py"), (second, "latin.py"))
    ]
    names = [*blobs, blobs[0], f"{second}:b.py", "0" * 40, "deadbeef", blobs[1][:4]]
    reader = CatFile(str(repo.path))
    try:
        read = read_blobs(str(repo.path), names, reader)
        assert read == read_blobs(str(repo.path), names)
        assert read_blobs(str(repo.path), names[::-1], reader) == read
    finally:
        reader.close()
    assert read[blobs[1]] == "A = 3\n" and read[f"{second}:b.py"] == "B = 2\n"
    assert read[blobs[2]] == "name = '\ufffdt\ufffd'\n"
    assert "0" * 40 not in read and "deadbeef" not in read
