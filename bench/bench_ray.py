"""Local thread pool vs Ray on this machine, with the scripted LLM server and real containers
(run by `make bench`; skipped when Ray is not installed).

1. chains/min of whole 2-stage chains through `rollout_from_config`, 2 workers / 2 sandbox slots,
   each run on its own fresh store (PostgreSQL when PRCHAIN_TEST_POSTGRES_URL answers, else SQLite).
2. Ray's overhead per chain: the same run's extra wall time × slots / chains, and the fixed cost of
   one task (dispatch + its own engine, LLM client and runner) measured on already-finished chains.
3. Starting a local Ray instance, paid once per run that does not join a cluster.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_agent import CHAINS, STEPS_PER_STAGE, _policy, _seed  # noqa: E402
from sqlalchemy import create_engine, text  # noqa: E402
from sqlalchemy.engine import make_url  # noqa: E402

from prchain.agent.config import AgentConfig  # noqa: E402
from prchain.app.config import Config  # noqa: E402
from prchain.app.rollout import (
    RolloutWork,  # noqa: E402
    rollout_from_config,  # noqa: E402
)
from prchain.dev.fake_llm import ScriptedLLMServer  # noqa: E402
from prchain.scale.config import ScaleConfig  # noqa: E402
from prchain.scale.local import LocalBackend  # noqa: E402
from prchain.scale.protocol import Needs  # noqa: E402
from prchain.store.config import StoreConfig  # noqa: E402
from prchain.store.opener import make_engine  # noqa: E402
from tests.support.llm_fixtures import make_test_llm_config  # noqa: E402

SLOTS = 2
POSTGRES = os.environ.get("PRCHAIN_TEST_POSTGRES_URL", "")


@contextmanager
def fresh_store(root: Path, name: str) -> Iterator[str]:
    """A new PostgreSQL database (dropped after) when one answers, else a SQLite file."""
    if not POSTGRES:
        yield f"sqlite:///{root / name}.db"
        return
    admin = create_engine(POSTGRES, isolation_level="AUTOCOMMIT")
    db = f"prchain_bench_{uuid.uuid4().hex[:10]}"
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{db}"'))
    try:
        yield make_url(POSTGRES).set(database=db).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)'))
        admin.dispose()


def _config(url: str, backend: str) -> Config:
    return Config(
        store=StoreConfig(url=url),
        llm=make_test_llm_config(cache=False, workers=8),
        agent=AgentConfig(workers=SLOTS),
        scale=ScaleConfig(backend=backend),  # type: ignore[arg-type]
    )


def chains_per_minute(server: ScriptedLLMServer, root: Path, backend: str) -> tuple[float, Config]:
    server.reset()
    server.push(model="policy", responder=_policy, times=None)
    server.push(model="judge", content='{"score": 0.9, "comment": "Acceptable."}', times=None)
    with fresh_store(root, backend) as url:
        engine = make_engine(url)
        _, ids = _seed(engine, root / backend, CHAINS)
        engine.dispose()
        config = _config(url, backend)
        started = time.perf_counter()
        results = rollout_from_config(config, notify=lambda _: None)
        seconds = time.perf_counter() - started
        kept = sum(r.status == "kept" for r in results)
        nodes = sorted({r.node or "?" for r in results})
        print(
            f"{backend:>5}: {CHAINS} chains ({kept} kept, {2 * (STEPS_PER_STAGE + 1)} agent steps "
            f"each) in {seconds:.1f} s → {CHAINS / seconds * 60:.1f} chains/min on {nodes}"
        )
        fixed = task_cost(config, ids, backend)
    return seconds, fixed


def task_cost(config: Config, ids: list[int], backend: str) -> float:
    """Mean ms per call of the rollout work on finished chains: setup + load + skip, no sandbox."""
    reps = 4
    items = ids * reps
    if backend == "local":
        started = time.perf_counter()
        LocalBackend(SLOTS).map(RolloutWork(config), items)
    else:
        from prchain.scale.ray_backend import RayBackend

        ray_backend = RayBackend(config.scale, workers=SLOTS, env=dict(os.environ))
        started = time.perf_counter()
        ray_backend.map(RolloutWork(config), items, needs=Needs(sandboxes=1))
    return (time.perf_counter() - started) * 1000 * SLOTS / len(items)


def main() -> None:
    try:
        import ray
    except ImportError:
        print("ray is not installed (pip install 'prchain[ray]'); skipped")
        return
    with tempfile.TemporaryDirectory() as tmp, ScriptedLLMServer() as server:
        os.environ["OPENAI_BASE_URL"], os.environ["OPENAI_API_KEY"] = server.base_url, "bench-key"
        root = Path(tmp)
        print(f"store: {'PostgreSQL' if POSTGRES else 'SQLite'}; {SLOTS} workers / sandbox slots")
        local_s, local_fixed = chains_per_minute(server, root, "local")
        started = time.perf_counter()
        for attempt in range(
            3
        ):  # Ray allows a new node 30 s to register; a busy machine may miss it
            try:
                ray.init(
                    num_cpus=2,
                    include_dashboard=False,
                    log_to_driver=False,
                    resources={"docker_slots": SLOTS},
                )
                break
            except Exception:
                ray.shutdown()
                if attempt == 2:
                    raise
        print(f"ray.init of a local instance: {time.perf_counter() - started:.1f} s (once per run)")
        try:
            ray_s, ray_fixed = chains_per_minute(server, root, "ray")
        finally:
            ray.shutdown()
    extra = (ray_s - local_s) * 1000 * SLOTS / CHAINS
    print(f"Ray overhead per chain (extra wall time × slots / chains): {extra:.0f} ms")
    print(
        f"per-task fixed cost on finished chains: local {local_fixed:.0f} ms, "
        f"ray {ray_fixed:.0f} ms (dispatch + own engine, LLM client, runner)"
    )


if __name__ == "__main__":
    main()
