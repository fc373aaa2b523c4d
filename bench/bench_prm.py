"""PRM overhead: prompt size per variant, render and parse time, one hook call end to end.

The end-to-end figure uses the real openai client against the local scripted server and a SQLite
store, so it measures our side (serialize, render, HTTP, parse, store), not a model's latency.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from prchain.agent.hooks import HookContext  # noqa: E402
from prchain.app.config import Config  # noqa: E402
from prchain.dev.fake_llm import ScriptedLLMServer  # noqa: E402
from prchain.dev.fake_llm_replies import estimate_tokens  # noqa: E402
from prchain.llm.client import LLMClient  # noqa: E402
from prchain.prm.hook import build_prm_hook, build_request  # noqa: E402
from prchain.prm.serialize import serialize_window  # noqa: E402
from prchain.prm.taxonomy import load_taxonomy  # noqa: E402
from prchain.prm.variants import VARIANTS  # noqa: E402
from prchain.prm.verdict import parse_verdict  # noqa: E402
from prchain.store.db import session_scope  # noqa: E402
from prchain.store.models import Chain, Repo, Rollout  # noqa: E402
from prchain.store.opener import make_engine  # noqa: E402
from tests.support.prm import TOOLS, bash_step, verdict_json  # noqa: E402

STEPS = [bash_step(i, f"pytest tests/test_{i}.py -q", ("x" * 70 + "\n") * 60) for i in range(1, 21)]


def _ms(fn, repeat: int = 200) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def prompt_sizes() -> None:
    taxonomy = load_taxonomy()
    window = serialize_window(STEPS, 8, 2000)
    print(f"{'variant':8} {'prompt chars':>13} {'~tokens':>8} {'render ms':>10}")
    for name in VARIANTS:
        variant = VARIANTS.get(name)
        messages = build_request(variant, taxonomy, "Fix the failing tests.", window, TOOLS)
        chars = sum(len(m["content"]) for m in messages)
        ms = _ms(
            lambda v=variant: build_request(v, taxonomy, "Fix the failing tests.", window, TOOLS)
        )
        print(f"{name:8} {chars:>13} {estimate_tokens('x' * chars):>8} {ms:>10.3f}")
    reply = verdict_json()
    print(
        f"parse one verdict: {_ms(lambda: parse_verdict(reply, VARIANTS.get('D'), taxonomy, ['bash'])):.3f} ms"
    )


def end_to_end(calls: int = 50) -> None:
    with ScriptedLLMServer() as server, tempfile.TemporaryDirectory() as tmp:
        os.environ.update(OPENAI_BASE_URL=server.base_url, OPENAI_API_KEY="sk-bench-not-a-secret")
        engine = make_engine(f"sqlite:///{tmp}/bench.db")
        with session_scope(engine) as session:
            for row in (
                Repo(id=1, full_name="acme/calc", source="git"),
                Chain(id=1, repo_id=1, strategy="bench", signature="1", length=1),
                Rollout(id=1, chain_id=1, conflict_policy="strict", prm_variant="D"),
            ):
                session.add(row)
                session.flush()  # parents first: the foreign keys are checked on insert
        config = Config.model_validate(
            {"llm": {"models": {"prm": "prm"}, "cache": False}, "prm": {"variant": "D"}}
        )
        hook = build_prm_hook(config.prm, LLMClient(config.llm, engine), engine, 1)
        assert hook is not None
        server.push(model="prm", content=verdict_json(), times=None)
        times = []
        for n in range(calls):
            context = HookContext(1, 1, 5 * (n + 1), "Fix the failing tests.", STEPS[-8:], TOOLS)
            started = time.perf_counter()
            hook(context)
            times.append((time.perf_counter() - started) * 1000)
        print(
            f"hook call end to end (HTTP + parse + store), median of {calls}: {statistics.median(times):.2f} ms"
        )


if __name__ == "__main__":
    prompt_sizes()
    end_to_end()
