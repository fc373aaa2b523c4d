"""Harbor, the harness, in its own environment (.harbor/, Python >= 3.12): `make harbor` makes it,
and so does the first test that asks for it (scripts/setup-harbor.sh, idempotent)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
HARBOR_PYTHON = ROOT / ".harbor" / "bin" / "python"
HARBOR = ROOT / ".harbor" / "bin" / "harbor"


def ensure_harbor() -> Path:
    """The harbor CLI, set up first where it is missing."""
    if not HARBOR.exists():
        done = subprocess.run(
            ["bash", str(ROOT / "scripts" / "setup-harbor.sh")], capture_output=True, text=True
        )
        assert done.returncode == 0, f"setting up Harbor failed:\n{done.stdout}\n{done.stderr}"
    return HARBOR


def harbor_validates(model: str, rows: list[dict[str, Any]]) -> list[str]:
    """Each row validated by Harbor's own pydantic model `model` (a dotted path); the errors."""
    ensure_harbor()
    module, _, name = model.rpartition(".")
    script = (
        "import json, sys\n"
        f"from {module} import {name}\n"
        "for line in sys.stdin:\n"
        "    try:\n"
        f"        {name}.model_validate(json.loads(line))\n"
        "    except Exception as exc:\n"
        "        print(str(exc).replace(chr(10), ' '))\n"
    )
    done = subprocess.run(
        [str(HARBOR_PYTHON), "-c", script],
        input="".join(json.dumps(row) + "\n" for row in rows),
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.splitlines()
