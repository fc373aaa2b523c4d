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
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.eras_common import invoke, print_passes, remove_images, three_passes, write_config  # noqa: E402
from prchain.environments.cleanup import install_handlers  # noqa: E402
from prchain.environments.docker_client import DockerClient  # noqa: E402
from prchain.environments.eras.build import CACHE, cache_volume  # noqa: E402
from prchain.environments.eras.config import ErasConfig  # noqa: E402
from prchain.environments.eras.node.packages import LINKER  # noqa: E402
from prchain.store.models import EnvRecipe  # noqa: E402
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


def config(tmp: Path, volume: str) -> Path:
    return write_config(
        tmp,
        f"  cache_volume: {volume}\n  suites: {{bookworm: '3.11'}}\n  extra_base_packages: []\n",
    )


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
    stage = ["no lock-file era"]
    cache = cache_volume(ErasConfig(cache_volume=volume), REPO)  # the prefix's volume of REPO

    def per_stage_of_locked(cold: dict[str, EnvRecipe]) -> None:
        locked = next((r.image for r in cold.values() if "npm ci" in r.commands), "")
        if locked:
            stage[0] = per_stage(client, locked, clone, cache)

    print_passes(three_passes(client, REPO, url, common, per_stage_of_locked), "node")
    print(f"per stage, node_modules of the lock-file era (seconds): {stage[0]}")


def main_() -> int:
    client = DockerClient()
    volume = f"prchain-bench-npm-{secrets.token_hex(4)}"
    with tempfile.TemporaryDirectory(prefix="bench-node-") as tmp:
        try:
            run(Path(tmp), client, volume)
        finally:
            remove_images(client, REPO)
            client.remove_volume(cache_volume(ErasConfig(cache_volume=volume), REPO))
    return 0


if __name__ == "__main__":
    install_handlers()  # a SIGTERM then runs the `finally` that removes what the bench made
    sys.exit(main_())
