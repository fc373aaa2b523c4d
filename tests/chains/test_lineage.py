"""Line lineage on a real history: blame follows a rename and a move between files, rescues a link
the overlap and gap rules would drop, and refuses a line that only looks like the older PR's."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from sqlalchemy import Engine, select, update
from sqlalchemy.orm import Session

from prchain.chains.building.build import build_chains
from prchain.chains.building.graph import build_graph, load_graph
from prchain.chains.config import ChainsConfig
from prchain.chains.evidence.lines import Lines, parse_patch
from prchain.chains.evidence.loading import load_nodes, load_references, load_repos
from prchain.dev.repos import git
from prchain.miner.config import MinerConfig
from prchain.miner.mine import mine
from prchain.store.models import ChainLink, Repo
from prchain.store.opener import make_engine
from tests.support.history import History
from tests.support.links import links_by_number, mine_and_build

CORE = "LEGACY_LIMIT = compute_limit(default=10)\nVERSION_STRING = '1.0'\n"
PARSER = """def parse_header(text):
    fields = text.split(":", maxsplit=1)
    return fields[0].strip(), fields[1].strip()


def parse_footer(text):
    marker_index = text.rfind("--")
    return text[marker_index + 2 :].strip()
"""


def _history(path: Path) -> History:
    repo = History(path)
    repo.commit("Initial commit", {"src/core.py": CORE, "src/other.py": "RETRIES = 3\n"})
    repo.pr(
        1,
        "Parse headers and footers",
        {
            "src/parser.py": PARSER,
            "src/core.py": CORE + "LEGACY_LIMIT = compute_limit(default=10)\n",
        },
    )
    # An unrelated refactor: the module moves into a package and parse_footer into its own file.
    header_only = PARSER.split("\n\n\n")[0] + "\n"
    footer_only = PARSER.split("\n\n\n")[1]
    repo.pr(
        2,
        "Split the parser package",
        {"src/syntax/parser.py": header_only, "src/syntax/footer.py": footer_only},
        moves={"src/parser.py": "src/syntax/parser.py"},
    )
    repo.pr(
        3,
        "Headers may lack a colon",
        {
            "src/syntax/parser.py": header_only.replace(
                '    fields = text.split(":", maxsplit=1)\n',
                '    fields = text.partition(":")[::2]\n',
            ),
            "src/syntax/footer.py": footer_only.replace(
                '    marker_index = text.rfind("--")\n', '    marker_index = text.rfind("---")\n'
            ),
        },
        body="Follow-up to #1: a header without a colon crashed the parser.",
        day=200,
    )
    repo.pr(
        4,
        "More retries",
        {"src/other.py": "RETRIES = 5\n"},
        body="Follow-up to #1, which made parsing slower.",
    )
    # Removes the initial commit's line, whose text #1 also added (further down the same file).
    repo.pr(
        5,
        "Drop the first legacy limit",
        {"src/core.py": "VERSION_STRING = '1.0'\nLEGACY_LIMIT = compute_limit(default=10)\n"},
        body="See #1.",
    )
    return repo


@pytest.fixture
def mined(tmp_path: Path) -> Engine:
    repo = _history(tmp_path / "lineage")
    engine = make_engine(f"sqlite:///{tmp_path / 'store.db'}")
    mine(MinerConfig(), engine, [str(repo.path)], source="git", name="acme/lineage")
    return engine


def _mine_and_build(tmp_path: Path, repo: Path, name: str) -> dict[tuple[int, int], ChainLink]:
    """Mine the history at `repo` into a new store, build chains, and return its links."""
    # These histories weigh lineage a line at a time: a plain mention needs no more contact.
    config = ChainsConfig(
        corroboration_signs=0, min_chain_code_lines=0, plain_mention_min_contact=0
    )
    return links_by_number(mine_and_build(repo, tmp_path / "store.db", name, config))


def test_blame_follows_a_rename_and_a_move_and_rescues_the_link(mined: Engine) -> None:
    build_chains(ChainsConfig(corroboration_signs=0, min_chain_code_lines=0), mined)
    links = links_by_number(mined)
    rescued = links[3, 1]
    # No file in common and 198 days apart: only the two rewritten lines keep this link.
    assert (rescued.overlap, rescued.gap_days > 90) == (0.0, True)
    assert (rescued.kept, rescued.lineage, rescued.lineage_via) == (True, 2, "blame")
    assert "changes 2 line(s) the older one added (blame)" in rescued.why
    # The same wording without lineage still needs a shared file.
    assert (links[4, 1].kept, links[4, 1].rule) == (False, "too_little_file_overlap")
    # #5 removes a line with #1's text, but blame says the initial commit wrote it.
    assert (links[5, 1].lineage, links[5, 1].rule) == (0, "plain_mention_without_shared_lines")


def test_without_the_clone_the_patches_answer_in_the_same_file_only(mined: Engine) -> None:
    with Session(mined) as session, session.begin():
        session.execute(update(Repo).values(clone_path=None))
    build_chains(ChainsConfig(corroboration_signs=0, min_chain_code_lines=0), mined)
    links = links_by_number(mined)
    assert (links[3, 1].lineage, links[3, 1].rule) == (0, "too_little_file_overlap")
    # Text alone cannot tell the initial commit's line from #1's copy of it.
    assert (links[5, 1].lineage, links[5, 1].lineage_via) == (1, "patch")


def test_removed_lines_keep_their_old_path_and_number() -> None:
    diff = (
        "diff --git a/a.py b/b.py\nsimilarity index 80%\nrename from a.py\nrename to b.py\n"
        "--- a/a.py\n+++ b/b.py\n@@ -3,3 +3,3 @@\n keep_this_line = 1\n-value = compute(1, 2)\n"
        "+value = compute(1, 3)\n tail_line = 2\n"
    )
    parsed = parse_patch(diff)
    assert [(r.path, r.line, r.text) for r in parsed.removed] == [
        ("a.py", 4, "value = compute(1, 2)")
    ]
    assert parsed.added["b.py"] == {"value = compute(1, 3)"}


def _rows(engine: Engine) -> list[tuple[object, ...]]:
    columns = [c for c in ChainLink.__table__.columns if c.name not in ("id", "build_id")]
    with engine.connect() as conn:
        return [tuple(row) for row in conn.execute(select(*columns).order_by(*columns[:3]))]


def test_blames_run_at_once_decide_exactly_as_one_at_a_time(tmp_path: Path) -> None:
    repo = _history(tmp_path / "lineage")
    rows, blames = [], []
    for workers in (1, 4):
        engine = make_engine(f"sqlite:///{tmp_path / f'store{workers}.db'}")
        mine(MinerConfig(), engine, [str(repo.path)], source="git", name="acme/lineage")
        config = ChainsConfig(
            corroboration_signs=0, min_chain_code_lines=0, lineage_workers=workers
        )
        blames.append(load_graph(engine, config)[2].lineage_blames)
        build_chains(config, engine)
        rows.append(_rows(engine))
    assert blames[0] == blames[1] > 0
    assert rows[0] == rows[1]
    via = [c.name for c in ChainLink.__table__.columns if c.name not in ("id", "build_id")].index(
        "lineage_via"
    )
    assert any(row[via] == "blame" for row in rows[1])  # blame answered somewhere


def test_the_planner_lists_the_blames_the_real_pass_runs(mined: Engine) -> None:
    config = ChainsConfig(corroboration_signs=0, min_chain_code_lines=0, lineage_workers=1)
    repos = load_repos(mined)
    lines = Lines(mined, {rid: path for rid, (_name, path, _branch) in repos.items()})
    planner = lines.planner()
    build_graph(load_nodes(mined), load_references(mined), config, repos, planner)
    build_graph(load_nodes(mined), load_references(mined), config, repos, lines)
    assert planner.blame_calls == 0  # the planner ran no git
    assert len(planner.planned) == lines.blame_calls > 0


LOADER = '''def load(path):
    """Read the table.

    The header row is skipped unless keep_header=True is passed.
    """
    rows = read_rows(path, skip_header=True)
    return rows
'''


def test_a_line_inside_a_docstring_is_no_lineage_however_it_reads_alone(tmp_path: Path) -> None:
    repo = History(tmp_path / "docs")
    repo.commit("Initial commit", {"src/table.py": "TABLE_VERSION = 1\n"})
    repo.pr(1, "Load tables", {"src/table.py": "TABLE_VERSION = 1\n\n\n" + LOADER})
    reworded = LOADER.replace("is skipped unless keep_header=True is passed", "is dropped unless")
    repo.pr(
        2,
        "Docstring nits",
        {"src/table.py": "TABLE_VERSION = 1\n\n\n" + reworded},
        body="See #1.",
    )
    rewritten = LOADER.replace("skip_header=True)", "skip_header=True, strict=True)")
    repo.pr(
        3,
        "Strict loading",
        {"src/table.py": "TABLE_VERSION = 1\n\n\n" + rewritten},
        body="See #1.",
    )
    links = _mine_and_build(tmp_path, repo.path, "acme/docs")
    # Read alone, the reworded line looks like code; lexed in its file, it is a docstring.
    assert (links[2, 1].lineage, links[2, 1].rule) == (0, "plain_mention_without_shared_lines")
    assert (links[3, 1].lineage, links[3, 1].kept) == (1, True)


def test_a_line_a_long_import_spans_is_no_lineage(tmp_path: Path) -> None:
    """bevy #19959 meets #19957 only in one line of names inside a `use a::{ … };`: an import,
    though alone it reads as code. It touches the older PR's text (`lineage_touched`), which
    only strong wording may stand on; a plain mention needs code."""
    head = "use crate::cluster::{\n    Clusters, ExtractedPointLight, GlobalClusterSettings,\n};\n"
    body = (
        "\npub fn assign(settings: &GlobalClusterSettings) -> usize {\n    settings.count * 2\n}\n"
    )
    repo = History(tmp_path / "imports")
    names = ("Clusters", "ExtractedPointLight", "GlobalClusterSettings", "ClusteredDecal")
    cluster = "".join(f"pub struct {name};\n" for name in names)  # none of them #1's
    repo.commit(
        "Initial commit", {"src/assign.rs": "pub fn noop() {}\n", "src/cluster.rs": cluster}
    )
    repo.pr(1, "Cluster settings", {"src/assign.rs": head + body})
    moved = head.replace("GlobalClusterSettings,", "GlobalClusterSettings, ClusteredDecal,")
    repo.pr(2, "Move the decal", {"src/assign.rs": moved + body}, body="See #1.")
    rewritten = body.replace("settings.count * 2", "settings.count * 2 + 1")
    repo.pr(3, "One more cluster", {"src/assign.rs": head + rewritten}, body="See #1.")
    links = _mine_and_build(tmp_path, repo.path, "acme/imports")
    assert (links[2, 1].lineage, links[2, 1].rule) == (0, "plain_mention_without_shared_lines")
    assert "edits 1 line(s) the older one added that hold no code" in links[2, 1].why
    assert (links[3, 1].lineage, links[3, 1].kept) == (1, True)


FFI = """def unicode_from_string(text):
    return encode_unicode(text, encoding="utf-8", errors="strict")


