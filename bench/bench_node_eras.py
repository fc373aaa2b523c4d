"""Node eras: per-era build time cold (empty npm cache volume, no era image), warm (npm cache
filled, image removed), the era image's size, and what a stage pays to get node_modules: the
links of `prchain-node-modules` against `npm ci --offline` from the filled cache.

The made-up mimer history (tests/support/node_repo.py) on the real npm registry: Node 18 + mocha
(dated install) and Node 20 + `node --test` (npm ci). Its era images and cache volume are its own
and removed at the end; the toolchain layers (node + npm) are shared by recipe and kept, so their
build counts in the cold figure only the first time this engine makes them.
"""

from __future__ import annotations

import secrets
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from click.testing import CliRunner
from sqlalchemy import delete, select

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from environments.docker_client import DockerClient  # noqa: E402
from environments.eras.build import CACHE, cache_volume  # noqa: E402
from environments.eras.config import ErasConfig  # noqa: E402
from environments.eras.node.packages import LINKER  # noqa: E402
from prchain.cli import main  # noqa: E402
from sql.db import make_engine, session_scope  # noqa: E402
from sql.models import EnvRecipe  # noqa: E402
from tests.support.node_repo import make_mimer  # noqa: E402

REPO = f"bench-node-{secrets.token_hex(4)}/mimer"
# One stage's way to node_modules each: from a checkout of B_t (the era's tree, bind-mounted), as
# the agent would; timed inside the container so container start-up is not counted.
PER_STAGE = (
    "cp -a /src /tmp/links && cd /tmp/links && s=$EPOCHREALTIME && {linker} && e=$EPOCHREALTIME && "
    "python3 -c \"print('links', round($e - $s, 3))\"; "
    "cp -a /src /tmp/ci && cd /tmp/ci && s=$EPOCHREALTIME && "
    "if npm ci --offline --no-audit --no-fund --cache {cache}/npm >/tmp/ci.log 2>&1; then "
    "e=$EPOCHREALTIME && python3 -c \"print('npm-ci', round($e - $s, 3))\"; "
    "else echo \"npm-ci failed: $(grep -m1 'npm error' /tmp/ci.log)\"; fi"
)


def invoke(*args: str) -> float:
    start = time.perf_counter()
    CliRunner().invoke(main, list(args), catch_exceptions=False)
    return time.perf_counter() - start


def recipes(url: str) -> list[EnvRecipe]:
    with session_scope(make_engine(url)) as session:
        rows = list(session.scalars(select(EnvRecipe).order_by(EnvRecipe.era_date)))
        session.expunge_all()
    return rows


def config(tmp: Path, volume: str) -> Path:
    target = tmp / "prchain.yaml"
    target.write_text(
        f"eras:\n  cache_volume: {volume}\n  suites: {{bookworm: '3.11'}}\n  extra_base_packages: []\n"
        f"environment:\n  log_dir: {tmp / 'logs'}\nchains:\n  min_chain_code_lines: 0\n"
    )
    return target


def remove_images(client: DockerClient) -> None:
    for kind in ("repo", "era"):
        for image in client.images({"prchain.repo": REPO, "prchain.kind": kind}):
            for tag in image["tags"]:
                client.remove_image(tag)


def per_stage(client: DockerClient, image: str, clone: Path, volume: str) -> str:
    """`links <s>` and `npm ci <s>` of one stage of the lock-file era (B_t of its first stage)."""
    tree = clone.parent / "tree"
    tree.mkdir(exist_ok=True)
    script = PER_STAGE.format(linker=LINKER, cache=CACHE)
    subprocess.run(f"git -C {clone} archive HEAD | tar -x -C {tree}", shell=True, check=True)
    container, _, log = client.run_to_end(
        image,
        ["/bin/bash", "-c", script],
        name=f"bench-node-stage-{secrets.token_hex(4)}",
        labels={"prchain.bench": "node"},
        environment={},
        binds={str(tree): ("/src", "ro"), volume: (CACHE, "rw")},
        network_mode="none",
        timeout=600,
    )
    client.remove_container(container)
    return " ".join(line for line in log.splitlines() if line.startswith(("links", "npm-ci")))


def run(tmp: Path, client: DockerClient, volume: str) -> None:
    url = f"sqlite:///{tmp / 'bench.db'}"
    common = ["--config", str(config(tmp, volume)), "--db", url]
    clone = make_mimer(tmp / "mimer")
    invoke("mine", "--source", "git", "--name", REPO, str(clone), *common)
    invoke("chains", "build", "--strategy", "single", "--min-len", "1", "--max-len", "1", *common)
    cold_total = invoke("env", "setup", *common)
    cold = {r.era_key: r for r in recipes(url)}
    sizes = {
        img["tags"][0]: img["size"]
        for img in client.images({"prchain.repo": REPO, "prchain.kind": "era"})
        if img["tags"]
    }
    locked = next((r.image for r in cold.values() if "npm ci" in r.commands), "")
    cache = cache_volume(ErasConfig(cache_volume=volume), REPO)  # the prefix's volume of REPO
    stage = per_stage(client, locked, clone, cache) if locked else "no lock-file era"
    remove_images(client)
    with session_scope(make_engine(url)) as session:
        session.execute(delete(EnvRecipe))
    warm_total = invoke("env", "setup", *common)
    warm = {r.era_key: r for r in recipes(url)}
    print(
        f"{'era':18} {'node':8} {'status':11} {'cold build s':>12} {'warm build s':>12} {'MB':>6}"
    )
    for key, row in cold.items():
        print(
            f"{key[:18]:18} {row.interpreter:8} {row.status:11} {row.build_seconds:12.1f} "
            f"{warm[key].build_seconds:12.1f} {sizes.get(row.image, 0) / 1e6:6.0f}"
        )
    print(f"env setup wall time: cold {cold_total:.1f} s, warm npm cache {warm_total:.1f} s")
    print(f"per stage, node_modules of the lock-file era (seconds): {stage}")


def main_() -> int:
    client = DockerClient()
    volume = f"prchain-bench-npm-{secrets.token_hex(4)}"
    with tempfile.TemporaryDirectory(prefix="bench-node-") as tmp:
        try:
            run(Path(tmp), client, volume)
        finally:
            remove_images(client)
            client.remove_volume(cache_volume(ErasConfig(cache_volume=volume), REPO))
    return 0


if __name__ == "__main__":
    sys.exit(main_())
