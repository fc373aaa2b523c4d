"""A PR's code change as git and the store give it: its patch read with the blobs it names
(`patch_code_change`), and the measure of every candidate stage (`measure_stages`).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from contextlib import ExitStack, closing
from dataclasses import dataclass
from typing import TYPE_CHECKING

from prchain.chains.evidence.attributes import Attributes
from prchain.chains.reading.patches import file_sections, section_path
from prchain.chains.reading.substance import (
    Blobs,
    _Side,
    blob_ids,
    code_hunks,
    generated_sections,
    lexer_for,
    moved_texts,
    renamed,
    section_code_lines,
)
from prchain.core import git

if TYPE_CHECKING:
    import networkx as nx
    from sqlalchemy import Engine


def read_blobs(clone: str, ids: list[str], reader: git.CatFile | None = None) -> Blobs:
    """Texts of `ids` from the clone in one `git cat-file --batch`, or through `reader`, one
    already running (a build reads the blobs of each of thousands of PRs); missing ones are left
    out."""
    if not ids:
        return {}
    if reader is not None:
        found = {blob: reader.read(blob) for blob in ids}
        return {
            blob: read[1].decode("utf-8", errors="replace")
            for blob, read in found.items()
            if read is not None
        }
    done = git.run(
        clone, "cat-file", "--batch", input="".join(f"{i}\n" for i in ids).encode(), check=False
    )
    out, blobs, pos = done.stdout, {}, 0
    for blob in ids:
        end = out.find(b"\n", pos)
        if end < 0:
            break
        header = out[pos:end].split()
        pos = end + 1
        if len(header) != 3 or header[-1] == b"missing":  # "<id> missing" (or ambiguous)
            continue
        size = int(header[2])
        blobs[blob] = out[pos : pos + size].decode("utf-8", errors="replace")
        pos += size + 1
    return blobs


@dataclass(frozen=True)
class CodeChange:
    """Changed lines of code of a PR (distinct texts): those it writes and those it removes."""

    added: int
    removed: int

    @property
    def lines(self) -> int:
        """What a stage must reach to teach something. Writing a line is the work; finding what
        to remove is half of it, so a removed line counts half. A line rewritten is one line and
        a half, not two (bookkeeper #3646 makes a batch size configurable: 10 lines in, 2 out),
        and a change that only deletes (a deprecated API, dead code, an enum's unused variants)
        counts each line half (distributed #9222 deletes 16 lines of deprecated code, qiskit
        #7682 22)."""
        return self.added + (self.removed + 1) // 2

    @property
    def writes_code(self) -> bool:
        return self.added > 0


def patch_code_change(
    diff: str,
    clone: str | None = None,
    attributes: Attributes | None = None,
    reader: git.CatFile | None = None,
) -> CodeChange:
    """Changed lines of code of a whole PR diff. With the clone, Python files are lexed whole (see
    the module's docstring). Lines the diff only carries (re-indented, reformatted, moved) are no
    change, nor are generated files. A line written the same many times is one change: scipy
    #8404 sets `tol = 1e-15` in 14 places and #19931 sets them all to `1e-10`, 58 changed lines
    and two edits each. `reader`: the clone's running `git cat-file`, if one is."""
    blobs = read_blobs(clone, blob_ids(diff), reader) if clone else None
    sections = list(file_sections(diff))
    parsed = code_hunks(sections)
    for i in generated_sections(sections, parsed, blobs, attributes):
        del parsed[i]
    moved = moved_texts(parsed)
    added = _Side()
    removed = _Side()
    for i, section in enumerate(sections):
        if i in parsed:
            lexer = lexer_for(section_path(section))
            new, old = section_code_lines(section, blobs, moved, parsed[i])
            added.add(new, lexer, (h.new[j] for h in parsed[i] for j in h.added))
            removed.add(old, lexer, (h.old[j] for h in parsed[i] for j in h.removed))
    edited = added.comment_only(removed) | removed.comment_only(added)
    edited |= renamed(added.left(edited), removed.left(edited))
    return CodeChange(len(added.texts - edited), len(removed.texts - edited))


def patch_code_lines(
    diff: str, clone: str | None = None, attributes: Attributes | None = None
) -> int:
    """`CodeChange.lines` of a whole PR diff (`patch_code_change`)."""
    return patch_code_change(diff, clone, attributes).lines


def measure_stages(
    graph: nx.DiGraph,
    engine: Engine,
    minimum: int,
    clones: dict[int, str | None] | None = None,
    batch: int = 500,
    also: Iterable[int] = (),
    known: Mapping[int, CodeChange] | None = None,
) -> dict[int, CodeChange]:
    """Lexed code lines of every PR that has an edge (only those can be stages of a chain), and
    of the PRs in `also`; those in `known` (lexed by an earlier build) are not lexed again.

    A PR whose file counts (comments and docstrings included) are already under `minimum` keeps
    that count unlexed, as lines written: lexing only ever lowers it."""
    from sqlalchemy import select

    from prchain.store.models import PRPatch

    prs = graph.graph["prs"]
    wanted = sorted({pr for pr in graph if graph.degree(pr)} | set(also))
    measured = {
        pr: CodeChange(prs[pr].code_lines, 0) for pr in wanted if prs[pr].code_lines < minimum
    }
    measured |= {
        pr: (known or {})[pr] for pr in wanted if pr not in measured and pr in (known or {})
    }
    todo = [pr for pr in wanted if pr not in measured]
    with ExitStack() as stack, engine.connect() as conn:
        attributes = {
            repo: stack.enter_context(Attributes(clone))
            for repo, clone in (clones or {}).items()
            if todo  # nothing to lex: no git at all
        }
        readers = {
            repo: stack.enter_context(closing(git.CatFile(clone)))
            for repo, clone in (clones or {}).items()
            if clone
        }
        for start in range(0, len(todo), batch):
            chunk = todo[start : start + batch]
            query = select(PRPatch.pr_id, PRPatch.diff).where(PRPatch.pr_id.in_(chunk))
            for pr, diff in conn.execute(query):
                repo = prs[pr].repo_id
                clone = (clones or {}).get(repo)
                measured[pr] = patch_code_change(
                    diff or "", clone, attributes.get(repo), readers.get(repo)
                )
    return measured


def no_stages(
    measured: dict[int, CodeChange], minimum: int, reverting: Collection[int] = ()
) -> dict[int, str]:
    """The measured PRs that may be no stage of a chain, each with why: under `minimum` lines of
    code, or writing no line of code at all. A change that only deletes asks to find code, not to
    write any: opentelemetry-collector #2012 removes a whole processor (547 lines), nushell #11367
    an expression variant with its every use, and of the stages the hand checks of rounds 12 to 25
    judged that reach the minimum and write nothing, 6 were called thin and 2 not. A revert
    (`reverting`) only deletes too, and stays a stage where it undoes the stage before it
    (`prchain.chains.building.build._trim_reverts`). A minimum of 0 turns both rules off."""
    found: dict[int, str] = {}
    if minimum <= 0:
        return found
    for pr, change in measured.items():
        if change.lines < minimum:
            found[pr] = f"{change.lines} lines of code, under {minimum}"
        elif not change.writes_code and pr not in reverting:
            found[pr] = f"only deletes code ({change.removed} lines), writes none"
    return found


def small_changes(
    in_files: Mapping[int, int], minimum: int, reverting: Collection[int] = ()
) -> dict[int, str]:
    """The PRs of `in_files` (PR → lines it changes in source files, by the miner's per-file
    count) under `minimum`, each with why; a revert aside, and a PR of no such line (the store
    knows none of its files) left to `no_stages`. Lexing counts a removed line half, so a fix
    rewriting eight lines counts twelve and reaches the stage minimum; it teaches little (gopass
    #74 threads one more flag through #47's dmenu command in 19 lines). 0 turns it off."""
    if minimum <= 0:
        return {}
    return {
        pr: f"{changed} lines changed in source files, under {minimum}"
        for pr, changed in in_files.items()
        if 0 < changed < minimum and pr not in reverting
    }
