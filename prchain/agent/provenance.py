"""Which prompts and tool schemas a trajectory was made with, as two short hashes.

Stored on every rollout and carried into the export, so a trainer can tell data generated under one
prompt set from another, and generation-time prompts from the ones used at inference.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from prchain.agent.tools import TOOL_SCHEMAS

AGENT_PROMPTS = Path(__file__).with_name("prompts")


def prompts_hash(*directories: Path) -> str:
    """sha256 over every template (name and text) in the given prompt directories."""
    digest = hashlib.sha256()
    for directory in directories:
        for path in sorted(directory.glob("*.j2")):
            digest.update(f"{directory.name}/{path.name}\0".encode())
            digest.update(path.read_bytes())
    return digest.hexdigest()


def tool_schema_hash(schemas: list[dict[str, Any]] = TOOL_SCHEMAS) -> str:
    canonical = json.dumps(schemas, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()
