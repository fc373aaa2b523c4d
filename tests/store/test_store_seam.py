"""The store seam: one `Store` per command, opened by the composition layer, and the aggregates
whose SQL lives under prchain/store alone (on SQLite and PostgreSQL): llm_calls
(prchain/store/llm_calls.py), environments (prchain/store/environments.py) and rollouts
(prchain/store/rollouts.py)."""

from __future__ import annotations

import ast
import functools
from datetime import timedelta
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.orm import Session

from prchain.store import environments as envs
from prchain.store import rollouts as runs
from prchain.store.handle import Store
from prchain.store.models import Chain, ChainStage, PullRequest, Repo, Rollout
from prchain.store.models.base import utcnow
from prchain.store.opener import open_store

ROOT = Path(__file__).resolve().parents[2]


def _call(role: str, cost: float, **fields: object) -> dict[str, object]:
    return {"role": role, "model": "m", "cache_key": f"{role}-{cost}", "prompt_tokens": 10,
            "completion_tokens": 5, "cost_usd": cost, **fields}  # fmt: skip


def test_a_store_holds_its_engine_and_dialect_and_closes(db_url: str) -> None:
    with open_store(db_url) as store:
        assert store.dialect in ("sqlite", "postgresql")
        assert db_url.startswith(store.dialect)
        with store.session() as session:
            assert session.execute(text("SELECT count(*) FROM llm_calls")).scalar() == 0
        assert store.engine.pool.checkedout() == 0
    if store.engine.url.password:  # the PostgreSQL URL: shown with its password masked
        assert "***" in store.url


def test_llm_calls_are_written_and_read_through_the_store(db_url: str) -> None:
    with open_store(db_url) as store:
        calls = store.llm_calls
        assert calls.last_id() == 0
        first = calls.add(_call("judge", 0.25))
        second = calls.add(_call("judge", 0.5, status="ok"))
        cached = calls.add(_call("judge", 0.0, cached=True))
        calls.mark(second, "leaked", "named the gold patch")
        calls.mark(10_000, "leaked", "no such call: nothing happens")
        assert calls.last_id() == cached
        assert calls.cost_after(first) == 0.5
        assert calls.history("judge") == (1, 10.0, 5.0)  # the leaked and the cached left out
        paid = calls.paid(since=utcnow() - timedelta(hours=1))
        assert [(c.id, c.tokens, c.cost_usd) for c in paid] == [
            (first, 15, 0.25),
            (second, 15, 0.5),
        ]
        assert [c.id for c in calls.paid(since=utcnow(), after_id=first)] == [second]
        from prchain.store.llm_calls import count_by_role_and_status, paid_by_role

        with store.session() as session:
            assert paid_by_role(session) == [("judge", 2, 30, 0.75)]
            assert count_by_role_and_status(session, ("leaked",)) == [("judge", "leaked", 1)]
            row = session.execute(text("SELECT error FROM llm_calls WHERE id = :i"), {"i": second})
            assert row.scalar() == "named the gold patch"


@functools.cache
def _product_trees() -> dict[str, ast.Module]:
    """Every product module outside prchain/store, parsed once for all the models' checks."""
    return {
        path.relative_to(ROOT).as_posix(): ast.parse(path.read_text())
        for path in sorted((ROOT / "prchain").rglob("*.py"))
        if "prchain/store/" not in path.as_posix()
    }


def _names_the_model(tree: ast.Module, model: str) -> bool:
    return any(
        (isinstance(node, ast.Name) and node.id == model)
        or (isinstance(node, ast.alias) and node.name == model)
        or (isinstance(node, ast.Attribute) and node.attr == model)
        for node in ast.walk(tree)
    )


@pytest.mark.parametrize(
    "model",
    ["LLMCall", "EnvRecipe", "StageEra", "StageVerification", "EnvTransition"]
    + ["Rollout", "RolloutStage", "Step", "Judgement"],
)
def test_only_the_store_names_an_aggregates_models(model: str) -> None:
    outside = [name for name, tree in _product_trees().items() if _names_the_model(tree, model)]
    assert outside == []


