"""What a rollout works on: a chain read from the store as plain task objects, and which chains wait."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from sqlalchemy import Engine, select

from prchain.agent.choices import FINISHED
from prchain.chains.reading.leakage import changed_identifiers, find_leaks
from prchain.core.errors import NothingToDo
from prchain.store.db import session_scope
from prchain.store.models import Chain, ChainStage, PullRequest, Repo
from prchain.store.rollouts import Rollouts


@dataclass(frozen=True)
class StageTask:
    idx: int
    pr_number: int
    base_sha: str
    gold_patch: str
    query: str
    stage_id: int = 0  # ChainStage.id: where its verified tests are found
    query_leaks: tuple[str, ...] = ()  # gold identifiers its query (or overview) still names
    entry: str = "revert"  # how the sandbox enters it (chain_stages.entry)


@dataclass(frozen=True)
class ChainTask:
    chain_id: int
    repo: str
    clone_path: str
    overview: str
    stages: list[StageTask]

    @property
    def replays(self) -> bool:
        """Whether a stage is entered by replay: its start then holds the agent's earlier work."""
        return any(stage.entry == "replay" for stage in self.stages)


def load_chain(engine: Engine, chain_id: int) -> ChainTask:
    with session_scope(engine) as session:
        chain = session.get(Chain, chain_id)
        if chain is None:
            raise NothingToDo(
                f"chain {chain_id} does not exist", hint="`prchain chains build` makes chains"
            )
        repo = session.get(Repo, chain.repo_id)
        rows = session.execute(
            select(ChainStage, PullRequest.number)
            .join(PullRequest, PullRequest.id == ChainStage.pr_id)
            .where(ChainStage.chain_id == chain_id)
            .order_by(ChainStage.idx)
        ).all()
        missing = [stage.idx for stage, _ in rows if not stage.query]
        if missing or not rows:
            raise NothingToDo(
                f"chain {chain_id} has no query for stage(s) {missing or 'any'}",
                hint="run `prchain queries build` first",
            )
        if repo is None or not repo.clone_path:
            raise NothingToDo(
                f"chain {chain_id}: its repository has no local clone",
                hint="mine with --source git or give the repo a clone_path",
            )
        stages = [
            StageTask(
                s.idx,
                number,
                s.base_sha or "",
                s.gold_patch,
                s.query or "",
                s.id,
                query_leaks(s, chain.overview or ""),
                s.entry,
            )
            for s, number in rows
        ]
        overview = chain.overview or (
            f"{len(stages)} related changes to {repo.full_name}, in the order they were made."
            if len(stages) != 1
            else f"One change to {repo.full_name}."
        )
        return ChainTask(chain_id, repo.full_name, repo.clone_path, overview, stages)


def query_leaks(stage: ChainStage, overview: str) -> tuple[str, ...]:
    """Gold identifiers the agent would read in this stage's task: those the query build recorded,
    and those found again now (a query edited by hand, or an overview read in stage 1)."""
    text = f"{overview}\n{stage.query or ''}" if stage.idx == 1 else stage.query or ""
    found = find_leaks(text, changed_identifiers([stage.gold_patch or stage.gold_test_patch]))
    return tuple(sorted(set(found) | set(stage.query_leaks or ())))


def pending_chains(
    engine: Engine,
    chain_ids: Iterable[int] = (),
    limit: int | None = None,
    *,
    redo: Iterable[int] = (),
) -> list[int]:
    """Chains whose every stage has a query and that have no finished rollout, in id order;
    chains in `redo` are pending whatever their rollouts.

    Asked-for chains that do not exist are an error (NothingToDo naming them), not "finished".
    """
    again = set(redo)
    ready = ready_chains(engine, [*chain_ids, *again])
    done = Rollouts(engine).finished_chains(FINISHED)
    todo = [cid for cid in ready if cid not in done or cid in again]
    return todo[:limit] if limit else todo


def ready_chains(engine: Engine, chain_ids: Iterable[int] = ()) -> list[int]:
    """Chains whose every stage has a query (rolled out or not), in id order."""
    wanted = set(chain_ids)
    with session_scope(engine) as session:
        every = list(session.scalars(select(Chain.id).order_by(Chain.id)))
        missing = sorted(wanted - set(every))
        if missing:
            raise NothingToDo(
                f"chain {', '.join(map(str, missing))} does not exist"
                if len(missing) == 1
                else f"chains {', '.join(map(str, missing))} do not exist",
                hint="`prchain chains list` shows the chains there are",
            )
        ids = [cid for cid in every if not wanted or cid in wanted]
        unready = set(
            session.scalars(select(ChainStage.chain_id).where(ChainStage.query.is_(None)))
        )
        staged = set(session.scalars(select(ChainStage.chain_id)))
    return [cid for cid in ids if cid in staged and cid not in unready]
