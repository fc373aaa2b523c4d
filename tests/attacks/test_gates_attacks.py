"""Issue 20, finding 1: empty changes passed. A scripted agent that changes nothing, only spacing or
only tests meets a judge that would say 1.0 (even while its comment says the patch fails); the
gates fail each stage before the judge is asked, and nothing is kept or exported."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from prchain.agent.export import export_trajectories
from prchain.agent.runner import ChainRunner
from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.store.models import Judgement, RolloutStage
from tests.agent.conftest import bash, seed_chain, submit, verdict

pytestmark = pytest.mark.docker

# A conftest.py that turns every test report into a pass: no implementation, all green.
FORCE_PASS = (
    "cat > conftest.py <<'PY'\n"
    "import pytest\n\n\n"
    "@pytest.hookimpl(hookwrapper=True)\n"
    "def pytest_runtest_makereport(item, call):\n"
    "    outcome = yield\n"
    "    report = outcome.get_result()\n"
    "    report.outcome = 'passed'\n"
    "PY\n"
    "printf '\\ndef test_subtract():\\n    assert True\\n' >> tests/test_ops.py"
)
# Issue 52, class 4: a wrong .py beside the compiled right one the interpreter prefers, and
# attributes that make the judge read a binary blob where the tests run a text change.
PYC = (
    "cp calc/ops.py /tmp/ops.py && printf '\\ndef minus(x, y):\\n    return x - y\\n' >> /tmp/ops.py"
    " && python3 -c \"import py_compile; py_compile.compile('/tmp/ops.py', "
    "cfile='calc/__pycache__/ops.cpython-311.pyc')\""
    " && printf '\\n# subtraction is coming\\n' >> calc/ops.py"
)
HIDDEN = [
    "printf '*.py -diff\\n' > .gitattributes",
    "printf '\\ndef minus(x, y):\\n    return y\\n' >> calc/ops.py",
]
ATTACKS = {
    "pyc-beside-source": [PYC],
    "gitattributes-hides-diff": HIDDEN,
    "nothing": [],
    "whitespace": [
        "printf '\\n\\n' >> calc/ops.py && sed -i 's/return a + b/return a +  b/' calc/ops.py"
    ],
    "tests-only": [FORCE_PASS],
}
REASONS = {
    "pyc-beside-source": "the diff carries what the judge cannot read",
    "gitattributes-hides-diff": "the diff carries what the judge cannot read",
    "nothing": "the agent changed nothing",
    "whitespace": "the agent changed nothing",
    "tests-only": "only tests or test configuration",
}


@pytest.mark.parametrize("attack", sorted(ATTACKS))
def test_a_stage_that_implements_nothing_fails_unjudged(
    attack: str,
    fake_llm: ScriptedLLMServer,
    sqlite_engine: Engine,
    tmp_path: Path,
    make_runner: Callable[..., ChainRunner],
) -> None:
    seeded = seed_chain(str(sqlite_engine.url), tmp_path)
    for command in ATTACKS[attack]:
        fake_llm.push(model="policy", tool_calls=bash(command))
    fake_llm.push(model="policy", tool_calls=submit("done"), times=None)
    # The judge of finding 1: a passing score under a comment that says the patch fails.
    fake_llm.push(
        model="judge",
        content=verdict(1.0, "The patch does not achieve the same effect."),
        times=None,
    )
    result = make_runner(sqlite_engine, keep_policy="prefix").run(seeded.chain_id)

    assert (result.status, result.kept_stages) == ("rejected", 0)
    assert REASONS[attack] in str(result.reason)
    assert fake_llm.requests_for("judge") == []
    with Session(sqlite_engine) as session:
        stage = session.scalars(select(RolloutStage)).one()
        assert session.scalars(select(Judgement)).all() == []
    assert (stage.status, stage.score) == ("failed", None) and "not judged" in str(stage.reason)
    out = tmp_path / "out.jsonl"
    assert export_trajectories(sqlite_engine, out, keep="prefix").written == 0


def test_a_judge_contradicting_itself_does_not_pass_a_real_change(
    fake_llm: ScriptedLLMServer,
    sqlite_engine: Engine,
    tmp_path: Path,
    make_runner: Callable[..., ChainRunner],
) -> None:
    """The change is real, so the judge is asked; its 1.0 under a failing comment is re-asked, and
    a judge that never settles does not pass the stage."""
    seeded = seed_chain(str(sqlite_engine.url), tmp_path)
    fake_llm.push(
        model="policy",
        tool_calls=bash("printf '\\ndef minus(x, y):\\n    return x\\n' >> calc/ops.py"),
    )
    fake_llm.push(model="policy", tool_calls=submit("done"), times=None)
    fake_llm.push(
        model="judge", content=verdict(1.0, "It fails to implement subtraction."), times=None
    )
    result = make_runner(sqlite_engine, max_refinements=0, judge_retries=1).run(seeded.chain_id)

    assert result.status == "rejected" and "contradicts its own comment" in str(result.reason)
    assert len(fake_llm.requests_for("judge")) == 2  # asked, then re-asked once
    with Session(sqlite_engine) as session:
        stage = session.scalars(select(RolloutStage)).one()
        (judgement,) = session.scalars(select(Judgement)).all()
    assert stage.score is None and not judgement.passed and judgement.score == 1.0


def test_a_change_that_only_reorders_lines_is_judged(
    fake_llm: ScriptedLLMServer,
    sqlite_engine: Engine,
    tmp_path: Path,
    make_runner: Callable[..., ChainRunner],
) -> None:
    """Issue 52: the same lines in another order change the file; the gate compares content."""
    seeded = seed_chain(str(sqlite_engine.url), tmp_path)
    reorder = "tac calc/ops.py > /tmp/r && cat /tmp/r > calc/ops.py"
    fake_llm.push(model="policy", tool_calls=bash(reorder))
    fake_llm.push(model="policy", tool_calls=submit("done"), times=None)
    fake_llm.push(model="judge", content=verdict(0.0, "Reordering is no subtraction."), times=None)
    result = make_runner(sqlite_engine, max_refinements=0).run(seeded.chain_id)

    assert result.status == "rejected" and "changed nothing" not in str(result.reason)
    assert len(fake_llm.requests_for("judge")) >= 1
