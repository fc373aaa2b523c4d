"""Demo chains in fresh PostgreSQL stores, a scripted policy that can hold a stage open, and a
snapshot of every rollout row without ids and timings (to compare two runs)."""

from __future__ import annotations

import json
import threading
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from sqlalchemy import Engine, select, text
from sqlalchemy.engine import make_url

from prchain.agent.config import AgentConfig
from prchain.app.config import Config
from prchain.app.rollout import store_label
from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.dev.repos import ChainRepo, make_chain_repo
from prchain.environments.cleanup import gc, owner_alive
from prchain.environments.docker_client import DockerClient
from prchain.llm.config import LLMConfig
from prchain.scale.config import ScaleConfig
from prchain.store.config import StoreConfig
from prchain.store.db import session_scope
from prchain.store.models import (
    Chain,
    ChainStage,
    EnvTransition,
    Judgement,
    PullRequest,
    Repo,
    Rollout,
    RolloutStage,
    Step,
)
from prchain.store.opener import make_engine
from tests.conftest import POSTGRES_URL

CHAINS = {"alpha": (1, 2), "beta": (2, 3)}  # tag → PR numbers of the calc repo, stage order
ROW_NOISE = {
    "id",
    "rollout_id",
    "started_at",
    "finished_at",
    "created_at",
    "latency_ms",
    "seconds",
    "config",
}


@pytest.fixture
def make_store(postgres_admin: Engine) -> Iterator[Callable[[], str]]:
    """New PostgreSQL databases, dropped after the test."""
    names: list[str] = []

    def make() -> str:
        names.append(f"prchain_test_{uuid.uuid4().hex[:12]}")
        with postgres_admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{names[-1]}"'))
        return make_url(POSTGRES_URL).set(database=names[-1]).render_as_string(hide_password=False)

    yield make
    with postgres_admin.connect() as conn:
        for name in names:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest.fixture(scope="session")
def calc_repo(tmp_path_factory: pytest.TempPathFactory) -> ChainRepo:
    return make_chain_repo(tmp_path_factory.mktemp("scale") / "calc")


def seed_demo_chains(url: str, repo: ChainRepo) -> dict[str, int]:
    """The calc repo with two 2-stage chains whose queries carry their tag; tag → chain id."""
    engine = make_engine(url)
    ids: dict[str, int] = {}
    with session_scope(engine) as session:
        row = Repo(
            full_name="acme/calc", source="git", clone_path=str(repo.path), default_branch="main"
        )
        session.add(row)
        session.flush()
        prs = {}
        for number, info in sorted(repo.prs.items()):
            prs[number] = PullRequest(
                repo_id=row.id, number=number, title=info.title, source="git",
                base_sha=info.base_sha, merge_commit_sha=info.merge_sha, patch_status="ok",
            )  # fmt: skip
            session.add(prs[number])
        session.flush()
        for tag, numbers in CHAINS.items():
            chain = Chain(
                repo_id=row.id, strategy="test", signature=tag, length=len(numbers),
                overview=f"The calculator grows, step by step [{tag}].",
            )  # fmt: skip
            session.add(chain)
            session.flush()
            for idx, number in enumerate(numbers, 1):
                info = repo.prs[number]
                session.add(
                    ChainStage(
                        chain_id=chain.id,
                        idx=idx,
                        pr_id=prs[number].id,
                        base_sha=info.base_sha,
                        end_sha=info.merge_sha,
                        gold_patch=info.gold_patch,
                        query=f"Give the calculator operation number {idx} [{tag}].",
                    )  # fmt: skip
                )
            ids[tag] = chain.id
    engine.dispose()
    return ids


@dataclass
class Gate:
    """Holds the policy's first request of stage 2 of the chains in `tags` until `release()`."""

    tags: set[str]
    waiting: dict[str, threading.Event] = field(default_factory=dict)
    _open: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        self.waiting = {tag: threading.Event() for tag in self.tags}

    def hold(self, tag: str) -> None:
        event = self.waiting.get(tag)
        if event is not None and not event.is_set():
            event.set()
            self._open.wait(timeout=120)

    def wait_all(self, timeout: float = 240) -> None:
        for tag, event in self.waiting.items():
            assert event.wait(timeout), f"chain {tag} never reached stage 2"

    def release(self) -> None:
        self._open.set()


