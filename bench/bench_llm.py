"""LLM client overhead against the local scripted server: requests/s uncached and cached, and
how fast the leakage check reads gold patches. Prints numbers; asserts nothing."""

from __future__ import annotations

import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from prchain.chains.reading.leakage import changed_identifiers  # noqa: E402
from prchain.dev.fake_llm import ScriptedLLMServer  # noqa: E402
from prchain.llm.client import LLMClient  # noqa: E402
from prchain.store.opener import make_engine  # noqa: E402
from tests.support.llm_fixtures import make_test_llm_config  # noqa: E402

REQUESTS = 400
WORKERS = 8


def _run(client: LLMClient) -> float:
    asks = [
        [{"role": "user", "content": f"question {i} " + "context " * 200}] for i in range(REQUESTS)
    ]
    started = time.perf_counter()
    with ThreadPoolExecutor(WORKERS) as pool:
        list(pool.map(lambda m: client.complete("query_constructor", m), asks))
    return time.perf_counter() - started


def bench_client(directory: Path) -> None:
    with ScriptedLLMServer() as server:
        server.push(model="query_constructor", content="an intent-level query " * 20, times=None)
        os.environ["OPENAI_BASE_URL"], os.environ["OPENAI_API_KEY"] = server.base_url, "bench"
        engine = make_engine(f"sqlite:///{directory / 'bench.db'}")
        config = make_test_llm_config(workers=WORKERS)
        cold = _run(LLMClient(config, engine))
        warm = _run(LLMClient(config, engine))
    print(f"client, {REQUESTS} requests, {WORKERS} workers, SQLite store")
    print(
        f"  uncached: {cold:.2f} s  ({REQUESTS / cold:.0f} req/s, {cold / REQUESTS * 1000:.1f} ms each)"
    )
    print(
        f"  cached:   {warm:.2f} s  ({REQUESTS / warm:.0f} req/s, {warm / REQUESTS * 1000:.1f} ms each)"
    )


def bench_leakage() -> None:
    hunk = "@@ -1,3 +1,40 @@ def some_function(x):\n" + "".join(
        f"+    value_{i} = compute_thing_{i}(argument, OtherType{i})  # a comment about it\n"
        for i in range(40)
    )
    diff = "".join(
        f"diff --git a/src/m{f}.py b/src/m{f}.py\n--- a/src/m{f}.py\n+++ b/src/m{f}.py\n{hunk}"
        for f in range(20)
    )
    started = time.perf_counter()
    for _ in range(50):
        names = changed_identifiers([diff])
    seconds = (time.perf_counter() - started) / 50
    print(
        f"leakage: {len(diff) // 1024} KiB patch, {len(names)} identifiers in {seconds * 1000:.1f} ms"
    )


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        bench_client(Path(tmp))
    bench_leakage()
