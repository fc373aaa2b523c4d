"""`tests verify` judges a stage as every clean room will: the gold code patch's build part is on
the hidden side, with the tests; the rest is what an agent must write.

A clean room runs the hidden tests on B_t, the part of a change that crosses (crossing.py), the gold
code patch's sections that cannot cross (its build files, manifests: sandbox.build_part) and the
gold test patch. jansson #717 (held out) registers its new tests in the root CMakeLists.txt, json-c
#702 adds a source file to CMakeLists.txt and its symbols to json-c.sym: no agent's change can carry
those, and `tasks eval` of the gold failed them. Verify's second run now holds the hidden side
(test patch and build part), its third the code on top: a test that passes with the hidden side
alone asks nothing of the agent and is not FAIL_TO_PASS. Here a real git history and the host's
pytest, run by verify_stage itself: a PR adds a function (crosses) and bumps a version file
without a suffix (cannot cross), each with a test file of its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prchain.verdicts.config import RepoTests, VerdictsConfig
from prchain.verdicts.sandbox import build_part, hidden_side, patch_paths
from prchain.verdicts.verify import StageJob, verify_stage
from tests.support.host_checkout import PYTEST as COMMAND
from tests.support.host_checkout import HostCheckout, one_pr_stage

VERSION_PY = (
    "from pathlib import Path\n\n\ndef version():\n"
    '    return (Path(__file__).parent / "VERSION").read_text().strip()\n'
)
SHAPES = "def square(side):\n    return side * side\n"
CUBE = "\n\ndef cube(side):\n    return side * square(side)\n"
TESTS = "from geo.shapes import square\n\n\ndef test_square():\n    assert square(3) == 9\n"
NEW_TESTS = "from geo.shapes import cube\n\n\ndef test_cube():\n    assert cube(2) == 8\n"
VERSION_TESTS = (
    'from geo.version import version\n\n\ndef test_version():\n    assert version() == "1.1"\n'
)


def _history(tmp_path: Path, *, bump: bool) -> tuple[Path, StageJob]:
    """A real one-PR history, left at the PR's base, and its stage (code and test patches)."""
    start = {
        "geo/__init__.py": "",
        "geo/VERSION": "1.0\n",
        "geo/version.py": VERSION_PY,
        "geo/shapes.py": SHAPES,
        "tests/test_shapes.py": TESTS,
    }
    pr = {
        "geo/shapes.py": SHAPES + CUBE,
        "tests/test_new.py": NEW_TESTS,
        "tests/test_version.py": VERSION_TESTS,
    }
    if bump:
        pr["geo/VERSION"] = "1.1\n"
    else:  # the version moves in code, which crosses
        pr["geo/version.py"] = VERSION_PY.replace("return (", 'return "1.1" or (')
    repo = tmp_path / "geo"
    return repo, one_pr_stage(repo, start, pr, "geo", "acme/geo")


def _verified(tmp_path: Path, *, bump: bool) -> tuple[Path, Any]:
    repo, job = _history(tmp_path, bump=bump)
    done = verify_stage(
        HostCheckout(repo),  # type: ignore[arg-type]
        job,
        RepoTests(test=COMMAND, ecosystem="python"),
        VerdictsConfig(gold_runs=1, report_path=str(tmp_path / "report.xml")),
    )
    return repo, done


def test_a_test_the_gold_build_part_alone_passes_asks_nothing_of_the_agent(tmp_path: Path) -> None:
    repo, done = _verified(tmp_path, bump=True)
    assert done.found.status == "usable", done.found.reason
    assert done.found.fail_to_pass == ["tests/test_new.py::test_cube"]
    # the new VERSION is on the hidden side: its test passes before any code of the agent's
    assert done.found.pass_to_pass == ["tests/test_version.py::test_version"]
    assert done.runs["tests"]["tests/test_version.py::test_version"] == "passed"
    assert done.runs["build_part"] == ["geo/VERSION"]
    assert (repo / "geo/VERSION").read_text() == "1.1\n"


def test_a_gold_patch_that_crosses_whole_has_no_build_part(tmp_path: Path) -> None:
    """The same PR with the version moved in code: both new tests ask for the agent's code."""
    _, done = _verified(tmp_path, bump=False)
    assert done.found.status == "usable", done.found.reason
    assert done.found.fail_to_pass == [
        "tests/test_new.py::test_cube",
        "tests/test_version.py::test_version",
    ]
    assert done.runs["build_part"] == []


def test_the_build_part_is_every_section_that_cannot_cross() -> None:
    """sandbox.build_part on a real C PR's shape (json-c #702): CMakeLists.txt and the linker's
    symbol list are the hidden side, the sources the agent's."""
    patch = "".join(
        f"diff --git a/{p} b/{p}\n--- a/{p}\n+++ b/{p}\n@@ -1 +1 @@\n-a\n+b\n"
        for p in ("CMakeLists.txt", "json_object.c", "json-c.sym", "json_patch.h")
    )
    held = build_part(patch, "c")
    assert patch_paths(held) == ["CMakeLists.txt", "json-c.sym"]
    assert hidden_side("c")("CMakeLists.txt") and not hidden_side("c")("json_object.c")
