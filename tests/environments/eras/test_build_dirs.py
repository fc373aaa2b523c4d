"""Where the per-stage build step (`prchain-build`) of a compiled Python project writes, in a real
sandbox and a real clean room, for meson-python and setuptools, is what the table of
docs/environments.md says (issue 50: the docs named `.prchain-build` for the clean room, whose log
showed /work/.cache/prchain-build/meson).

The step is the real generated script; the project's build tools are stand-ins that record where
they were told to build (no compiler needed): a setup.py and a meson.py."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from prchain.environments.eras.python.compiled import Compiled, build_script

pytestmark = pytest.mark.docker
DOCS = Path(__file__).parents[3] / "docs" / "environments.md"
HEADER = "| `prchain-build` runs in |"
MESON = "/tmp/prchain-test-meson.py"
# meson-python: `meson setup <build dir> .` makes build.ninja; `introspect --installed` maps nothing.
FAKE_MESON = """import json, os, sys
args = sys.argv[1:]
if args[0] == "setup":
    os.makedirs(args[1], exist_ok=True)
    open(os.path.join(args[1], "build.ninja"), "w").close()
    open("meson.argv", "w").write(json.dumps(args))
elif args[0] == "introspect":
    print("{}")
"""
FAKE_SETUP = 'import json, sys\nopen("setup.argv", "w").write(json.dumps(sys.argv))\n'
STEPS = {
    "meson": build_script(Compiled("meson-python", False, False, (), meson=MESON), "1.0"),
    "setuptools": build_script(Compiled("setuptools", False, False, ()), "1.0"),
}


def documented() -> dict[str, list[str]]:
    """The docs' table: its first cell → the paths of its build directory, meson's build tree and
    setuptools' objects."""
    lines = DOCS.read_text().splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip().startswith(HEADER)), None)
    assert start is not None, f"docs/environments.md has no table headed {HEADER}"
    rows = {}
    for line in lines[start + 2 :]:
        if not line.strip().startswith("|"):
            break
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        rows[cells[0]] = [re.findall(r"`([^`]+)`", c)[0] for c in cells[2:5]]
    return rows


def where_it_builds(box: Any, run: str = "") -> list[str]:
    """Run both build steps as `box`'s user in /work/repo (`run` wraps the command); the paths of
    the build directory, meson's build tree and setuptools' objects it used."""
    box.write_file(MESON, FAKE_MESON)
    box.write_file("setup.py", FAKE_SETUP)
    for backend, step in STEPS.items():
        box.write_file(f"/tmp/prchain-build-{backend}", step)
        done = box.execute((run or "{}").format(f"python3 /tmp/prchain-build-{backend}"))
        assert done.exit_code == 0, done.output
    meson = json.loads(box.read_file("meson.argv"))[1]
    argv = json.loads(box.read_file("setup.argv"))
    temp = argv[argv.index("--build-temp") + 1]
    return [str(Path(meson).parent), meson, temp]


def test_the_build_directories_are_those_the_docs_name(make_env: Any) -> None:
    docs = documented()
    env = make_env()
    env.enter_stage(1)
    assert where_it_builds(env) == docs["the sandbox"]
    with env.clean_room() as room:
        assert where_it_builds(room) == docs["the clean room"]
    # The agent's own /work made unwritable: the step falls back into the tree.
    unwritable = "chmod 0555 /work && {} ; rc=$?; chmod 0755 /work; exit $rc"
    env.execute("rm -rf /work/.cache")
    fallback = where_it_builds(env, unwritable)
    assert fallback == docs["a container whose `/work` its user cannot write"]