def unicode_as_bytes(value):
    return decode_unicode(value, encoding="utf-8", errors="strict")
"""


def _commit(path: Path, files: dict[str, str], message: str, day: int) -> None:
    for rel, text in files.items():
        (path / rel).parent.mkdir(parents=True, exist_ok=True)
        (path / rel).write_text(text)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", message, date=f"2024-01-{day:02d}T10:00:00")


def _merge(path: Path, branch: str, message: str, day: int) -> None:
    git(path, "merge", "-q", "--no-ff", "-m", message, branch, date=f"2024-01-{day:02d}T10:00:00")


def test_a_branch_that_took_in_the_older_merge_links_though_it_was_opened_first(
    tmp_path: Path,
) -> None:
    """pyo3 #1794 was branched before #1777 merged, then merged master and used #1777's names."""
    path = History(tmp_path / "merges").path

    def commit(files: dict[str, str], message: str, day: int) -> None:
        _commit(path, files, message, day)

    def merge(branch: str, message: str, day: int) -> None:
        _merge(path, branch, message, day)

    commit({"src/ffi.py": "VERSION = 1\n"}, "Initial commit", 1)
    for branch in ("ffi", "strings", "bytes"):
        git(path, "branch", branch)
    git(path, "checkout", "-q", "ffi")
    commit({"src/ffi.py": "VERSION = 1\n\n\n" + FFI}, "Add the unicode FFI", 2)
    git(path, "checkout", "-q", "strings")
    commit({"src/strings.py": "EMPTY = ''\n"}, "Start the string helpers", 3)
    git(path, "checkout", "-q", "bytes")
    commit({"src/bytes.py": "EMPTY = b''\n"}, "Start the byte helpers", 3)
    git(path, "checkout", "-q", "main")
    merge("ffi", "Merge pull request #1 from ada/ffi\n\nAdd the unicode FFI", 5)
    git(path, "checkout", "-q", "strings")
    merge("main", "Merge branch 'main' into strings", 6)
    lenient = FFI.replace('errors="strict")\n\n\ndef', 'errors="replace")\n\n\ndef')
    commit({"src/ffi.py": "VERSION = 1\n\n\n" + lenient}, "Strings never fail", 7)
    git(path, "checkout", "-q", "bytes")
    commit({"src/bytes.py": "EMPTY = bytes()\n"}, "Bytes made plainly", 7)
    git(path, "checkout", "-q", "main")
    merge("strings", "Merge pull request #2 from ada/strings\n\nLenient strings; see #1.", 8)
    merge("bytes", "Merge pull request #3 from ada/bytes\n\nByte helpers; see #1.", 9)
    links = _mine_and_build(tmp_path, path, "acme/merges")
    # Both branches started before #1 merged; only #2's took #1 in and rewrote its line.
    assert (links[2, 1].kept, links[2, 1].lineage) == (True, 1)
    assert links[3, 1].rule == "not_merged_before_created"