def script_demo(fake_llm: ScriptedLLMServer, gate: Gate | None = None) -> None:
    """Per stage the policy appends one function to calc/ops.py and submits; the judge accepts.
    Tool-call ids are fixed so two runs produce byte-identical rows (token counts included)."""

    def policy(body: dict[str, Any]) -> dict[str, Any]:
        messages = body["messages"]
        tag = next(t for t in CHAINS if f"[{t}]" in json.dumps(messages))
        stage = sum(1 for m in messages if m["role"] == "user" and "Task " in str(m["content"]))
        last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
        turn = sum(1 for m in messages[last_user:] if m["role"] == "assistant")
        if gate is not None and stage == 2 and turn == 0:
            gate.hold(tag)
        append = f"printf '\\n\\ndef op_{tag}_{stage}(x, y):\\n    return (x, y)\\n' >> calc/ops.py"
        action = {"name": "bash", "arguments": {"command": append}}
        if turn:
            action = {"name": "submit", "arguments": {"summary": f"stage {stage} done"}}
        return {"tool_calls": [{**action, "id": f"call_{tag}_{stage}_{turn}"}]}

    fake_llm.push(model="policy", responder=policy, times=None)
    fake_llm.push(
        model="judge", content=json.dumps({"score": 0.9, "comment": "Matches."}), times=None
    )


def demo_config(url: str, llm_config: LLMConfig, **scale: Any) -> Config:
    return Config(
        store=StoreConfig(url=url),
        llm=llm_config,
        agent=AgentConfig(workers=2, max_steps_per_stage=10),
        scale=ScaleConfig(**scale),
    )


def snapshot(url: str) -> dict[str, Any]:
    """Every rollout row per chain tag, without ids, timings and the stored config."""
    engine = make_engine(url, create=False)
    out: dict[str, Any] = {}
    with session_scope(engine) as session:
        for chain in session.scalars(select(Chain).order_by(Chain.id)):
            rollouts = list(session.scalars(select(Rollout).filter_by(chain_id=chain.id)))
            out[chain.signature] = [_rollout(session, r) for r in rollouts]
    engine.dispose()
    return out


def _rollout(session: Any, rollout: Rollout) -> dict[str, Any]:
    rows: dict[str, Any] = {"rollout": _clean(rollout)}
    for model, order in (
        (RolloutStage, RolloutStage.stage_idx),
        (Step, Step.idx),
        (Judgement, Judgement.stage_idx),
        (EnvTransition, EnvTransition.stage_idx),
    ):
        found = session.scalars(select(model).filter_by(rollout_id=rollout.id).order_by(order))
        rows[model.__tablename__] = [_clean(row) for row in found]
    return rows


def _clean(row: Any) -> dict[str, Any]:
    return {c.key: getattr(row, c.key) for c in row.__table__.columns if c.key not in ROW_NOISE}


def assert_each_chain_once(shot: dict[str, Any]) -> None:
    """One finished rollout per chain; stages 1..n and steps 0..m-1 each exactly once."""
    assert set(shot) == set(CHAINS)
    for tag, rollouts in shot.items():
        assert len(rollouts) == 1, f"chain {tag}: {len(rollouts)} rollouts"
        rows = rollouts[0]
        assert rows["rollout"]["status"] == "kept", rows["rollout"]
        assert [s["stage_idx"] for s in rows["rollout_stages"]] == list(
            range(1, len(CHAINS[tag]) + 1)
        )
        assert [s["idx"] for s in rows["steps"]] == list(range(len(rows["steps"])))
        assert len({(j["stage_idx"], j["round"]) for j in rows["judgements"]}) == len(
            rows["judgements"]
        )


def chain_containers(store_url: str) -> list[dict[str, Any]]:
    return DockerClient().containers({"prchain.store": store_label(store_url)})


def differences(a: Any, b: Any, path: str = "") -> list[str]:
    """Where two snapshots differ, as readable paths (an assertion message, not a bare `!=`)."""
    if isinstance(a, dict) and isinstance(b, dict):
        return [
            d
            for k in sorted(set(a) | set(b), key=str)
            for d in differences(a.get(k), b.get(k), f"{path}.{k}")
        ]
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [
            d
            for i, (x, y) in enumerate(zip(a, b, strict=True))
            for d in differences(x, y, f"{path}[{i}]")
        ]
    return [] if a == b else [f"{path}: {str(a)[:200]!r} != {str(b)[:200]!r}"]


def patiently(start: Callable[[], Any], attempts: int = 3) -> Any:
    """Ray gives a starting node 30 s to register (fixed in its code). On a machine whose two cores
    are shared with other test runs that is sometimes too short, so try again after a clean stop."""
    import ray

    for attempt in range(1, attempts + 1):
        try:
            return start()
        except Exception as exc:  # Ray raises a bare Exception on this timeout
            ray.shutdown()
            if attempt == attempts or "timed out during startup" not in str(exc):
                raise
    return None


def orphans_cleaned(url: str, dead_owners: set[str]) -> None:
    """What a lost worker leaves behind is only its own sandbox, and `prchain env gc` removes it.
    (Another run's unscoped `prchain env gc` on this shared engine may have removed it first.)"""
    left = chain_containers(url)
    assert {c["labels"]["prchain.owner_pid"] for c in left} <= dead_owners, left
    for container in left:
        assert not owner_alive(container["labels"]), container
    gc(DockerClient(), labels={"prchain.store": store_label(url)})
    assert chain_containers(url) == []
