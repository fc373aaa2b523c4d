"""`--help` is instant: no command's help loads the heavy clients (openai, docker, networkx, ray).

Run in a fresh interpreter, because the rest of the suite has long since imported them here.
"""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("openai", "docker", "networkx", "github", "sqlalchemy", "ray")

PROBE = """
import json, sys
import click
from prchain.cli import main

def paths(group, prefix=()):
    for name, command in group.commands.items():
        yield prefix + (name,)
        if isinstance(command, click.Group):
            yield from paths(command, prefix + (name,))

for path in [(), *paths(main)]:
    try:
        main.main([*path, "--help"], standalone_mode=False)
    except SystemExit:
        pass
print(json.dumps(sorted(m for m in sys.modules if m.split(".")[0] in %r)))
"""


def test_help_of_every_command_imports_no_heavy_client() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE % (HEAVY,)], capture_output=True, text=True, check=True
    )
    loaded = json.loads(done.stdout.strip().splitlines()[-1])
    assert loaded == [], f"--help imported {loaded}"
