"""Stage bases on a real history: a chain keeps only the stages whose base the sandbox can make,
the earlier stages' gold patches reverted at the stage's base commit. A PR outside the chain that
edits an earlier stage's lines in between makes that revert conflict."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from prchain.chains.config import ChainsConfig
from prchain.chains.evidence.revertible import StageBases
from prchain.core.errors import GitError
from prchain.dev.repos import git
from prchain.store.models import Chain, ChainBuild, PullRequest
from tests.support.history import History
from tests.support.links import mine_and_build

PARSE = """def parse(text, limit=10):
    parts = text.split(",")
    kept = [part.strip() for part in parts]
    return kept[:limit]


def parse_pairs(text):
    pairs = []
    for item in parse(text):
        key, _, value = item.partition("=")
        pairs.append((key, value))
    return pairs
"""
RENDER = """def render(rows, width=80):
    lines = []
    for row in rows:
        cells = [str(cell).ljust(12) for cell in row]
        lines.append(" | ".join(cells)[:width])
    return "\\n".join(lines)
"""
STORE = """class Store:
    def __init__(self, path):
        self.path = path
        self.items = {}

    def put(self, key, value):
        self.items[key] = value

    def get(self, key, default=None):
        return self.items.get(key, default)
"""


def _history(path: Path) -> History:
    repo = History(path)
    repo.commit("Initial commit", {"README.md": "acme\n"})
    # #1 → #3, but #2 (no reference) edits one of #1's lines in between: #1's patch no longer
    # reverts at #3's base.
    repo.pr(1, "Add the parser", {"src/parse.py": PARSE})
    repo.pr(2, "Split on semicolons", {"src/parse.py": PARSE.replace('split(",")', 'split(";")')})
    parse_3 = PARSE.replace('split(",")', 'split(";")').replace(
        "(key, value)", "(key.lower(), value)"
    )
    repo.pr(3, "Lower-case parsed keys", {"src/parse.py": parse_3}, body="Follow-up to #1.")
    # #11 → #12 with nothing in between.
    repo.pr(11, "Add the table renderer", {"src/render.py": RENDER})
    repo.pr(
        12,
        "Centre table cells",
        {"src/render.py": RENDER.replace("ljust(12)", "center(12)")},
        body="Follow-up to #11.",
    )
    # #21 → #22 → #24: #23 edits a line of #21 that #22 left alone, so stage #24 cannot revert
    # #21; the chain keeps #21 → #22.
    repo.pr(21, "Add the store", {"src/store.py": STORE})
    store_22 = STORE.replace("self.items[key] = value", "self.items[key] = (value, 1)")
    repo.pr(22, "Count store versions", {"src/store.py": store_22}, body="Follow-up to #21.")
    store_23 = store_22.replace("self.path = path", "self.path = str(path)")
    repo.pr(23, "Accept path objects", {"src/store.py": store_23})
    store_24 = store_23.replace("(value, 1)", "(value, self.version(key) + 1)")
    repo.pr(24, "Bump store versions", {"src/store.py": store_24}, body="Follow-up to #22.")
    return repo


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Engine, Engine]:
    """The same history built with the stage-base check and without it."""
    root = tmp_path_factory.mktemp("stage-bases")
    repo = _history(root / "repo")
    config = ChainsConfig(min_chain_code_lines=0, entry_fallback="hunks")  # not by replay
    checked = mine_and_build(repo.path, root / "checked.db", "acme/bases", config)
    unchecked = mine_and_build(
        repo.path,
        root / "unchecked.db",
        "acme/bases",
        config.model_copy(update={"check_stage_bases": False}),
    )
    return checked, unchecked


def _chains(engine: Engine) -> set[tuple[int, ...]]:
    with Session(engine) as session:
        number = dict(session.execute(select(PullRequest.id, PullRequest.number)).all())
        return {
            tuple(number[int(pr)] for pr in chain.signature.split("-"))
            for chain in session.scalars(select(Chain).where(Chain.superseded_at.is_(None)))
        }


def _rules(engine: Engine) -> dict[str, dict[str, int]]:
    with Session(engine) as session:
        build = session.scalars(select(ChainBuild).order_by(ChainBuild.id.desc())).first()
        assert build is not None
        return {rule["rule"]: rule for rule in build.rules}


def test_a_chain_keeps_only_stages_whose_base_can_be_made(built: tuple[Engine, Engine]) -> None:
    checked, unchecked = built
    assert _chains(unchecked) == {(1, 3), (11, 12), (21, 22, 24)}
    assert _chains(checked) == {(11, 12), (21, 22)}
    rules = _rules(checked)
    # The search never picks a chain it must cut: it does not follow #1 → #3 (#3's stage cannot
    # be entered after #1) nor #22 → #24 after #21 ← #22; both links are in no chain.
    assert "stage_base_conflict" not in rules and "stage_base_cut" not in rules
    refused = rules["stage_base_refused"]
    assert (refused["chains"], refused["links"]) == (0, 2)


def test_the_revert_is_asked_of_git_as_the_sandbox_makes_it(tmp_path: Path) -> None:
    repo = _history(tmp_path / "repo")
    sha = repo.prs
    bases = StageBases({7: str(repo.path)})
    gold_1, gold_11 = _patch(repo, sha[1]), _patch(repo, sha[11])
    # A squash PR's base is the commit before it: #3's is #2, #12's is #11.
    assert bases.reverts(7, sha[11], [gold_11]) is True
    assert bases.reverts(7, sha[2], [gold_1]) is False
    assert bases.reverts(7, sha[2], ["", "  \n"]) is True  # empty gold patches are skipped
    assert bases.reverts(7, "0" * 40, [gold_1]) is True  # a base the clone lacks: unknown, kept
    assert bases.enterable_run(7, [sha[3], sha[11]], [gold_1, gold_11]) == (0, 1)
    assert bases.enterable_run(7, [sha[1], sha[2], sha[11]], [gold_1, "", gold_11]) == (1, 3)
    # The index is a throwaway one: the repository is as it was.
    assert _git(repo, "status", "--porcelain") == ""


def test_go_module_files_are_no_part_of_the_revert(tmp_path: Path) -> None:
    """The sandbox keeps an earlier stage's go.mod and go.sum as the base has them
    (`prchain.environments.stage_entry.reverted_part`), so a later edit of the same lines (a bump between
    the stages) keeps no stage out; its code still has to revert."""
    repo = History(tmp_path / "repo")
    gomod = "module example.com/m\n\ngo 1.21\n\nrequire example.com/x v1.0.0\n"
    repo.commit("Initial commit", {"go.mod": gomod, "m.go": "package m\n"})
    code = "package m\n\nfunc Parse(s string) string { return s }\n"
    repo.pr(1, "Parse", {"go.mod": gomod.replace("v1.0.0", "v1.1.0"), "m.go": code})
    repo.pr(2, "Bump x", {"go.mod": gomod.replace("v1.0.0", "v1.2.0")})
    repo.pr(3, "Trim", {"m.go": code.replace("return s", 'return s + ""')})
    bases = StageBases({7: str(repo.path)})
    assert bases.reverts(7, repo.prs[2], [_patch(repo, repo.prs[1])]) is True
    # #2's bump of #1's line is in the way of nothing; a later edit of #1's code is.
    assert bases.reverts(7, repo.prs[3], [_patch(repo, repo.prs[1])]) is False


def _patch(repo: History, sha: str) -> str:
    return _git(repo, "diff", f"{sha}^", sha)


def _git(repo: History, *args: str) -> str:
    return git(repo.path, *args)


def test_the_base_commits_attributes_apply_as_in_the_sandbox(tmp_path: Path) -> None:
    # A changelog merged by union (xarray's `doc/whats-new.rst merge=union`): a PR outside the
    # chain adding the next entry does not stop #1's revert in the sandbox's checkout of B_t, while
    # the same edits to a file without the attribute do.
    repo = History(tmp_path / "repo")
    repo.commit(
        "Initial commit",
        {".gitattributes": "NEWS merge=union\n", "NEWS": "- start\n", "LOG": "- start\n"},
    )
    repo.pr(1, "Add an entry", {"NEWS": "- start\n- one\n", "LOG": "- start\n- one\n"})
    base = repo.pr(
        2, "Add another", {"NEWS": "- start\n- one\n- two\n", "LOG": "- start\n- one\n- two\n"}
    )
    sha = repo.prs
    news = _git(repo, "diff", f"{sha[1]}^", sha[1], "--", "NEWS")
    log = _git(repo, "diff", f"{sha[1]}^", sha[1], "--", "LOG")
    # A bare clone, as mined mirrors are: it has no checkout to read attributes from.
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo.path), str(bare))
    bases = StageBases({7: str(bare)})
    for gold, expected in ((news, True), (log, False)):
        assert bases.reverts(7, base, [gold]) is expected
        assert _sandbox_reverts(tmp_path / f"sandbox-{expected}", repo, base, gold) is expected


def _sandbox_reverts(where: Path, repo: History, base: str, gold: str) -> bool:
    """The sandbox's way: a checkout of the base, then `git apply -R --3way` in it."""
    git(repo.path, "worktree", "add", "-q", "--detach", str(where), base)
    patch = where.parent / f"{where.name}.patch"
    patch.write_text(gold + "\n")
    try:
        git(where, "apply", "-R", "--3way", "--whitespace=nowarn", str(patch))
    except GitError:
        return False
    return True


