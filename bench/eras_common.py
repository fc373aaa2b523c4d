"""What the era benches share: the CLI run in-process, the stored recipes, a bench config, and one
cold → warm → from-memory pass of `env setup` with its table (bench_eras*.py, bench_*_eras.py)."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner
from sqlalchemy import delete, select

from prchain.cli import main
from prchain.environments.docker_client import DockerClient
from prchain.store.db import session_scope
from prchain.store.models import EnvRecipe
from prchain.store.opener import make_engine


def invoke(*args: str) -> float:
    """Seconds of one prchain command run in this process."""
    start = time.perf_counter()
    CliRunner().invoke(main, list(args), catch_exceptions=False)
    return time.perf_counter() - start


def recipes(url: str) -> list[EnvRecipe]:
    with session_scope(make_engine(url)) as session:
        rows = list(session.scalars(select(EnvRecipe).order_by(EnvRecipe.era_date)))
        session.expunge_all()
    return rows


def write_config(tmp: Path, eras: str) -> Path:
    """A config whose `eras` section holds the given lines (two-space indented YAML)."""
    target = tmp / "prchain.yaml"
    target.write_text(
        f"eras:\n{eras}"
        f"environment:\n  log_dir: {tmp / 'logs'}\nchains:\n  min_chain_code_lines: 0\n"
    )
    return target


def remove_images(client: DockerClient, repo: str) -> None:
    """The bench repository's own images (never a toolchain or base layer others share)."""
    for kind in ("sandbox", "repo", "era"):
        for image in client.images({"prchain.repo": repo, "prchain.kind": kind}):
            for tag in image["tags"]:
                client.remove_image(tag)


@dataclass
class Passes:
    cold: dict[str, EnvRecipe]
    warm: dict[str, EnvRecipe]
    sizes: dict[str, int]  # era image tag → bytes
    seconds: tuple[float, float, float]  # env setup wall time: cold, warm cache, from memory


def three_passes(
    client: DockerClient,
    repo: str,
    url: str,
    common: list[str],
    after_cold: Callable[[dict[str, EnvRecipe]], None] | None = None,
    warm_common: list[str] | None = None,
) -> Passes:
    """`env setup` cold; again with the images and recipes gone (the download cache warm); again
    with everything in place (from recipe memory). `after_cold` sees the cold eras while their
    images still exist; `warm_common`, when given, replaces `common` for the warm pass (a config
    that leaves a registry out shows the cache alone serves it)."""
    cold_total = invoke("env", "setup", *common)
    cold = {r.era_key: r for r in recipes(url)}
    if after_cold is not None:
        after_cold(cold)
    sizes = {
        img["tags"][0].rsplit(":", 1)[1]: img["size"]
        for img in client.images({"prchain.repo": repo, "prchain.kind": "era"})
        if img["tags"]
    }
    remove_images(client, repo)
    with session_scope(make_engine(url)) as session:
        session.execute(delete(EnvRecipe))
    warm_total = invoke("env", "setup", *(warm_common or common))
    warm = {r.era_key: r for r in recipes(url)}
    memory_total = invoke("env", "setup", *common)
    return Passes(cold, warm, sizes, (cold_total, warm_total, memory_total))


def print_passes(passes: Passes, toolchain: str) -> None:
    """One row per era (`toolchain` names the interpreter column), then the wall times."""
    print(
        f"{'era':18} {'status':11} {'method':8} {toolchain:10} {'cold s':>7} {'warm s':>7} "
        f"{'verify s':>8} {'MB':>6}"
    )
    for key, row in passes.cold.items():
        tag = row.image.rsplit(":", 1)[-1] if row.image else ""
        warm = passes.warm.get(key)
        print(
            f"{key:18} {row.status:11} {row.method:8} {row.interpreter:10} "
            f"{row.build_seconds:7.1f} {warm.build_seconds if warm else 0.0:7.1f} "
            f"{row.verify_seconds:8.1f} {passes.sizes.get(tag, 0) / 1e6:6.0f}"
        )
    cold, warm, memory = passes.seconds
    print(
        f"env setup wall time: cold {cold:.1f} s, warm cache {warm:.1f} s, "
        f"from memory {memory:.1f} s ({len(passes.cold)} eras)"
    )