def test_the_model_check_sees_every_way_of_naming_one() -> None:
    assert _names_the_model(ast.parse("from prchain.store.models import LLMCall\n"), "LLMCall")
    assert _names_the_model(ast.parse("import m\nm.LLMCall.id\n"), "LLMCall")
    assert not _names_the_model(ast.parse("LLMCalls(engine).add({})\n"), "LLMCall")


def _two_stages(session: Session) -> tuple[int, int, int, int]:
    """(repository id, chain id, stage 1's id, stage 2's id) of one chain of two stages."""
    repo = Repo(full_name="acme/calc", source="local")
    session.add(repo)
    session.flush()
    prs = [PullRequest(repo_id=repo.id, number=n, source="local") for n in (1, 2)]
    session.add_all(prs)
    session.flush()
    chain = Chain(repo_id=repo.id, strategy="s", signature="1-2", length=2)
    session.add(chain)
    session.flush()
    stages = [
        ChainStage(chain_id=chain.id, idx=i, pr_id=pr.id, base_sha=f"b{i}", gold_patch=f"g{i}",
                   gold_test_patch=f"t{i}")
        for i, pr in enumerate(prs, 1)
    ]  # fmt: skip
    session.add_all(stages)
    session.flush()
    return repo.id, chain.id, stages[0].id, stages[1].id


def _recipe(repo_id: int, key: str, date: str, **fields: object) -> dict[str, object]:
    return {"repo_id": repo_id, "era_key": key, "ecosystem": "python", "era_date": date,
            "base_sha": "b", "status": "verified", "method": "planner", "image": f"img-{key}",
            **fields}  # fmt: skip


def _verified(stage_id: int, recipe: str, status: str = "usable") -> dict[str, object]:
    return {"chain_stage_id": stage_id, "recipe": recipe, "status": status, "reason": None,
            "test_command": "pytest", "test_files": ["t.py"], "fail_to_pass": ["t::a"],
            "pass_to_pass": ["t::b"], "runs": {"gold": []}}  # fmt: skip


def test_era_recipes_and_stage_eras_through_the_store(db_url: str) -> None:
    with open_store(db_url) as store:
        with store.session() as session:
            repo, chain, first, second = _two_stages(session)
        eras = store.environments
        eras.save_recipe(_recipe(repo, "old", "2023-01-01", suite="bookworm",
                                 verification={"attempts": [{"image": "img-old", "build_seconds": 7}]}))  # fmt: skip
        eras.save_recipe(_recipe(repo, "new", "2024-01-01", status="unverified", root_error="E"))
        eras.save_recipe(_recipe(repo, "new", "2024-02-01"))  # replaces, never a second row
        eras.save_recipe(_recipe(repo, "bare", "2024-03-01", image=""))
        assert [r["era_key"] for r in eras.recipes("acme/calc")] == ["old", "new", "bare"]
        assert eras.recipes("acme/other") == []
        assert eras.recipe(repo, "new")["era_date"] == "2024-02-01"  # type: ignore[index]
        assert eras.recipe(repo, "none") is None
        found = eras.verified(repo, "python", exclude="new")
        assert [r["era_key"] for r in found] == ["old"]  # no image: "bare" is left out
        assert eras.verified(repo, "python", exclude="x", suite="trixie") == []
        assert sorted(eras.verified_images()) == [
            ("acme/calc", "img-new"),
            ("acme/calc", "img-old"),
        ]
        assert eras.image_verifications("img-old") == [
            {"attempts": [{"image": "img-old", "build_seconds": 7}]}
        ]
        eras.save_stage_eras([{"chain_stage_id": first, "repo_id": repo, "era_key": "old",
                               "base_sha": "b1"}])  # fmt: skip
        eras.save_stage_eras([
            {"chain_stage_id": first, "repo_id": repo, "era_key": "new", "base_sha": "b1"},
            {"chain_stage_id": second, "repo_id": repo, "era_key": "gone", "base_sha": "b2"},
        ])  # fmt: skip
        with store.session() as session:
            read = {f.stage_id: f for f in envs.stage_facts(session, chain_ids=[chain])}
        assert read[first].recipe is not None and read[first].recipe["image"] == "img-new"
        assert read[second].recipe is None  # its era has no recipe
        with store.session() as session:
            assert sorted(envs.stage_eras(session)) == [
                (first, repo, "new"),
                (second, repo, "gone"),
            ]
            assert sorted(envs.recipe_ecosystems(session)) == [("acme/calc", "python")] * 3
            facts = {f.era_key: f for f in envs.recipe_facts(session)}
            assert facts["new"].status == "verified" and facts["bare"].image_bytes == 0
            outcomes = sorted(envs.stage_outcomes(session))
            assert outcomes == [
                ("acme/calc", chain, 1, None, None, "verified", "", "own"),
                ("acme/calc", chain, 2, None, None, None, None, "own"),
            ]