TOKEN = 'package auth\n\nfunc Token() string {\n\treturn "secret"\n}\n'


def _files(root: Path) -> set[tuple[str, int]]:
    """Every file under `root`, with its size: what a check that only reads must leave alone."""
    return {(str(p.relative_to(root)), p.stat().st_size) for p in root.rglob("*") if p.is_file()}


def test_the_check_writes_nothing_into_the_clone(tmp_path: Path) -> None:
    """A PR deleted two files that are back at a later base: reverting it there falls back to a
    three-way merge, which writes the files it merges into the directory git runs in and the
    blobs into the object store. Run in a mined mirror's git directory, that wrote
    `config/configauth/*.go` over where git keeps its own `config` (opentelemetry-collector)."""
    repo = History(tmp_path / "repo")
    files = {"config/auth/token.go": TOKEN, "lib/token.py": "def token():\n    return 'x'\n"}
    repo.commit("Initial commit", {**files, "README": "app\n"})
    repo.pr(1, "Drop the token helpers", dict.fromkeys(files))
    back = repo.pr(2, "Bring the token helpers back", files)
    # Back again and then changed, the file conflicts: git did run, and says no.
    changed = repo.pr(3, "Longer tokens", {"lib/token.py": "def token():\n    return 'xy'\n"})
    gold = _patch(repo, repo.prs[1])
    bare = tmp_path / "mirror.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo.path), str(bare))
    for clone in (bare, repo.path):
        before = _files(clone)
        bases = StageBases({7: str(clone)})
        assert bases.reverts(7, back, [gold]) is True
        assert bases.reverts(7, changed, [gold]) is False
        assert _files(clone) == before
    assert _git(repo, "status", "--porcelain", "--untracked-files=all") == ""
    # The sandbox, reverting in a checkout of each base, agrees.
    assert _sandbox_reverts(tmp_path / "sandbox-back", repo, back, gold) is True
    assert _sandbox_reverts(tmp_path / "sandbox-changed", repo, changed, gold) is False


