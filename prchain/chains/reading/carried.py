"""Lines a diff only carries: re-indented, re-wrapped, reformatted or moved, with nothing of their own.

A formatter run (black over a package, rustfmt after a one-token edit) or a function moved to
another module rewrites many lines whose content stays: git shows them as removed and added, yet
nobody wrote them. Such lines are no substance of a stage, and a later PR that changes them changes
nobody's work of that PR.

A hunk is a sequence of change blocks: a run of removed lines, then a run of added lines. Lines are
compared as tokens, with quote style made one and commas, brackets and line-continuation
backslashes left out (formatters add and drop them). Within a diff:
- a block whose two runs hold the same tokens only re-indents, re-wraps or reformats: all of it is
  carried;
- an added line is carried when its text (white space dropped) lies inside its block's removed run
  (a line re-indented, wrapped or joined), or when it is a stretch of the removed run's tokens with
  one shorter stretch cut out of it (`cfg!(x) && big(f)` becoming `big(f)`: the removed line is
  the edit and counts); a removed line is carried when an added line of its block has its text;
- a whole run whose tokens (at least `MIN_MOVED_TOKENS`) appear in a run of the other side anywhere
  in the diff is moved code, carried on both sides (a function moved to another file; code wrapped
  in a new block, whose new first line alone is then the change);
- a removed line and the added line it lines up with in its block are one edit applied over and
  over, carried on both sides, when the diff makes each of the line's edits on at least
  `MIN_REPEATED_LINES` lines. Lines line up by their shape (names blanked, as diff lines up texts),
  and those left over with the most alike line near their place (`MIN_LIKENESS`). An edit is a
  stretch of tokens put for another, inserted or deleted. A rename is one (hyper #2966 puts
  `Recv` for `Body` on 236 lines), and so is a search and replace (scipy #416 writes `numpy.`
  before `abs(` on 31 lines). An insertion or a deletion is the same edit whatever it sits
  beside: dropping `crate` from `pub(crate)` is one edit whichever name follows, and so is putting
  a `ctx` argument into many different calls (jaeger #6534). An edit made on one or two lines is
  the PR's own;
- code moved to another file and edited on the way (made public, its names renamed) is lined up
  too: a changed line no block lined up is paired with the most alike line of the other side
  anywhere in the diff (`MIN_MOVED_LIKENESS`) that shares one of its rarer names, and such pairs
  count their edits with the others. vello #1744 moves a clip stack, a pool and filter types from
  one crate to another, turning `pub(crate)` into `pub` on 40 lines. Names are compared
  case-folded, and a name whose letters only change case is one edit whatever the name: Go
  exports what it moves into another package (opentelemetry-collector #10854).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator, Sequence
from functools import lru_cache
from itertools import chain

from cydifflib import SequenceMatcher

from prchain.chains.reading.generated import MAX_CODE_LINE_CHARS

_TOKEN = re.compile(r"\w+|[^\w\s,()\[\]{}\\]")
MIN_SUBSTRING = 6  # shorter texts are found inside any block by accident: they must match whole
MIN_MOVED_TOKENS = 8  # shorter runs (`return x`, `}`) recur everywhere: no evidence of a move
MAX_BLOCK_TOKENS = 1500  # a line is looked for token by token only in runs up to this size
_SEP = "\x1f"  # joins tokens into text that substring search can scan
_NAME = re.compile(r"[A-Za-z_]\w*")
MIN_REPEATED_LINES = 3  # an edit made on fewer lines is the PR's own, not one applied over and over
MAX_BLOCK_PAIRS = 40_000  # removed × added lines of a block lined up for repeated edits, at most
MIN_LIKENESS = 0.6  # lines less alike (difflib's ratio of their tokens) are rewritten, not edited
LIKENESS_WINDOW = 3  # a line left over is lined up with one this near its place in the other run
MIN_MOVED_LIKENESS = 0.75  # a line lined up across the diff must be more alike than within a block
MIN_MOVED_TOKENS_PER_LINE = 3  # shorter lines (`}`, `else:`, `Ok(())`) are alike by accident
MAX_ANCHOR_LINES = 40  # a name on more of the other side's lines is too common to pair lines by
Edit = tuple[tuple[str, ...], tuple[str, ...]]  # tokens put for tokens
Place = tuple[int, int]  # (hunk, position in its body) of a changed line
# A name whose letters only change case, as Go exports what it moves into another package: one edit
# however many names it is made to.
RECASED: Edit = (("\0recased",), ("\0recased",))


def flat(text: str) -> str:
    """A line without white space, quote style made one."""
    return "".join(text.split()).replace("'", '"')


def tokens(text: str) -> list[str]:
    """A line's tokens (see the module); found once per text, as several rules read one line."""
    return list(_tokens(text))


