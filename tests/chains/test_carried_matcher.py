"""The carried-lines rules read lines with cydifflib's SequenceMatcher, a compiled port of
difflib's: they must decide exactly as with difflib's own, on diffs of real code edited the ways
the rules look for (renames, re-indents, moves, edits near each other) and at random."""

from __future__ import annotations

import difflib
import random
import re
from pathlib import Path

import cydifflib
import pytest

import prchain.chains.reading.carried as carried
from prchain.chains.reading.patches import file_sections
from prchain.dev.repos import git
from tests.support.history import History

SOURCES = sorted((Path(carried.__file__).parent).glob("*.py"))[:12]
_HUNK = re.compile(r"^@@ ", re.M)


def _bodies(section: str) -> list[list[str]]:
    """The hunk bodies of one file's diff (lines with their '+', '-' or ' ' prefix)."""
    parts = _HUNK.split(section)[1:]
    return [
        [line for line in part.split("\n")[1:] if line[:1] in "+- \\" and line] for part in parts
    ]


def _edited(text: str, rng: random.Random) -> str:
    """`text` with some of each kind of edit: a name renamed, lines re-indented or dropped, a
    token put in, a stretch of lines moved to the end."""
    names = sorted(set(re.findall(r"\b[a-z_]{5,}\b", text)))
    for name in rng.sample(names, min(3, len(names))):
        text = re.sub(rf"\b{name}\b", name.upper(), text)
    lines = text.split("\n")
    for at in rng.sample(range(len(lines)), min(20, len(lines))):
        roll = rng.random()
        if roll < 0.3:
            lines[at] = "    " + lines[at]
        elif roll < 0.5:
            lines[at] = ""
        elif roll < 0.8:
            lines[at] = lines[at].replace("(", "(ctx, ", 1)
        else:
            lines[at] = lines[at].replace(", ", ",\n        ", 1)
    start = rng.randrange(max(1, len(lines) - 30))
    moved = lines[start : start + 25]
    del lines[start : start + 25]
    return "\n".join(lines + moved)


def _diffs(tmp_path: Path) -> list[list[list[str]]]:
    """The file diffs of a small history of this project's own modules, edited at random."""
    repo = History(tmp_path / "repo")
    texts = {f"src/{p.name}": p.read_text() for p in SOURCES}
    repo.commit("Initial commit", dict(texts))
    rng = random.Random(53)
    for number in range(1, 5):
        for path in rng.sample(sorted(texts), 6):
            texts[path] = _edited(texts[path], rng)
        repo.pr(number, f"Edit #{number}", dict(texts))
    diffs = []
    for rev in git(repo.path, "log", "--format=%H").split()[:-1]:
        diff = git(repo.path, "diff", "-U3", f"{rev}~1", rev) + "\n"
        diffs += [bodies for s in file_sections(diff) if (bodies := _bodies(s))]
    return diffs


def test_carried_lines_are_the_same_with_difflibs_matcher(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    diffs = _diffs(tmp_path)
    fast = [carried.carried_in_patch(bodies) for bodies in diffs]
    monkeypatch.setattr(carried, "SequenceMatcher", difflib.SequenceMatcher)
    carried._tokens.cache_clear()
    assert [carried.carried_in_patch(bodies) for bodies in diffs] == fast
    assert sum(len(found) for hunks in fast for found in hunks) > 100  # the rules had work


def test_the_matchers_agree_on_lines_of_tokens() -> None:
    rng = random.Random(7)
    lines = [line for p in SOURCES for line in p.read_text().splitlines() if line.strip()]
    words = [carried.tokens(line) for line in rng.sample(lines, 400)]
    # Lines alike by accident and by edit: each against its neighbour, and against itself edited.
    pairs = list(zip(words, words[1:], strict=False))
    pairs += [(w, [t for t in w if rng.random() < 0.8] + ["x"]) for w in words]
    pairs += [([], []), ([], words[0]), (words[0], [])]
    for before, after in pairs:
        ours, theirs = (
            cydifflib.SequenceMatcher(None, autojunk=False),
            difflib.SequenceMatcher(None, autojunk=False),
        )
        for matcher in (ours, theirs):
            matcher.set_seq2(after)
            matcher.set_seq1(before)
        assert ours.real_quick_ratio() == theirs.real_quick_ratio()
        assert carried._length_bound(before, after) == theirs.real_quick_ratio()
        assert ours.quick_ratio() == theirs.quick_ratio()
        assert ours.ratio() == theirs.ratio()
        assert ours.get_opcodes() == theirs.get_opcodes()


def test_a_line_whose_tokens_stay_makes_no_edit() -> None:
    # Without a matcher, as difflib's opcodes (all "equal") would give.
    words = carried.tokens("    let total = width.saturating_mul(height);")
    assert carried.edits(words, list(words)) == frozenset()
    assert carried.edits([], []) == frozenset()


def test_what_is_found_once_per_text_is_what_was_found_each_time() -> None:
    rng = random.Random(11)
    lines = [line for p in SOURCES for line in p.read_text().splitlines() if line.strip()]
    lines += ["    Straße = 'K' + ǰoin(ﬁle)", "\ufeff  x", "    \\", ""]
    for line in rng.sample(lines, 300) + lines[-4:]:
        words = carried.tokens(line)
        assert carried._text_shape(line) == carried._shape(words)
        fold = [w.casefold() for w in words]
        assert carried._folded(line) == (
            tuple(fold),
            frozenset(w for w in fold if carried._NAME.fullmatch(w)),
        )
        assert all(carried._is_name(w) == bool(carried._NAME.fullmatch(w)) for w in words + fold)
        hay = carried.tokens(rng.choice(lines)) + words[1:] + carried.tokens(rng.choice(lines))
        needle = [t for t in words if rng.random() < 0.9]
        assert carried._one_cut(needle, hay, set(hay)) == carried._one_cut(needle, hay)
