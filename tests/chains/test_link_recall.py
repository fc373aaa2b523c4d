"""Link recall rules on a real history: the newer PR uses a name the older one brought into the
repository (symbol use), a fix names the regression the older PR caused, and many rewritten lines
outweigh list wording. Each rescue is shown next to the near miss it must not rescue."""

from __future__ import annotations

from pathlib import Path

import pytest

from prchain.chains.config import ChainsConfig
from prchain.chains.evidence.symbols import READ_FILES, code_names, lexed_names, present_at
from prchain.chains.reading.cues import regression_wording
from prchain.chains.reading.substance import lexer_for
from prchain.chains.rules.link_rules import symbols_back
from prchain.store.models import ChainLink
from tests.support.history import History
from tests.support.links import links_by_number, mine_and_build

CORE = "def existing_helper(items):\n    return sorted(items)\n"
REACH = """def reachable_packages(graph, roots):
    seen = set(roots)
    for package in graph:
        seen.update(existing_helper(graph[package]))
    return seen
"""
TABLE = "".join(f"PRIORITY_{i} = weigh_priority(tag_{i}, rank={i})\n" for i in range(12))


def _history(path: Path) -> History:
    repo = History(path)
    repo.commit("Initial commit", {"src/core.py": CORE, "src/tags.py": "TAGS = []\n"})
    repo.pr(1, "Prune unreachable packages", {"src/reach.py": REACH})
    # Another file, no rewritten line: only the call to #1's function ties them.
    repo.pr(
        2,
        "Use reachability in the lock",
        {"src/lock.py": "def lock(graph):\n    return reachable_packages(graph, ['root'])\n"},
        body="Follow-up to #1: use the reachability computation everywhere.",
    )
    # The same wording, but it uses only a name the repository held before #1, and #1's name
    # only in a comment and a string.
    repo.pr(
        3,
        "Sort the export",
        {
            "src/export.py": "def export(items):\n"
            "    # unlike reachable_packages, keep everything\n"
            "    return existing_helper(items), 'reachable_packages'\n"
        },
        body="Follow-up to #1: sort the export too.",
    )
    repo.pr(
        4,
        "Allow fallback on discovery errors",
        {"src/fallback.py": "def fallback(error):\n    return error.kind != 'critical'\n"},
        body="In #1, I broke fallback to the download by throwing a different error kind.",
    )
    repo.pr(5, "Add the tag table", {"src/tags.py": TABLE})
    rewritten = TABLE.replace("rank=", "rank=2 * ")
    repo.pr(6, "Fix the tag table priorities", {"src/tags.py": rewritten}, body="See also #5.")
    # List wording with only one rewritten line stays a sibling.
    repo.pr(
        7,
        "Tweak one tag priority",
        {"src/tags.py": rewritten.replace("tag_0, rank=2 * 0", "tag_0, rank=1")},
        body="See also #5.",
    )
    # The regression wording two months on: too late to be the regression's fix.
    repo.pr(
        8,
        "Quiet discovery errors",
        {"src/quiet.py": "def quiet(error):\n    return None\n"},
        body="In #1, I broke fallback to the download by throwing a different error kind.",
        day=70,
    )
    # A regression noticed months later, fixed in the file the older PR wrote (pydantic #3201,
    # "Small regression in #2231", 232 days on); and the same fix two years on.
    repo.pr(
        9,
        "Keep the roots when the graph is empty",
        {"src/reach.py": REACH + "\n\ndef roots_only(roots):\n    return set(roots)\n"},
        body="Small regression in #1: an empty graph lost its roots.",
        day=200,
    )
    repo.pr(
        10,
        "Keep the roots of a cyclic graph",
        {"src/reach.py": REACH + "\n\ndef roots_only(roots):\n    return frozenset(roots)\n"},
        body="Another regression in #1: a cycle lost its roots.",
        day=800,
    )
    # History, not a bug: "introduced in #N" 100 days on, in #10's file, holds the gap rule.
    repo.pr(
        11,
        "Add ordered roots",
        {
            "src/reach.py": REACH
            + "\n\ndef roots_only(roots):\n    return frozenset(roots)\n"
            + "\n\ndef ordered_roots(roots):\n    return sorted(roots)\n"
        },
        body="Roots only was introduced in #10; this adds an ordered twin.",
        day=900,
    )
    # A one-line fix (and its test), rewritten 200 days on by a PR that only mentions it
    # (rust-analyzer #17813 and #15864): that line is all the code the fix wrote.
    repo.pr(
        12,
        "Sort helper items by their text",
        {
            "src/core.py": CORE.replace("sorted(items)", "sorted(items, key=str)"),
            "tests/test_core.py": "def test_sorts_by_text():\n    assert existing_helper([2, 10]) == [10, 2]\n",
        },
        day=1010,
    )
    repo.pr(
        13,
        "Sort helper items by their repr",
        {"src/core.py": CORE.replace("sorted(items)", "sorted(items, key=repr)")},
        body="See #12.",
        day=1210,
    )
    # The near miss: the older PR wrote two lines of code, the newer one rewrites one of them.
    repo.pr(
        14,
        "Name the helper's order",
        {
            "src/core.py": CORE.replace("sorted(items)", "sorted(items, key=repr, reverse=False)")
            + 'ORDER_NAME = "natural order"\n'
        },
        day=1220,
    )
    repo.pr(
        15,
        "Reverse the helper's order",
        {
            "src/core.py": CORE.replace("sorted(items)", "sorted(items, key=repr, reverse=True)")
            + 'ORDER_NAME = "natural order"\n'
        },
        body="See #14.",
        day=1420,
    )
    return repo


