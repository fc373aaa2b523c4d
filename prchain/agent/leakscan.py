"""What no exported message may show: a line of any gold patch of the chain, or a hidden test name.

Every message is scanned: system and user turns, judge feedback and tool outputs (issue 20,
finding 4: a `git diff` between two refs printed an earlier stage's gold patch, and only prompts
were scanned). The rules, chosen so that ordinary code cannot trip them:

- **What is guarded.** The lines the gold code and test patches of every stage ADD. A removed line
  or a context line was in the repository the agent works on, so seeing one is no leak; such a
  line is guarded only when an earlier stage's gold patch added it (the agent's stage base has it
  reverted). Code lines are guarded in every stage. Only the code part of earlier gold patches is
  reverted at a stage entry, so stage k's test lines and hidden test names are guarded in stages
  up to k, and are part of the repository from stage k+1 on.
- **Trivial lines are not guarded**: fewer than `min_chars` non-space characters; lines made only
  of keywords, builtins and generic words (`return None`, `@property`, `else:`, `}`); import lines
  (`import os`, `from x import y`, `use a::b;`, `#include <x>`), which any file of the project
  may hold.
- **What the agent typed is not a leak.** A guarded line the agent itself wrote earlier in the
  trajectory (in its replies, reasoning or tool-call arguments) may appear in later outputs: the
  `cat` of a file it wrote. Order matters: a gold line seen before the agent wrote it is a leak,
  however the agent goes on to use it.
- **Encodings are no disguise**: base64 and hex runs in a message are decoded (and inflated when
  they are gzip, zlib, bzip2 or xz, within a bound) and scanned like the text itself.
- **Hidden test names**: the FAIL_TO_PASS tests of a verified stage whose definition the gold test
  patch adds (and the `test_*` functions it adds), matched as whole words.
"""

from __future__ import annotations

import base64
import builtins
import bz2
import contextlib
import json
import keyword
import lzma
import re
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

import ahocorasick

from prchain.agent.judge import GENERIC_WORDS

_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|[0-9]+")
_IMPORT = re.compile(
    r"^(?:import\s|from\s+\S+\s+import\s|use\s+[\w:{}, *]+;?$|#\s*include\s|require\(|package\s)"
)
_DEFINED = re.compile(r"^\+\s*(?:async\s+)?(?:def|function|fn|func)\s+([A-Za-z_]\w*)", re.MULTILINE)
_TEST_FUNCTION = re.compile(r"^\+\s*(?:async\s+)?def\s+(test_\w+)", re.MULTILINE)


@cache
def _plain_words() -> frozenset[str]:
    return frozenset(GENERIC_WORDS) | frozenset(keyword.kwlist) | frozenset(dir(builtins))


def is_trivial(line: str, min_chars: int) -> bool:
    """Too short, only keywords/builtins/generic words, or an import: not worth guarding."""
    if sum(not c.isspace() for c in line) < min_chars or _IMPORT.match(line):
        return True
    plain = _plain_words()
    return all(word in plain or word.isdigit() for word in _WORD.findall(line))


def _lines(patch: str, signs: str) -> list[str]:
    out = []
    for line in patch.splitlines():
        if line[:1] in signs and not line.startswith(("+++", "---")):
            out.append(line[1:].strip())
    return out


def guarded_lines(patches: list[str], min_chars: int) -> list[str]:
    """Per stage, in order, the gold patches (code and test) joined: the lines to guard."""
    guarded: set[str] = set()
    added_before: set[str] = set()
    for patch in patches:
        visible = set(_lines(patch, " -")) - added_before
        added = set(_lines(patch, "+"))
        guarded |= {line for line in added - visible if not is_trivial(line, min_chars)}
        added_before |= added
    return sorted(guarded, key=len, reverse=True)


@dataclass(frozen=True)
class GoldStage:
    """One stage's gold: its code patch, its test patch and its verified FAIL_TO_PASS tests."""

    code: str
    test: str = ""
    fail_to_pass: tuple[str, ...] = ()


def hidden_test_names(fail_to_pass: Iterable[str], test_patch: str) -> list[str]:
    """Test names the gold test patch introduces: the required tests it defines and its test_*."""
    added = set(_DEFINED.findall(test_patch))
    names = set(_TEST_FUNCTION.findall(test_patch))
    for node in fail_to_pass:
        name = node.rsplit("::", 1)[-1].split("[", 1)[0]
        if name in added:
            names.add(name)
    return sorted(names)


Kind = Literal["code", "test", "name"]


