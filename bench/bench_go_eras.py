"""Go era environments: per-era build time cold (no era image, an empty cache volume; the toolchain
layer built too when this engine has none), warm (era images removed, the shared toolchain layer
and the repository's cache volume of downloads and compiled packages kept), from memory
(recipe stored: nothing built), the era image's size and the suite's first offline `go test`.

Hermetic but for Go's toolchain module, which comes from the real Go proxy: the made-up greeter
history and its local module proxy (tests/support/go_proxy.py). The era images and the cache
volume it makes are its own and removed at the end; the toolchain layer is shared by design and
stays.
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
from tests.support.go_proxy import GoProxy, make_go_greeter, tinylib_proxy  # noqa: E402

RUN = secrets.token_hex(4)
REPO = f"bench-go-eras-{RUN}/greeter"
VOLUME = f"prchain-bench-go-{RUN}"  # its cache volume's prefix: the product's is never used


def config(tmp: Path, proxy: GoProxy) -> Path:
    return write_config(
        tmp,
        f"  go_proxy: {proxy.url},https://proxy.golang.org\n  network_mode: host\n"
        f"  cache_volume: {VOLUME}\n"
        "  suites: {bookworm: '3.11'}\n  extra_base_packages: []\n",
    )


def run(tmp: Path, client: DockerClient, proxy: GoProxy, sums: dict[str, str]) -> None:
    url = f"sqlite:///{tmp / 'bench.db'}"
    common = ["--config", str(config(tmp, proxy)), "--db", url]
    invoke(
        "mine", "--source", "git", "--name", REPO, str(make_go_greeter(tmp / "g", sums)), *common
    )
    invoke("chains", "build", "--min-len", "2", *common)  # PR #2 follows up on PR #1
    print_passes(three_passes(client, REPO, url, common), "go")


def main_() -> int:
    client = DockerClient()
    with tempfile.TemporaryDirectory(prefix="bench-go-eras-") as tmp:
        sums = tinylib_proxy(Path(tmp) / "proxy")
        with GoProxy(Path(tmp) / "proxy") as proxy:
            try:
                run(Path(tmp), client, proxy, sums)
            finally:
                remove_images(client, REPO)
                client.remove_volume(cache_volume(ErasConfig(cache_volume=VOLUME), REPO))
    return 0


if __name__ == "__main__":
    install_handlers()  # a SIGTERM then runs the `finally` that removes what the bench made
    sys.exit(main_())