def test_verifications_through_the_store(db_url: str) -> None:
    with open_store(db_url) as store:
        with store.session() as session:
            _, chain, first, second = _two_stages(session)
        eras = store.environments
        assert eras.known(first, "r1") == (None, None)
        eras.save_verification(_verified(first, "r0", "unusable"))
        eras.save_verification(_verified(first, "r1"))  # replaces the stage's result
        own, same = eras.known(second, "r1")
        assert own is None and same is not None and same.fail_to_pass == ["t::a"]
        assert eras.known(first, "r2") == ("r1", None)
        with store.session() as session:
            read = envs.stage_facts(session, stage_ids=[second, first])
            bare = envs.stage_facts(session, chain_ids=[chain], tests=False)
        assert [(f.idx, f.gold_test_patch, f.gold_patch, f.pr_number) for f in read] == [
            (1, "t1", "g1", 1),
            (2, "t2", "g2", 2),
        ]
        assert read[0].verification is not None and read[0].verification.status == "usable"
        assert read[1].verification is None and [f.verification for f in bare] == [None, None]
        with store.session() as session:
            assert envs.verification_counts(session) == {"usable": 1}
            assert envs.usable_lists(session) == [(["t::a"], ["t::b"])]
            assert envs.usable_stages(session) == {first}
            assert envs.verified_stages(session, [first, second]) == [first]
            assert envs.fail_to_pass(session, [first, second]) == {first: ["t::a"]}
            assert list(envs.verifications(session, [first, second])) == [first]
            assert envs.verification(session, second) is None
            row = envs.stage_with_verification(session, chain, 2)
            assert row is not None and row[1] == 2 and row[2] is None
            assert envs.stage_with_verification(session, chain, 3) is None
            outcomes = sorted(envs.stage_outcomes(session))
            assert [o.status for o in outcomes] == ["usable", None]
            rows = envs.verification_rows(session, [first, second])
            assert list(rows) == [first] and rows[first]["pass_to_pass"] == ["t::b"]
            assert envs.verification_rows(session, []) == {}
        eras.save_verification(_verified(second, "r3", "unusable") | {"reason": "no test"})
        with store.session() as session:
            assert envs.verdict_tally(session) == (1, [("unusable: no test", 1)])


def test_transitions_through_the_store(db_url: str) -> None:
    with open_store(db_url) as store:
        with store.session() as session:
            _, chain, _, _ = _two_stages(session)
            rollout = Rollout(chain_id=chain, status="running", conflict_policy="strict")
            session.add(rollout)
            session.flush()
            rid = rollout.id
        assert {"rollout_id", "stage_idx", "outcome"} <= envs.TRANSITION_COLUMNS
        for idx, outcome in ((2, "partial"), (1, "clean"), (2, "conflict_stopped")):
            with store.session() as session:
                envs.save_transition(session, {"rollout_id": rid, "stage_idx": idx,
                                               "base_sha": "b", "policy": "strict",
                                               "outcome": outcome, "created_at": utcnow()})  # fmt: skip
        with store.session() as session:
            found = envs.transitions(session, rid)
            assert [(t.stage_idx, t.outcome) for t in found] == [
                (1, "clean"),
                (2, "conflict_stopped"),
            ]
            envs.drop_transitions(session, rid, after=1)
        with store.session() as session:
            assert [t.stage_idx for t in envs.transitions(session, rid)] == [1]


