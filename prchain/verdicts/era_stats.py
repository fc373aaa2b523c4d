"""The environments section of `prchain stats`: the funnel from chains to stages whose era image
verified and stages with FAIL_TO_PASS tests, and the cost and time per environment."""

from __future__ import annotations

from typing import Any

from rich.table import Table
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from sql.models import Chain, ChainStage, EnvRecipe, StageEra, StageVerification


def collect(session: Session) -> dict[str, Any]:
    recipes = session.execute(
        select(
            EnvRecipe.repo_id,
            EnvRecipe.era_key,
            EnvRecipe.status,
            EnvRecipe.method,
            EnvRecipe.cost,
            EnvRecipe.build_seconds,
            EnvRecipe.verify_seconds,
        )
    ).all()
    verified = {(r.repo_id, r.era_key) for r in recipes if r.status == "verified"}
    stage_eras = session.execute(select(StageEra.repo_id, StageEra.era_key)).all()
    usable = session.scalar(select(func.count()).where(StageVerification.status == "usable"))
    by_method: dict[str, int] = {}
    for r in recipes:
        if r.status == "verified":
            by_method[r.method] = by_method.get(r.method, 0) + 1
    count = len(recipes) or 1
    return {
        "env_chains": session.scalar(select(func.count()).select_from(Chain)) or 0,
        "env_stages": session.scalar(select(func.count()).select_from(ChainStage)) or 0,
        "env_stages_with_era": len(stage_eras),
        "env_eras": len({(s.repo_id, s.era_key) for s in stage_eras}),
        "env_eras_set_up": len(recipes),
        "env_eras_verified": len(verified),
        "env_eras_verified_by_method": by_method,
        "env_stages_on_verified": sum(1 for s in stage_eras if (s.repo_id, s.era_key) in verified),
        "env_stages_fail_to_pass": usable or 0,
        "env_cost": round(sum(r.cost for r in recipes), 4),
        "env_cost_per_era": round(sum(r.cost for r in recipes) / count, 4),
        "env_build_seconds_per_era": round(sum(r.build_seconds for r in recipes) / count, 1),
        "env_verify_seconds_per_era": round(sum(r.verify_seconds for r in recipes) / count, 1),
    }


def render(data: dict[str, Any]) -> list[Table]:
    if not data.get("env_eras_set_up"):
        return []
    table = Table(title="Environments (chains → stages → eras → verified → FAIL_TO_PASS)")
    table.add_column("what")
    table.add_column("count", justify="right")
    methods = ", ".join(
        f"{n} by {m}" for m, n in sorted(data["env_eras_verified_by_method"].items())
    )
    for key, label in (
        ("env_chains", "chains"),
        ("env_stages", "stages"),
        ("env_stages_with_era", "stages with an era"),
        ("env_eras", "eras"),
        ("env_eras_set_up", "eras set up"),
        ("env_eras_verified", f"verified environments ({methods or 'none'})"),
        ("env_stages_on_verified", "stages on a verified environment"),
        ("env_stages_fail_to_pass", "stages with FAIL_TO_PASS tests"),
        ("env_cost_per_era", "LLM cost per environment ($)"),
        ("env_build_seconds_per_era", "build seconds per environment"),
        ("env_verify_seconds_per_era", "verify seconds per environment"),
    ):
        table.add_row(label, str(data.get(key, 0)))
    return [table]