def test_a_temporal_chain_is_cut_at_a_stage_it_cannot_enter(tmp_path: Path) -> None:
    """The temporal strategy links each PR to the next unclaimed merge touching a shared file,
    with edges of its own (no reference in the graph). #31 → #32 → #34: #33, claimed by #30
    (shared `src/cfg.py`), edits a line #32 added, so stage #34 cannot be entered and the chain
    is cut to #31 → #32, keeping its own edge. cloudquery's `chains build --strategy temporal`
    stopped with a KeyError at that cut."""
    from prchain.chains.building.build import build_chains

    repo = History(tmp_path / "repo")
    repo.commit("Initial commit", {"README.md": "acme\n"})
    repo.pr(30, "Add the config", {"src/cfg.py": "LIMIT = 1\n"})
    repo.pr(31, "Add the store", {"src/store.py": STORE})
    store_32 = STORE.replace("self.items[key] = value", "self.items[key] = (value, 1)")
    repo.pr(32, "Count store versions", {"src/store.py": store_32})
    store_33 = store_32.replace("(value, 1)", "(value, 2)")
    repo.pr(33, "Start at two", {"src/store.py": store_33, "src/cfg.py": "LIMIT = 2\n"})
    repo.pr(34, "Accept paths", {"src/store.py": store_33.replace("= path", "= str(path)")})
    config = ChainsConfig(entry_fallback="hunks")  # a stage that cannot be entered: not by replay
    engine = mine_and_build(repo.path, tmp_path / "t.db", "acme/bases", config)
    build_chains(
        config.model_copy(update={"min_chain_code_lines": 0}),
        engine,
        strategy="temporal",
        min_len=2,
    )
    with Session(engine) as session:
        number = dict(session.execute(select(PullRequest.id, PullRequest.number)).all())
        chains = list(session.scalars(select(Chain).where(Chain.strategy == "temporal")))
        kept = {tuple(number[int(p)] for p in c.signature.split("-")): c.edges for c in chains}
    assert (31, 32) in kept, kept
    for numbers, edges in kept.items():
        pairs = [(e["dst_number"], e["src_number"]) for e in edges]
        assert pairs == list(zip(numbers, numbers[1:], strict=False)), (numbers, edges)
        assert all(e["types"] == ["temporal"] for e in edges)


class _WholeTree(StageBases):
    """The check as it was: every revert in an index of the base's whole tree."""

    def _entries(self, *args: object) -> None:
        return None


