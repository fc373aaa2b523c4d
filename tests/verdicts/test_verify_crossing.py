"""`tests verify` judges the gold patch as the clean room will: what of it cannot cross stays B_t's.

A stage's hidden tests run in a clean room on B_t, the gold test patch and the part of a change that
crosses (crossing.py): a build file, a manifest or a file that is neither source nor data stays as
B_t has it. jansson #717 (held out) registers its new tests in the root CMakeLists.txt: verify,
applying the gold patch whole, found them FAIL_TO_PASS, and `tasks eval` of the gold patch failed
them. Here a real git history and the host's pytest, run by verify_stage itself: a PR adds a
function (crosses) and bumps a version file without a suffix (stays B_t's), each with a test.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from prchain.dev.repos import git
from prchain.environments.protocol import ExecResult
from prchain.verdicts.config import RepoTests, VerdictsConfig
from prchain.verdicts.verify import StageJob, verify_stage

VERSION_PY = (
    "from pathlib import Path\n\n\ndef version():\n"
    '    return (Path(__file__).parent / "VERSION").read_text().strip()\n'
)
SHAPES = "def square(side):\n    return side * side\n"
CUBE = "\n\ndef cube(side):\n    return side * square(side)\n"
TESTS = "from geo.shapes import square\n\n\ndef test_square():\n    assert square(3) == 9\n"
NEW_TESTS = (
    "from geo.shapes import cube\nfrom geo.version import version\n\n\n"
    "def test_cube():\n    assert cube(2) == 8\n\n\n"
    'def test_version():\n    assert version() == "1.1"\n'
)


class HostCheckout:
    """What verify_stage asks of a sandbox, on a real checkout on the host: bash there."""

    def __init__(self, where: Path) -> None:
        self.where = where

    def enter_stage(self, idx: int) -> None:
        git(self.where, "update-ref", "refs/prchain/stage-base", "HEAD")

    def execute(self, command: str, timeout: float | None = None) -> ExecResult:
        done = subprocess.run(
            ["bash", "-c", command], cwd=self.where, capture_output=True, text=True, timeout=120
        )
        return ExecResult(done.stdout + done.stderr, done.returncode)

    def write_file(self, path: str, content: str) -> None:
        target = Path(path) if path.startswith("/") else self.where / path
        target.write_text(content)

    def read_file(self, path: str) -> str:
        target = Path(path) if path.startswith("/") else self.where / path
        return target.read_text()


def _commit(repo: Path, files: dict[str, str], message: str) -> str:
    for path, text in files.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)
    return git(repo, "rev-parse", "HEAD")


COMMAND = f"{sys.executable} -m pytest -p no:cacheprovider -q {{files}}"


def _history(tmp_path: Path, *, bump: bool) -> tuple[Path, StageJob]:
    """A real one-PR history, left at the PR's base, and its stage (code and test patches)."""
    repo = tmp_path / "geo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    start = {
        "geo/__init__.py": "",
        "geo/VERSION": "1.0\n",
        "geo/version.py": VERSION_PY,
        "geo/shapes.py": SHAPES,
        "tests/test_shapes.py": TESTS,
    }
    base = _commit(repo, start, "start")
    pr = {"geo/shapes.py": SHAPES + CUBE, "tests/test_new.py": NEW_TESTS}
    if bump:
        pr["geo/VERSION"] = "1.1\n"
    else:
        pr["tests/test_new.py"] = NEW_TESTS.replace('"1.1"', '"1.0"')
    _commit(repo, pr, "Cubes (#1)")
    code = git(repo, "diff", base, "HEAD", "--", "geo")
    tests = git(repo, "diff", base, "HEAD", "--", "tests")
    git(repo, "checkout", "-q", base)
    return repo, StageJob(1, 1, 1, 1, "acme/geo", str(repo), base, code + "\n", tests + "\n")


def test_a_gold_file_that_cannot_cross_stays_the_bases_in_verify(tmp_path: Path) -> None:
    repo, job = _history(tmp_path, bump=True)
    done = verify_stage(
        HostCheckout(repo),  # type: ignore[arg-type]
        job,
        RepoTests(test=COMMAND, ecosystem="python"),
        VerdictsConfig(gold_runs=1, report_path=str(tmp_path / "report.xml")),
    )

    # test_version passes only with the new VERSION, which no clean room ever sees: the stage's
    # gold fails its own test there, as `tasks eval` would find
    assert done.found.status == "unusable"
    assert done.found.reason.startswith("the gold patch fails 1 of its own tests"), done.found
    assert "tests/test_new.py::test_version" in done.found.reason
    assert done.found.reason.endswith("the gold patch changes geo/VERSION, which stay B_t's here")
    assert done.runs["held_back"] == ["geo/VERSION"]
    assert done.runs["gold"][0]["tests/test_new.py::test_cube"] == "passed"
    assert (repo / "geo/VERSION").read_text() == "1.0\n"
    assert "def cube" in (repo / "geo/shapes.py").read_text()


def test_a_gold_patch_that_crosses_whole_is_judged_as_before(tmp_path: Path) -> None:
    """The same PR without the version bump: everything crosses; both new tests, which cannot
    import before the gold patch, are FAIL_TO_PASS."""
    repo, job = _history(tmp_path, bump=False)
    done = verify_stage(
        HostCheckout(repo),  # type: ignore[arg-type]
        job,
        RepoTests(test=COMMAND, ecosystem="python"),
        VerdictsConfig(gold_runs=1, report_path=str(tmp_path / "report.xml")),
    )
    assert done.found.status == "usable", done.found.reason
    assert done.found.fail_to_pass == [
        "tests/test_new.py::test_cube",
        "tests/test_new.py::test_version",
    ]
    assert done.runs["held_back"] == []
