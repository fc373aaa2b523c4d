"""Harbor runs prchain's tasks: the real `harbor` CLI (`make harbor`) on the Harbor task directories
`prchain tasks convert --to harbor` writes for a generated repository's chain.

The repository is `prchain.dev.repos.make_tested_repo` (the geo chain the verdict tests use), taken
through mine → chains build → env setup → tests verify → tasks export --runnable → tasks convert.
Then, per written stage:

| run | agent | expected reward |
| --- | --- | --- |
| gold | Harbor's `oracle` (solution/solve.sh: the gold patch) | 1 |
| nop | Harbor's `nop` (no change) | 0 |
| forged | `oracle` on a copy whose solve.sh writes a root `conftest.py` that reports every test as passed, and no fix | 0 (the clean room's allow-list keeps conftest.py out) |

Prints each trial's reward and the wall time of each step. Everything it builds carries a run-unique
name (the repository `bench-harbor-<hex>/geo`); it removes the prchain images of that repository
and its download-cache volume when done, and Harbor removes its own environments (`--delete`, its
default). Harbor's first setup (`make harbor`) is not timed here: under a load of 40 on this
machine its pip install took 14 minutes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

import yaml

from prchain.dev.repos import make_tested_repo
from prchain.environments.cleanup import install_handlers
from prchain.environments.eras.build import cache_volume
from prchain.environments.eras.config import ErasConfig

ROOT = Path(__file__).resolve().parents[1]
PRCHAIN = Path(sys.executable).with_name("prchain")
HARBOR = ROOT / ".harbor" / "bin" / "harbor"
REPO = f"bench-harbor-{uuid.uuid4().hex[:8]}/geo"
FORGED_CONFTEST = """import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome = "passed"
"""
FORGED_SOLVE = f"""#!/bin/bash
set -euo pipefail
cd /work/repo
cat > conftest.py <<'EOF'
{FORGED_CONFTEST}EOF
"""


def timed(label: str, argv: list[str], times: dict[str, float], **kwargs: object) -> str:
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, text=True, **kwargs)  # type: ignore[call-overload]
    times[label] = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{label} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return str(done.stdout)


def tasks_for(work: Path, times: dict[str, float]) -> Path:
    repo = make_tested_repo(work / "geo")
    config = work / "prchain.yaml"
    eras = {"suites": {"bookworm": "3.11"}, "extra_base_packages": [], "test_packages": []}
    eras |= {"seed_packages": [], "system_site_packages": True}
    settings = {"eras": eras, "environment": {"log_dir": str(work / "logs")}}
    settings |= {"chains": {"min_chain_code_lines": 0}, "env_setup": {"enabled": False}}
    config.write_text(yaml.safe_dump(settings))
    common = ["--config", str(config), "--db", f"sqlite:///{work / 'store.db'}"]
    steps = [
        ("mine", ["mine", "--source", "git", "--name", REPO, str(repo.path)]),
        ("chains build", ["chains", "build"]),
        ("env setup", ["env", "setup"]),
        ("tests verify", ["tests", "verify"]),
        ("tasks export", ["tasks", "export", str(work / "tasks.jsonl"), "--runnable"]),
        ("tasks convert", ["tasks", "convert", str(work / "tasks.jsonl"), str(work / "harbor")]),
    ]
    for label, args in steps:
        out = timed(label, [str(PRCHAIN), *args, *common], times)
    print(out.strip())
    return work / "harbor"


def forged_copies(tasks: Path, into: Path) -> None:
    for task in sorted(tasks.iterdir()):
        copy = into / f"{task.name}-forged"
        shutil.copytree(task, copy)
        (copy / "solution" / "solve.sh").write_text(FORGED_SOLVE)
        toml = (copy / "task.toml").read_text()
        (copy / "task.toml").write_text(toml.replace(task.name + '"', copy.name + '"', 1))


def rewards(jobs: Path) -> dict[str, float | None]:
    found: dict[str, float | None] = {}
    for trial in jobs.glob("*/*/result.json"):
        result = json.loads(trial.read_text())
        rewards = ((result.get("verifier_result") or {}).get("rewards")) or {}
        found[result["task_name"]] = rewards.get("reward")
    return found


def run_harbor(label: str, path: Path, agent: str, jobs: Path, times: dict[str, float]) -> None:
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    argv = [str(HARBOR), "run", "-p", str(path), "-a", agent, "-o", str(jobs), "-n", "3", "-y"]
    timed(label, argv, times, env=env)


def main() -> None:
    subprocess.run(["bash", str(ROOT / "scripts" / "setup-harbor.sh")], check=True)
    times: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="bench-harbor-") as temp:
        work = Path(temp)
        try:
            tasks = tasks_for(work, times)
            forged = work / "forged"
            forged.mkdir()
            forged_copies(tasks, forged)
            for task in tasks.iterdir():
                shutil.copytree(task, forged / task.name)  # the gold ones in the same job
            run_harbor(
                "harbor oracle (gold + forged)", forged, "oracle", work / "jobs-oracle", times
            )
            run_harbor("harbor nop", tasks, "nop", work / "jobs-nop", times)
            print(f"\n{'task':45} {'agent':7} {'reward':>6}  expected")
            for agent, jobs in (("oracle", "jobs-oracle"), ("nop", "jobs-nop")):
                for name, reward in sorted(rewards(work / jobs).items()):
                    expected = 1.0 if agent == "oracle" and not name.endswith("-forged") else 0.0
                    mark = "" if reward == expected else "   <-- WRONG"
                    print(f"{name:45} {agent:7} {reward!s:>6}  {expected}{mark}")
        finally:
            images = subprocess.run(
                ["docker", "images", "-q", "--filter", f"label=prchain.repo={REPO}"],
                capture_output=True, text=True, check=False,
            ).stdout.split()  # fmt: skip
            if images:
                subprocess.run(["docker", "rmi", "-f", *images], capture_output=True, check=False)
            volume = cache_volume(ErasConfig(), REPO)  # its builds' download cache
            subprocess.run(["docker", "volume", "rm", volume], capture_output=True, check=False)
    print("\nwall time per step:")
    for label, seconds in times.items():
        print(f"  {label:32} {seconds:7.1f} s")


if __name__ == "__main__":
    install_handlers()  # a SIGTERM then runs the `finally` that removes what the bench made
    main()
