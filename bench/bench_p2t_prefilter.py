"""The establishment verifier's prefilter on a scripted P2T stage (run by `make bench`; needs Docker).

The calc repository's stage 1 ("give the calculator a subtraction") gets a 13-node graph through the
real reverse phase (scripted proposer and critic, every unlocker run in a real container). A scripted
blind agent then explores, edits and submits, and `prchain p2t curate` runs twice on fresh stores:
`p2t.prefilter=none` (every pending node after every step) and `entities` (tool type + entity
overlap). The scripted verifier establishes a node when its marker shows in a tool output, so both
runs see the same answers to the same questions. Printed: verifier calls, their prompt tokens, the
established nodes and whether the committed trajectories are identical.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import yaml  # noqa: E402
from click.testing import CliRunner  # noqa: E402
from sqlalchemy import func, select  # noqa: E402

from prchain.cli import main  # noqa: E402
from prchain.dev.fake_llm import ScriptedLLMServer  # noqa: E402
from prchain.llm.config import ROLES  # noqa: E402
from prchain.store.db import session_scope  # noqa: E402
from prchain.store.models import LLMCall  # noqa: E402
from prchain.store.opener import make_engine  # noqa: E402
from tests.agent.conftest import seed_chain  # noqa: E402
from tests.p2t.test_cli_curate import NODES, store_like_chain_build  # noqa: E402
from tests.p2t.test_forward import ADD_SUBTRACT, SUBMIT, bash, editor  # noqa: E402
from tests.p2t.test_resume import trajectory  # noqa: E402

PROBE = "python3 -c 'import calc.ops as m; print(sorted(n for n in dir(m) if n[0] != \"_\"))'"
# statement → (unlocker action, what its tool output must show for the verifier to agree)
FACTS = {
    "The project's layout is a calc package and a tests folder": ("BASH ls calc tests", "ops.py"),
    "The README names the project calc": ("VIEW README.md", "# calc"),
    "The tests import add from calc.ops": (
        "BASH grep -rn import tests",
        "from calc.ops import add",
    ),
    "At runtime calc.ops exports only add": (f"BASH {PROBE}", "['add']"),
    "pytest collects test_add and nothing for subtraction": (
        "BASH python3 -m pytest -q --collect-only tests",
        "test_add",
    ),
}
MARKERS = {
    "calc/ops.py defines add and no other operation": "return a + b",
    "subtract is defined next to add": "return a - b",
    "The test suite passes with subtract added": "passed",
    **{statement: marker for statement, (_, marker) in FACTS.items()},
}
EXTRA_NODES = [
    {"id": f"g{i}", "node_type": "fact", "fact_kind": "static", "statement": s, "action": a}
    for i, (s, (a, _)) in enumerate(FACTS.items())
] + [
    {
        "id": "val1",
        "node_type": "validation",
        "statement": "The test suite passes with subtract added",
        "action": "BASH python3 -m pytest -q tests",
    }
]
PLAN = [
    bash("ls calc tests"),
    editor(command="view", path="README.md"),
    bash("cat CHANGELOG.md calc/__init__.py"),
    editor(command="view", path="calc/ops.py"),
    editor(command="view", path="tests/test_ops.py"),
    bash("grep -rn import tests"),
    bash(PROBE),
    bash("python3 -m pytest -q --collect-only tests"),
    ADD_SUBTRACT,
    bash("python3 -m pytest -q tests"),
    SUBMIT,
]


def seed_policy(body: dict[str, Any]) -> dict[str, Any]:
    messages = body["messages"]
    last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
    k = sum(1 for m in messages[last_user:] if m["role"] == "assistant")
    calls = PLAN[min(k, len(PLAN) - 1)]
    return {"tool_calls": [{**c, "id": f"call_{k}_{i}"} for i, c in enumerate(calls)]}


def verifier(body: dict[str, Any]) -> dict[str, Any]:
    text = body["messages"][-1]["content"]
    statement = re.search(r"^Statement: (.*)$", text, re.MULTILINE).group(1)  # type: ignore[union-attr]
    transcript = text.split("## Transcript", 1)[1].split("## Target", 1)[0]
    outputs = "".join(re.findall(r"OUTPUT:\n(.*?)(?=\n\[\d+\]|\Z)", transcript, re.DOTALL))
    return {"content": json.dumps({"established": MARKERS.get(statement, "\0") in outputs})}


def run(server: ScriptedLLMServer, root: Path, prefilter: str) -> dict[str, Any]:
    root.mkdir()
    url = f"sqlite:///{root / 'store.db'}"
    seeded = seed_chain(url, root, prs=(1,))
    engine = make_engine(url)
    store_like_chain_build(engine, verified=False)
    config = {
        "store": {"url": url},
        "llm": {"models": {r: r for r in ROLES}, "cache": False},
        "environment": {
            "test_command": {"acme/calc": "python3 -m pytest -q -p no:cacheprovider tests"}
        },
        "p2t": {"window": 2, "commit": 1, "seeds": 2, "mutate": False, "prefilter": prefilter},
    }
    cfg = root / "prchain.yaml"
    cfg.write_text(yaml.safe_dump(config))
    server.reset()
    server.push(model="p2t_proposer", content=json.dumps({"nodes": NODES + EXTRA_NODES}))
    server.push(model="p2t_proposer", content=json.dumps({"nodes": []}))
    server.push(model="p2t_critic", content=json.dumps({"verdicts": [], "feedback": []}), times=2)
    cli = CliRunner()
    stage = f"{seeded.chain_id}:1"
    built = cli.invoke(main, ["p2t", "graph", stage, "--config", str(cfg), "--format", "text"])
    assert built.exit_code == 0, built.output
    server.push(model="p2t_seed", responder=seed_policy, times=None)
    server.push(model="p2t_verifier", responder=verifier, times=None)
    curated = cli.invoke(
        main, ["p2t", "curate", "--chain", str(seeded.chain_id), "--config", str(cfg)]
    )
    assert curated.exit_code == 0, curated.output
    with session_scope(engine) as session:
        calls, prompt = session.execute(
            select(func.count(), func.coalesce(func.sum(LLMCall.prompt_tokens), 0)).where(
                LLMCall.role == "p2t_verifier"
            )
        ).one()
    engine.dispose()
    shot = trajectory(url)
    return {"calls": calls, "prompt_tokens": prompt, "graph": built.output.splitlines()[0], **shot}


def untimed(steps: list[Any]) -> str:
    """The steps with test-run timings ("1 passed in 0.03s") blanked: they differ run to run."""
    return re.sub(r"in \d+\.\d+s", "in _s", json.dumps(steps, default=str))


def main_() -> None:
    with tempfile.TemporaryDirectory() as tmp, ScriptedLLMServer() as server:
        os.environ["OPENAI_BASE_URL"], os.environ["OPENAI_API_KEY"] = server.base_url, "bench-key"
        every = run(server, Path(tmp) / "none", "none")
        filtered = run(server, Path(tmp) / "entities", "entities")
    print(every["graph"])
    for name, r in (("none", every), ("entities", filtered)):
        print(
            f"prefilter={name:>8}: {r['calls']:4d} verifier calls, {r['prompt_tokens']:7d} prompt "
            f"tokens; established {sorted(r['stage'][1])}; status {r['status']}"
        )
    same = every["stage"][1] == filtered["stage"][1]
    steps_same = untimed(every["steps"]) == untimed(filtered["steps"])
    print(
        f"calls ÷ {every['calls'] / max(filtered['calls'], 1):.1f}, prompt tokens ÷ "
        f"{every['prompt_tokens'] / max(filtered['prompt_tokens'], 1):.1f}; same established "
        f"nodes: {same}; same committed steps (timings aside): {steps_same}"
    )


if __name__ == "__main__":
    main_()
