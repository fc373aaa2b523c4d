"""`prchain stats` and the report's funnel count environments by ecosystem."""

from __future__ import annotations

import io
import re

from rich.console import Console
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from prchain.report.facts import PipelineFacts
from prchain.report.funnel import build_funnel
from prchain.store.db import session_scope
from prchain.store.models import Chain, ChainStage, EnvRecipe, StageEra, StageVerification
from prchain.verdicts.era_stats import NOT_SET_UP, collect, render
from tests.support.chain_store import StoreBuilder


def _store_with_three_chains(engine: Engine) -> list[int]:
    """Three two-stage chains over six PRs; the stage ids in order."""
    store = StoreBuilder(engine)
    for number in range(1, 7):
        store.pr(number, [f"src/m{number}.py"])
    store.write()
    with session_scope(engine) as session:
        for first in (1, 3, 5):
            chain = Chain(repo_id=1, strategy="test", signature=f"{first}-{first + 1}", length=2)
            session.add(chain)
            session.flush()
            for idx, number in enumerate((first, first + 1), start=1):
                session.add(
                    ChainStage(
                        chain_id=chain.id, idx=idx, pr_id=store.pr_id(number), gold_test_patch="t"
                    )
                )
    with session_scope(engine) as session:
        return list(session.scalars(select(ChainStage.id).order_by(ChainStage.id)))


def _recipe(era: str, ecosystem: str, status: str) -> EnvRecipe:
    return EnvRecipe(
        repo_id=1,
        era_key=era,
        ecosystem=ecosystem,
        era_date="2024-01-01",
        base_sha="0" * 40,
        status=status,
        method="planner",
        image=f"example/{era}",
    )


def test_stages_are_counted_under_the_ecosystem_of_their_era(engine: Engine) -> None:
    stages = _store_with_three_chains(engine)
    assert len(stages) == 6
    eras = ["rs-a", "rs-a", "rs-b", "rs-b", "py-a", "none"]  # the last era was never set up
    with session_scope(engine) as session:
        session.add_all(
            [_recipe("rs-a", "rust", "verified"), _recipe("rs-b", "rust", "unverified")]
        )
        session.add(_recipe("py-a", "python", "verified"))
        for stage, era in zip(stages, eras, strict=True):
            session.add(StageEra(chain_stage_id=stage, repo_id=1, era_key=era, base_sha="0" * 40))
        session.add(StageVerification(chain_stage_id=stages[1], recipe="r", status="usable"))
    with Session(engine) as session:
        found = collect(session)["env_by_ecosystem"]
        funnel = build_funnel(session, PipelineFacts())
    assert found == {
        NOT_SET_UP: {
            "eras": 0,
            "verified": 0,
            "stages": 1,
            "stages_on_verified": 0,
            "fail_to_pass": 0,
        },
        "python": {
            "eras": 1,
            "verified": 1,
            "stages": 1,
            "stages_on_verified": 1,
            "fail_to_pass": 0,
        },
        "rust": {"eras": 2, "verified": 1, "stages": 4, "stages_on_verified": 2, "fail_to_pass": 1},
    }
    step = next(s for s in funnel if s.name == "stages on a verified environment")
    assert ("rust (of 4 stages)", 2) in step.detail
    with Session(engine) as session:
        tables = render(collect(session))
    assert [t.title for t in tables] == [
        "Environments (chains → stages → eras → verified → FAIL_TO_PASS)",
        "Environments by ecosystem",
    ]
    assert tables[1].row_count == 3


def test_image_size_per_era_is_the_mean_of_the_sizes_known(engine: Engine) -> None:
    _store_with_three_chains(engine)
    with session_scope(engine) as session:
        for era, size in (("a", 100_000_000), ("b", 300_000_000), ("c", 0)):  # c: never built
            recipe = _recipe(era, "go", "verified")
            recipe.image_bytes = size
            session.add(recipe)
    with Session(engine) as session:
        data = collect(session)
    assert data["env_image_mb_per_era"] == 200.0
    shown = Console(file=io.StringIO(), width=120)
    shown.print(render(data)[0])
    assert re.search(r"image MB per environment .*200\.0", shown.file.getvalue())


