"""Pygments' `RegexLexer`, driven faster: the same tokens from fewer regex calls.

A `RegexLexer` state is a list of rules tried in order at each position, each rule one
`re.match` call from Python: Rust's root state has 43, and lexing whole files for the strings
that span lines (`substance.string_spans`) made 22 calls per token, most of a chains build's time
on ruff. Here, at each position, only the rules that may match where the next character stands
are tried (the characters a pattern may begin with are read from its parsed form; beyond ASCII
every rule is tried), and those are joined into one alternation, `(?P<r0>...)|(?P<r1>...)|...`:
a regex alternation tries its branches in order and takes the first that matches, which is the
rule Pygments would take, found in one call. A rule the alternation cannot hold as it is (a
backreference, whose group number would shift; a global inline flag not at its start) is tried
alone, in its place in the order. The token a rule yields is then the one Pygments' own loop
yields (`get_tokens_unprocessed` below is that loop, rule lookup aside); a rule whose action is
a callback is matched again alone, so the callback sees its own groups. Three times faster on
Rust, Python and Go.

Only lexers that use `RegexLexer`'s own loop are driven so (`drive`); one that overrides it (C's
family, which renames some names afterwards) is left as it is.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from functools import cache
from re import _parser as sre_parse  # type: ignore[attr-defined]
from types import MethodType
from typing import Any

from pygments.lexer import Lexer, RegexLexer
from pygments.token import Error, Whitespace, _TokenType

Rule = tuple[Callable[..., Any], Any, Any]  # (compiled pattern's match, action, new state)
# One lookup step: an alternation's match and, by group number, the rule each branch is; or None
# and the index of one rule, tried alone.
LexStep = tuple[Callable[[str, int], "re.Match[str] | None"] | None, Any]

_REFS = {sre_parse.GROUPREF, sre_parse.GROUPREF_EXISTS}
_GLOBAL_FLAGS = re.compile(r"\(\?([aiLmsux]+)\)")
_SCOPED = {re.IGNORECASE: "i", re.MULTILINE: "m", re.DOTALL: "s", re.VERBOSE: "x"}


def drive(lexer: Lexer) -> Lexer:
    """The lexer, its `get_tokens_unprocessed` the faster loop where it uses `RegexLexer`'s."""
    if type(lexer).get_tokens_unprocessed is RegexLexer.get_tokens_unprocessed:
        lexer.get_tokens_unprocessed = MethodType(get_tokens_unprocessed, lexer)  # type: ignore[method-assign]
    return lexer


def _has_ref(parsed: Any) -> bool:
    """Whether a parsed pattern refers back to a group (`\\1`, `(?(1)...)`)."""
    for op, arg in parsed:
        if op in _REFS:
            return True
        for item in arg if isinstance(arg, list | tuple) else (arg,):
            subs = item if isinstance(item, list | tuple) else (item,)
            if any(isinstance(s, sre_parse.SubPattern) and _has_ref(s) for s in subs):
                return True
    return False


def _branch(compiled: re.Pattern[str], flags: int) -> str | None:
    """A rule's pattern as a branch of an alternation compiled with `flags`, or None where it
    cannot be one as it is."""
    pattern = compiled.pattern
    if not isinstance(pattern, str):
        return None
    try:
        if _has_ref(sre_parse.parse(pattern, compiled.flags)):
            return None
    except (re.error, TypeError, ValueError):
        return None
    if lead := _GLOBAL_FLAGS.match(pattern):
        pattern = pattern[lead.end() :]  # its flags are in `compiled.flags`, scoped below
    if _GLOBAL_FLAGS.search(pattern):
        return None
    want = compiled.flags
    if (want ^ flags) & ~sum(_SCOPED):
        return None  # a flag no scoped group can set (ASCII, LOCALE)
    on = "".join(c for f, c in _SCOPED.items() if want & f and not flags & f)
    off = "".join(c for f, c in _SCOPED.items() if flags & f and not want & f)
    if on or off:
        pattern = f"(?{on}{'-' + off if off else ''}:{pattern})"
    try:
        re.compile(pattern, flags)
    except re.error:
        return None
    return pattern