def test_an_index_of_the_touched_paths_answers_as_the_whole_tree(tmp_path: Path) -> None:
    """The reverts run in an index of only the entries they read (`StageBases._entries`): the
    touched paths, a file in the place of a directory above one, the `.gitattributes` above them.
    Each case answers as in the base's whole tree: a file where a reverted one's directory was
    fails it (the index holds both otherwise), a directory where a reverted file was fails it (the
    whole tree is read then), a rename back onto a path taken fails, a merge driver of a
    subdirectory's attributes merges, and a quoted path with a space and a non-ASCII letter is read
    as git reads it."""
    repo = History(tmp_path / "repo")
    odd = "docs/the notes ü.txt"
    news = "- start\n"
    repo.commit(
        "Initial commit",
        {"a/b": "x\n", "c": "y\n", "old.py": PARSE, "log/NEWS": news, "log/.gitattributes":
         "NEWS merge=union\n", odd: "one\n", "README": "acme\n"},
    )  # fmt: skip
    drop = repo.pr(1, "Drop a/b and c", {"a/b": None, "c": None})
    (repo.path / "a").rmdir()  # git leaves the emptied directory in the work tree
    repo.pr(2, "A file a, a directory c", {"a": "file\n", "c/d": "z\n"})
    rename = repo.pr(3, "Rename old.py", {}, moves={"old.py": "new.py"})
    repo.pr(4, "old.py again", {"old.py": RENDER})
    entry = repo.pr(5, "An entry", {"log/NEWS": news + "- one\n", odd: "two\n"})
    base = repo.pr(6, "Another", {"log/NEWS": news + "- one\n- two\n", "README": "acme 2\n"})
    bare = tmp_path / "bare.git"
    git(tmp_path, "clone", "-q", "--bare", str(repo.path), str(bare))
    drop_a = _git(repo, "diff", f"{drop}^", drop, "--", "a/b")
    drop_c = _git(repo, "diff", f"{drop}^", drop, "--", "c")
    cases = {
        "file where a directory was": ([drop_a], False, True),
        "directory where a file was": ([drop_c], False, False),
        "rename back onto a taken path": ([_patch(repo, rename)], False, True),
        "merge driver of a subdirectory": ([_patch(repo, entry)], True, True),
        "two patches, quoted path": ([_patch(repo, rename), _patch(repo, entry)], False, True),
    }
    partial, whole = StageBases({7: str(bare)}), _WholeTree({7: str(bare)})
    tree, env = partial._env(7)
    for name, (golds, expected, read_partially) in cases.items():
        assert partial.reverts(7, base, golds) is expected, name
        assert whole.reverts(7, base, golds) is expected, name
        patches = tuple(partial._reverted_part(gold) for gold in golds)
        assert (partial._entries(base, patches, tree, env) is not None) is read_partially, name
    assert _git(repo, "status", "--porcelain") == ""


def test_the_paths_of_many_patches_asked_at_once_are_those_asked_one_by_one(
    tmp_path: Path,
) -> None:
    """`learn_paths` asks `git apply --numstat` of many patches at once (markers split git's
    records): each patch's paths are those `_paths` finds asking of it alone, renames' old names
    and quoted paths included; a patch git refuses (a hunk cut short, a fragment without a header,
    garbage alone) is left to be asked alone, and the others around it are still learnt."""
    repo = History(tmp_path / "repo")
    odd = "docs/the notes ü.txt"
    repo.commit("Initial commit", {"old.py": PARSE, odd: "one\n", "a/b.py": "x = 1\n"})
    shas = [
        repo.pr(1, "Rename", {}, moves={"old.py": "new.py"}),
        repo.pr(2, "Odd", {odd: "two\n", "a/b.py": None, "c.py": "y = 2\n"}),
        repo.pr(3, "Rename and edit", {"new.py": PARSE + "\nX = 1\n"}, moves={odd: "notes.txt"}),
        repo.pr(4, "Binary", {"logo.bin": "\0\1\2"}),
    ]
    good = [_patch(repo, sha) for sha in shas]
    # its blank line after the last literal stripped (`_git`): git refuses it alone
    binary = _git(repo, "diff", "--binary", f"{shas[3]}^", shas[3])
    cut = good[0].rsplit("\n", 2)[0]  # its last hunk a line short
    bad = [
        cut if cut != good[0] else good[0][:-20],
        "@@ -1 +1 @@\n-a\n+b\n",
        "nothing here but words\n",
        good[2].replace("diff --git", "--- a/new.py\n+++ b/new.py\ndiff --git", 1),
        binary,
    ]
    alone = StageBases({7: str(repo.path)})
    tree, env = alone._env(7)
    expected = {patch: alone._paths(patch, tree, env) for patch in good + bad}
    assert all(expected[patch] for patch in good)
    assert expected["nothing here but words\n"] is None
    for golds in (good, bad[:1] + good + bad[1:], bad + good, good[::-1] + bad):
        batched = StageBases({7: str(repo.path)})
        batched.learn_paths(7, golds)
        assert {p: batched._touched[p] for p in good} == {p: expected[p] for p in good}
        for patch in bad:
            if patch in batched._touched:
                assert batched._touched[patch] == expected[patch]
