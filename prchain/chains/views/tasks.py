"""`export_tasks`: one JSON object per chain with its stages, readable by `datasets` and single-PR tools.

Every stage also carries SWE-bench's field names (instance_id, repo, base_commit, patch, test_patch,
problem_statement, created_at, hints_text). Each field keeps one JSON type on every row (strings
are "" rather than null, lists stay lists) so pyarrow infers one schema for the whole file.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from prchain.core.files import atomic_output
from prchain.store.environments import Verification, verifications
from prchain.store.models import Chain, ChainStage, PullRequest, Repo

TASK_FORMAT = "prchain.task/1"
BATCH = 500


def _iso(value: datetime | None) -> str:
    return value.isoformat() if value else ""


def instance_id(repo: str, number: int) -> str:
    """SWE-bench's id: owner__name-<number>."""
    return f"{repo.replace('/', '__')}-{number}"


def _edge(edge: dict[str, Any]) -> dict[str, Any]:
    return {
        "src": int(edge["src"]),
        "dst": int(edge["dst"]),
        "src_number": int(edge.get("src_number", 0)),
        "dst_number": int(edge.get("dst_number", 0)),
        "types": [str(t) for t in edge.get("types", [])],
        "strength": int(edge.get("strength", 0)),
        "overlap": float(edge.get("overlap", 0.0)),
        "evidence": [
            {
                "type": str(e.get("type", "")),
                "found_in": str(e.get("found_in", "")),
                "via_issue": int(e.get("via_issue", 0)),
                "text": str(e.get("text", "")),
            }
            for e in edge.get("evidence", [])
        ],
    }


def stage_record(
    stage: ChainStage, pr: PullRequest, repo: str, tests: Verification | None = None
) -> dict[str, Any]:
    fallback = f"{pr.title}\n\n{pr.body}".strip()
    return {
        "idx": stage.idx,
        "pr_id": pr.id,
        "pr_number": pr.number,
        "title": pr.title or "",
        "instance_id": instance_id(repo, pr.number),
        "repo": repo,
        "base_commit": stage.base_sha or "",
        "end_commit": stage.end_sha or "",
        # How the sandbox enters the stage: revert (the earlier gold patches reverted at
        # base_commit) or propagate (the fallback; docs/architecture.md, "Carry-forward").
        "entry": stage.entry,
        "patch": stage.gold_patch,
        "test_patch": stage.gold_test_patch,
        # The pr_id of the later stage of the chain whose tests this stage borrowed because its
        # own PR changes none (prchain/chains/building/lent.py); 0: the test patch is its own.
        "tests_from": stage.tests_from or 0,
        "query": stage.query or "",
        "problem_statement": stage.query or fallback,
        "created_at": _iso(pr.created_at),
        "merged_at": _iso(pr.merged_at),
        # SWE-bench fills hints from issue comments posted before the fix; we hold none such, so it stays empty.
        "hints_text": "",
        # SWE-bench's test lists, found by `prchain tests verify` (empty until then); tests_status
        # says whether the stage is usable for P2T ("" when not verified) and tests_reason why not.
        "FAIL_TO_PASS": list(tests.fail_to_pass) if tests else [],
        "PASS_TO_PASS": list(tests.pass_to_pass) if tests else [],
        "tests_status": tests.status if tests else "",
        "tests_reason": (tests.reason or "") if tests else "",
    }


def chain_record(chain: Chain, stages: list[dict[str, Any]], repo: str) -> dict[str, Any]:
    return {
        "format": TASK_FORMAT,
        "chain_id": chain.id,
        "strategy": chain.strategy,
        "signature": chain.signature,
        "repo": repo,
        "length": chain.length,
        "score": float(chain.score),
        "overview": chain.overview or "",
        "edges": [_edge(e) for e in chain.edges or []],
        "stages": stages,
    }


def _records(
    session: Session, chains: Sequence[Chain], repos: dict[int, str]
) -> Iterator[dict[str, Any]]:
    ids = [c.id for c in chains]
    stages = session.scalars(
        select(ChainStage)
        .where(ChainStage.chain_id.in_(ids))
        .order_by(ChainStage.chain_id, ChainStage.idx)
    ).all()
    prs = {
        p.id: p
        for p in session.scalars(
            select(PullRequest).where(PullRequest.id.in_({s.pr_id for s in stages}))
        )
    }
    verified = verifications(session, [s.id for s in stages])
    by_chain: dict[int, list[ChainStage]] = {}
    for stage in stages:
        by_chain.setdefault(stage.chain_id, []).append(stage)
    for chain in chains:
        repo = repos.get(chain.repo_id, "")
        records = [
            stage_record(s, prs[s.pr_id], repo, verified.get(s.id))
            for s in by_chain.get(chain.id, [])
        ]
        yield chain_record(chain, records, repo)


def iter_tasks(engine: Engine, strategy: str | None = None) -> Iterator[dict[str, Any]]:
    """Every chain (of one strategy, or all) as an export record, in chain id order."""
    with Session(engine) as session:
        repos = {rid: name for rid, name in session.execute(select(Repo.id, Repo.full_name))}
        query = select(Chain).order_by(Chain.id)
        if strategy:
            query = query.where(Chain.strategy == strategy)
        last = 0
        while chains := session.scalars(query.where(Chain.id > last).limit(BATCH)).all():
            yield from _records(session, chains, repos)
            last = chains[-1].id
            session.expunge_all()


def export_tasks(engine: Engine, out_path: str | Path, *, strategy: str | None = None) -> int:
    """Write one JSON line per chain to `out_path` (whole or not at all, never through a device or
    FIFO: see prchain.core.files); returns the number of chains written."""
    count = 0
    with atomic_output(out_path) as out:
        for record in iter_tasks(engine, strategy):
            out.write(json.dumps(record, ensure_ascii=False) + "\n")
            count += 1
    return count
