"""What issue 14 adds per call and per exported row: the budget check against a store holding many
recorded calls, text tool-call and <think> parsing, and the sharegpt conversion of a long
trajectory. Prints numbers; asserts nothing."""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from prchain.agent.formats.sharegpt import check_sharegpt, to_sharegpt  # noqa: E402
from prchain.agent.tools import TOOL_NAMES, TOOL_SCHEMAS  # noqa: E402
from prchain.llm.budget import Budget  # noqa: E402
from prchain.llm.reasoning import split_think  # noqa: E402
from prchain.llm.toolcalls import calls_from_text  # noqa: E402
from prchain.store.db import session_scope  # noqa: E402
from prchain.store.models import LLMCall  # noqa: E402
from prchain.store.models.base import utcnow  # noqa: E402
from prchain.store.opener import make_engine  # noqa: E402

RECORDED_CALLS = 50_000
CHECKS = 500
PARSES = 5_000
TOOL_CALLS = 116  # daVinci-Agency's mean tool calls per trajectory


def bench_budget(directory: Path) -> None:
    engine = make_engine(f"sqlite:///{directory / 'bench.db'}")
    since = utcnow()
    rows = [
        {
            "role": "policy",
            "model": "m",
            "cache_key": f"{i:064x}",
            "prompt_tokens": 9000,
            "completion_tokens": 200,
            "cost_usd": 0.01,
        }
        for i in range(RECORDED_CALLS)
    ]
    with session_scope(engine) as session:
        session.bulk_insert_mappings(LLMCall, rows)  # type: ignore[arg-type]
    budget = Budget(max_tokens=10**12, engine=engine, since=since)
    request = {"messages": [{"role": "user", "content": "x" * 20_000}]}
    started = time.perf_counter()
    for _ in range(CHECKS):
        budget.release(budget.reserve("m", request))
    took = time.perf_counter() - started
    print(f"budget check, SQLite store with {RECORDED_CALLS:,} calls in the run")
    print(f"  {took / CHECKS * 1000:.2f} ms per check ({CHECKS} checks)")


def bench_parsing() -> None:
    texts = [
        'I will look.\n<tool_call>{"name": "bash", "arguments": {"command": "ls"}}</tool_call>',
        "Some prose first. " * 40 + '{"name": "bash", "parameters": {"command": "ls -la"}}',
        "No call here, only a long explanation of the plan. " * 40,
    ]
    started = time.perf_counter()
    for i in range(PARSES):
        calls_from_text(texts[i % 3], TOOL_NAMES)
    calls = time.perf_counter() - started
    think = "<think>" + "reasoning step. " * 400 + "</think>\nanswer"
    started = time.perf_counter()
    for _ in range(PARSES):
        split_think(think)
    thinks = time.perf_counter() - started
    print(f"parsing, {PARSES:,} replies each")
    print(f"  text tool calls: {calls / PARSES * 1e6:.0f} µs per reply")
    print(f"  <think> split (6 kB reasoning): {thinks / PARSES * 1e6:.0f} µs per reply")


def bench_sharegpt() -> None:
    messages = [{"role": "system", "content": "s"}, {"role": "user", "content": "task"}]
    for i in range(TOOL_CALLS):
        call = {
            "id": f"c{i}",
            "type": "function",
            "function": {"name": "bash", "arguments": json.dumps({"command": f"ls {i}"})},
        }
        messages += [
            {"role": "assistant", "content": "thinking " * 30, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": f"c{i}", "name": "bash", "content": "out " * 300},
        ]
    record = {"messages": messages, "tools": TOOL_SCHEMAS, "metadata": {}}
    rounds = 200
    started = time.perf_counter()
    for _ in range(rounds):
        check_sharegpt(to_sharegpt(record))
    took = time.perf_counter() - started
    print(f"sharegpt conversion + check, {TOOL_CALLS}-call trajectory")
    print(f"  {took / rounds * 1000:.2f} ms per trajectory")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        bench_budget(Path(tmp))
    bench_parsing()
    bench_sharegpt()
