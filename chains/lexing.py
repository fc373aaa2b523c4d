"""Pygments' `RegexLexer`, driven faster: the same tokens from fewer regex calls.

A `RegexLexer` state is a list of rules tried in order at each position, each rule one
`re.match` call from Python: Rust's root state has 40, and lexing whole files for the strings
that span lines (`substance.string_spans`) made 22 calls per token, most of a chains build's time
on ruff. Here the rules of a state are joined into one alternation, `(?P<r0>...)|(?P<r1>...)|...`:
a regex alternation tries its branches in order and takes the first that matches, which is the
rule Pygments would take, found in one call. A rule the alternation cannot hold as it is (a
backreference, whose group number would shift; a global inline flag not at its start) is tried
alone, in its place in the order. The token a rule yields is then the one Pygments' own loop
yields (`get_tokens_unprocessed` below is that loop, rule lookup aside); a rule whose action is
a callback is matched again alone, so the callback sees its own groups.

Only lexers that use `RegexLexer`'s own loop are driven so (`drive`); one that overrides it (C's
family, which renames some names afterwards) is left as it is.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from re import _parser as sre_parse  # type: ignore[attr-defined]
from types import MethodType
from typing import Any

from pygments.lexer import Lexer, RegexLexer
from pygments.token import Error, Whitespace, _TokenType

Rule = tuple[Callable[..., Any], Any, Any]  # (compiled pattern's match, action, new state)
# One step of a state's lookup: an alternation of rules from `first` on (the matching branch
# names the rule), or None and one rule's index, tried alone.
Step = tuple[Callable[[str, int], "re.Match[str] | None"] | None, int]

_REFS = {sre_parse.GROUPREF, sre_parse.GROUPREF_EXISTS}
_GLOBAL_FLAGS = re.compile(r"\(\?([aiLmsux]+)\)")
_SCOPED = {re.IGNORECASE: "i", re.MULTILINE: "m", re.DOTALL: "s", re.VERBOSE: "x"}
_STEPS: dict[type, dict[str, list[Step]]] = {}  # lexer class → state → its lookup


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


def _steps(rules: list[Rule]) -> list[Step]:
    """A state's rules as lookup steps, in their order."""
    if not rules:
        return []
    flags = rules[0][0].__self__.flags  # type: ignore[attr-defined]
    steps: list[Step] = []
    run: list[tuple[int, str]] = []

    def close() -> None:
        if run:
            joined = "|".join(f"(?P<r{i}>{pattern})" for i, pattern in run)
            try:
                steps.append((re.compile(joined, flags).match, run[0][0]))
            except (re.error, AssertionError, OverflowError):
                steps.extend((None, i) for i, _ in run)
            run.clear()

    for index, (match, _action, _state) in enumerate(rules):
        branch = _branch(match.__self__, flags)  # type: ignore[attr-defined]
        if branch is None:
            close()
            steps.append((None, index))
        else:
            run.append((index, branch))
    close()
    return steps


def _lookups(lexer: RegexLexer) -> dict[str, list[Step]]:
    cls = type(lexer)
    if cls not in _STEPS:
        _STEPS[cls] = {state: _steps(rules) for state, rules in lexer._tokens.items()}
    return _STEPS[cls]


def get_tokens_unprocessed(
    self: RegexLexer, text: str, stack: tuple[str, ...] = ("root",)
) -> Iterator[tuple[int, Any, str]]:
    """`RegexLexer.get_tokens_unprocessed` (Pygments 2.x), each state's rules looked up by
    `_steps`; everything else as there."""
    pos = 0
    tokendefs = self._tokens
    lookups = _lookups(self)
    statestack = list(stack)
    statetokens = tokendefs[statestack[-1]]
    steps = lookups[statestack[-1]]
    while True:
        m = None
        for finder, index in steps:
            if finder is None:
                rexmatch, action, new_state = statetokens[index]
                m = rexmatch(text, pos)
            elif (hit := finder(text, pos)) is not None:
                rexmatch, action, new_state = statetokens[int(hit.lastgroup[1:])]  # type: ignore[index]
                # The branch spans what the rule alone matches; a callback reads its groups.
                m = hit if action is None or type(action) is _TokenType else rexmatch(text, pos)
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
                steps = lookups[statestack[-1]]
            continue
        if pos >= len(text):
            break
        if text[pos] == "\n":
            # at EOL, reset state to "root"
            statestack = ["root"]
            statetokens = tokendefs["root"]
            steps = lookups["root"]
            yield pos, Whitespace, "\n"
            pos += 1
            continue
        yield pos, Error, text[pos]
        pos += 1