@pytest.fixture(scope="module")
def links(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple[int, int], ChainLink]:
    root = tmp_path_factory.mktemp("recall")
    repo = _history(root / "recall")
    config = ChainsConfig(corroboration_signs=0, min_chain_code_lines=0)
    return links_by_number(mine_and_build(repo.path, root / "store.db", "acme/recall", config))


def test_using_a_name_the_older_pr_introduced_keeps_the_link(links: dict) -> None:
    used = links[2, 1]
    assert (used.kept, used.symbols, used.overlap) == (True, 1, 0.0)
    assert "uses 1 name(s) the older one introduced (reachable_packages)" in used.why
    # An old name, and #1's name in a comment and a string, are no use of #1.
    near = links[3, 1]
    assert (near.kept, near.symbols) == (False, 0)


def test_a_named_regression_soon_after_keeps_the_link(links: dict) -> None:
    assert (links[4, 1].kept, links[4, 1].overlap) == (True, 0.0)
    assert links[8, 1].kept is False  # the same words 70 days on, in a file #1 never touched


def test_a_named_regression_in_the_older_prs_file_keeps_the_link_over_the_gap(
    links: dict,
) -> None:
    late = links[9, 1]
    assert (late.kept, late.lineage) == (True, 0)
    assert late.gap_days > ChainsConfig().max_gap_days
    assert (links[10, 1].kept, links[10, 1].rule) == (False, "gap_too_long")  # two years on
    history = links[11, 10]
    assert (history.kept, history.rule, history.lineage) == (False, "gap_too_long", 0)


def test_rewriting_all_the_code_of_a_small_pr_keeps_the_link_over_the_gap(links: dict) -> None:
    whole = links[13, 12]
    assert (whole.kept, whole.evidence_class, whole.lineage) == (True, "medium", 1)
    assert whole.gap_days > 2 * ChainsConfig().max_gap_days
    assert "all the code the older PR wrote" in whole.why
    part = links[15, 14]  # one of two code lines
    assert (part.kept, part.lineage, part.rule) == (False, 1, "plain_mention_without_shared_lines")


def test_many_rewritten_lines_outweigh_list_wording(links: dict) -> None:
    assert (links[6, 5].kept, links[6, 5].evidence_class, links[6, 5].lineage) == (
        True,
        "parallel",
        12,
    )
    assert (links[7, 5].kept, links[7, 5].rule) == (False, "parallel_wording")