def _rollout_rows(store: Store, rid: int) -> None:
    """Two stages of rollout `rid` written as a runner writes them: steps, stages, verdicts."""
    with store.session() as session:
        for idx, (stage, kind) in enumerate([(1, "query"), (1, "assistant"), (2, "assistant")]):
            runs.add_step(session, {"rollout_id": rid, "stage_idx": stage, "idx": idx,
                                    "kind": kind, "message": {"role": "assistant"},
                                    "prompt_tokens": 3, "created_at": utcnow()})  # fmt: skip
        for stage in (1, 2):
            runs.start_stage(session, {"rollout_id": rid, "stage_idx": stage, "status": "running",
                                       "rounds": 0, "started_at": utcnow()})  # fmt: skip
            runs.save_judgement(session, {"rollout_id": rid, "stage_idx": stage, "round": 0,
                                          "score": 0.5, "passed": False, "attempts": 2,
                                          "created_at": utcnow()})  # fmt: skip
        runs.finish_stage(session, rid, 1, {"status": "passed", "score": 0.9, "tests_passed": True})
        runs.save_judgement(session, {"rollout_id": rid, "stage_idx": 1, "round": 0, "score": 0.9,
                                      "passed": True, "created_at": utcnow()})  # fmt: skip
        runs.fail_running_stages(session, rid, "boom")


def test_rollouts_through_the_store(db_url: str) -> None:
    with open_store(db_url) as store:
        with store.session() as session:
            _, chain, _, _ = _two_stages(session)
        rollouts = store.rollouts
        first = rollouts.new(chain, conflict_policy="strict")
        rid = rollouts.new(chain, conflict_policy="strict", prm_variant="C")
        _rollout_rows(store, rid)
        with store.session() as session:
            runs.finish(session, rid, "failed", "boom", {"agent_steps": 2})
        assert rollouts.get(rid).status == "failed"  # type: ignore[union-attr]
        assert rollouts.newest_agent(chain).id == first  # type: ignore[union-attr]  # running first
        rollouts.reopen(rid)
        assert rollouts.get(rid).reason is None  # type: ignore[union-attr]
        assert [s.stage_idx for s in rollouts.passed_stages(rid)] == [1]
        assert rollouts.scores(rid) == [0.9, None]
        assert rollouts.stage(rid, 2).reason == "boom"
        assert [r.id for r in rollouts.latest(1)] == [rid]
        assert rollouts.finished_chains(("kept",)) == set()
        with store.session() as session:
            assert runs.stage_count(session) == 2
            assert runs.status_counts(session) == {"running": 2}
            assert runs.judged_passes(session) == {(rid, 1)}
            assert runs.scored_test_outcomes(session) == [(rid, 1, True)]
            assert runs.judge_retries(session) == 2  # a replaced verdict keeps its attempts
            assert sorted(runs.pass_by_stage(session).items()) == [(1, (1, 1)), (2, (0, 1))]
            assert sorted(runs.by_prm_variant(session), key=str) == [
                ("C", 1, 0, 2, 0.0),
                (None, 1, 0, 0, 0.0),
            ]
            assert [s.idx for s in runs.steps(session, rid, through=1, kinds=["assistant"])] == [1]
            runs.set_stage_diff(session, rid, 2, "diff")
            runs.drop_steps(session, rid, [2])
        view = rollouts.trajectory(rid)
        assert view is not None and [s.idx for s in view.steps] == [0, 1]
        assert view.stages[1].stage_diff == "diff" and len(view.judgements) == 2
        assert [s.idx for s in rollouts.rewind(rid, keep_through=0)] == []
        assert rollouts.trajectory(10_000) is None
        with store.session() as session:
            assert runs.stages(session, rid) == [] and runs.judgements(session, rid) == []
            assert [r.id for r in runs.of_chains(session, [chain])] == [rid, first]
            assert runs.chains_with_rollouts(session, [chain, 10_000]) == {chain}