@lru_cache(maxsize=1 << 16)
def _tokens(text: str) -> tuple[str, ...]:
    return tuple(_TOKEN.findall(text.replace("'", '"')))


def _run_tokens(lines: Sequence[str]) -> list[str]:
    return list(chain.from_iterable(map(_tokens, lines)))


@lru_cache(maxsize=1 << 16)
def _folded(text: str) -> tuple[tuple[str, ...], frozenset[str]]:
    """A line's tokens case-folded, and the names among them (`_moved_and_edited`)."""
    fold = tuple(word.casefold() for word in _tokens(text))
    return fold, frozenset(word for word in fold if _is_name(word))


@lru_cache(maxsize=1 << 16)
def _is_name(token: str) -> bool:
    """Whether a token is a name; asked of the same few thousand tokens over and over."""
    return _NAME.fullmatch(token) is not None


def _joined(words: Sequence[str]) -> str:
    return _SEP + _SEP.join(words) + _SEP


def _one_cut(needle: list[str], hay: list[str], hay_words: set[str] | None = None) -> bool:
    """Whether `needle` is a stretch of `hay` with at most one shorter stretch cut out of it;
    `hay_words`: `set(hay)`, where the caller asks of one hay over and over."""
    if hay_words is None:
        hay_words = set(hay)
    if not needle or len(needle) > len(hay) or not set(needle) <= hay_words:
        return False
    size = len(needle)
    for start, token in enumerate(hay):
        if token != needle[0]:
            continue
        kept = 1
        while kept < size and start + kept < len(hay) and hay[start + kept] == needle[kept]:
            kept += 1
        if kept == size:
            return True
        rest = needle[kept:]
        for cut in range(1, size + 1):
            at = start + kept + cut
            if hay[at : at + len(rest)] == rest:
                return True
    return False


def _carried_in_block(
    removed: list[str], added: list[str], removed_tokens: list[str], added_tokens: list[str]
) -> tuple[set[int], set[int]]:
    """(removed, added) indexes of one block's lines that only carry the other run's content;
    `removed_tokens` and `added_tokens` are their runs' tokens (`_run_tokens`)."""
    if not removed or not added:
        return set(), set()
    if removed_tokens == added_tokens:
        return set(range(len(removed))), set(range(len(added)))
    removed_flats = list(map(flat, removed))
    removed_flat = "".join(removed_flats)
    removed_whole = set(removed_flats)
    by_tokens = len(removed_tokens) <= MAX_BLOCK_TOKENS
    removed_words = set(removed_tokens) if by_tokens else None
    kept_added: set[int] = set()
    for i, line in enumerate(added):
        text = flat(line)
        if not text:
            continue
        if text in removed_whole or (
            len(text) >= MIN_SUBSTRING
            and (
                text in removed_flat
                or (by_tokens and _one_cut(tokens(line), removed_tokens, removed_words))
            )
        ):
            kept_added.add(i)
    added_whole = set(map(flat, added))
    kept_removed = {i for i, text in enumerate(removed_flats) if text and text in added_whole}
    return kept_removed, kept_added


