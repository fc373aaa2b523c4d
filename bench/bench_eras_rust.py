"""Rust era environments: per-era build time cold (empty cache volume, no era image), warm (the
repository's cargo download cache filled, era images removed), from memory (nothing built), the
era image's size, and the agent's first `cargo test` in a stage's sandbox (its crate only: the
dependencies come prebuilt).

The made-up `digits` history (tests/support/rust_repo.py: itoa 0.4.8, then 1.0.3, from crates.io)
on bookworm's rustc 1.63; with `--git`, the `counts` history (tests/support/rust_git_repo.py) whose
Cargo.lock pins git dependencies: a crates.io stand-in for a GitHub fork of itoa, then a crate
from a local mirror at its locked commit. The toolchain layer is shared with every Rust era on bookworm and kept
(built once, not timed here); the era images and cache volume this makes are removed at the end.
"""

from __future__ import annotations

import secrets
import sys
import tempfile
import time
from pathlib import Path

from sqlalchemy import select

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.eras_common import invoke, print_passes, remove_images, three_passes, write_config  # noqa: E402
from prchain.environments.cleanup import install_handlers  # noqa: E402
from prchain.environments.config import EnvironmentConfig  # noqa: E402
from prchain.environments.docker_client import DockerClient  # noqa: E402
from prchain.environments.docker_env import DockerEnvironment  # noqa: E402
from prchain.environments.eras.build import cache_volume  # noqa: E402
from prchain.environments.eras.config import ErasConfig  # noqa: E402
from prchain.environments.protocol import StageSpec  # noqa: E402
from prchain.store.db import session_scope  # noqa: E402
from prchain.store.models import ChainStage, EnvRecipe  # noqa: E402
from prchain.store.opener import make_engine  # noqa: E402
from tests.support.rust_git_repo import TALLY_URL, make_counts, make_tally_mirror  # noqa: E402
from tests.support.rust_repo import make_digits  # noqa: E402

REPO = f"bench-eras-rust-{secrets.token_hex(4)}/digits"


def config(tmp: Path, volume: str, mirrors: dict[str, str]) -> Path:
    mirrored = "".join(f"    {url}: {path}\n" for url, path in mirrors.items())
    return write_config(
        tmp,
        f"  cache_volume: {volume}\n  suites: {{bookworm: '3.11'}}\n  extra_base_packages: []\n"
        + (f"  git_mirrors:\n{mirrored}" if mirrors else ""),
    )


def first_cargo_test(url: str, clone: Path, row: EnvRecipe, tmp: Path) -> float:
    """Seconds of the agent's first `cargo test` in a sandbox of the era's latest stage."""
    with session_scope(make_engine(url)) as session:
        base = session.scalars(select(ChainStage.base_sha).order_by(ChainStage.id.desc())).first()
    stage = StageSpec(1, base or "", "", row.image, row.test_command, row.setup_command)
    env_config = EnvironmentConfig(log_dir=str(tmp / "logs"))
    with DockerEnvironment(env_config, repo=REPO, clone_path=str(clone), stages=[stage]) as env:
        env.enter_stage(1)
        start = time.perf_counter()
        env.execute("cargo test --no-fail-fast", timeout=600)
        return time.perf_counter() - start


def run(tmp: Path, client: DockerClient, volume: str, with_git: bool) -> None:
    url = f"sqlite:///{tmp / 'bench.db'}"
    mirrors: dict[str, str] = {}
    if with_git:
        mirrors = {TALLY_URL: str(tmp / "tally")}
        clone = make_counts(tmp / "counts", make_tally_mirror(tmp / "tally"))
    else:
        clone = make_digits(tmp / "digits")
    common = ["--config", str(config(tmp, volume, mirrors)), "--db", url]
    invoke("mine", "--source", "git", "--name", REPO, str(clone), *common)
    invoke("chains", "build", "--strategy", "single", "--min-len", "1", "--max-len", "1", *common)
    passes = three_passes(client, REPO, url, common)
    agent = first_cargo_test(url, clone, list(passes.warm.values())[-1], tmp)
    print_passes(passes, "rustc")
    print(f"the agent's first cargo test: {agent:.1f} s")


def main_() -> int:
    client = DockerClient()
    volume = f"prchain-bench-cargo-{secrets.token_hex(4)}"
    with tempfile.TemporaryDirectory(prefix="bench-eras-rust-") as tmp:
        try:
            run(Path(tmp), client, volume, "--git" in sys.argv[1:])
        finally:
            remove_images(client, REPO)
            client.remove_volume(cache_volume(ErasConfig(cache_volume=volume), REPO))
    return 0


if __name__ == "__main__":
    install_handlers()  # a SIGTERM then runs the `finally` that removes what the bench made
    sys.exit(main_())
