"""(unit) The Python room's verdict as a Harbor verifier runs it (prchain/verdicts/harbor_room.py,
shipped into each task) decides as the clean room does: what of a change crosses, the variables of
the sealed run, the junit report's outcomes; every case against the function it mirrors, on real
git diffs and a real pytest report made here."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from prchain.dev.repos import git
from prchain.environments.eras.python.report import parse_junit
from prchain.environments.eras.python.seal import runner_env
from prchain.verdicts import harbor_room
from prchain.verdicts.crossing import crosses
from prchain.verdicts.harbor import rules, verifier_script
from prchain.verdicts.sandbox import agent_change, is_test_side
from tests.support.eras_repo import commit_files
from tests.verdicts.test_crossing_rooms import CASES, _Delta

PATHS = [
    "src/geo/area.py", "geo/area.py", "area.py", "README.md", "data/shapes.json",
    "pkg/conf/settings.toml", "pyproject.toml", "setup.cfg", "setup.py", "tests/test_area.py",
    "test_area.py", "conftest.py", "src/conftest.py", "pytest.py", "os.py", "src/json/__init__.py",
    "json.py", "src/pluggy/__init__.py", "geo/sitecustomize.py", "geo/x.pth", ".pytest.ini",
    "geo.egg-info/entry_points.txt", "geo/__pycache__/area.cpython-311.pyc", "Makefile",
    "lib/_pytest/hook.py", "t/basic.t", "geo/testing/helpers.py", "docs/index.rst",
    "tox.ini", "requirements-dev.txt", "webpack.config.js", "src/tsconfig.base.json",
    "geo/data/shapes.ini", "geo/ünï.py", "cli_tests/run.py",
]  # fmt: skip
ROOMS = sorted(CASES) + ["python"]


@pytest.mark.parametrize("room", ROOMS)
def test_what_crosses_is_decided_as_the_clean_room_decides(room: str) -> None:
    shipped = harbor_room.Rules(json.loads(json.dumps(rules(room))))
    for path in PATHS + [p for p, _ in CASES.get(room, [])]:
        assert shipped.crosses(path) == crosses(path, is_test_side, room), path


def test_a_real_diff_is_cut_as_the_clean_room_cuts_it(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    start = {"geo/area.py": "A = 1\n", "tests/test_area.py": "def test(): pass\n"}
    commit_files(repo, start, "Start", "2024-01-01T00:00:00Z")
    for path in ["geo/area.py", "tests/test_area.py", "conftest.py", "geo/ünï.py",
                 "node_modules/chai/index.js", "geo.egg-info/entry_points.txt"]:  # fmt: skip
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(f"# {path} changed\n")
    (repo / "logo.png").write_bytes(bytes(range(256)))
    git(repo, "add", "-A", "-f", ".")
    git(repo, "mv", "geo/area.py", "geo/shapes.py")
    delta = _Delta(repo)
    kept, dropped = harbor_room.cross(harbor_room.Rules(rules("python")), delta.cumulative_patch())
    assert kept == agent_change(delta, "python").patch  # type: ignore[arg-type]
    assert b"geo/shapes.py" in kept and "geo/ünï.py".encode() in kept and b"logo.png" in kept
    assert {"conftest.py", "tests/test_area.py", "geo.egg-info/entry_points.txt"} <= set(dropped)


PROBES = [
    "VERSION 8.3.2\nPLUGIN cov pytest_cov.plugin\nPLUGIN xdist.looponfail xdist.looponfail\n",
    "VERSION 4.4.0\nPLUGIN cov pytest_cov.plugin\n",
    "VERSION 3.6.0\n",
    "",
    "VERSION 7.0\nPLUGIN a b\nVERSION 8.0\nPLUGIN weird-name x.y\n",
]


@pytest.mark.parametrize("probe", PROBES)
@pytest.mark.parametrize("command", ["python -m pytest -p no:cov tests", "pytest tests"])
def test_the_sealed_run_s_variables_are_the_clean_room_s(probe: str, command: str) -> None:
    for own in [(), ("geo.plugin",), ("pytest_cov.plugin",)]:
        assert harbor_room.runner_env(probe, command, own) == runner_env(probe, command, own)


def test_a_real_junit_report_reads_as_the_clean_room_reads_it(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "test_s.py").write_text(
        "import pytest\n\n\n@pytest.mark.parametrize('x', [1, 'a b', '[x]'])\n"
        "def test_p(x):\n    assert x != 1\n\n\ndef test_ok():\n    pass\n\n\n"
        "@pytest.mark.xfail\ndef test_xf():\n    assert 0\n\n\n"
        "@pytest.mark.skip\ndef test_skip():\n    pass\n\n\n"
        "class TestK:\n    def test_m(self):\n        pass\n\n\n"
        "@pytest.fixture\ndef broken():\n    raise RuntimeError\n\n\n"
        "def test_err(broken):\n    pass\n"
    )
    report = tmp_path / "r.xml"
    subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-o", "junit_family=xunit1",
         f"--junitxml={report}", "pkg"],
        cwd=tmp_path, capture_output=True, check=False,
    )  # fmt: skip
    text = report.read_text() + "<testsuite><testcase classname='pkg.test_s' name='test_p[1]'/>"
    ours = parse_junit(text)
    assert harbor_room.parse_junit(text) == ours
    assert ours["pkg/test_s.py::test_p[1]"] == "failed"  # the forged second document is not read
    room = {"FAIL_TO_PASS": ["pkg/test_s.py::test_ok"], "PASS_TO_PASS": ["pkg/test_s.py::test_xf"]}
    assert harbor_room.decide(room, text)["resolved"] is True
    failing = {**room, "PASS_TO_PASS": ["pkg/test_s.py::test_p[1]", "pkg/test_s.py::gone"]}
    verdict = harbor_room.decide(failing, text)
    assert verdict["resolved"] is False
    assert verdict["failing"] == ["pkg/test_s.py::test_p[1]", "pkg/test_s.py::gone"]
    assert harbor_room.decide(room, None)["resolved"] is False
    assert harbor_room.decide(room, "not xml")["error"].startswith("not a junit XML report")


def test_the_verifier_script_is_valid_bash() -> None:
    script = verifier_script(600, 64_000_000)
    checked = subprocess.run(["bash", "-n"], input=script, text=True, capture_output=True)
    assert checked.returncode == 0, checked.stderr
