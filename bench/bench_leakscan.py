"""The export's leak scan on a long trajectory: 300 messages (150 tool outputs of ~10,000
characters) against 1,000 guarded gold lines and 5 hidden test names, across 5 stages.

Prints the seconds per trajectory; asserts nothing. (A substring search per guarded line took
~1.3 s here on a loaded 2-core machine; the Aho-Corasick pass ~0.2 s.)"""

from __future__ import annotations

import json
import random
import string
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from prchain.agent.leakscan import GoldStage, chain_guard  # noqa: E402

STAGES, LINES_PER_STAGE, MESSAGES = 5, 200, 300


def _line(rng: random.Random) -> str:
    words = ("".join(rng.choices(string.ascii_lowercase, k=rng.randint(3, 9))) for _ in range(6))
    return "    " + " ".join(words)


def _stage(rng: random.Random, idx: int) -> GoldStage:
    body = "\n".join("+" + _line(rng) for _ in range(LINES_PER_STAGE))
    header = f"diff --git a/m{idx}.py b/m{idx}.py\n--- a/m{idx}.py\n+++ b/m{idx}.py\n@@ -1 +1 @@\n"
    return GoldStage(header + body + "\n", "", (f"tests/test_m.py::test_m{idx}",))


def _message(rng: random.Random, i: int) -> dict[str, Any]:
    if i % 2:
        return {"role": "tool", "content": "\n".join(_line(rng) for _ in range(150))[:10_000]}
    call = {"command": _line(rng)}
    function = {"name": "bash", "arguments": json.dumps(call)}
    return {"role": "assistant", "content": "", "tool_calls": [{"id": "c", "function": function}]}


def main() -> None:
    rng = random.Random(0)
    guard = chain_guard([_stage(rng, k) for k in range(STAGES)], 6)
    messages = [_message(rng, i) for i in range(MESSAGES)]
    stages = [1 + i * STAGES // MESSAGES for i in range(MESSAGES)]
    started = time.perf_counter()
    guard.first_leak(messages, stages)
    seconds = time.perf_counter() - started
    print(f"leak scan, {MESSAGES} messages vs {len(guard.code)} gold lines: {seconds:.3f} s")


if __name__ == "__main__":
    main()
