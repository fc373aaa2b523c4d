"""How fast `chains build` runs over a synthetic store of 100,000 PRs and 300,000 references.

Prints the time to generate the store, then each phase of the build (load, graph, strategy, write)
and the whole `build_chains` call, fresh and rerun. Target: a fresh build under 20 s.

Usage: python bench/bench_chains.py [--prs 100000] [--refs 300000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.synth_db import make_synthetic_db  # noqa: E402
from prchain.app.config import Config  # noqa: E402
from prchain.chains.building.build import build_chains  # noqa: E402
from prchain.chains.building.graph import build_graph  # noqa: E402
from prchain.chains.building.strategies import STRATEGIES  # noqa: E402
from prchain.chains.evidence.loading import load_nodes, load_references, load_repos  # noqa: E402
from prchain.store.opener import make_engine  # noqa: E402

TARGET_SECONDS = 20.0


def timed(label: str, func: Callable[[], Any]) -> Any:
    start = time.perf_counter()
    result = func()
    print(f"  {label:<28} {time.perf_counter() - start:8.2f} s", flush=True)
    return result


def phases(url: str, config: Config) -> None:
    """Each phase alone, to see where the time goes."""
    engine = make_engine(url)
    nodes = timed("load PRs + files", lambda: load_nodes(engine))
    refs = timed("load references", lambda: load_references(engine))
    graph, report = timed(
        "build graph (filters, edges)",
        lambda: build_graph(nodes, refs, config.chains, load_repos(engine)),
    )
    print(
        f"  graph: {report.nodes} nodes, {report.edges} edges, filtered {dict(report.filtered.removed)}"
    )
    chains = timed(
        "semantic strategy", lambda: STRATEGIES.get("semantic")(graph, config.chains, 2, 5)
    )
    print(f"  candidate chains: {len(chains)}")
    engine.dispose()


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--prs", type=int, default=100_000)
    parser.add_argument("--refs", type=int, default=300_000)
    parser.add_argument("--keep", type=Path, help="Write the database here and keep it.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        path = (args.keep or Path(tmp)) / "synthetic.db"
        path.parent.mkdir(parents=True, exist_ok=True)
        counts = timed(
            "generate synthetic store", lambda: make_synthetic_db(path, args.prs, args.refs)
        )
        print(f"  store: {counts}")
        url, config = f"sqlite:///{path}", Config()
        phases(url, config)
        engine = make_engine(url)
        start = time.perf_counter()
        summary = build_chains(config.chains, engine)
        fresh = time.perf_counter() - start
        print(
            f"  build_chains (fresh)         {fresh:8.2f} s  chains by length {dict(sorted(summary.by_length.items()))}"
            f", {summary.stages} stages"
        )
        rerun = timed("build_chains (rerun)", lambda: build_chains(config.chains, engine))
        print(f"  rerun wrote {rerun.new} new chains (idempotent: expect 0)")
        engine.dispose()
    verdict = "OK" if fresh < TARGET_SECONDS else "SLOW"
    print(
        f"chains build over {args.prs} PRs / {args.refs} references: {fresh:.2f} s (target < {TARGET_SECONDS:.0f} s) {verdict}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