@dataclass(frozen=True)
class Guard:
    """What a message of stage s may not show: `code` lines always; test lines and names of
    stages s and later (`tests[k]`, `names[k]` for stage k, 1-based)."""

    code: tuple[str, ...]
    tests: dict[int, tuple[str, ...]]
    names: dict[int, tuple[str, ...]]

    def first_leak(self, messages: list[dict[str, Any]], stages: list[int]) -> str | None:
        """Why the trajectory leaks (the first guarded text a message shows before the agent
        wrote it), or None. `stages[i]` is the stage of `messages[i]`.

        One Aho-Corasick pass per message finds every guarded string at once, so the cost grows
        with the text, not with text × guarded lines (bench/bench_leakscan.py: 300 messages
        against 1,000 lines, ~1.3 s with one substring search per line, ~0.15 s here)."""
        automaton = self._automaton()
        typed: set[str] = set()
        for message, stage in zip(messages, stages, strict=True):
            if message["role"] == "assistant":
                typed.update(key for key, _, _ in _matches(automaton, _agent_text(message)))
                continue
            for key, kind, last in _matches(automaton, _views(message.get("content") or "")):
                if key not in typed and (kind == "code" or stage <= last):
                    what = "a hidden test name" if kind == "name" else "a gold-patch line"
                    return f"a {message['role']} message shows {what}"
        return None

    def _automaton(self) -> Any:
        """Every guarded string → (string, kind, last stage in which it is guarded)."""
        entries: dict[str, tuple[str, Kind, int]] = {}
        for kind, by_stage in (("name", self.names), ("test", self.tests)):
            for k in sorted(by_stage):
                entries.update({text: (text, kind, k) for text in by_stage[k]})  # type: ignore[misc]
        entries.update({line: (line, "code", 0) for line in self.code})
        automaton = ahocorasick.Automaton()
        for text, value in entries.items():
            automaton.add_word(text, value)
        automaton.make_automaton()
        return automaton


def _matches(automaton: Any, text: str) -> Iterator[tuple[str, Kind, int]]:
    """Guarded strings found in `text`; names only as whole words."""
    if not text or automaton.kind != ahocorasick.AHOCORASICK:  # no text, or nothing guarded
        return
    for end, (key, kind, last) in automaton.iter(text):
        if kind == "name" and not _whole_word(text, end - len(key) + 1, end):
            continue
        yield key, kind, last


# A tool output may carry a gold line encoded (`base64 file`, `xxd -p`, `gzip | base64`): runs
# that decode are scanned too, decompressed when they are gzip, zlib, bzip2 or xz.
_BASE64_RUN = re.compile(r"[A-Za-z0-9+/]{16,}={0,2}(?:[ \t]*\r?\n[A-Za-z0-9+/]{4,}={0,2})*")
_HEX_RUN = re.compile(r"[0-9a-fA-F]{16,}(?:[ \t\n][0-9a-fA-F]{2,})*")
MAX_DECODED = 1 << 20  # bytes decoded per message: a bound, not a filter


def _views(text: str) -> str:
    """`text`, then every decodable run in it decoded (and decompressed), one per line."""
    decoded: list[str] = []
    budget = MAX_DECODED
    for raw in _encoded_runs(text):
        for data in (raw, _decompressed(raw)):
            if data and budget > 0:
                decoded.append(data[:budget].decode("utf-8", "replace"))
                budget -= len(data)
    return "\n".join([text, *decoded]) if decoded else text


def _encoded_runs(text: str) -> Iterator[bytes]:
    for match in _BASE64_RUN.finditer(text):
        run = "".join(match.group(0).split())
        with contextlib.suppress(ValueError):
            yield base64.b64decode(run + "=" * (-len(run) % 4), validate=True)
    for match in _HEX_RUN.finditer(text):
        with contextlib.suppress(ValueError):
            yield bytes.fromhex("".join(match.group(0).split()))


def _decompressed(data: bytes) -> bytes:
    """`data` inflated when it is gzip/zlib, bzip2 or xz, never past MAX_DECODED (no bomb); only
    a run that starts with one of their magic numbers is tried."""
    with contextlib.suppress(Exception):
        if data[:2] == b"\x1f\x8b" or (data[:1] == b"\x78" and int.from_bytes(data[:2]) % 31 == 0):
            return zlib.decompressobj(47).decompress(data, MAX_DECODED)  # gzip or zlib header
        if data[:3] == b"BZh":
            return bz2.BZ2Decompressor().decompress(data, max_length=MAX_DECODED)
        if data[:6] == b"\xfd7zXZ\x00":
            return lzma.LZMADecompressor().decompress(data, max_length=MAX_DECODED)
    return b""


def _whole_word(text: str, start: int, end: int) -> bool:
    before = text[start - 1] if start > 0 else " "
    after = text[end + 1] if end + 1 < len(text) else " "
    return not (before.isalnum() or before == "_" or after.isalnum() or after == "_")


def chain_guard(stages: list[GoldStage], min_chars: int) -> Guard:
    """The guard of a chain whose stages (1, 2, ...) have this gold."""
    lines = set(guarded_lines([s.code + s.test for s in stages], min_chars))
    code = {line for s in stages for line in _lines(s.code, "+")} & lines
    tests = {
        k: tuple(sorted((set(_lines(s.test, "+")) & lines) - code)) for k, s in enumerate(stages, 1)
    }
    names = {
        k: tuple(hidden_test_names(s.fail_to_pass, s.test or s.code))
        for k, s in enumerate(stages, 1)
    }
    return Guard(tuple(sorted(code, key=len, reverse=True)), tests, names)


def _agent_text(message: dict[str, Any]) -> str:
    """Everything the agent wrote in one reply, tool-call arguments decoded (a heredoc in JSON)."""
    parts = [message.get("content") or "", message.get("reasoning_content") or ""]
    for call in message.get("tool_calls") or []:
        raw = call["function"].get("arguments") or ""
        parts.append(raw)
        with contextlib.suppress(json.JSONDecodeError, TypeError):
            parts.extend(_strings(json.loads(raw)))
    return "\n".join(parts)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return [str(value)]