def test_a_name_the_newer_pr_defines_itself_is_no_use(tmp_path: Path) -> None:
    """networkx #1415 writes an approximate `k_components` beside #1414's exact one, and names
    #1414 only in passing: its own definition of the name uses nothing of #1414's."""
    repo = History(tmp_path / "twins")
    repo.commit("Initial commit", {"src/core.py": CORE})
    repo.pr(
        1,
        "Exact components",
        {"src/exact.py": "def node_components(graph):\n    return [set(graph)]\n"},
    )
    repo.pr(
        2,
        "Approximate components",
        {
            "src/approx.py": "def node_components(graph):\n    return [set(existing_helper(graph))]\n"
        },
        body="An approximation of the components #1 computes exactly.",
    )
    repo.pr(
        3,
        "Report components",
        {"src/report.py": "def report(graph):\n    return len(node_components(graph))\n"},
        body="Reports the components of #1.",
    )
    # arrow-go #574 declares its own local `const maxPreAlloc`, as #557 did: no use of #557's.
    grow = "package buf\n\nfunc Grow(n int) int {\n\tconst maxPreAlloc = 1 << 24\n\treturn min(n, maxPreAlloc)\n}\n"
    repo.pr(4, "Cap the buffer's growth", {"src/grow.go": grow})
    repo.pr(
        5,
        "Cap the map's growth",
        {"src/mapgrow.go": grow.replace("Grow(", "GrowMap(").replace("24", "20")},
        body="Maps need a cap too: #4 gave buffers one.",
    )
    config = ChainsConfig(
        corroboration_signs=0,
        min_chain_code_lines=0,
        min_stage_code_lines=0,
        plain_mention_min_contact=0,
    )
    links = links_by_number(mine_and_build(repo.path, tmp_path / "twins.db", "acme/twins", config))
    twin, user, copy = links[2, 1], links[3, 1], links[5, 4]
    assert (twin.kept, twin.symbols, twin.rule) == (False, 0, "plain_mention_without_shared_lines")
    assert (user.kept, user.symbols) == (True, 1)
    assert (copy.kept, copy.symbols, copy.rule) == (False, 0, "plain_mention_without_shared_lines")


def test_names_prose_held_are_new_to_the_code_and_tests_use_them(tmp_path: Path) -> None:
    """gravitino's design document named the privileges before #10811 brought them into the
    code, and #10882 uses them only in its tests: the names are #10811's, and a test that calls
    them needs #10811. A name some code held before is nobody's new name, in tests or not."""
    repo = History(tmp_path / "prose")
    repo.commit(
        "Initial commit",
        {
            "src/core.py": CORE,
            "docs/design.md": "# Functions\n\nA `RegisterFunction` privilege guards `register`.\n",
            "src/legacy.py": "def audit_event(name):\n    return name\n",
        },
    )
    repo.pr(
        1,
        "Function privileges",
        {
            "src/privileges.py": "class RegisterFunction:\n    pass\n\n\n"
            "def guard(name):\n    return audit_event(name)\n"
        },
    )
    repo.pr(
        2,
        "Authorize function registration",
        {
            "tests/test_functions.py": "def test_register():\n"
            "    assert RegisterFunction() is not None\n"
        },
        body="Part of #1's function privileges.",
    )
    repo.pr(
        3,
        "Audit function events",
        {"tests/test_audit.py": "def test_audit():\n    assert audit_event('x') == 'x'\n"},
        body="Part of #1's function privileges.",
    )
    _second_uses_and_third_holds(repo, tmp_path / "prose.db", "RegisterFunction")


def _second_uses_and_third_holds(repo: History, db: Path, name: str) -> None:
    """PR 2 uses `name`, which PR 1 brought into the code, and keeps its link to PR 1; PR 3
    uses only a name the code held before PR 1, and its link is dropped."""
    config = ChainsConfig(
        corroboration_signs=0,
        min_chain_code_lines=0,
        min_stage_code_lines=0,
        plain_mention_min_contact=0,
    )
    links = links_by_number(mine_and_build(repo.path, db, f"acme/{repo.path.name}", config))
    used, held = links[2, 1], links[3, 1]
    assert (used.kept, used.symbols) == (True, 1)
    assert f"({name})" in used.why
    assert (held.kept, held.symbols) == (False, 0)