ASCII = frozenset(map(chr, range(128)))


_ESCAPES = {  # a category's constant → its escape (`\\s`, `\\w`, ...)
    spec[1][0][1]: escape
    for escape, spec in sre_parse.CATEGORIES.items()
    if spec[0] is sre_parse.IN and spec[1][0][0] is sre_parse.CATEGORY
}


def _class(items: Any, flags: int) -> frozenset[str]:
    """The ASCII characters a character class (`[...]`, `\\w`) of a parsed pattern takes."""
    found: set[str] = set()
    negate = False
    for op, arg in items:
        if op is sre_parse.NEGATE:
            negate = True
        elif op is sre_parse.LITERAL:
            found.add(chr(arg))
        elif op is sre_parse.RANGE:
            found.update(chr(c) for c in range(arg[0], arg[1] + 1) if c < 128 or c == arg[0])
        elif op is sre_parse.CATEGORY and arg in _ESCAPES:
            escape = _ESCAPES[arg]
            found.update(c for c in ASCII if re.fullmatch(escape, c, flags & re.ASCII))
        else:
            return ASCII
    if flags & re.IGNORECASE and not found <= ASCII:
        return ASCII  # a letter beyond ASCII may fold to one in it (KELVIN SIGN to `k`)
    return ASCII - found if negate else frozenset(found)


def _first(parsed: Any, flags: int) -> tuple[frozenset[str], bool]:
    """The ASCII characters a match of a parsed pattern may begin with, and whether it may be
    empty (then what follows it may begin the match). Where unsure: every character."""
    found: set[str] = set()
    for op, arg in parsed:
        if op is sre_parse.LITERAL:
            chars, empty = frozenset({chr(arg)}), False
        elif op is sre_parse.NOT_LITERAL or op is sre_parse.ANY:
            chars, empty = ASCII, False
        elif op is sre_parse.IN:
            chars, empty = _class(arg, flags), False
        elif op is sre_parse.SUBPATTERN:
            _group, add, remove, sub = arg
            chars, empty = _first(sub, (flags | add) & ~remove)
        elif op is sre_parse.BRANCH:
            parts = [_first(branch, flags) for branch in arg[1]]
            chars = frozenset().union(*(c for c, _ in parts))
            empty = any(e for _, e in parts)
        elif op in (sre_parse.MAX_REPEAT, sre_parse.MIN_REPEAT, sre_parse.POSSESSIVE_REPEAT):
            low, _high, sub = arg
            chars, empty = _first(sub, flags)
            empty = empty or low == 0
        elif op in (sre_parse.AT, sre_parse.ASSERT, sre_parse.ASSERT_NOT):
            chars, empty = frozenset(), True  # zero width: what follows begins the match
        else:
            return ASCII, True
        if flags & re.IGNORECASE:
            chars = ASCII if not chars <= ASCII else chars | {c.swapcase() for c in chars}
        if flags & re.LOCALE:
            chars = ASCII
        found.update(chars)
        if not empty:
            return frozenset(found), False
    return frozenset(found), True


def _begins(patterns: list[str], flags: int) -> frozenset[str] | None:
    """The ASCII characters a match of one of `patterns` may begin with (None: any)."""
    found: set[str] = set()
    for pattern in patterns:
        try:
            parsed = sre_parse.parse(pattern, flags)
            chars, empty = _first(parsed, parsed.state.flags)  # with its inline flags
        except (re.error, TypeError, ValueError):
            return None
        if empty or chars >= ASCII:
            return None
        found |= chars
    return frozenset(found)


def _rule_begins(rule: Rule) -> frozenset[str] | None:
    compiled = rule[0].__self__  # type: ignore[attr-defined]
    pattern = compiled.pattern
    return _begins([pattern], compiled.flags) if isinstance(pattern, str) else None


