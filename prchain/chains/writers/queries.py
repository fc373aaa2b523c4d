"""The query constructor: one intent-level sub-query per chain stage, plus a chain overview.

Each query says why, where (file paths allowed) and, vaguely, how; it must not name the
identifiers the gold patch adds or changes (prchain.chains.reading.leakage). A query that does is regenerated,
with the model told which words to avoid, up to `chains.query_max_attempts`. Work is saved stage
by stage, so an interrupted run resumes where it stopped and a finished one makes no LLM calls.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, and_, exists, func, or_, select
from sqlalchemy.orm import Session

from prchain.chains.config import ChainsConfig
from prchain.chains.reading.leakage import changed_identifiers, find_leaks
from prchain.chains.writers.textclean import clean_body, parse_query_repaired, trim_patch
from prchain.core.errors import LLMOutputInvalid, NothingToDo
from prchain.llm.calls import Usage
from prchain.llm.client import LLMClient
from prchain.llm.parsing import fence_token
from prchain.llm.prompts import render
from prchain.store.db import session_scope
from prchain.store.leases import holding
from prchain.store.models import Chain, ChainStage, PullRequest, Repo

PROMPTS = Path(__file__).with_name("prompts")
QUERY_ROLE = "query_constructor"
OVERVIEW_ROLE = "overview"
OVERVIEW_BODY_CHARS = 800  # per stage: the overview needs the gist of each PR, not its whole story

Progress = Callable[[str, int, int], None]


@dataclass(frozen=True)
class StageInput:
    stage_id: int
    idx: int
    title: str
    body: str  # cleaned
    patch: str  # the code part of the gold patch (the test part when there is no code part)
    test_patch: str
    query: str | None
    leaks: tuple[str, ...] = ()  # identifiers an earlier query named (kept by --redo-leaking)

    @property
    def files(self) -> list[str]:
        return _diff_paths(self.patch) + [
            p for p in _diff_paths(self.test_patch) if p not in _diff_paths(self.patch)
        ]


@dataclass(frozen=True)
class ChainInput:
    chain_id: int
    repo: str
    overview: str | None
    stages: list[StageInput]

    @property
    def needs_overview(self) -> bool:
        return self.overview is None and len(self.stages) > 1


@dataclass(frozen=True)
class Generated:
    text: str
    attempts: int
    leaks: list[str]  # identifiers the final text still names
    first_leaked: bool


@dataclass
class QuerySummary:
    chains: int = 0
    stages_done: int = 0
    stages_skipped: int = 0
    stages_failed: int = 0
    overviews: int = 0
    regenerated: int = 0  # stages whose first draft leaked and was rewritten
    leaked: int = (
        0  # stages whose query (or, for stage 1, overview) still leaks after every attempt
    )
    usage: Usage = field(
        default_factory=Usage
    )  # the client's calls, tokens and cost for this build
    failures: list[str] = field(default_factory=list)
    chains_busy: int = 0  # another live process held the chain's lease: its queries are its work

    @property
    def llm_calls(self) -> int:
        """Requests that reached the server (cache hits excluded)."""
        return self.usage.paid_calls

    @property
    def leakage_rate(self) -> float:
        return self.leaked / self.stages_done if self.stages_done else 0.0

    @property
    def initial_leakage_rate(self) -> float:
        """Share of stages whose first draft leaked, before regeneration."""
        return self.regenerated / self.stages_done if self.stages_done else 0.0

    def merge(self, other: QuerySummary) -> None:
        for name in (
            "chains",
            "stages_done",
            "stages_failed",
            "overviews",
            "regenerated",
            "leaked",
            "chains_busy",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.failures.extend(other.failures)


def build_queries(
    config: ChainsConfig,
    engine: Engine,
    client: LLMClient,
    *,
    workers: int = 1,
    chain_ids: list[int] | None = None,
    progress: Progress | None = None,
) -> QuerySummary:
    """Write every missing query and overview; chains run concurrently, `workers` at a time."""
    stages = count_stages(engine, chain_ids)
    if not stages:
        raise NothingToDo(
            "no chain stages to write queries for"
            + (f" in chains {chain_ids}" if chain_ids else "")
        )
    chains = load_pending(engine, chain_ids)
    summary = QuerySummary(stages_skipped=stages - _pending_stages(chains))
    total, done = _pending_stages(chains), 0
    if progress:
        progress("queries", 0, total)
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {
            pool.submit(_process_chain, chain, config, engine, client): chain for chain in chains
        }
        pending = set(futures)
        while pending:
            finished, pending = wait(pending, return_when=FIRST_EXCEPTION)
            for future in finished:
                if (error := future.exception()) is not None:
                    pool.shutdown(
                        cancel_futures=True
                    )  # the server is gone: stop; finished stages are saved
                    raise error
                summary.merge(future.result())
                done += _pending_stages([futures[future]])
                if progress:
                    progress("queries", done, total)
    summary.usage = client.usage
    return summary


# -- loading -----------------------------------------------------------------------------------


def _needs_work() -> Any:
    missing_query = exists().where(ChainStage.chain_id == Chain.id, ChainStage.query.is_(None))
    return or_(missing_query, and_(Chain.overview.is_(None), Chain.length > 1))


def load_pending(engine: Engine, chain_ids: list[int] | None = None) -> list[ChainInput]:
    """Chains with a stage lacking its query, or lacking their overview, with everything a prompt needs."""
    query = (
        select(Chain.id, Repo.full_name, Chain.overview)
        .join(Repo, Repo.id == Chain.repo_id)
        .where(_needs_work())
    )
    if chain_ids:
        query = query.where(Chain.id.in_(chain_ids))
    with session_scope(engine) as session:
        heads = session.execute(query.order_by(Chain.id)).all()
        stages = _load_stages(session, [head.id for head in heads])
    return [
        ChainInput(head.id, head.full_name, head.overview, stages.get(head.id, []))
        for head in heads
    ]


def _load_stages(session: Any, chain_ids: list[int]) -> dict[int, list[StageInput]]:
    by_chain: dict[int, list[StageInput]] = {}
    for start in range(0, len(chain_ids), 500):
        query = (
            select(ChainStage, PullRequest.title, PullRequest.body)
            .join(PullRequest, PullRequest.id == ChainStage.pr_id)
            .where(ChainStage.chain_id.in_(chain_ids[start : start + 500]))
            .order_by(ChainStage.chain_id, ChainStage.idx)
        )
        for stage, title, body in session.execute(query):
            # tests a later stage lent (chain_stages.tests_from) are that PR's: not this query's
            tests = stage.gold_test_patch if stage.tests_from is None else ""
            item = StageInput(
                stage.id,
                stage.idx,
                title or "",
                clean_body(body),
                stage.gold_patch or tests,
                tests,
                stage.query,
                tuple(stage.query_leaks or ()),
            )
            by_chain.setdefault(stage.chain_id, []).append(item)
    return by_chain


def count_stages(engine: Engine, chain_ids: list[int] | None = None) -> int:
    query = select(ChainStage.id)
    if chain_ids:
        query = query.where(ChainStage.chain_id.in_(chain_ids))
    with session_scope(engine) as session:
        return len(session.scalars(query).all())


def _pending_stages(chains: list[ChainInput]) -> int:
    return sum(1 for chain in chains for stage in chain.stages if stage.query is None)


# -- one chain ---------------------------------------------------------------------------------


def _process_chain(
    chain: ChainInput, config: ChainsConfig, engine: Engine, client: LLMClient
) -> QuerySummary:
    """Write one chain's missing queries while holding its "queries" lease, so two builds on one
    store never pay for the same stage: a chain another live build holds is left to it."""
    with holding(engine, "queries", str(chain.chain_id)) as lease:
        if lease is None:
            return QuerySummary(chains_busy=1)
        # Re-read under the lease: a build that held it before us may have written some stages.
        fresh = load_pending(engine, [chain.chain_id])
        if not fresh:
            return QuerySummary()
        return _write_chain(fresh[0], config, engine, client)


def _write_chain(
    chain: ChainInput, config: ChainsConfig, engine: Engine, client: LLMClient
) -> QuerySummary:
    summary = QuerySummary(chains=1)
    identifiers = {stage.idx: changed_identifiers([stage.patch]) for stage in chain.stages}
    for stage in chain.stages:
        if stage.query is not None:
            continue
        try:
            result = _generate(
                client,
                QUERY_ROLE,
                query_prompt(chain, stage, config),
                identifiers[stage.idx],
                config,
            )
        except LLMOutputInvalid as exc:
            summary.stages_failed += 1
            summary.failures.append(f"chain {chain.chain_id} stage {stage.idx}: {exc}")
            continue
        save_query(engine, stage.stage_id, result)
        summary.stages_done += 1
        summary.regenerated += result.first_leaked
        summary.leaked += bool(result.leaks)
    if chain.needs_overview:
        _overview(chain, config, engine, client, set().union(*identifiers.values()), summary)
    return summary


def _overview(
    chain: ChainInput,
    config: ChainsConfig,
    engine: Engine,
    client: LLMClient,
    identifiers: set[str],
    summary: QuerySummary,
) -> None:
    try:
        result = _generate(client, OVERVIEW_ROLE, overview_prompt(chain), identifiers, config)
    except LLMOutputInvalid as exc:
        summary.failures.append(f"chain {chain.chain_id} overview: {exc}")
        return
    newly_leaking = save_overview(engine, chain.chain_id, chain.stages[0].stage_id, result)
    summary.overviews += 1
    summary.leaked += newly_leaking


def _generate(
    client: LLMClient, role: str, prompt: str, identifiers: set[str], config: ChainsConfig
) -> Generated:
    """Ask, check for leaked identifiers, and ask again naming the words to avoid, up to the bound."""
    attempts = config.query_max_attempts
    ask = {"role": "user", "content": prompt}
    messages: list[dict[str, Any]] = [ask]
    avoid: set[str] = set()
    first_leaked = False
    for attempt in range(1, attempts + 1):
        # Each retry is warmer as well as told what leaked: never the same paid request again.
        text, completion = client.complete_repaired(
            role, messages, parse_query_repaired, first_attempt=attempt - 1
        )
        leaks = find_leaks(text, identifiers)
        if not leaks:
            return Generated(text, attempt, [], first_leaked)
        # Counted per role in `prchain stats`, and never replayed to a rerun.
        client.refuse(role, completion, "leaked", f"names {', '.join(sorted(leaks))}")
        first_leaked = True
        avoid |= set(leaks)
        # The attempt number in the feedback also keeps each retry's cache key distinct.
        feedback = render(
            PROMPTS, "regenerate.j2", leaks=sorted(avoid), attempt=attempt + 1, attempts=attempts
        )
        messages = [
            ask,
            {"role": "assistant", "content": text},
            {"role": "user", "content": feedback},
        ]
    return Generated(text, attempts, leaks, first_leaked)


# -- prompts -----------------------------------------------------------------------------------


def query_prompt(chain: ChainInput, stage: StageInput, config: ChainsConfig) -> str:
    patch, trimmed = trim_patch(stage.patch, config.query_patch_tokens)
    previous = [s.title for s in chain.stages if s.idx < stage.idx]
    return render(
        PROMPTS,
        "query.j2",
        repo=chain.repo,
        token=fence_token(stage.title, stage.body, patch, *stage.files, *previous),
        title=stage.title,
        body=stage.body,
        patch=patch or "(no code change)",
        trimmed=trimmed,
        files=stage.files,
        stage=stage.idx,
        stages=len(chain.stages),
        avoid=sorted(stage.leaks),
        previous_titles=previous,
    )


def overview_prompt(chain: ChainInput) -> str:
    stages = [
        {"title": s.title, "files": s.files, "body": clean_body(s.body, OVERVIEW_BODY_CHARS)}
        for s in chain.stages
    ]
    avoid = sorted(chain.stages[0].leaks) if chain.stages else []
    texts = [t for s in chain.stages for t in (s.title, s.body, *s.files)]
    return render(
        PROMPTS,
        "overview.j2",
        repo=chain.repo,
        token=fence_token(*texts),
        stages=stages,
        avoid=avoid,
    )


# -- saving ------------------------------------------------------------------------------------


def save_query(engine: Engine, stage_id: int, result: Generated) -> None:
    """Store a stage's query with the gold identifiers it still names (replacing the names an
    earlier, reset query named; the overview, written after, adds its own to stage 1)."""
    with session_scope(engine) as session:
        stage = session.get_one(ChainStage, stage_id)
        stage.query = result.text
        stage.query_attempts = result.attempts
        stage.query_leaks = sorted(result.leaks)


def reset_leaking(engine: Engine, chain_ids: list[int] | None = None) -> int:
    """Forget every query that still leaks (and the overview of a chain whose stage 1 leaks), so
    the next build writes them again; the leaked names stay, and the new prompt forbids them (which
    also keeps the reply cache from handing back the same text). Returns the stages reset."""
    query = select(ChainStage).where(ChainStage.query.is_not(None))
    if chain_ids:
        query = query.where(ChainStage.chain_id.in_(chain_ids))
    reset = 0
    with session_scope(engine) as session:
        for stage in session.scalars(query):
            if not stage.query_leaks:
                continue
            stage.query, reset = None, reset + 1
            if stage.idx == 1:
                session.get_one(Chain, stage.chain_id).overview = None
    return reset


def save_overview(engine: Engine, chain_id: int, first_stage_id: int, result: Generated) -> int:
    """Store the overview; its leaks count against stage 1, where the agent reads it. Returns 1 if
    stage 1 newly becomes leaking (so the leak is counted once)."""
    with session_scope(engine) as session:
        session.get_one(Chain, chain_id).overview = result.text
        stage = session.get_one(ChainStage, first_stage_id)
        before = bool(stage.query_leaks)
        stage.query_leaks = sorted(set(stage.query_leaks or []) | set(result.leaks))
        return int(bool(stage.query_leaks) and not before)


def _diff_paths(diff: str) -> list[str]:
    paths = []
    for line in diff.splitlines():
        if line.startswith("diff --git ") and " b/" in line:
            paths.append(line.rsplit(" b/", 1)[-1])
    return paths


def query_stats(session: Session) -> dict[str, Any]:
    """Store-wide numbers for `prchain stats`: queries written, overviews, final leakage rate."""
    leaks = session.scalars(
        select(ChainStage.query_leaks).where(ChainStage.query.is_not(None))
    ).all()
    leaking = sum(1 for names in leaks if names)
    overviews = (
        session.scalar(select(func.count()).select_from(Chain).where(Chain.overview.is_not(None)))
        or 0
    )
    return {
        "queries": len(leaks),
        "queries_leaking": leaking,
        "query_leakage_rate": round(leaking / len(leaks), 4) if leaks else 0.0,
        "overviews": overviews,
    }
