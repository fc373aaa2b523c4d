"""Era environments: per-era build time cold (empty uv cache, no image), warm (uv cache filled, image
removed), from memory (recipe stored: nothing built), and the image size.

Hermetic: the made-up greeter history and its local index (tests/support/eras_repo.py); the images
and the uv cache volume it makes are its own and removed at the end.
"""

from __future__ import annotations

import secrets
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.eras_common import invoke, print_passes, remove_images, three_passes, write_config  # noqa: E402
from prchain.environments.cleanup import install_handlers  # noqa: E402
from prchain.environments.docker_client import DockerClient  # noqa: E402
from prchain.environments.eras.build import cache_volume  # noqa: E402
from prchain.environments.eras.config import ErasConfig  # noqa: E402
from tests.support.eras_repo import make_greeter, tinylib_releases  # noqa: E402
from tests.support.fake_index import FakeIndex  # noqa: E402

REPO = f"bench-eras-{secrets.token_hex(4)}/greeter"


def config(tmp: Path, index: FakeIndex, volume: str) -> Path:
    return write_config(
        tmp,
        f"  index_url: {index.url}\n  network_mode: host\n  cache_volume: {volume}\n"
        "  suites: {bookworm: '3.11'}\n  extra_base_packages: []\n  test_packages: []\n"
        "  seed_packages: []\n  system_site_packages: true\n",
    )


def run(tmp: Path, client: DockerClient, index: FakeIndex, volume: str) -> None:
    url = f"sqlite:///{tmp / 'bench.db'}"
    common = ["--config", str(config(tmp, index, volume)), "--db", url]
    invoke("mine", "--source", "git", "--name", REPO, str(make_greeter(tmp / "greeter")), *common)
    invoke("chains", "build", "--strategy", "single", "--min-len", "1", "--max-len", "1", *common)
    print_passes(three_passes(client, REPO, url, common), "python")


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
            remove_images(client, REPO)
            client.remove_volume(cache_volume(ErasConfig(cache_volume=volume), REPO))
    return 0


if __name__ == "__main__":
    install_handlers()  # a SIGTERM then runs the `finally` that removes what the bench made
    sys.exit(main_())