class _State:
    """One lexer state's rules, looked up by the next character of the text: the rules that may
    match where it stands (`_begins`), in their order, consecutive ones joined into one
    alternation (`_branch`), each other one tried alone. Built per character when first met."""

    def __init__(self, rules: list[Rule]) -> None:
        self.flags = rules[0][0].__self__.flags if rules else 0  # type: ignore[attr-defined]
        self.branches = [_branch(r[0].__self__, self.flags) for r in rules]  # type: ignore[attr-defined]
        self.begins = [_rule_begins(rule) for rule in rules]
        self.by_char: dict[str, list[LexStep]] = {}
        self._joined: dict[tuple[int, ...], list[LexStep]] = {}

    def steps(self, char: str) -> list[LexStep]:
        """The steps where the next character is `char` ("" at the end of the text)."""
        if char not in self.by_char:
            known = char in ASCII  # beyond ASCII (and at the end) every rule is tried
            self.by_char[char] = self._join(
                [i for i, b in enumerate(self.begins) if not known or b is None or char in b]
            )
        return self.by_char[char]

    def _join(self, indexes: list[int]) -> list[LexStep]:
        steps: list[LexStep] = []
        run: list[int] = []
        for index in indexes:
            if self.branches[index] is None:
                steps += self._run(run)
                steps.append((None, index))
                run = []
            else:
                run.append(index)
        return steps + self._run(run)

    def _run(self, run: list[int]) -> list[LexStep]:
        """Rules that may all be branches, as one step (a rule alone: its own pattern)."""
        key = tuple(run)
        if len(run) < 2:
            return [(None, index) for index in run]
        if key not in self._joined:
            joined = "|".join(f"(?P<{_NAME}{i}>{self.branches[i]})" for i in run)
            try:
                compiled = re.compile(joined, self.flags)
            except (re.error, AssertionError, OverflowError):
                self._joined[key] = [(None, index) for index in run]
            else:
                # The matching branch is the last group closed (`lastindex`): its rule.
                owner = [0] * (compiled.groups + 1)
                for name, number in compiled.groupindex.items():
                    if name.startswith(_NAME):
                        owner[number] = int(name[len(_NAME) :])
                self._joined[key] = [(compiled.match, owner)]
        return self._joined[key]


_NAME = "_prchain_rule"  # the groups that name a branch's rule
_STATES: dict[type, dict[str, _State]] = {}  # lexer class → state → its lookup


def _states(lexer: RegexLexer) -> dict[str, _State]:
    cls = type(lexer)
    if cls not in _STATES:
        _STATES[cls] = {state: _State(rules) for state, rules in lexer._tokens.items()}
    return _STATES[cls]


@cache
def _by_name(alias: str) -> Lexer | None:
    """`get_lexer_by_name(alias)`, driven, found once per name (None where Pygments has none)."""
    from pygments.lexers import get_lexer_by_name
    from pygments.util import ClassNotFound

    try:
        return drive(get_lexer_by_name(alias))
    except ClassNotFound:
        return None


def _markdown_codeblock(self: Any, match: re.Match[str]) -> Iterator[tuple[int, Any, str]]:
    """`MarkdownLexer._handle_codeblock` (Pygments 2.x), its block's lexer `_by_name`'s: Pygments
    finds one anew for every fenced block (about a thousand globs tried) and lexes the block with
    `RegexLexer`'s own loop."""
    from pygments.lexer import do_insertions
    from pygments.token import String, Text

    yield match.start("initial"), String.Backtick, match.group("initial")
    yield match.start("lang"), String.Backtick, match.group("lang")
    if match.group("afterlang") is not None:
        yield match.start("whitespace"), Whitespace, match.group("whitespace")
        yield match.start("extra"), Text, match.group("extra")
    yield match.start("newline"), Whitespace, match.group("newline")
    lexer = _by_name(match.group("lang").strip()) if self.handlecodeblocks else None
    code = match.group("code")
    if lexer is None:
        yield match.start("code"), String, code
    else:
        start = match.start("code")
        for index, token, value in do_insertions([], lexer.get_tokens_unprocessed(code)):
            yield index + start, token, value
    yield match.start("terminator"), String.Backtick, match.group("terminator")


