"""What every export writes beside its data: a dataset card and a manifest of the exported ids.

The card is a README.md with a YAML header (Hugging Face dataset-card style): counts, repositories,
filters, model names, prompt and tool-schema hashes and the config; its body says how to load the
file. The manifest lists the exported rollout and chain ids with the filters, and `prchain export
--manifest FILE` exports exactly those rollouts again.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from prchain.core.files import write_text_atomically
from prchain.export import registry

CARD_NAME = "README.md"


@dataclass
class CardFacts:
    format: str
    data_file: str
    filters: dict[str, Any]
    config: dict[str, Any]
    rollout_ids: list[int] = field(default_factory=list)
    chain_ids: list[int] = field(default_factory=list)
    repos: Counter[str] = field(default_factory=Counter)
    models: dict[str, set[str]] = field(default_factory=dict)
    prompt_hashes: set[str] = field(default_factory=set)
    tool_schema_hashes: set[str] = field(default_factory=set)
    skipped: Counter[str] = field(default_factory=Counter)
    tool_calls: int = 0
    tokens: int = 0

    def add(self, metadata: dict[str, Any]) -> None:
        self.rollout_ids.append(metadata["rollout_id"])
        self.chain_ids.append(metadata["chain_id"])
        self.repos[metadata["repo"]] += 1
        for role, model in metadata["models"].items():
            self.models.setdefault(role, set()).add(model)
        self.prompt_hashes.add(metadata.get("prompt_hash") or "")
        self.tool_schema_hashes.add(metadata.get("tool_schema_hash") or "")
        self.tool_calls += metadata["tool_calls"]
        self.tokens += metadata["trajectory_tokens"]


def manifest_path(out: Path) -> Path:
    return out.with_name(f"{out.stem}.manifest.json")


def write_manifest(out: Path, facts: CardFacts) -> Path:
    path = manifest_path(out)
    body = {
        "data_file": facts.data_file,
        "format": facts.format,
        "filters": facts.filters,
        "rollout_ids": facts.rollout_ids,
        "chain_ids": facts.chain_ids,
    }
    write_text_atomically(path, json.dumps(body, indent=1) + "\n")
    return path


def read_manifest(path: Path) -> list[int]:
    """The rollout ids a manifest lists."""
    return [int(i) for i in json.loads(path.read_text())["rollout_ids"]]


def write_card(out: Path, facts: CardFacts) -> Path:
    header = {
        "pretty_name": f"prchain trajectories ({facts.format})",
        "task_categories": ["text-generation"],
        "tags": ["prchain", "agent-trajectories", "tool-use", "sft"],
        "configs": [{"config_name": "default", "data_files": facts.data_file}],
        "prchain": {
            "format": facts.format,
            "count": len(facts.rollout_ids),
            "tool_calls": facts.tool_calls,
            "tokens": facts.tokens,
            "repos": dict(sorted(facts.repos.items())),
            "filters": facts.filters,
            "skipped": dict(facts.skipped),
            "models": {role: sorted(names) for role, names in sorted(facts.models.items())},
            "prompt_hashes": sorted(h for h in facts.prompt_hashes if h),
            "tool_schema_hashes": sorted(h for h in facts.tool_schema_hashes if h),
            "manifest": manifest_path(out).name,
            "config": facts.config,
        },
    }
    text = "---\n" + yaml.safe_dump(header, sort_keys=False, width=100) + "---\n\n" + _body(facts)
    path = out.with_name(CARD_NAME)
    write_text_atomically(path, text)
    return path


def _body(facts: CardFacts) -> str:
    kind = "parquet" if facts.data_file.endswith(".parquet") else "json"
    lines = [
        f"# prchain trajectories ({facts.format})",
        "",
        f"{len(facts.rollout_ids)} agent trajectories over chains of real pull requests, "
        "written by `prchain export`. Each row is one chain; its `metadata` links back to the "
        "rollout and chain in the prchain store. The manifest lists the exported ids; "
        f"`prchain export --manifest {manifest_path(Path(facts.data_file)).name}` reproduces "
        "exactly this subset.",
        "",
        "```python",
        "import datasets",
        f'ds = datasets.load_dataset("{kind}", data_files="{facts.data_file}")["train"]',
        "```",
    ]
    lines += registry.card_section(facts.format, facts.data_file)
    return "\n".join(lines) + "\n"