def change_blocks(body: Sequence[str]) -> Iterator[tuple[list[int], list[int]]]:
    """(positions of removed lines, positions of added lines) of each change block of a hunk's body
    (its lines with their '+', '-' or ' ' prefix)."""
    removed: list[int] = []
    added: list[int] = []
    for pos, line in enumerate(body):
        mark = line[:1]
        if mark == "-" and not added:
            removed.append(pos)
        elif mark == "+":
            added.append(pos)
        elif mark == "\\":
            continue  # "\ No newline at end of file"
        else:
            if removed or added:
                yield removed, added
            removed, added = ([pos], []) if mark == "-" else ([], [])
    if removed or added:
        yield removed, added


def carried_in_patch(bodies: Sequence[Sequence[str]]) -> list[set[int]]:
    """For each hunk body of one diff (lines with their '+', '-' or ' ' prefix), the positions of
    its changed lines that are only carried (see the module)."""
    as_they_were, edited = carried_kinds(bodies)
    return [kept | made for kept, made in zip(as_they_were, edited, strict=True)]


def carried_kinds(bodies: Sequence[Sequence[str]]) -> tuple[list[set[int]], list[set[int]]]:
    """`carried_in_patch` in two kinds: the positions of lines carried as they were (re-indented,
    re-wrapped, reformatted, moved: their tokens stay), and those of lines carried by an edit the
    diff makes over and over (a rename, a search and replace), whose tokens change."""
    blocks = [
        (hunk, removed, added)
        for hunk, body in enumerate(bodies)
        for removed, added in change_blocks(body)
    ]
    found: list[set[int]] = [set() for _ in bodies]
    # Per block, the joined tokens of each side's run; a run is moved when the other side holds
    # its tokens in some other block (within its own block, the rules above decide).
    runs: list[dict[str, tuple[list[int], str]]] = []
    for hunk, removed, added in blocks:
        body = bodies[hunk]
        old = [body[p][1:] for p in removed]
        new = [body[p][1:] for p in added]
        old_tokens, new_tokens = _run_tokens(old), _run_tokens(new)
        gone, kept = _carried_in_block(old, new, old_tokens, new_tokens)
        found[hunk].update(removed[i] for i in gone)
        found[hunk].update(added[i] for i in kept)
        runs.append(
            {
                "-": (removed, _joined(old_tokens) if old else ""),
                "+": (added, _joined(new_tokens) if new else ""),
            }
        )
    as_they_were = [set(positions) for positions in found]
    _mark_repeated_edits(bodies, blocks, found)
    every = {side: "".join(run[side][1] for run in runs) for side in "-+"}
    for (hunk, _, _), run in zip(blocks, runs, strict=True):
        for side, other in (("-", "+"), ("+", "-")):
            positions, text = run[side]
            if text.count(_SEP) - 1 < MIN_MOVED_TOKENS:
                continue
            if every[other].count(text) > run[other][1].count(text):
                found[hunk].update(positions)
                as_they_were[hunk].update(positions)
    edited = [marked - kept for marked, kept in zip(found, as_they_were, strict=True)]
    return as_they_were, edited


def _shape(words: Sequence[str]) -> tuple[str, ...]:
    """A line's tokens with every name blanked: what a rename leaves as it was."""
    return tuple("" if _is_name(token) else token for token in words)


@lru_cache(maxsize=1 << 16)
def _text_shape(text: str) -> tuple[str, ...]:
    """`_shape` of a line's tokens, found once per text."""
    return _shape(_tokens(text))


def _renamed(before: list[str], after: list[str]) -> frozenset[tuple[str, str]]:
    """The (old name, new name) pairs that turn the tokens `before` into `after` one by one;
    empty when the two differ in anything else."""
    if len(before) != len(after):
        return frozenset()
    pairs = {(a, b) for a, b in zip(before, after, strict=True) if a != b}
    if all(_is_name(a) and _is_name(b) for a, b in pairs):
        return frozenset(pairs)
    return frozenset()


