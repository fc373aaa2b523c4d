"""The environments section of `prchain stats`: the funnel from chains to stages whose era image
verified and stages with FAIL_TO_PASS tests, overall and by ecosystem, and the cost and time per
environment."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.table import Table
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from prchain.store.environments import (
    RecipeFacts,
    recipe_facts,
    stage_eras,
    usable_stages,
    verification_counts,
)
from prchain.store.models import Chain, ChainStage
from prchain.verdicts.losses import losses


def collect(session: Session) -> dict[str, Any]:
    recipes = recipe_facts(session)
    sized = [r.image_bytes for r in recipes if r.image_bytes]
    verified = {(r.repo_id, r.era_key) for r in recipes if r.status == "verified"}
    eras = [(repo_id, era_key) for _, repo_id, era_key in stage_eras(session)]
    usable = verification_counts(session).get("usable", 0)
    by_method: dict[str, int] = {}
    for r in recipes:
        if r.status == "verified":
            by_method[r.method] = by_method.get(r.method, 0) + 1
    count = len(recipes) or 1
    return {
        "env_chains": session.scalar(select(func.count()).select_from(Chain)) or 0,
        "env_stages": session.scalar(select(func.count()).select_from(ChainStage)) or 0,
        "env_stages_with_era": len(eras),
        "env_eras": len(set(eras)),
        "env_eras_set_up": len(recipes),
        "env_eras_verified": len(verified),
        "env_eras_verified_by_method": by_method,
        "env_eras_unverified_by_reason": dict(
            losses(r.root_error or "" for r in recipes if r.status != "verified").most_common()
        ),
        "env_stages_on_verified": sum(1 for era in eras if era in verified),
        "env_stages_fail_to_pass": usable or 0,
        "env_cost": round(sum(r.cost for r in recipes), 4),
        "env_cost_per_era": round(sum(r.cost for r in recipes) / count, 4),
        "env_build_seconds_per_era": round(sum(r.build_seconds for r in recipes) / count, 1),
        "env_verify_seconds_per_era": round(sum(r.verify_seconds for r in recipes) / count, 1),
        "env_image_mb_per_era": round(sum(sized) / len(sized) / 1e6, 1) if sized else 0,
        "env_by_ecosystem": by_ecosystem(session, recipes),
    }


NOT_SET_UP = "(no recipe yet)"


def by_ecosystem(session: Session, recipes: Sequence[RecipeFacts]) -> dict[str, dict[str, int]]:
    """Per ecosystem: eras set up and verified, stages on them, on a verified one, with
    FAIL_TO_PASS. A stage whose era has no recipe yet is counted under NOT_SET_UP."""
    of_era = {(r.repo_id, r.era_key): r for r in recipes}
    usable = usable_stages(session)
    found: dict[str, dict[str, int]] = {}

    def row(name: str) -> dict[str, int]:
        keys = ("eras", "verified", "stages", "stages_on_verified", "fail_to_pass")
        return found.setdefault(name, dict.fromkeys(keys, 0))

    for r in recipes:
        row(r.ecosystem or "unknown")["eras"] += 1
        row(r.ecosystem or "unknown")["verified"] += r.status == "verified"
    for stage_id, repo_id, era_key in stage_eras(session):
        recipe = of_era.get((repo_id, era_key))
        counts = row((recipe.ecosystem or "unknown") if recipe is not None else NOT_SET_UP)
        counts["stages"] += 1
        counts["stages_on_verified"] += recipe is not None and recipe.status == "verified"
        counts["fail_to_pass"] += stage_id in usable
    return dict(sorted(found.items()))


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
        ("env_image_mb_per_era", "image MB per environment (shared layers counted in)"),
    ):
        table.add_row(label, str(data.get(key, 0)))
    for reason, eras in data.get("env_eras_unverified_by_reason", {}).items():
        table.add_row(f"  not verified: {reason}", str(eras))
    return [table, _ecosystem_table(data.get("env_by_ecosystem", {}))]


def _ecosystem_table(found: dict[str, dict[str, int]]) -> Table:
    table = Table(title="Environments by ecosystem")
    table.add_column("ecosystem")
    for label in ("eras", "verified", "stages", "on verified", "FAIL_TO_PASS"):
        table.add_column(label, justify="right")
    for name, c in found.items():
        cells = (c["eras"], c["verified"], c["stages"], c["stages_on_verified"], c["fail_to_pass"])
        table.add_row(name, *map(str, cells))
    return table
