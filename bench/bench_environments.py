"""Sandbox speed: base check, repo image build, container start, stage transition, exec round trip.

Target (issue #4): median stage transition under 1.5 s with a cached image.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from prchain.dev.repos import git, make_chain_repo
from prchain.environments.config import EnvironmentConfig
from prchain.environments.docker_client import DockerClient
from prchain.environments.docker_env import DockerEnvironment
from prchain.environments.images import ensure_base_image, ensure_repo_image
from prchain.environments.protocol import StageSpec

TRANSITIONS = 20


def timed(fn, *args, **kwargs) -> tuple[float, object]:
    start = time.perf_counter()
    value = fn(*args, **kwargs)
    return time.perf_counter() - start, value


def chain_stages(path: Path) -> list[StageSpec]:
    repo = make_chain_repo(path)
    return [
        StageSpec(i, repo.prs[n].base_sha, repo.prs[n].gold_patch)
        for i, n in enumerate((1, 2, 3), 1)
    ]


def fresh_build_seconds(client: DockerClient, config: EnvironmentConfig, tmp: Path) -> float:
    """A repo image built from scratch (a clone with one unique commit, so the recipe is new)."""
    path = tmp / "fresh"
    make_chain_repo(path)
    (path / "stamp.txt").write_text(f"{time.time_ns()}\n")
    git(path, "add", "-A")
    git(path, "commit", "-qm", "stamp")
    seconds, image = timed(ensure_repo_image, client, config, "bench/fresh", path, lambda _m: None)
    client.remove_image(image.tag)
    return seconds


def transitions(env: DockerEnvironment) -> list[float]:
    times = []
    for i in range(TRANSITIONS):
        t = (1, 2, 3)[i % 3]
        env.write_file(f"bench/note_{i}.txt", f"work {i}\n")
        times.append(env.enter_stage(t).seconds)
    return times


def main() -> int:
    config = EnvironmentConfig(log_dir=tempfile.mkdtemp(prefix="prchain-bench-logs-"))
    client = DockerClient()
    base_check, _ = timed(ensure_base_image, client, config, lambda _m: None)
    with tempfile.TemporaryDirectory() as tmp:
        stages = chain_stages(Path(tmp) / "calc")
        ensure_repo_image(client, config, "acme/calc", Path(tmp) / "calc", lambda _m: None)
        build = fresh_build_seconds(client, config, Path(tmp))
        starts, closes, execs = [], [], []
        for _ in range(5):
            env = DockerEnvironment(
                config, repo="acme/calc", clone_path=str(Path(tmp) / "calc"), stages=stages
            )
            starts.append(timed(env.start)[0])
            execs += [timed(env.execute, "true")[0] for _ in range(10)]
            closes.append(timed(env.close)[0])
        with DockerEnvironment(
            config, repo="acme/calc", clone_path=str(Path(tmp) / "calc"), stages=stages
        ) as env:
            moves = transitions(env)
            diff = statistics.median(timed(env.diff)[0] for _ in range(10))
    rows = [
        ("base image check (cached)", base_check),
        ("repo image build, fresh recipe (calc)", build),
        ("container start, cached image (median of 5)", statistics.median(starts)),
        ("container removal (median of 5)", statistics.median(closes)),
        ("exec round trip `true` (median of 50)", statistics.median(execs)),
        (f"stage transition (median of {TRANSITIONS})", statistics.median(moves)),
        (f"stage transition (max of {TRANSITIONS})", max(moves)),
        ("diff() (median of 10)", diff),
    ]
    for name, seconds in rows:
        print(f"{name:<48} {seconds:8.3f} s")
    target = statistics.median(moves) < 1.5
    print(f"stage transition target < 1.5 s: {'met' if target else 'MISSED'}")
    return 0 if target else 1


if __name__ == "__main__":
    sys.exit(main())
