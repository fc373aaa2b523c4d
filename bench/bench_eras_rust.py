"""Rust era environments: per-era build time cold (empty cache volume, no era image), warm (the
repository's cargo download cache filled, era images removed), from memory (nothing built), the
era image's size, and the agent's first `cargo test` in a stage's sandbox (its crate only: the
dependencies come prebuilt).

The made-up `digits` history (tests/support/rust_repo.py: itoa 0.4.8, then 1.0.3, from crates.io)
on bookworm's rustc 1.63. The toolchain layer is shared with every Rust era on bookworm and kept
(built once, not timed here); the era images and cache volume this makes are removed at the end.
"""

from __future__ import annotations

import secrets
import sys
import tempfile
import time
from pathlib import Path

from click.testing import CliRunner
from sqlalchemy import delete, select

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from environments.config import EnvironmentConfig  # noqa: E402
from environments.docker_client import DockerClient  # noqa: E402
from environments.docker_env import DockerEnvironment  # noqa: E402
from environments.eras.build import cache_volume  # noqa: E402
from environments.eras.config import ErasConfig  # noqa: E402
from environments.protocol import StageSpec  # noqa: E402
from prchain.cli import main  # noqa: E402
from sql.db import make_engine, session_scope  # noqa: E402
from sql.models import ChainStage, EnvRecipe  # noqa: E402
from tests.support.rust_repo import make_digits  # noqa: E402

REPO = f"bench-eras-rust-{secrets.token_hex(4)}/digits"


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
        f"eras:\n  cache_volume: {volume}\n  suites: {{bookworm: '3.11'}}\n"
        "  extra_base_packages: []\n"
        f"environment:\n  log_dir: {tmp / 'logs'}\nchains:\n  min_chain_code_lines: 0\n"
    )
    return target


def remove_images(client: DockerClient) -> None:
    for kind in ("sandbox", "repo", "era"):
        for image in client.images({"prchain.repo": REPO, "prchain.kind": kind}):
            for tag in image["tags"]:
                client.remove_image(tag)


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


def run(tmp: Path, client: DockerClient, volume: str) -> None:
    url = f"sqlite:///{tmp / 'bench.db'}"
    common = ["--config", str(config(tmp, volume)), "--db", url]
    clone = make_digits(tmp / "digits")
    invoke("mine", "--source", "git", "--name", REPO, str(clone), *common)
    invoke("chains", "build", "--strategy", "single", "--min-len", "1", "--max-len", "1", *common)
    cold_total = invoke("env", "setup", *common)
    cold = {r.era_key: r for r in recipes(url)}
    sizes = {
        img["tags"][0].rsplit(":", 1)[1]: img["size"]
        for img in client.images({"prchain.repo": REPO, "prchain.kind": "era"})
        if img["tags"]
    }
    remove_images(client)
    with session_scope(make_engine(url)) as session:
        session.execute(delete(EnvRecipe))
    warm_total = invoke("env", "setup", *common)
    warm = {r.era_key: r for r in recipes(url)}
    memory_total = invoke("env", "setup", *common)
    agent = first_cargo_test(url, clone, list(warm.values())[-1], tmp)
    print(
        f"{'era':18} {'status':11} {'rustc':6} {'cold build s':>12} {'warm build s':>12} {'image MB':>9}"
    )
    for key, row in cold.items():
        tag = row.image.rsplit(":", 1)[-1] if row.image else ""
        print(
            f"{key:18} {row.status:11} {row.interpreter:6} {row.build_seconds:12.1f} "
            f"{warm[key].build_seconds:12.1f} {sizes.get(tag, 0) / 1e6:9.0f}"
        )
    print(
        f"env setup wall time: cold {cold_total:.1f} s, warm cargo cache {warm_total:.1f} s, "
        f"from memory {memory_total:.1f} s ({len(cold)} eras); "
        f"the agent's first cargo test: {agent:.1f} s"
    )


def main_() -> int:
    client = DockerClient()
    volume = f"prchain-bench-cargo-{secrets.token_hex(4)}"
    with tempfile.TemporaryDirectory(prefix="bench-eras-rust-") as tmp:
        try:
            run(Path(tmp), client, volume)
        finally:
            remove_images(client)
            client.remove_volume(cache_volume(ErasConfig(cache_volume=volume), REPO))
    return 0


if __name__ == "__main__":
    sys.exit(main_())