def edits(before: list[str], after: list[str]) -> frozenset[Edit]:
    """The edits that turn the tokens `before` into `after`: names put for names one by one (a
    rename; one `RECASED` edit for names whose letters only change case), else difflib's
    replacements, insertions and deletions, the last two read alone ("insert `numpy.`", "drop
    `crate`", "insert `ctx`"), whatever token they sit beside. Empty when the lines are less alike
    than `MIN_LIKENESS`."""
    if before == after:
        return frozenset()  # what difflib's opcodes, all "equal", would give
    if renamed := _renamed(before, after):
        return frozenset(
            RECASED if old.casefold() == new.casefold() else ((old,), (new,))
            for old, new in renamed
        )
    matcher = SequenceMatcher(None, before, after, autojunk=False)
    if matcher.ratio() < MIN_LIKENESS:
        return frozenset()
    return frozenset(
        (tuple(before[i1:i2]), tuple(after[j1:j2]))
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    )


def _matcher(after: Sequence[str]) -> SequenceMatcher[str]:
    """A matcher of one line's tokens against those of others (`set_seq1`), as
    `SequenceMatcher(None, before, after, autojunk=False)` is: the index of `after`, which it
    builds, and the counts its `quick_ratio` takes, are built once for every line compared."""
    matcher = SequenceMatcher(None, autojunk=False)
    matcher.set_seq2(after)
    return matcher


def _length_bound(before: Sequence[str], after: Sequence[str]) -> float:
    """`SequenceMatcher(None, before, after).real_quick_ratio()`, reckoned as difflib does, without
    a matcher: the likeness the lines' lengths allow."""
    total = len(before) + len(after)
    return 2.0 * min(len(before), len(after)) / total if total else 1.0


def _lined_up(
    old_words: list[list[str]],
    new_words: list[list[str]],
    shapes: tuple[list[tuple[str, ...]], list[tuple[str, ...]]] | None = None,
) -> Iterator[tuple[int, int]]:
    """(removed, added) indexes of the lines of one block that line up: by shape first, as diff
    lines up texts; then each removed line left over with the most alike added line left over near
    its place, in order. `shapes`: the lines' `_shape`s where the caller has them."""
    old_shapes, new_shapes = shapes or (list(map(_shape, old_words)), list(map(_shape, new_words)))
    shapes_matcher = SequenceMatcher(None, old_shapes, new_shapes, autojunk=False)
    paired: dict[int, int] = {}
    for left, right, size in shapes_matcher.get_matching_blocks():
        paired.update((left + k, right + k) for k in range(size))
    taken = set(paired.values())
    last = -1
    scale = len(new_words) / len(old_words)
    matchers: dict[int, SequenceMatcher[str]] = {}  # added line → a matcher of it (`_matcher`)
    for k in range(len(old_words)):
        if k in paired:
            last = paired[k]
            continue
        near = round(k * scale)
        best, likeness = -1, MIN_LIKENESS
        for j in range(max(last + 1, near - LIKENESS_WINDOW), near + LIKENESS_WINDOW + 1):
            if j >= len(new_words) or j in taken:
                continue
            # The cheap upper bounds first: ratio() is quadratic in a line's tokens.
            if _length_bound(old_words[k], new_words[j]) < likeness:
                continue
            if j not in matchers:
                matchers[j] = _matcher(new_words[j])
            pair = matchers[j]
            pair.set_seq1(old_words[k])
            if pair.quick_ratio() < likeness:
                continue
            if (ratio := pair.ratio()) >= likeness:
                best, likeness = j, ratio
        if best >= 0:
            paired[k] = last = best
            taken.add(best)
    yield from paired.items()


