"""`prchain rollout --prm D --prm-every 2 --prm-window 2` end to end: the CLI wires the PRM into the loop."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner
from sqlalchemy import select
from sqlalchemy.orm import Session

from prchain.cli import main
from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.llm.config import LLMConfig
from prchain.store.models import PRMCall, Step
from prchain.store.opener import make_engine
from tests.agent.conftest import bash, seed_chain, submit, verdict
from tests.support.prm import verdict_json

pytestmark = pytest.mark.docker
GUIDANCE = "Stop listing the directory again; read calc/ops.py instead."


def test_rollout_with_prm_flags_injects_guidance_and_stats_report_the_variant(
    fake_llm: ScriptedLLMServer, llm_config: LLMConfig, sqlite_url: str, tmp_path: Path
) -> None:
    seeded = seed_chain(sqlite_url, tmp_path, prs=(1,))
    config = tmp_path / "prchain.yaml"
    config.write_text(yaml.safe_dump({"llm": llm_config.model_dump(mode="json")}))
    fake_llm.push(model="policy", tool_calls=bash("ls calc"))
    fake_llm.push(model="policy", tool_calls=bash("echo '# noted' >> calc/ops.py"))
    fake_llm.push(model="prm", content=verdict_json(guidance=GUIDANCE))
    fake_llm.push(model="policy", tool_calls=submit())
    fake_llm.push(model="judge", content=verdict(0.9, "Fine."))

    result = CliRunner().invoke(
        main,
        [
            "rollout",
            "--config",
            str(config),
            "--db",
            sqlite_url,
            "--chain",
            str(seeded.chain_id),
            "--prm",
            "D",
            "--prm-every",
            "2",
            "--prm-window",
            "2",
        ],
    )
    assert result.exit_code == 0, result.output

    third_policy_request = fake_llm.requests_for("policy")[2]
    assert GUIDANCE in json.dumps(third_policy_request["messages"][-1])
    with Session(make_engine(sqlite_url)) as session:
        call = session.scalars(select(PRMCall)).one()
        assert (call.variant, call.step_idx, len(call.window)) == ("D", 2, 2)
        assert session.scalars(select(Step.kind).where(Step.kind == "prm")).all() == ["prm"]

    stats = CliRunner().invoke(main, ["stats", "--json", "--db", sqlite_url])
    assert stats.exit_code == 0, stats.output
    data = json.loads(stats.output)
    variant_metrics = {
        key.split(".", 2)[2]: value for key, value in data.items() if key.startswith("prm.D.")
    }
    assert (
        variant_metrics["trajectories"] == 1
        and variant_metrics["invocations_per_trajectory"] == 1.0
    )
    assert (
        variant_metrics["suboptimal_windows_per_trajectory"] == 1.0
        and variant_metrics["acceptance_rate"] == 1.0
    )
    assert variant_metrics["mean_steps"] == 3.0 and variant_metrics["prm_cost_per_100"] > 0
