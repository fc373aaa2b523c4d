"""Rollout speed against the scripted LLM server in real containers (run by `make bench`).

1. Overhead per agent step excluding LLM time, for a `bash` step in a warm container: wall time of
   the step minus the policy call's latency (docker exec, tool plumbing, storing the step rows).
   Target: under 150 ms.
2. Throughput of whole 2-stage chains (policy steps, judge, carry-forward) with 1 and 4 workers.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from prchain.agent.config import AgentConfig  # noqa: E402
from prchain.agent.loop import AgentLoop  # noqa: E402
from prchain.agent.persist import Recorder, new_rollout  # noqa: E402
from prchain.agent.pool import run_in_threads  # noqa: E402
from prchain.app.config import Config  # noqa: E402
from prchain.app.rollout import make_chain_runner  # noqa: E402
from prchain.dev.fake_llm import ScriptedLLMServer  # noqa: E402
from prchain.dev.repos import make_chain_repo  # noqa: E402
from prchain.environments.config import EnvironmentConfig  # noqa: E402
from prchain.environments.factory import open_environment  # noqa: E402
from prchain.environments.protocol import StageSpec  # noqa: E402
from prchain.llm.client import LLMClient  # noqa: E402
from prchain.store.config import StoreConfig  # noqa: E402
from prchain.store.db import session_scope  # noqa: E402
from prchain.store.models import Chain, ChainStage, PullRequest, Repo  # noqa: E402
from prchain.store.opener import make_engine  # noqa: E402
from tests.support.llm_fixtures import make_test_llm_config  # noqa: E402

STEPS = 40
CHAINS = 8
STEPS_PER_STAGE = 4


def _seed(engine: Any, root: Path, chains: int) -> tuple[Any, list[int]]:
    repo = make_chain_repo(root / "calc")
    ids = []
    with session_scope(engine) as session:
        row = Repo(full_name="acme/calc", source="git", clone_path=str(repo.path))
        session.add(row)
        session.flush()
        prs = {}
        for n in (1, 2):
            prs[n] = PullRequest(
                repo_id=row.id, number=n, source="git", base_sha=repo.prs[n].base_sha
            )
            session.add(prs[n])
        session.flush()
        for k in range(chains):
            chain = Chain(
                repo_id=row.id,
                strategy="bench",
                signature=f"1-2/{k}",
                length=2,
                overview="Grow the calculator.",
            )
            session.add(chain)
            session.flush()
            ids.append(chain.id)
            for idx, n in enumerate((1, 2), 1):
                session.add(
                    ChainStage(
                        chain_id=chain.id,
                        idx=idx,
                        pr_id=prs[n].id,
                        base_sha=repo.prs[n].base_sha,
                        gold_patch=repo.prs[n].gold_patch,
                        query=f"Stage {idx} of chain {k}: extend calc/ops.py.",
                    )
                )
    return repo, ids


def _policy(body: dict[str, Any]) -> dict[str, Any]:
    since_query = 0
    for message in reversed(body["messages"]):
        if message["role"] == "user":
            break
        since_query += message["role"] == "assistant"
    if since_query >= STEPS_PER_STAGE:
        return {"tool_calls": [{"name": "submit", "arguments": {}}]}
    return {
        "tool_calls": [
            {"name": "bash", "arguments": {"command": f"echo step {since_query} >> notes.txt; ls"}}
        ]
    }


def step_overhead(server: ScriptedLLMServer, root: Path) -> None:
    engine = make_engine(f"sqlite:///{root / 'overhead.db'}")
    repo, (chain_id, *_) = _seed(engine, root, 1)
    config = make_test_llm_config(cache=False)
    server.push(
        model="policy", tool_calls=[{"name": "bash", "arguments": {"command": "true"}}], times=STEPS
    )
    server.push(model="policy", tool_calls=[{"name": "submit", "arguments": {}}])
    stage = StageSpec(1, repo.prs[1].base_sha, repo.prs[1].gold_patch)
    with open_environment(
        EnvironmentConfig(), repo="acme/calc", clone_path=str(repo.path), stages=[stage]
    ) as env:
        env.enter_stage(1)
        env.execute("true")  # warm
        rollout_id = new_rollout(engine, chain_id, conflict_policy="strict")
        loop = AgentLoop(
            LLMClient(config, engine),
            env,
            AgentConfig(max_steps_per_stage=STEPS + 5),
            sink=Recorder(engine, rollout_id),
            rollout_id=rollout_id,
        )
        latencies: list[float] = []
        original = loop.llm.complete

        def timed(*args: Any, **kwargs: Any) -> Any:
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                latencies.append((time.perf_counter() - started) * 1000)

        loop.llm = type(
            "Timed", (), {"complete": staticmethod(timed)}
        )()  # measure LLM time from the caller's side
        started = time.perf_counter()
        loop.run_stage(1, "bench", opening=[("query", {"role": "user", "content": "bench"})])
        total_ms = (time.perf_counter() - started) * 1000
        exec_ms = _mean_ms(lambda: env.execute("true"), 20)
    steps = len(latencies)
    overhead = (total_ms - sum(latencies)) / steps
    print(f"agent steps: {steps} (bash `true`, warm container, SQLite store)")
    print(f"LLM time per step (scripted server, excluded): {sum(latencies) / steps:.1f} ms")
    print(
        f"rollout overhead per step excluding LLM time: {overhead:.1f} ms (target < 150 ms) "
        f"{'OK' if overhead < 150 else 'OVER TARGET'}"
    )
    print(f"  of which one docker exec of `true`: {exec_ms:.1f} ms")


def _mean_ms(action: Any, n: int) -> float:
    started = time.perf_counter()
    for _ in range(n):
        action()
    return (time.perf_counter() - started) * 1000 / n


def throughput(server: ScriptedLLMServer, root: Path, workers: int) -> None:
    server.reset()
    server.push(model="policy", responder=_policy, times=None)
    server.push(model="judge", content='{"score": 0.9, "comment": "Acceptable."}', times=None)
    engine = make_engine(f"sqlite:///{root / f'throughput-{workers}.db'}")
    _, ids = _seed(engine, root / f"w{workers}", CHAINS)
    config = Config(
        store=StoreConfig(url=str(engine.url)),
        llm=make_test_llm_config(cache=False, workers=8),
        agent=AgentConfig(workers=workers),
    )
    runner = make_chain_runner(config, engine, LLMClient(config.llm, engine))
    started = time.perf_counter()
    results = run_in_threads(runner.run, ids, workers=workers)
    seconds = time.perf_counter() - started
    kept = sum(r.status == "kept" for r in results)
    steps = CHAINS * 2 * (STEPS_PER_STAGE + 1)
    print(
        f"--workers {workers}: {CHAINS} chains ({kept} kept) in {seconds:.1f} s → "
        f"{CHAINS / seconds * 60:.1f} chains/min, {steps / seconds:.1f} agent steps/s"
    )


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp, ScriptedLLMServer() as server:
        os.environ["OPENAI_BASE_URL"], os.environ["OPENAI_API_KEY"] = server.base_url, "bench-key"
        root = Path(tmp)
        step_overhead(server, root)
        for workers in (1, 4):
            throughput(server, root, workers)


if __name__ == "__main__":
    main()