def _mark_repeated_edits(
    bodies: Sequence[Sequence[str]],
    blocks: list[tuple[int, list[int], list[int]]],
    found: list[set[int]],
) -> None:
    """Mark carried the line pairs whose edits the diff makes over and over (see the module)."""
    candidates: list[tuple[Place, Place, frozenset[Edit]]] = []
    left: dict[str, list[Place]] = {"-": [], "+": []}  # changed lines no block lined up
    for hunk, removed, added in blocks:
        body = bodies[hunk]
        # A line longer than code anyone writes is a minified bundle or data (tauri's bundled
        # scripts): no edit of it is made by hand, and lining such lines up took hours.
        removed = [p for p in removed if len(body[p]) <= MAX_CODE_LINE_CHARS]
        added = [p for p in added if len(body[p]) <= MAX_CODE_LINE_CHARS]
        lined: dict[int, int] = {}
        if removed and added and len(removed) * len(added) <= MAX_BLOCK_PAIRS:
            old_words = [tokens(body[p][1:]) for p in removed]
            new_words = [tokens(body[p][1:]) for p in added]
            shapes = (
                [_text_shape(body[p][1:]) for p in removed],
                [_text_shape(body[p][1:]) for p in added],
            )
            lined = dict(_lined_up(old_words, new_words, shapes))
            for k, j in lined.items():
                if made := edits(old_words[k], new_words[j]):
                    candidates.append(((hunk, removed[k]), (hunk, added[j]), made))
        paired = set(lined.values())
        left["-"] += [(hunk, p) for k, p in enumerate(removed) if k not in lined]
        left["+"] += [(hunk, p) for j, p in enumerate(added) if j not in paired]
    candidates += _moved_and_edited(bodies, left, found)
    uses = Counter(edit for *_, made in candidates for edit in made)
    for (old_hunk, old), (new_hunk, new), made in candidates:
        if all(uses[edit] >= MIN_REPEATED_LINES for edit in made):
            found[old_hunk].add(old)
            found[new_hunk].add(new)


def _moved_and_edited(
    bodies: Sequence[Sequence[str]], left: dict[str, list[Place]], found: list[set[int]]
) -> Iterator[tuple[Place, Place, frozenset[Edit]]]:
    """Pairs of changed lines anywhere in the diff, not yet carried nor lined up in their block,
    that are alike enough to be one line moved and edited, with their edits. A line is looked
    for only among the other side's lines that share one of its two rarest names."""

    def words(place: Place) -> list[str]:
        return tokens(bodies[place[0]][place[1]][1:])

    def folded(place: Place) -> tuple[tuple[str, ...], frozenset[str]] | None:
        hunk, pos = place
        if pos in found[hunk]:
            return None
        line = _folded(bodies[hunk][pos][1:])
        return line if len(line[0]) >= MIN_MOVED_TOKENS_PER_LINE else None

    # Names are compared case-folded: code moved into another Go package is exported on the way
    # (opentelemetry-collector #10854 moves `serviceHost` and its `receivers` field into
    # `graph.Host` and `Receivers`).
    olds = {place: line for place in left["-"] if (line := folded(place))}
    by_name: dict[str, list[Place]] = {}
    for place, (_, line_names) in olds.items():
        for name in line_names:
            by_name.setdefault(name, []).append(place)
    taken: set[Place] = set()
    for place in left["+"]:
        if not (line := folded(place)):
            continue
        fold, line_names = line
        # The two rarest names, by (lines, name).
        rarest = sorted((len(by_name[n]), n) for n in line_names if n in by_name)[:2]
        near = {old for lines, n in rarest if lines <= MAX_ANCHOR_LINES for old in by_name[n]}
        candidates = sorted(near - taken)
        best, likeness, pair = None, MIN_MOVED_LIKENESS, None
        for old in candidates:
            other = olds[old][0]
            if _length_bound(other, fold) < likeness:  # most candidates stop here
                continue
            if pair is None:  # made for the first candidate that gets this far
                pair = _matcher(fold)
            pair.set_seq1(other)
            if pair.quick_ratio() < likeness:
                continue
            if (ratio := pair.ratio()) >= likeness:
                best, likeness = old, ratio
        if best is not None and (made := edits(words(best), words(place))):
            taken.add(best)
            yield best, place, made