def test_a_resubmission_after_a_revert_builds_on_the_revert_not_the_original(
    tmp_path: Path,
) -> None:
    """serde #316 re-submitted #302 ("Re-opening of #302 after bust merge") on a branch taken
    after the revert #314, with commits dated before it: no link to #302, whose code was gone."""
    path = History(tmp_path / "resubmitted").path
    _commit(path, {"src/ffi.py": "VERSION = 1\n"}, "Initial commit", 1)
    git(path, "checkout", "-q", "-b", "nostd")
    _commit(path, {"src/ffi.py": "VERSION = 1\n\n\n" + FFI}, "Enable no_std", 2)
    git(path, "checkout", "-q", "main")
    _merge(path, "nostd", "Merge pull request #1 from ada/nostd\n\nEnable no_std", 3)
    merged = git(path, "rev-parse", "HEAD")
    git(path, "checkout", "-q", "-b", "revert")
    git(path, "revert", "-m", "1", "--no-edit", merged, date="2024-01-04T10:00:00")
    git(path, "checkout", "-q", "main")
    _merge(path, "revert", "Merge pull request #2 from ada/revert\n\nIt broke the build.", 5)
    git(path, "checkout", "-q", "-b", "again")
    _commit(path, {"src/ffi.py": "VERSION = 1\n\n\n" + FFI}, "Enable no_std", 2)
    git(path, "checkout", "-q", "main")
    message = "Merge pull request #3 from ada/again\n\nRe-opening of #1 after bust merge."
    _merge(path, "again", message, 7)
    links = _mine_and_build(tmp_path, path, "acme/resubmitted")
    assert links[2, 1].evidence_class == "revert"
    assert links[3, 1].rule == "older_reverted_before"


