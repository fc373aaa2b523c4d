#!/usr/bin/env bash
# The whole pipeline offline: a repository made here, the scripted local LLM server, real containers.
# mine → chains build → queries build → rollout → export, then the export is loaded with `datasets`.
# DEMO_LLM_SCRIPT picks the scripted replies: examples/demo-llm-idle.yaml is an agent that submits
# without changing anything (nothing is kept; the rollout table says why, stage by stage).
set -euo pipefail
cd "$(dirname "$0")/.."
PRCHAIN=${PRCHAIN:-.venv/bin/prchain}
DEMO=${DEMO_DIR:-data/demo}
rm -rf "$DEMO" && mkdir -p "$DEMO"
DB="sqlite:///$DEMO/prchain.db"
ARGS=(--config examples/demo.yaml --db "$DB")

"$PRCHAIN" dev make-repo "$DEMO/calc"
"$PRCHAIN" dev fake-llm --script "${DEMO_LLM_SCRIPT:-examples/demo-llm.yaml}" --port 0 >"$DEMO/fake-llm.log" 2>&1 &
LLM_PID=$!
trap 'kill $LLM_PID 2>/dev/null || true' EXIT
for _ in $(seq 1 50); do grep -q '^export ' "$DEMO/fake-llm.log" 2>/dev/null && break; sleep 0.2; done
eval "$(grep '^export ' "$DEMO/fake-llm.log")"

"$PRCHAIN" mine --source git --name acme/calc "$DEMO/calc" "${ARGS[@]}"
# The demo chain is a few lines per PR: below the substance threshold meant for real histories.
"$PRCHAIN" chains build "${ARGS[@]}"
# An era image per stage base, verified by running the repository's tests there (docs/environments.md).
"$PRCHAIN" env setup "${ARGS[@]}"
"$PRCHAIN" queries build "${ARGS[@]}"
"$PRCHAIN" rollout "${ARGS[@]}"
# The same chains again in the text action format (servers without tool calling), each as a new
# rollout beside the first; the scripted model sends the same messy reply shapes in both formats.
mapfile -t CHAINS < <(.venv/bin/python -c 'import sqlite3, sys
for (chain,) in sqlite3.connect(sys.argv[1]).execute("SELECT DISTINCT chain_id FROM rollouts"):
    print(chain)' "$DEMO/prchain.db")
REDO=()
for chain in "${CHAINS[@]}"; do REDO+=(--redo "$chain"); done
"$PRCHAIN" rollout "${REDO[@]}" --set agent.action_format=text "${ARGS[@]}"
# Three exports for trainers, each in its own directory beside its dataset card and manifest.
OPENAI="$DEMO/export/openai/trajectories.jsonl"
SHAREGPT="$DEMO/export/sharegpt/trajectories.jsonl"
PARQUET="$DEMO/export/parquet/trajectories.parquet"
"$PRCHAIN" export "$OPENAI" "${ARGS[@]}"
"$PRCHAIN" export "$SHAREGPT" --format sharegpt "${ARGS[@]}"
"$PRCHAIN" export "$PARQUET" "${ARGS[@]}"
"$PRCHAIN" stats "${ARGS[@]}"
echo "the agent ran the repository's tests in its sandbox at every stage:"
.venv/bin/python - "$DEMO/prchain.db" <<'PY'
import sqlite3
import sys

rows = sqlite3.connect(sys.argv[1]).execute(
    "SELECT rollout_id, stage_idx, observation FROM steps "
    "WHERE observation LIKE '%demo-tests-ran%' ORDER BY rollout_id, stage_idx"
)
for rollout, stage, content in rows:
    summary = [line for line in content.splitlines() if " passed" in line or " failed" in line]
    print(f"  rollout {rollout} stage {stage}: {summary[-1].strip() if summary else content[-120:]}")
PY
.venv/bin/python - "$OPENAI" "$SHAREGPT" "$PARQUET" <<'PY'
import os
import sys

import datasets
import pyarrow.parquet

for path in sys.argv[1:]:
    kind = "parquet" if path.endswith(".parquet") else "json"
    rows = pyarrow.parquet.read_metadata(path).num_rows if kind == "parquet" else os.path.getsize(path)
    if not rows:  # the idle agent's run: nothing kept, so nothing to load
        print(path, "holds no trajectory (see the skipped reasons above)")
        continue
    print(path, datasets.load_dataset(kind, data_files=path, split="train"))
PY
echo "exports (each with README.md and a manifest beside it):"
printf '  %s\n' "$OPENAI" "$SHAREGPT" "$PARQUET"