@cache
def _callbacks() -> dict[Any, Any]:
    """Pygments' callbacks that lex embedded code with a lexer they find themselves → ours."""
    from pygments.lexers.markup import MarkdownLexer

    return {MarkdownLexer._handle_codeblock: _markdown_codeblock}


_TOKENDEFS: dict[type, dict[str, list[Rule]]] = {}  # lexer class → its rules, callbacks swapped


def _tokendefs(lexer: RegexLexer) -> dict[str, list[Rule]]:
    """The lexer's rules (`_tokens`), a callback of `_callbacks` put for its own."""
    cls = type(lexer)
    if cls not in _TOKENDEFS:
        swaps = _callbacks()
        _TOKENDEFS[cls] = {
            state: [(match, swaps.get(action, action), new) for match, action, new in rules]
            for state, rules in lexer._tokens.items()
        }
    return _TOKENDEFS[cls]


def get_tokens_unprocessed(
    self: RegexLexer, text: str, stack: tuple[str, ...] = ("root",), start: int = 0
) -> Iterator[tuple[int, Any, str]]:
    """`RegexLexer.get_tokens_unprocessed` (Pygments 2.x), each state's rules looked up by
    `_State.steps` and a few callbacks swapped (`_tokendefs`); everything else as there. `start`:
    the offset to begin at, with the state stack `stack` (the text before it is only looked
    back at, as lexing the whole text would)."""
    pos = start
    end = len(text)
    tokendefs = _tokendefs(self)
    states = _states(self)
    statestack = list(stack)
    statetokens = tokendefs[statestack[-1]]
    state = states[statestack[-1]]
    while True:
        char = text[pos] if pos < end else ""
        steps = state.by_char.get(char)
        if steps is None:
            steps = state.steps(char)
        m = None
        for finder, which in steps:
            if finder is None:
                rexmatch, action, new_state = statetokens[which]  # type: ignore[index]
                m = rexmatch(text, pos)
            else:
                m = finder(text, pos)
                if m is not None:
                    rexmatch, action, new_state = statetokens[which[m.lastindex]]  # type: ignore[index]
                    if action is not None and type(action) is not _TokenType:
                        m = rexmatch(text, pos)  # a callback reads the rule's own groups
            if m:
                break
        if m:
            if action is not None:
                if type(action) is _TokenType:
                    yield pos, action, m.group()
                else:
                    yield from action(self, m)
            pos = m.end()
            if new_state is not None:
                if isinstance(new_state, tuple):
                    for state in new_state:
                        if state == "#pop":
                            if len(statestack) > 1:
                                statestack.pop()
                        elif state == "#push":
                            statestack.append(statestack[-1])
                        else:
                            statestack.append(state)
                elif isinstance(new_state, int):
                    # pop, but keep at least one state on the stack
                    if abs(new_state) >= len(statestack):
                        del statestack[1:]
                    else:
                        del statestack[new_state:]
                elif new_state == "#push":
                    statestack.append(statestack[-1])
                else:
                    raise AssertionError(f"wrong state def: {new_state!r}")
                statetokens = tokendefs[statestack[-1]]
                state = states[statestack[-1]]
            continue
        if pos >= end:
            break
        if text[pos] == "\n":
            # at EOL, reset state to "root"
            statestack = ["root"]
            statetokens = tokendefs["root"]
            state = states["root"]
            yield pos, Whitespace, "\n"
            pos += 1
            continue
        yield pos, Error, text[pos]
        pos += 1