IDENTITY = """def get_identity(op):
    if op.name == "add":
        return make_zero(op.dtype)
    if op.name == "multiply":
        return make_one(op.dtype)
    raise ValueError(f"no identity for {op.name}")
"""


def test_code_added_inside_the_older_prs_code_is_lineage(tmp_path: Path) -> None:
    """numpy: a `case` added to the `_get_identity()` another PR introduced rewrites none of its
    lines, yet builds on it; code added next to someone else's code does not."""
    repo = History(tmp_path / "inside")
    repo.commit("Initial commit", {"src/ops.py": "OPS_VERSION = 1\n"})
    repo.pr(1, "Add identities", {"src/ops.py": "OPS_VERSION = 1\n\n\n" + IDENTITY})
    maximum = '    if op.name == "maximum":\n        return make_min(op.dtype)\n'
    extended = IDENTITY.replace("    raise ValueError", maximum + "    raise ValueError")
    repo.pr(
        2, "Identity of maximum", {"src/ops.py": "OPS_VERSION = 1\n\n\n" + extended}, body="See #1."
    )
    after = "OPS_VERSION = 1\n\n\n" + extended + "\n\nDEFAULT_DTYPE = select_default_dtype()\n"
    repo.pr(3, "Default dtype", {"src/ops.py": after}, body="See #1.")
    links = _mine_and_build(tmp_path, repo.path, "acme/inside")
    assert (links[2, 1].lineage, links[2, 1].kept) == (0, True)
    assert "adds code inside 1 place(s) of the older one's code" in links[2, 1].why
    # Below the older PR's function: one neighbour is its line, the other is nobody's.
    assert links[3, 1].rule == "plain_mention_without_shared_lines"


