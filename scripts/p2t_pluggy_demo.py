"""Curate one real stage end to end against the scripted LLM server: pytest-dev/pluggy PR #646.

The stage (base 6e1d0f1, merge 20d8143: `_remove_plugin` removed only the first hookimpl and
`get_hookcallers` returned duplicates) is written into a fresh store as a one-stage chain; the
scripted server plays proposer, critic, verifier and two blinded seeds; the sandbox is a real
container built from the pluggy clone; T(p̂) runs the stage's hidden tests. Prints the graph and
what the run cost. Usage: .venv/bin/python scripts/p2t_pluggy_demo.py [CLONE] [WORKDIR]
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from prchain.cli import main
from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.llm.config import ROLES
from prchain.store.db import make_engine, session_scope
from prchain.store.models import Chain, ChainStage, LLMCall, PullRequest, Repo

MIRROR = "/work/.mirror/pytest-dev+pluggy/repo"
BASE, MERGE = "6e1d0f13a259776bbf137f90bd7ab8b4474f68e7", "20d8143f127a4d7526dbbea441857b4b80ec8bdd"
QUERY = (
    "Unregistering a plugin that implements the same hook twice (one implementation under its own "
    "name, one via `specname`) misbehaves: `PluginManager.get_hookcallers(plugin)` lists the same "
    "HookCaller once per implementation, and `HookCaller._remove_plugin` takes out only one "
    "implementation per call. Make removal take out every implementation of the plugin in one call "
    "and make `get_hookcallers` list each HookCaller once."
)
PROBE = (
    "import pluggy\n"
    "spec, impl = pluggy.HookspecMarker('p'), pluggy.HookimplMarker('p')\n"
    "class S:\n    @spec\n    def h(self): ...\n"
    "class P:\n    @impl\n    def h(self): ...\n    @impl(specname='h')\n    def h2(self): ...\n"
    "pm = pluggy.PluginManager('p'); pm.add_hookspecs(S); p = P(); pm.register(p)\n"
    "print('hookcallers', len(pm.get_hookcallers(p)))\n"
    "pm.hook.h._remove_plugin(p); print('left after one removal', len(pm.hook.h.get_hookimpls()))\n"
)
HOOKS_OLD = """        for i, method in enumerate(self._hookimpls):
            if method.plugin == plugin:
                del self._hookimpls[i]
                return
        raise ValueError(f"plugin {plugin!r} not found")
"""
HOOKS_NEW = """        \"\"\"Remove all hook implementations registered by the given plugin.\"\"\"
        remaining = [impl for impl in self._hookimpls if impl.plugin != plugin]
        if len(remaining) == len(self._hookimpls):
            raise ValueError(f"plugin {plugin!r} not found")
        self._hookimpls[:] = remaining
"""
MANAGER_OLD = """            for hookimpl in hookcaller.get_hookimpls():
                if hookimpl.plugin is plugin:
                    hookcallers.append(hookcaller)
"""
MANAGER_NEW = """            if any(impl.plugin is plugin for impl in hookcaller.get_hookimpls()):
                hookcallers.append(hookcaller)