def test_an_era_counts_another_era_s_build_only_where_it_built_none_of_its_own() -> None:
    """cloudquery's era of #6763 tried #6759's image from recipe memory (it lacked testify), then
    built its own in 100.5 s, and recorded 209.6 s: both builds. An era verified on the borrowed
    image alone keeps that image's build time (tests/envsetup/test_build_seconds.py)."""
    from prchain.setup.ladder import era_build_seconds

    borrowed = {"method": "memory", "build_seconds": 109.1, "verify_seconds": 35.3}
    built = {"method": "planner", "build_seconds": 100.5, "verify_seconds": 47.8}
    assert era_build_seconds([borrowed, built]) == 100.5
    assert era_build_seconds([borrowed]) == 109.1
    revised = {"method": "planner", "build_seconds": 20.25}
    assert era_build_seconds([built, revised]) == 120.8
    assert era_build_seconds([]) == 0.0


def test_stats_and_both_funnels_count_unverified_eras_by_one_classifier(engine: Engine) -> None:
    from prchain.app.funnel import funnel

    stages = _store_with_three_chains(engine)
    roots = {
        "a": "build failed: Failed to find 'selinux/selinux.h'. Please make sure the C header "
        "files of libselinux are installed",
        "b": "dial tcp 127.0.0.1:5432: connect: connection refused",
        "c": "3 of 10 tests passed (under eras.pass_share 0.8)",
    }
    with session_scope(engine) as session:
        for era, root in roots.items():
            recipe = _recipe(era, "rust", "unverified")
            recipe.root_error = root
            session.add(recipe)
        session.add(_recipe("d", "rust", "verified"))
        for stage, era in zip(stages, "aabcdd", strict=True):
            session.add(StageEra(chain_stage_id=stage, repo_id=1, era_key=era, base_sha="0" * 40))
    expected = {
        "native library missing (selinux/selinux.h)": 1,
        "service needed (database)": 1,
        "tests failing": 1,
    }
    with Session(engine) as session:
        assert collect(session)["env_eras_unverified_by_reason"] == expected
        step = next(
            s for s in build_funnel(session, PipelineFacts()) if s.name == "verified environments"
        )
        shown = render(collect(session))[0]
    assert dict(step.drops) == expected
    out = io.StringIO()
    Console(file=out, width=200).print(shown)
    assert re.search(
        r"not verified: native library missing \(selinux/selinux\.h\)\s*│\s*1", out.getvalue()
    )
    (row,) = funnel(engine, {})
    assert row.losses == {
        "tested: era not verified: native library missing (selinux/selinux.h)": 2,
        "tested: era not verified: service needed (database)": 1,
        "tested: era not verified: tests failing": 1,
        "tested: its tests not verified yet": 2,
    }


def test_a_verdict_on_an_era_that_no_longer_verifies_is_not_counted_as_tested(
    engine: Engine,
) -> None:
    """nacos: stage 4:1 was verified on its era's first image; `env setup --redo` built the era
    again and it did not verify (79 % of its tests passed), but the old verdict stayed in the
    store, and the funnel counted the stage as tested while `tasks export` refused it."""
    from prchain.app.funnel import funnel

    stages = _store_with_three_chains(engine)
    with session_scope(engine) as session:
        recipe = _recipe("a", "java", "unverified")
        recipe.root_error = "436 of 550 tests passed (under eras.pass_share 0.8)"
        session.add_all([recipe, _recipe("b", "java", "verified")])
        for stage, era in zip(stages[:2], "ab", strict=True):
            session.add(StageEra(chain_stage_id=stage, repo_id=1, era_key=era, base_sha="0" * 40))
            session.add(StageVerification(chain_stage_id=stage, recipe="r", status="usable"))
    (row,) = funnel(engine, {})
    assert row.counts["tested"] == 1 and row.counts["FAIL_TO_PASS"] == 1
    assert row.losses["tested: era not verified: tests failing"] == 1
