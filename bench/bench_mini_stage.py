"""mini-swe-agent drives one exported stage of a real repository by its `image_name`.

The stage is a row of the SWE-rebench V2 file `tasks export --runnable` writes beside the task file
(`tasks.stages.jsonl`), from a store of a real history (issue 78, acceptance 3). mini-swe-agent runs
as a SWE-bench user runs it: its own `benchmarks/swebench.yaml`, its `DockerEnvironment` on the
row's image with no network, the row's install commands first. A scripted model (prchain's
OpenAI-compatible test server, the real `openai`/LiteLLM clients in between) applies the stage's
gold code patch and submits `git diff`; `prchain tasks eval --predictions` then scores that
submission in the clean room, and a second prediction (the submission without its largest source
file) must not resolve.

    python bench/bench_mini_stage.py data/run/tasks.jsonl --db sqlite:///data/prchain.db [--stage N]

It builds nothing: the stage's era image must be on this engine (the run that exported it built
it). Prints the exit status, the submission's size, both verdicts and the wall time of each step.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from prchain.dev.fake_llm import ScriptedLLMServer  # noqa: E402
from tests.support.mini_stage import mini_swe_agent_on  # noqa: E402

PRCHAIN = Path(sys.executable).with_name("prchain")
SOURCE = re.compile(r"\.(py|go|rs|java|js|mjs|cjs|ts|tsx|c|h|cc|cpp|kt)$")


def _call(command: str) -> list[dict[str, Any]]:
    return [{"name": "bash", "arguments": {"command": command}}]


def without_largest_source(patch: str) -> str:
    """The patch without the sections of its source file with the most added lines."""
    sections = re.split(r"(?m)^(?=diff --git )", patch)
    added: Counter[str] = Counter()
    for section in sections:
        head = re.search(r"(?m)^\+\+\+ b/(.+)$", section)
        if head and SOURCE.search(head.group(1)):
            added[head.group(1)] += sum(
                1
                for line in section.splitlines()
                if line.startswith("+") and not line.startswith("+++")
            )
    if not added:
        return patch
    drop = added.most_common(1)[0][0]
    return "".join(s for s in sections if f"+++ b/{drop}\n" not in s)


def evaluate(tasks: Path, db: str, preds: list[dict[str, Any]], work: Path) -> list[dict[str, Any]]:
    file = work / "preds.jsonl"
    file.write_text("".join(json.dumps(p) + "\n" for p in preds))
    results = work / "results.jsonl"
    argv = [str(PRCHAIN), "tasks", "eval", str(tasks), "--predictions", str(file)]
    done = subprocess.run(
        [*argv, "--results", str(results), "--db", db], capture_output=True, text=True
    )
    print(done.stdout.strip()[-600:], done.stderr.strip()[-600:], sep="\n")
    return (
        [json.loads(line) for line in results.read_text().splitlines()] if results.exists() else []
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tasks", type=Path, help="the task file of `tasks export --runnable`")
    parser.add_argument("--db", required=True, help="the store the task file came from")
    parser.add_argument(
        "--stage", type=int, default=0, help="row of tasks.stages.jsonl (default 0)"
    )
    args = parser.parse_args()
    rows = [
        json.loads(line)
        for line in args.tasks.with_suffix(".stages.jsonl").read_text().splitlines()
    ]
    row = rows[args.stage]
    print(f"stage {row['instance_id']} on {row['image_name']}")
    times: dict[str, float] = {}
    with ScriptedLLMServer() as server, tempfile.TemporaryDirectory() as tmp:
        edit = "git apply <<'PATCH'\n" + row["patch"].rstrip("\n") + "\nPATCH"
        server.push(
            model="policy", contains="<pr_description>", tool_calls=_call("git status --short")
        )
        server.push(model="policy", tool_calls=_call(edit))
        server.push(
            model="policy", tool_calls=_call("git diff > /tmp/patch.txt && wc -l /tmp/patch.txt")
        )
        server.push(
            model="policy",
            tool_calls=_call("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && cat /tmp/patch.txt"),
        )
        start = time.monotonic()
        info = mini_swe_agent_on(row, server.base_url)
        times["mini-swe-agent"] = time.monotonic() - start
        submission = info.get("submission", "")
        print(f"exit {info.get('exit_status')}; submission {len(submission.splitlines())} lines")
        wrong = without_largest_source(submission)
        preds = [
            {"instance_id": row["instance_id"], "model_patch": patch, "model_name_or_path": name}
            for name, patch in (("mini-swe-agent", submission), ("mini-wrong", wrong))
        ]
        for pred in preds:  # one `tasks eval` each: a predictions file holds one patch per stage
            start = time.monotonic()
            work = Path(tmp) / pred["model_name_or_path"]
            work.mkdir()
            for result in evaluate(args.tasks, args.db, [pred], work):
                print(f"{pred['model_name_or_path']}: {result.get('status')}")
            times[f"eval {pred['model_name_or_path']}"] = time.monotonic() - start
    print(" ".join(f"{k} {v:.0f} s" for k, v in times.items()))


if __name__ == "__main__":
    main()
