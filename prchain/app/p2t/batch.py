"""What `prchain p2t curate` does with a list of chains: curate them on the configured execution
backend, or (`--dry-run`) bound the LLM calls, tokens and cost that would take."""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine, select

from prchain.agent.tasks import load_chain
from prchain.app.config import Config
from prchain.app.p2t.curate import CurationResult
from prchain.app.p2t.parts import p2t_llm_config
from prchain.app.p2t.stage import Notify
from prchain.app.store import open_store, opened
from prchain.app.work import Lazy
from prchain.p2t import store
from prchain.store.db import session_scope

if TYPE_CHECKING:
    from prchain.store.handle import Store


def curate_from_config(
    config: Config,
    chain_ids: Sequence[int],
    *,
    on_done: Callable[[CurationResult], None] | None = None,
    notify: Notify = print,
    store: Store | None = None,
) -> list[CurationResult]:
    """What `prchain p2t curate` does: each chain curated on the configured backend (threads here,
    or one Ray task per chain), `p2t.workers` sandboxes at once. Results in chain order."""
    from prchain.app.scale import backend_for, portable
    from prchain.scale.protocol import Done, Needs

    if store is None:  # opening the store makes its tables; the workers only use them
        open_store(config.store.url).close()
    work_config = config.model_copy(update={"llm": p2t_llm_config(config)})

    def result(done: Done[int, CurationResult]) -> CurationResult:
        if done.result is None:
            return CurationResult(done.item, 0, "lost", 0, done.lost or "", 0.0, node=done.node)
        return replace(done.result, node=done.node)

    def report(done: Done[int, CurationResult]) -> None:
        if on_done is not None:
            on_done(result(done))

    with backend_for(config, workers=config.p2t.workers, notify=notify) as backend:
        finished = backend.map(
            CurationWork(portable(work_config)),
            list(dict.fromkeys(chain_ids)),
            needs=Needs(sandboxes=1),
            on_done=report,
        )
    return sorted((result(d) for d in finished), key=lambda r: r.chain_id)


ASSUMED_NODES = 12  # graph size assumed for a stage whose graph is not built yet
ASSUMED_PROMPT, ASSUMED_COMPLETION = 4000, 200  # tokens per call when the store has no history


def plan_curation(
    config: Config, chain_ids: Sequence[int], *, store: Store | None = None
) -> list[Any]:
    """What `prchain p2t curate --dry-run` prints: an upper bound of calls per role (every stage
    runs its ⌈max_steps/commit⌉ windows; most submit sooner), tokens and cost from the store's
    history of each role when it has one. The verifier's share uses the prefilter's measured
    keep rate from stored windows when there are any."""
    from prchain.llm.estimate import estimate_role

    with opened(config.store.url, store) as store:
        engine = store.engine
        calls = _planned_calls(config, engine, chain_ids)
        llm = p2t_llm_config(config)
        return [
            estimate_role(
                llm,
                engine,
                role,
                n,
                prompt_per_call=ASSUMED_PROMPT,
                completion_per_call=ASSUMED_COMPLETION,
            )
            for role, n in calls.items()
            if n
        ]


def _planned_calls(config: Config, engine: Engine, chain_ids: Sequence[int]) -> dict[str, int]:
    """Upper bound of LLM calls per P2T role to curate the chains (graphs built where missing)."""
    from prchain.llm.config import ROLES

    c = config.p2t
    calls: dict[str, int] = dict.fromkeys((r for r in ROLES if r.startswith("p2t_")), 0)
    keep = _verifier_keep_rate(engine)
    windows = math.ceil(c.max_steps / c.commit)
    candidates = c.seeds * (2 if c.mutate else 1)
    for chain_id in dict.fromkeys(chain_ids):
        for stage in load_chain(engine, chain_id).stages:
            loaded = store.load_graph(engine, chain_id, stage.idx)
            if loaded is None:
                calls["p2t_proposer"] += c.max_rounds
                calls["p2t_critic"] += c.max_rounds
            nodes = len(loaded[1].nodes) if loaded else ASSUMED_NODES
            calls["p2t_seed"] += windows * candidates * c.window
            calls["p2t_curator"] += windows * c.seeds if c.mutate else 0
            calls["p2t_claim_judge"] += windows * c.seeds if c.mutate and c.groundedness_gate else 0
            calls["p2t_verifier"] += math.ceil(windows * candidates * c.window * nodes * keep)
    return calls


def _verifier_keep_rate(engine: Engine) -> float:
    """Share of pending nodes the prefilter sent to the verifier in stored windows (1 if none)."""
    from prchain.store.models import P2TStage

    asked = skipped = 0
    with session_scope(engine) as session:
        for windows in session.scalars(select(P2TStage.windows)):
            for w in windows or []:
                asked += int(w.get("verifier_calls", 0))
                skipped += int(w.get("verifier_skipped", 0))
    return asked / (asked + skipped) if asked + skipped else 1.0


@dataclass
class CurationWork(Lazy):
    """Curate one chain with P2T (resuming a curation a killed run left `running`). Its config's
    LLM section already carries P2T's per-role temperatures."""

    def __call__(self, chain_id: int) -> CurationResult:
        from prchain.app.p2t.curate import curate_chain

        return curate_chain(self.config, self.engine(), self.llm(), chain_id)