def test_a_name_only_comments_and_strings_held_is_new_to_the_code(tmp_path: Path) -> None:
    """delta-rs named `IsolationLevel` in a commented-out sketch before #1206 brought the type
    in, and #1207 uses it: the name is #1206's all the same. A name some code held is nobody's,
    wherever else it also stood."""
    repo = History(tmp_path / "sketch")
    repo.commit(
        "Initial commit",
        {
            "src/core.py": CORE,
            "src/commit.py": "def commit(table):\n"
            "    # TODO: check IsolationLevel before writing\n"
            "    return table, 'IsolationLevel'\n",
            "src/legacy.py": "def conflict_window(table):\n    return table.version\n",
        },
    )
    repo.pr(
        1,
        "Isolation levels",
        {
            "src/isolation.py": "class IsolationLevel:\n    SERIALIZABLE = 'serializable'\n\n\n"
            "def window(table):\n    return conflict_window(table)\n"
        },
    )
    repo.pr(
        2,
        "Record the isolation level",
        {"src/info.py": "def info(table):\n    return IsolationLevel(), table\n"},
        body="Uses the levels of #1.",
    )
    repo.pr(
        3,
        "Window of conflicts",
        {"src/window.py": "def span(table):\n    return conflict_window(table) + 1\n"},
        body="Uses the levels of #1.",
    )
    _second_uses_and_third_holds(repo, tmp_path / "sketch.db", "IsolationLevel")


def test_presence_is_read_past_comments_strings_and_docstrings(tmp_path: Path) -> None:
    """Which names the code holds, each file read as git grep finds it: a comment, a string, a
    docstring's inner line and a block comment hold no code; a line that starts or ends a
    docstring may hold code beside it; a name in more files than are read counts unread."""
    repo = History(tmp_path / "presence")
    python = (
        "# OnlyInComment is to come\n"
        "LABEL = 'OnlyInString'\n"
        'def f():\n    """Build it.\n\n    OnlyInDocstring, later.\n    """\n'
        '    return BesideDocstring("""text\n    more""")\n'
        "REAL = InCodeToo\n"
    )
    c_source = "/* OnlyInBlock\n   and OnlyInBlockToo */\nint InC = 1; // OnlyInLineComment\n"
    # No block comment in a Dockerfile: its `lists/*` opens none.
    docker = "RUN rm -rf /var/lib/apt/lists/*\nENV InDocker=1\n"
    files = {"src/a.py": python, "src/b.c": c_source, "Dockerfile": docker}
    files["data/x.unknownext"] = "InUnknownFile\n"
    files |= {f"src/many_{i}.py": "# ManyFiles\n" for i in range(READ_FILES + 1)}
    repo.commit("Initial commit", files)
    names = {
        "OnlyInComment", "OnlyInString", "OnlyInDocstring", "BesideDocstring", "InCodeToo",
        "OnlyInBlock", "OnlyInBlockToo", "InC", "OnlyInLineComment", "InUnknownFile",
        "ManyFiles", "Nowhere", "InDocker",
    }  # fmt: skip
    present = present_at(str(repo.path), "HEAD", names)
    code = {"BesideDocstring", "InCodeToo", "InC", "InDocker", "InUnknownFile", "ManyFiles"}
    assert present == code


