"""`prchain tasks convert --to harbor` writes task directories Harbor's own loader accepts
(harbor.models.task.task.Task, in Harbor's environment: `make harbor`), one per stage it can judge,
and counts the others by why. The real Harbor run (oracle 1, nop and a forged conftest 0) is
bench/bench_harbor.py: its image builds cost minutes, past CI's budget."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from prchain.cli import main
from prchain.verdicts.runnable import checkout
from tests.support.harbor import HARBOR_PYTHON, ensure_harbor

GOLD = "diff --git a/geo/area.py b/geo/area.py\n--- a/geo/area.py\n+++ b/geo/area.py\n@@ -1 +1 @@\n-A = 1\n+A = 2\n"  # noqa: E501
TESTS = "diff --git a/tests/test_area.py b/tests/test_area.py\nnew file mode 100644\n--- /dev/null\n+++ b/tests/test_area.py\n@@ -0,0 +1 @@\n+def test_a(): pass\n"  # noqa: E501


def _stage(idx: int, ecosystem: str = "python", runnable: bool = True) -> dict[str, Any]:
    base = f"{idx:040x}"
    return {
        "idx": idx,
        "instance_id": f"acme__geo-{idx}",
        "base_commit": base,
        "patch": GOLD,
        "test_patch": TESTS,
        "problem_statement": "Area is wrong.",
        "FAIL_TO_PASS": ["tests/test_area.py::test_a"],
        "PASS_TO_PASS": [],
        "environment": {
            "runnable": runnable,
            "not_runnable": "" if runnable else "tests unusable",
            "ecosystem": ecosystem,
            "log_parser": {"python": "pytest", "java": "surefire"}[ecosystem],
            "image": "prchain/repo-acme-geo:0123",
            "image_id": "sha256:" + "0" * 64,
            "era": "e1",
            "workdir": "/work/repo",
            "checkout": checkout(base),
            "setup_command": "",
            "test_command": "python -m pytest tests/test_area.py",
            "test_files": ["tests/test_area.py"],
        },
    }


def test_each_judgeable_stage_is_a_task_harbor_loads(tmp_path: Path) -> None:
    chain = {
        "chain_id": 7,
        "repo": "acme/geo",
        "stages": [_stage(1), _stage(2, "java"), _stage(3, runnable=False), _stage(4)],
    }
    tasks = tmp_path / "tasks.jsonl"
    tasks.write_text(json.dumps(chain) + "\n")
    out = tmp_path / "harbor"
    ran = CliRunner().invoke(main, ["tasks", "convert", str(tasks), str(out), "--to", "harbor"])
    assert ran.exit_code == 0, ran.output
    assert "wrote 3 task directories" in ran.output
    assert "1 stage: not runnable (tests unusable)" in ran.output
    assert sorted(p.name for p in out.iterdir()) == [
        "acme-geo-c7-s1", "acme-geo-c7-s2", "acme-geo-c7-s4"
    ]  # fmt: skip
    java = json.loads((out / "acme-geo-c7-s2" / "tests" / "room.json").read_text())
    assert java["reader"] == "prchain.environments.eras.java.report:Surefire"
    assert java["hidden_files"] == ["tests/test_area.py"]
    assert (
        out / "acme-geo-c7-s2" / "tests" / "lib" / "prchain/environments/eras/java/report.py"
    ).is_file()

    ensure_harbor()
    script = (
        "import json, sys\nfrom harbor.models.task.task import Task\n"
        "from harbor.models.task.config import VerifierEnvironmentMode as M\n"
        "t = Task(sys.argv[1])\n"
        "print(json.dumps({'name': t.name, 'instruction': t.instruction,"
        " 'separate': t.config.verifier.environment_mode == M.SEPARATE,"
        " 'agent_user': t.config.agent.user, 'meta': t.config.metadata,"
        " 'collect_user': t.config.verifier.collect[0].user,"
        " 'solve': str(t.paths.discovered_solve_path), 'test': str(t.paths.discovered_test_path)}))\n"
    )
    done = subprocess.run(
        [str(HARBOR_PYTHON), "-c", script, str(out / "acme-geo-c7-s1")],
        capture_output=True, text=True,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    loaded = json.loads(done.stdout)
    assert loaded["name"] == "prchain/acme-geo-c7-s1" and loaded["separate"] is True
    assert loaded["agent_user"] == "agent" and loaded["collect_user"] == "agent"
    assert loaded["meta"]["format"] == "prchain.harbor/1" and loaded["meta"]["stage_idx"] == 1
    assert loaded["instruction"].startswith("Area is wrong.")
    assert loaded["solve"].endswith("solution/solve.sh") and loaded["test"].endswith(
        "tests/test.sh"
    )
    room = json.loads((out / "acme-geo-c7-s1" / "tests" / "room.json").read_text())
    assert room["FAIL_TO_PASS"] == ["tests/test_area.py::test_a"]
    dockerfile = (out / "acme-geo-c7-s1" / "environment" / "Dockerfile").read_text()
    assert (
        dockerfile.startswith("# prchain.harbor/1")
        and "rm -rf /opt/prchain/origin.git" in dockerfile
    )
    assert (out / "acme-geo-c7-s1" / "solution" / "gold.patch").read_text() == GOLD
