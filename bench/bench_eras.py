"""Era environments: per-era build time cold (empty uv cache, no image), warm (uv cache filled, image
removed), from memory (recipe stored: nothing built), and the image size.

Hermetic: the made-up greeter history and its local index (tests/support/eras_repo.py); the images
and the uv cache volume it makes are its own and removed at the end.
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

from environments.docker_client import DockerClient  # noqa: E402
from environments.eras.build import cache_volume  # noqa: E402
from environments.eras.config import ErasConfig  # noqa: E402
from prchain.cli import main  # noqa: E402
from sql.db import make_engine, session_scope  # noqa: E402
from sql.models import EnvRecipe  # noqa: E402
from tests.support.eras_repo import make_greeter, tinylib_releases  # noqa: E402
from tests.support.fake_index import FakeIndex  # noqa: E402

REPO = f"bench-eras-{secrets.token_hex(4)}/greeter"


def invoke(*args: str) -> float:
    start = time.perf_counter()
    CliRunner().invoke(main, list(args), catch_exceptions=False)
    return time.perf_counter() - start


def recipes(url: str) -> list[EnvRecipe]:
    with session_scope(make_engine(url)) as session:
        rows = list(session.scalars(select(EnvRecipe).order_by(EnvRecipe.era_date)))
        session.expunge_all()
    return rows


def config(tmp: Path, index: FakeIndex, volume: str) -> Path:
    target = tmp / "prchain.yaml"
    target.write_text(
        "eras:\n"
        f"  index_url: {index.url}\n  network_mode: host\n  cache_volume: {volume}\n"
        "  suites: {bookworm: '3.11'}\n  extra_base_packages: []\n  test_packages: []\n  seed_packages: []\n"
        "  system_site_packages: true\n"
        f"environment:\n  log_dir: {tmp / 'logs'}\nchains:\n  min_chain_code_lines: 0\n"
    )
    return target


def remove_images(client: DockerClient) -> None:
    for kind in ("repo", "era"):
        for image in client.images({"prchain.repo": REPO, "prchain.kind": kind}):
            for tag in image["tags"]:
                client.remove_image(tag)


def run(tmp: Path, client: DockerClient, index: FakeIndex, volume: str) -> None:
    url = f"sqlite:///{tmp / 'bench.db'}"
    common = ["--config", str(config(tmp, index, volume)), "--db", url]
    invoke("mine", "--source", "git", "--name", REPO, str(make_greeter(tmp / "greeter")), *common)
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
    print(
        f"{'era':18} {'status':11} {'method':8} {'cold build s':>12} {'warm build s':>12} {'image MB':>9}"
    )
    for key, row in cold.items():
        tag = row.image.rsplit(":", 1)[-1] if row.image else ""
        print(
            f"{key:18} {row.status:11} {row.method:8} {row.build_seconds:12.1f} "
            f"{warm[key].build_seconds:12.1f} {sizes.get(tag, 0) / 1e6:9.0f}"
        )
    print(
        f"env setup wall time: cold {cold_total:.1f} s, warm uv cache {warm_total:.1f} s, "
        f"from memory {memory_total:.1f} s ({len(cold)} eras)"
    )


def main_() -> int:
    client = DockerClient()
    volume = f"prchain-bench-uv-{secrets.token_hex(4)}"
    with (
        tempfile.TemporaryDirectory(prefix="bench-eras-") as tmp,
        FakeIndex(tinylib_releases(Path(tmp))) as index,
    ):
        try:
            run(Path(tmp), client, index, volume)
        finally:
            remove_images(client)
            client.remove_volume(cache_volume(ErasConfig(cache_volume=volume), REPO))
    return 0


if __name__ == "__main__":
    sys.exit(main_())