def test_words_and_names_the_rules_read() -> None:
    assert regression_wording("In #10716, I broke fallback to the index.", 10716) == "broke"
    assert regression_wording("This regressed in #12 when we moved it.", 12) == "regressed"
    assert regression_wording("Follow-up to #12. It broke nothing.", 12) == ""  # other sentence
    assert regression_wording("Broken by #12 and never fixed", 12) == "Broken by"
    diff = (
        "diff --git a/src/a.rs b/src/a.rs\n--- a/src/a.rs\n+++ b/src/a.rs\n@@ -1 +1,3 @@\n"
        " fn x() {}\n+// reachable_markers in a comment\n"
        '+pub fn simplify_tree(tree: &MarkerTree) -> usize { let s = "string_name"; tree.len() }\n'
    )
    assert code_names(diff) == ({"simplify_tree", "MarkerTree"}, set(), {"simplify_tree"})
    # A test file's names are the test's, apart from the code's; its declarations are its own.
    test_diff = diff.replace("src/a.rs", "tests/a.rs")
    assert code_names(test_diff) == (set(), {"simplify_tree", "MarkerTree"}, {"simplify_tree"})
    # A hunk that begins inside a docstring: its words are no names once the new file shows
    # where the string spans (networkx #816's "Kleitman").
    new_file = 'def realize(sequence):\n    """Build it.\n\n    After Kleitman and Wang.\n    """\n    return valid_sequence(sequence)\n'
    docstring_diff = (
        "diff --git a/src/g.py b/src/g.py\nindex 1111111..2222222 100644\n--- a/src/g.py\n"
        '+++ b/src/g.py\n@@ -3,3 +3,4 @@\n \n+    After Kleitman and Wang.\n     """\n'
        "-    return sequence\n+    return valid_sequence(sequence)\n"
    )
    texts = {"2222222": new_file}
    assert code_names(docstring_diff)[0] == {"After", "Kleitman"}  # misread, the file unknown
    assert code_names(docstring_diff, None, texts.get)[0] == {"valid_sequence"}
    # Declared, not used: the name after a declaring keyword, each name of a Go group, and the
    # names left of Go's `:=`; a Go method's name comes after its receiver.
    go = (
        "func (m *MapImpl) GrowAll(count int) {\n\tconst maxPreAlloc = 16\n"
        "\tfirstValue, otherValue := computeThing(maxPreAlloc, UsedName)\n}\n"
        "const (\n\tFirstConst = 1\n\tSecondConst = OuterValue\n)\n"
        "var onDone = func(code int) DoneResult { return DoneResult{} }\n"
    )
    found, defined = lexed_names(go, lexer_for("a.go"))
    assert defined == {"GrowAll", "maxPreAlloc", "firstValue", "otherValue", "onDone"} | {
        "FirstConst",
        "SecondConst",
    }
    assert found - defined == {"MapImpl", "computeThing", "UsedName", "OuterValue", "DoneResult"}
    # C's type tags declare only before a definition (arrow-nanoarrow #270 uses #258's struct).
    c = "void get(struct ArrowInterval* out) {\n  struct ArrowInterval copy;\n}\nstruct NewInterval {};"
    assert lexed_names(c, lexer_for("a.c")) == ({"ArrowInterval", "NewInterval"}, {"NewInterval"})
    rust = "fn run_all() { let mut local_value = helper_thing(UsedType::new()); }\nstruct MyStruct;"
    found, defined = lexed_names(rust, lexer_for("a.rs"))
    assert (defined, found - defined) == (
        {"run_all", "local_value", "MyStruct"},
        {"helper_thing", "UsedType"},
    )
    # Java declares by type: gravitino #10868's own local `groupIdents`, like its sibling's.
    java = (
        "List<NameIdentifier> groupIdents = store.batchGet(groupIdents, EntityType.GROUP);\n"
        "for (String memberName : allMembers) { if (countAll > limitValue) { return; } }\n"
    )
    found, defined = lexed_names(java, lexer_for("A.java"))
    assert defined == {"groupIdents", "memberName"}
    assert found - defined == {"NameIdentifier", "String", "batchGet", "EntityType"} | {
        "GROUP",
        "allMembers",
        "countAll",
        "limitValue",
    }
    # A pointer or a reference between type and name still declares (qiskit #14106's C test
    # declares its own `QkTranspileLayout *transpile_layout`); spaced on both sides it
    # multiplies. `const` and `static` qualify a type there: the name after the type declares.
    pointers = (
        "void run(const ArrowSchema& arrow_schema) {\n"
        "  QkTranspileLayout *transpile_layout = make_layout(arrow_schema);\n"
        "  int row_total = row_count * row_factor;\n  static final_size = 2;\n}\n"
    )
    found, defined = lexed_names(pointers, lexer_for("a.cc"))
    assert defined == {"arrow_schema", "transpile_layout", "row_total"}
    assert found - defined == {"ArrowSchema", "QkTranspileLayout", "make_layout", "row_count"} | {
        "row_factor",
        "final_size",
    }
    # A name read as a member is no declaration, whatever local shares it (arrow-nanoarrow #208
    # reads #207's field `layout.buffer_data_type` and declares a local of that name).
    member = (
        "void set_types(struct ArrowArrayView* view) {\n"
        "  use_type(view->layout.buffer_data_type[0], view->buffer_views);\n}\n"
        "void infer(void) {\n  enum ArrowType buffer_data_type = NANOARROW_TYPE_UNINITIALIZED;\n"
        "  int buffer_views = 0;\n}\n"
    )
    found, defined = lexed_names(member, lexer_for("a.c"))
    assert {"buffer_data_type", "buffer_views"} <= found - defined
    # A method a PR defines stays its own, called as a member as it must be (bevy #11681).
    method = "impl Shape { fn rotate_by(&mut self) {} }\nfn spin(s: &mut Shape) { s.rotate_by(); }"
    assert "rotate_by" in lexed_names(method, lexer_for("a.rs"))[1]
    # Python declares by assigning: networkx #816 and #817, siblings, name their locals alike.
    python = (
        "in_deg, out_deg = split_degrees(sequence)\n"
        "for node_name in pairs_of(graph):\n"
        "    self.attr_value = call_thing(keyword_arg=in_deg)\n"
    )
    found, defined = lexed_names(python, lexer_for("a.py"))
    assert defined == {"in_deg", "out_deg", "node_name"}
    assert found - defined == {"split_degrees", "pairs_of", "attr_value", "call_thing"} | {
        "keyword_arg"
    }
    found, defined = lexed_names(
        "export const maxPreAlloc = useThing(importedName);", lexer_for("a.ts")
    )
    assert (defined, found - defined) == ({"maxPreAlloc"}, {"useThing", "importedName"})