"""
CHANGELOG = (
    "Fix ``HookCaller._remove_plugin()`` to remove all hook implementations for a plugin in a single "
    "call, instead of only the first one. Also fix ``PluginManager.get_hookcallers()`` to not return "
    "duplicate ``HookCaller`` entries when a plugin has multiple implementations on the same hook "
    "(e.g. via ``specname``).\n"
)

# Statement → what the verifier needs to see in a tool output to call it established.
FACTS = {
    "_remove_plugin deletes the first matching hookimpl and returns": "del self._hookimpls[i]",
    "get_hookcallers appends a HookCaller once per matching hookimpl": "hookcallers.append(hookcaller)",
    "a plugin with two implementations of one hook gets its HookCaller listed twice": "hookcallers 2",
    "one _remove_plugin call leaves the plugin's second implementation registered": "left after one removal 1",
    "after the edits one removal takes out both implementations": "left after one removal 0",
}


def node(i: str, kind: str, statement: str, action: str, **extra: str) -> dict[str, Any]:
    return {
        "id": i,
        "node_type": kind,
        "statement": statement,
        "action": action,
        **extra,
        **(
            {"fact_kind": "dynamic" if action.startswith("BASH") else "static"}
            if kind == "fact"
            else {}
        ),
    }


S = list(FACTS)
ROUND_1 = [
    node("f1", "fact", S[0], "VIEW src/pluggy/_hooks.py:442-447"),
    node("f2", "fact", S[1], "VIEW src/pluggy/_manager.py:440-448"),
    node("f3", "fact", S[2], "BASH python - <<'EOF'\n" + PROBE + "EOF"),
    node(
        "repro1",
        "reproduce_script",
        S[3],
        "CREATE repro_probe.py",
        content=PROBE,
        run="python repro_probe.py",
    ),
    node(
        "fix",
        "code_edit",
        "the fix replaces the loop",
        "STR_REPLACE src/pluggy/_hooks.py",
        old_str=HOOKS_OLD,
        new_str=HOOKS_NEW,
    ),
]
ROUND_2 = [
    node(
        "analysis",
        "issue_analysis",
        "both defects come from per-implementation loops",
        "THINK _remove_plugin stops at the first match and get_hookcallers appends inside the per-implementation loop, so a plugin with two implementations of one hook is listed twice and needs two removals.",
    ),
    node(
        "plan",
        "fix_plan",
        "filter instead of deleting one, and test membership once",
        "THINK keep the implementations whose plugin differs (error if none was removed); append a HookCaller when any implementation belongs to the plugin.",
    ),
    node(
        "edit1",
        "code_edit",
        "_remove_plugin keeps every other plugin's implementations",
        "STR_REPLACE src/pluggy/_hooks.py",
        old_str=HOOKS_OLD,
        new_str=HOOKS_NEW,
    ),
    node(
        "edit2",
        "code_edit",
        "get_hookcallers tests membership once per HookCaller",
        "STR_REPLACE src/pluggy/_manager.py",
        old_str=MANAGER_OLD,
        new_str=MANAGER_NEW,
    ),
    node(
        "edit3",
        "code_edit",
        "the changelog records the fix",
        "CREATE changelog/431.bugfix.rst",
        content=CHANGELOG,
    ),
    node("val1", "validation", S[4], "BASH python repro_probe.py"),
]


def seed_store(url: str, clone: Path) -> int:
    diff = subprocess.run(
        ["git", "-C", str(clone), "diff", BASE, MERGE], capture_output=True, text=True, check=True
    ).stdout
    engine = make_engine(url)
    with session_scope(engine) as session:
        repo = Repo(
            full_name="pytest-dev/pluggy",
            source="git",
            clone_path=str(clone),
            default_branch="main",
        )
        session.add(repo)
        session.flush()
        chain = Chain(
            repo_id=repo.id,
            strategy="single",
            signature="646",
            length=1,
            overview="One fix to plugin removal.",
        )
        pr = PullRequest(
            repo_id=repo.id,
            number=646,
            title="Fix _remove_plugin and get_hookcallers",
            source="git",
            base_sha=BASE,
            merge_commit_sha=MERGE,
            patch_status="ok",
        )
        session.add_all([chain, pr])
        session.flush()
        session.add(
            ChainStage(
                chain_id=chain.id,
                idx=1,
                pr_id=pr.id,
                base_sha=BASE,
                end_sha=MERGE,
                gold_patch=diff,
                query=QUERY,
            )
        )
        return chain.id


def bash(command: str) -> list[dict[str, Any]]:
    return [{"name": "bash", "arguments": {"command": command}}]


def edit(**args: str) -> list[dict[str, Any]]:
    return [{"name": "str_replace_editor", "arguments": args}]


def verifier(body: dict[str, Any]) -> dict[str, Any]:
    text = body["messages"][-1]["content"]
    statement = re.search(r"^Statement: (.*)$", text, re.MULTILINE)
    transcript = text.split("## Transcript", 1)[1].split("## Target", 1)[0]
    outputs = "".join(re.findall(r"OUTPUT:\n(.*?)(?=\n\[\d+\]|\Z)", transcript, re.DOTALL))
    marker = FACTS.get(statement.group(1) if statement else "", "\0")
    return {
        "content": json.dumps(
            {"established": marker in outputs, "matched_step": None, "evidence": "", "reason": ""}
        )
    }


def script(server: ScriptedLLMServer) -> None:
    server.push(
        model="p2t_proposer",
        tool_calls=bash("grep -n '_remove_plugin\\|def get_hookcallers' -r src/pluggy"),
    )
    server.push(model="p2t_proposer", content=json.dumps({"nodes": ROUND_1}))
    server.push(model="p2t_proposer", content=json.dumps({"nodes": ROUND_2}))
    server.push(model="p2t_proposer", content=json.dumps({"nodes": []}))
    server.push(
        model="p2t_critic",
        content=json.dumps(
            {
                "verdicts": [],
                "feedback": ["Add the root-cause analysis and the plan before any edit."],
            }
        ),
    )
    server.push(
        model="p2t_critic", content=json.dumps({"verdicts": [], "feedback": []}), times=None
    )
    server.push(model="p2t_verifier", responder=verifier, times=None)
    wander = [
        bash("ls"),
        bash("cat README.rst | head -20"),
        bash("ls src/pluggy"),
        bash("git log --oneline | head -3"),
        bash("ls testing"),
        bash("wc -l src/pluggy/*.py"),
        bash("ls docs"),
        bash("cat tox.ini | head -5"),
    ]
    for calls in wander:  # seed 0 looks around without learning anything the graph needs
        server.push(model="p2t_seed", tool_calls=calls)
    for calls in [
        bash("grep -n '_remove_plugin\\|def get_hookcallers' -r src/pluggy"),
        edit(command="view", path="src/pluggy/_hooks.py", view_range=[440, 450]),
        edit(command="view", path="src/pluggy/_manager.py", view_range=[436, 450]),
        edit(
            command="str_replace", path="src/pluggy/_hooks.py", old_str=HOOKS_OLD, new_str=HOOKS_NEW
        ),
        edit(
            command="str_replace",
            path="src/pluggy/_manager.py",
            old_str=MANAGER_OLD,
            new_str=MANAGER_NEW,
        ),
        edit(command="create", path="changelog/431.bugfix.rst", file_text=CHANGELOG),
        bash(
            "python -m pytest -q -p no:cacheprovider testing/test_pluginmanager.py 2>&1 | tail -2"
        ),
        [
            {
                "name": "submit",
                "arguments": {
                    "summary": "remove every implementation of the plugin; list each HookCaller once"
                },
            }
        ],
    ]:
        server.push(model="p2t_seed", tool_calls=calls)


def main_(clone: Path, work: Path) -> None:
    work.mkdir(parents=True, exist_ok=True)
    if not clone.exists():
        subprocess.run(["git", "clone", "-q", MIRROR, str(clone)], check=True)
    db = work / "prchain.db"
    db.unlink(missing_ok=True)
    url = f"sqlite:///{db}"
    chain_id = seed_store(url, clone)
    config = {
        "store": {"url": url},
        "llm": {
            "models": {r: r for r in ROLES},
            "cache": False,
            "prices": {"*": {"prompt_per_million": 1.0, "completion_per_million": 2.0}},
        },
        "environment": {
            # No network in the build here (a TLS-intercepting proxy): run pluggy from the
            # worktree's src/ with the image's own pytest; `python` is the agent's interpreter.
            "install_commands": {
                "pytest-dev/pluggy": [
                    "printf '#!/bin/sh\\nPYTHONPATH=/work/repo/src exec python3 \"$@\"\\n' "
                    "> /usr/local/bin/python && chmod 755 /usr/local/bin/python"
                ]
            },
            "test_command": {
                "pytest-dev/pluggy": "python -m pytest -c /dev/null -q -p no:cacheprovider testing/test_pluginmanager.py"
            },
        },
        "p2t": {"window": 8, "commit": 8, "seeds": 2, "mutate": False},
    }
    cfg = work / "prchain.yaml"
    cfg.write_text(json.dumps(config))
    cli = CliRunner()
    with ScriptedLLMServer() as server:
        os.environ["OPENAI_BASE_URL"], os.environ["OPENAI_API_KEY"] = (
            server.base_url,
            "sk-demo-not-a-secret",
        )
        script(server)
        started = time.monotonic()
        curated = cli.invoke(
            main,
            ["p2t", "curate", "--chain", str(chain_id), "--config", str(cfg)],
            terminal_width=160,
        )
        seconds = time.monotonic() - started
        print(curated.output, curated.exception or "")
        drawn = cli.invoke(
            main,
            ["p2t", "graph", f"{chain_id}:1", "--config", str(cfg), "--format", "text"],
            terminal_width=160,
        )
        print(drawn.output)
        tree = cli.invoke(
            main, ["p2t", "graph", f"{chain_id}:1", "--config", str(cfg)], terminal_width=160
        )
        print(tree.output)
        print(
            cli.invoke(
                main, ["export", str(work / "sft.jsonl"), "--config", str(cfg)], terminal_width=160
            ).output
        )
        calls = {}
        with session_scope(make_engine(url)) as session:
            for call in session.query(LLMCall):
                n, p, c, usd = calls.get(call.role, (0, 0, 0, 0.0))
                calls[call.role] = (
                    n + 1,
                    p + call.prompt_tokens,
                    c + call.completion_tokens,
                    usd + call.cost_usd,
                )
        print(f"wall time {seconds:.0f}s (image build included on the first run)")
        for role, (n, p, c, usd) in sorted(calls.items()):
            print(f"{role:16} calls {n:4}  prompt {p:7}  completion {c:6}  ${usd:.4f}")
        print(
            "unused scripted replies:", [r.model for r in server.pending() if r.times is not None]
        )


if __name__ == "__main__":
    args = sys.argv[1:]
    main_(
        Path(args[0] if args else "/tmp/p2t-pluggy/clone"),
        Path(args[1] if len(args) > 1 else "/tmp/p2t-pluggy"),
    )
