"""Per-trajectory quantities of the paper's Figure 2: steps, response tokens, redundant views,
and G* coverage. Trajectories are OpenAI chat messages, as stored and exported."""

from __future__ import annotations

import json
import posixpath
import re
import shlex
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from prchain.llm.protocol import Message

EOF_LINE = 10**9  # a whole-file view covers [1, EOF]
_SED_RANGE = re.compile(r"^(\d+)(?:,(\d+))?p$")


@dataclass(frozen=True)
class View:
    path: str
    start: int
    end: int


def _norm(path: str) -> str:
    path = re.sub(r"^/(?:workspace|testbed|work)/(?:repo/)?", "", path)
    return posixpath.normpath(path)


def _editor_view(args: dict[str, Any]) -> View | None:
    if args.get("command") != "view" or not isinstance(args.get("path"), str):
        return None
    rng = args.get("view_range")
    if isinstance(rng, list) and len(rng) == 2:
        start, end = int(rng[0]), int(rng[1])
        return View(_norm(args["path"]), start, EOF_LINE if end == -1 else end)
    return View(_norm(args["path"]), 1, EOF_LINE)


def _bash_view(command: str) -> View | None:
    """`cat FILE` and `sed -n 'a,bp' FILE` are views too; anything piped or compound is not."""
    if any(sym in command for sym in ("|", ";", "&&", ">")):
        return None
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if len(words) == 2 and words[0] == "cat":
        return View(_norm(words[1]), 1, EOF_LINE)
    if len(words) == 4 and words[:2] == ["sed", "-n"] and (m := _SED_RANGE.match(words[2])):
        start = int(m.group(1))
        return View(_norm(words[3]), start, int(m.group(2) or start))
    return None


def views(messages: Iterable[Message]) -> list[View]:
    found = []
    for message in messages:
        for call in message.get("tool_calls") or []:
            function = call.get("function", {})
            try:
                args = json.loads(function.get("arguments") or "{}")
            except json.JSONDecodeError:
                continue
            if not isinstance(args, dict):
                continue
            view = (
                _editor_view(args)
                if function.get("name") == "str_replace_editor"
                else _bash_view(str(args.get("command", "")))
                if function.get("name") == "bash"
                else None
            )
            if view is not None:
                found.append(view)
    return found


def redundant_view_fraction(messages: Sequence[Message], *, union: bool = False) -> float:
    """Share of views whose lines an earlier view of the same file already showed in full.

    By default one earlier view must cover it; `union=True` lets several earlier views together.
    """
    seen = views(messages)
    if not seen:
        return 0.0
    redundant = 0
    for i, view in enumerate(seen):
        earlier = [v for v in seen[:i] if v.path == view.path]
        if union:
            covered = _covered_by_union(view, earlier)
        else:
            covered = any(v.start <= view.start and view.end <= v.end for v in earlier)
        redundant += covered
    return redundant / len(seen)


def _covered_by_union(view: View, earlier: list[View]) -> bool:
    reach = view.start
    for v in sorted(earlier, key=lambda v: v.start):
        if v.start <= reach:
            reach = max(reach, v.end + 1)
    return reach > view.end


def assistant_steps(messages: Iterable[Message]) -> int:
    return sum(1 for m in messages if m.get("role") == "assistant" and m.get("tool_calls"))


def estimate_tokens(text: str) -> int:
    """About four characters per token; used only when no server count was recorded."""
    return (len(text) + 3) // 4


def response_tokens(messages: Iterable[Message]) -> int:
    """Tokens the agent generated: assistant text plus its tool-call arguments."""
    total = 0
    for m in messages:
        if m.get("role") != "assistant":
            continue
        calls = m.get("tool_calls") or []
        total += estimate_tokens(
            (m.get("content") or "") + json.dumps(calls) if calls else m.get("content") or ""
        )
    return total


def coverage(established: Iterable[str], nodes: Iterable[str]) -> float:
    """G* coverage: the share of the graph's nodes a trajectory established."""
    all_nodes = set(nodes)
    return len(set(established) & all_nodes) / len(all_nodes) if all_nodes else 0.0