def test_a_change_made_again_builds_on_nothing_of_the_first(tmp_path: Path) -> None:
    """numpy #10017 applied #9667's diff again after a bad rebase (#8981) had quietly undone it:
    the same task twice, no stage built on the first."""
    repo = History(tmp_path / "again")
    repo.commit("Initial commit", {"src/ops.py": "OPS_VERSION = 1\n"})
    repo.pr(1, "Add identities", {"src/ops.py": "OPS_VERSION = 1\n\n\n" + IDENTITY})
    repo.pr(2, "Big rebase", {"src/ops.py": "OPS_VERSION = 2\n"})
    repo.pr(
        3,
        "Undo the bad rebase",
        {"src/ops.py": "OPS_VERSION = 2\n\n\n" + IDENTITY},
        body="Restores #1.",
    )
    links = _mine_and_build(tmp_path, repo.path, "acme/again")
    assert links[3, 1].rule == "repeats_older"
    assert "makes the older one's change again" in links[3, 1].why


def test_files_are_read_as_git_show_gives_them(tmp_path: Path) -> None:
    """Lineage reads each file at a base through one running `git cat-file`: the text `git show`
    gives, whatever the file (an odd path, bytes that are no UTF-8, a symlink), and `git show`'s
    own answer where the name is no blob (a directory, a path the base lacks)."""
    repo = History(tmp_path / "src")
    first = repo.commit("Initial commit", {"pkg/naïve file.py": "A = 1\n", "pkg/b.py": "B = 2\n"})
    (repo.path / "pkg" / "latin.py").write_bytes(b"name = '\xe9t\xe9'\n")
    (repo.path / "pkg" / "link.py").symlink_to("b.py")
    second = repo.commit("More", {"pkg/b.py": "B = 3\n"})
    lines = Lines(make_engine("sqlite://"), {1: str(repo.path)})
    names = [
        f"{rev}:{path}" for rev in (first, second) for path in ("pkg/naïve file.py", "pkg/b.py")
    ]
    names += [
        f"{second}:pkg/latin.py",
        f"{second}:pkg/link.py",
        f"{second}:pkg",
        f"{first}:nope.py",
        f"{first}:pkg/gone file.py",  # missing, with a space: git's answer has three words too
    ]
    for _ in range(2):  # and again once its reader was closed
        for name in names:
            shown = subprocess.run(["git", "-C", str(repo.path), "show", name], capture_output=True)
            expected = shown.stdout.decode(errors="replace") if shown.returncode == 0 else None
            assert lines._show(str(repo.path), name) == expected, name
        assert lines._show(str(repo.path), f"{second}:pkg/latin.py") == "name = '\ufffdt\ufffd'\n"
        lines._readers.close()


def test_a_clone_that_is_no_repository_has_no_files(tmp_path: Path) -> None:
    """A store may name a clone git cannot read (a path that is no repository): each file is
    absent, as `git show` said, and the reader's git, ended at once, breaks nothing (the running
    `cat-file` first wrote to a closed pipe)."""
    lines = Lines(make_engine("sqlite://"), {1: str(tmp_path)})
    for _ in range(2):
        assert lines._show(str(tmp_path), "HEAD:src/app.py") is None
    lines._readers.close()
