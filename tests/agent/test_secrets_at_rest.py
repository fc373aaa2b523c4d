"""Secrets never reach the store or a side file, and the judge hides every gold line worth hiding
(issue 16, finding 5). Real SQLite and PostgreSQL stores."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from prchain.agent.judge import gold_lines, is_worth_hiding, leaked_lines
from prchain.agent.persist import Recorder, new_rollout
from prchain.app.config import Config, configured_secrets
from prchain.cli import main
from prchain.llm.config import LLMConfig
from prchain.store.models import Judgement, Step
from tests.agent.conftest import seed_chain

CUSTOM_KEY = "custom-llm-key-0123456789"  # no known shape: only the config says it is a secret
SHAPED_KEY = "sk-proj-" + "A1b2" * 8
DB_PASSWORD = "store-password-42"


def test_an_echoed_key_is_redacted_when_the_step_is_stored(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_LLM_KEY", CUSTOM_KEY)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    config = Config(
        llm=LLMConfig(api_key_env="MY_LLM_KEY"),
        store={"url": f"postgresql+psycopg://me:{DB_PASSWORD}@db.example/prchain"},
    )
    chain = seed_chain(engine.url.render_as_string(hide_password=False), tmp_path)
    recorder = Recorder(
        engine,
        new_rollout(engine, chain.chain_id, conflict_policy="strict"),
        secrets=configured_secrets(config),
    )
    echoed = (
        f"$ env\nMY_LLM_KEY={CUSTOM_KEY}\nOTHER={SHAPED_KEY}\nDB=postgresql://me:{DB_PASSWORD}@db/x"
    )
    call = {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{}"}}
    recorder.step(1, "assistant", {"role": "assistant", "content": echoed, "tool_calls": [call]})
    recorder.step(
        1, "tool", {"role": "tool", "content": echoed, "tool_call_id": "c1"}, observation=echoed
    )
    recorder.stage_started(1)
    recorder.judgement(1, 0, score=0.5, comment=echoed, passed=False, attempts=1, redacted=False)
    recorder.stage_finished(1, status="failed", stage_diff=echoed, reason=echoed)
    assert recorder.redactions == 18  # three secrets in each of six stored texts
    with Session(engine) as session:
        stored = json.dumps(
            [[s.message, s.observation] for s in session.scalars(select(Step))]
            + [j.comment for j in session.scalars(select(Judgement))],
            ensure_ascii=False,
        )
    # Nothing to redact at export time any more, whatever the exporting shell holds.
    for secret in (CUSTOM_KEY, SHAPED_KEY, DB_PASSWORD):
        assert secret not in stored
    assert "postgresql://me:[REDACTED]@db/x" in stored


def test_the_side_file_masks_credentials(
    db_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", CUSTOM_KEY)
    out = tmp_path / "export" / "trajectories.jsonl"
    result = CliRunner().invoke(
        main,
        [
            "export",
            str(out),
            "--db",
            db_url,
            "--set",
            f"llm.endpoints.judge=http://judge:{DB_PASSWORD}@judge.example/v1",
        ],
    )
    assert result.exit_code == 0, result.output
    side = (out.parent / "trajectories.config.json").read_text()
    config = json.loads(side)
    assert DB_PASSWORD not in side and CUSTOM_KEY not in side
    assert config["llm"]["endpoints"]["judge"] == "http://judge:[REDACTED]@judge.example/v1"
    password = Config(store={"url": db_url}).store.url.partition("@")[0].rpartition(":")[2]
    if db_url.startswith("postgresql"):
        assert f":{password}@" not in side and ":***@" in config["store"]["url"]


GOLD = """--- a/calc/ops.py
+++ b/calc/ops.py
@@ -1,3 +1,9 @@
+def mul(a, b):
+    return a * b
+    }
+    return
+    else:
+    return None
+x = 1
"""


def test_the_judge_hides_short_gold_lines_but_not_generic_ones() -> None:
    # Before: only lines longer than 20 characters counted, so `return a * b` went through.
    assert gold_lines(GOLD, 6) == ["def mul(a, b):", "return a * b"]
    comment = "Compare with the reference: return a * b, then `}` and return None."
    assert leaked_lines(comment, GOLD, 6) == ["return a * b"]
    assert not is_worth_hiding("return None;", 6) and is_worth_hiding("return total;", 6)