def test_the_names_needed_grow_with_the_gap() -> None:
    config = ChainsConfig()
    assert symbols_back({"symbols": 1, "gap_days": 80.0}, config)
    assert not symbols_back({"symbols": 1, "gap_days": 175.0}, config)  # two periods: two names
    assert symbols_back({"symbols": 2, "gap_days": 175.0}, config)
    assert not symbols_back({"symbols": 0, "gap_days": 1.0}, config)
    assert not symbols_back({"symbols": 5, "gap_days": 1.0}, ChainsConfig(min_symbols=0))


LEDGER = """def open_ledger(path):
    handle = load_ledger_file(path)
    handle.verify_checksum()
    handle.replay_journal()
    return handle


def close_ledger(handle):
    handle.flush_journal()
    handle.release_lock()
"""


def test_a_plain_mention_needs_more_than_a_line_or_two_of_contact(tmp_path: Path) -> None:
    """redis #10329 lists #10309 among related PRs and touches one of its lines; astro #17097
    mirrors #17041's handler and names it: siblings both. A PR that reworks three of the older
    one's lines builds on it."""
    repo = History(tmp_path / "ledger")
    repo.commit("Initial commit", {"ledger/__init__.py": "", "ledger/store.py": "STORE = {}\n"})
    repo.pr(1, "Open and close ledgers", {"ledger/files.py": LEDGER})
    one = LEDGER.replace("handle.release_lock()", "handle.release_lock(force=False)")
    sibling = (
        one + "\n\ndef compact_ledger(handle):\n    handle.rewrite_journal()\n    return handle\n"
    )
    repo.pr(2, "Compact ledgers", {"ledger/files.py": sibling}, body="See #1 for the ledger files.")
    three = sibling.replace("handle.verify_checksum()", "handle.verify_checksum(strict=True)")
    three = three.replace("handle.replay_journal()", "handle.replay_journal(upto=None)")
    three = three.replace("return handle\n\n\ndef close", "return handle.seal()\n\n\ndef close")
    repo.pr(3, "Seal opened ledgers", {"ledger/files.py": three}, body="See #1.")
    config = ChainsConfig(corroboration_signs=0, min_chain_code_lines=0, min_stage_code_lines=0)
    links = links_by_number(mine_and_build(repo.path, tmp_path / "store.db", "acme/ledger", config))
    assert (links[2, 1].kept, links[2, 1].lineage) == (False, 1)
    assert links[2, 1].rule == "plain_mention_little_contact"
    assert (links[3, 1].kept, links[3, 1].lineage) == (True, 3), links[3, 1].why
    loose = ChainsConfig(
        corroboration_signs=0,
        min_chain_code_lines=0,
        min_stage_code_lines=0,
        plain_mention_min_contact=0,
    )
    again = links_by_number(mine_and_build(repo.path, tmp_path / "loose.db", "acme/ledger", loose))
    assert again[2, 1].kept
