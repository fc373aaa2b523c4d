"""`build_chains`: graph → strategy → chains and stages in the store, idempotently.

Chains are upserted on (strategy, signature) and stages on (chain, idx); queries, attempts, leaks
and overviews already written by the query constructor are never overwritten.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from sqlalchemy import Engine, delete, select

from chains.config import ChainsConfig
from chains.graph import GraphReport, PRNode, load_graph
from chains.patches import SplitPatch, split_patch
from chains.strategies import STRATEGIES, ChainCandidate
from prchain.core.errors import ConfigError
from sql.db import session_scope, upsert
from sql.models import Chain, ChainStage, PRPatch, Rollout

Progress = Callable[[str, int, int], None]
T = TypeVar("T")
BATCH = 2000
# Columns the build owns; everything else on a row (query, overview, ...) belongs to later stages.
CHAIN_COLUMNS = ("repo_id", "length", "score", "edges")
NO_PATCH = SplitPatch("", "", (), ())
STAGE_COLUMNS = ("pr_id", "base_sha", "end_sha", "gold_patch", "gold_test_patch")


@dataclass
class BuildSummary:
    strategy: str
    by_length: Counter[int] = field(default_factory=Counter)
    new: int = 0
    stages: int = 0
    pruned: int = 0
    graph: GraphReport = field(default_factory=GraphReport)

    @property
    def total(self) -> int:
        return sum(self.by_length.values())


def batches(items: Sequence[T], size: int = BATCH) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _chain_row(chain: ChainCandidate, strategy: str) -> dict[str, Any]:
    return {
        "strategy": strategy,
        "signature": chain.signature,
        "repo_id": chain.repo_id,
        "length": len(chain.pr_ids),
        "score": chain.score,
        "edges": chain.edges,
    }


def _stage_rows(
    chain_id: int, chain: ChainCandidate, nodes: dict[int, PRNode], patches: dict[int, SplitPatch]
) -> list[dict[str, Any]]:
    rows = []
    for idx, pr_id in enumerate(chain.pr_ids, start=1):
        split = patches.get(pr_id, NO_PATCH)
        rows.append(
            {
                "chain_id": chain_id,
                "idx": idx,
                "pr_id": pr_id,
                "base_sha": nodes[pr_id].base_sha,
                "end_sha": nodes[pr_id].merge_sha,
                "gold_patch": split.code,
                "gold_test_patch": split.test,
            }
        )
    return rows


def _pairs(rows: Any) -> dict[Any, Any]:
    # dict(result) would treat a Result as a mapping (it has .keys()); build it from the rows instead.
    return {key: value for key, value in rows}


def _write_batch(
    engine: Engine,
    strategy: str,
    chains: Sequence[ChainCandidate],
    nodes: dict[int, PRNode],
    patches: dict[int, SplitPatch],
) -> tuple[int, int]:
    """Upsert one batch of chains with their stages; returns (new chains, stages written).

    `patches` caches split gold patches across batches, since a PR often sits in several chains.
    """
    signatures = [c.signature for c in chains]
    pr_ids = sorted({pr for c in chains for pr in c.pr_ids} - patches.keys())
    with session_scope(engine) as session:
        existing = set(
            session.scalars(
                select(Chain.signature).where(
                    Chain.strategy == strategy, Chain.signature.in_(signatures)
                )
            )
        )
        upsert(
            session,
            Chain,
            [_chain_row(c, strategy) for c in chains],
            ["strategy", "signature"],
            update=CHAIN_COLUMNS,
        )
        ids = _pairs(
            session.execute(
                select(Chain.signature, Chain.id).where(
                    Chain.strategy == strategy, Chain.signature.in_(signatures)
                )
            )
        )
        query = select(PRPatch.pr_id, PRPatch.diff).where(PRPatch.pr_id.in_(pr_ids))
        patches.update((pr_id, split_patch(diff)) for pr_id, diff in session.execute(query))
        stages = [row for c in chains for row in _stage_rows(ids[c.signature], c, nodes, patches)]
        upsert(session, ChainStage, stages, ["chain_id", "idx"], update=STAGE_COLUMNS)
    return len(chains) - len(existing), len(stages)


def prune_stale(engine: Engine, strategy: str, keep: set[str]) -> int:
    """Delete the strategy's chains not in `keep` (stages go with them); chains with rollouts stay."""
    with session_scope(engine) as session:
        rows = session.execute(
            select(Chain.id, Chain.signature).where(Chain.strategy == strategy)
        ).all()
        stale = [cid for cid, signature in rows if signature not in keep]
        used = (
            set(session.scalars(select(Rollout.chain_id).where(Rollout.chain_id.in_(stale))))
            if stale
            else set()
        )
        doomed = [cid for cid in stale if cid not in used]
        for chunk in batches(doomed):
            session.execute(delete(ChainStage).where(ChainStage.chain_id.in_(chunk)))
            session.execute(delete(Chain).where(Chain.id.in_(chunk)))
        return len(doomed)


def build_chains(
    config: ChainsConfig,
    engine: Engine,
    *,
    strategy: str | None = None,
    min_len: int | None = None,
    max_len: int | None = None,
    progress: Progress | None = None,
) -> BuildSummary:
    """Select chains from the store's reference graph with `strategy` and write them with their stages."""
    cfg = config
    name = strategy or cfg.strategy
    select_chains = STRATEGIES.get(name)
    low, high = min_len or cfg.min_len, max_len or cfg.max_len
    if name == "single":
        low = high = 1
    if low > high:
        raise ConfigError(f"--min-len {low} is larger than --max-len {high}")
    graph, nodes, report = load_graph(engine, cfg)
    chains = select_chains(graph, cfg, low, high)
    summary = BuildSummary(name, Counter(len(c.pr_ids) for c in chains), graph=report)
    done = 0
    patches: dict[int, SplitPatch] = {}
    for batch in batches(chains):
        new, stages = _write_batch(engine, name, batch, nodes, patches)
        summary.new += new
        summary.stages += stages
        done += len(batch)
        if progress:
            progress("writing chains", done, len(chains))
    if cfg.prune_stale:
        summary.pruned = prune_stale(engine, name, {c.signature for c in chains})
    return summary
