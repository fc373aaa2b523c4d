"""Go era environments: per-era build time cold (no era image; the toolchain layer built too when
this engine has none), warm (era images removed, the shared toolchain layer kept), from memory
(recipe stored: nothing built), the era image's size and the suite's first offline `go test`.

Hermetic but for Go's toolchain module, which comes from the real Go proxy: the made-up greeter
history and its local module proxy (tests/support/go_proxy.py). The era images it makes are its
own and removed at the end; the toolchain layer is shared by design and stays.
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
from prchain.cli import main  # noqa: E402
from sql.db import make_engine, session_scope  # noqa: E402
from sql.models import EnvRecipe  # noqa: E402
from tests.support.go_proxy import GoProxy, make_go_greeter, tinylib_proxy  # noqa: E402

REPO = f"bench-go-eras-{secrets.token_hex(4)}/greeter"


def invoke(*args: str) -> float:
    start = time.perf_counter()
    CliRunner().invoke(main, list(args), catch_exceptions=False)
    return time.perf_counter() - start


def recipes(url: str) -> list[EnvRecipe]:
    with session_scope(make_engine(url)) as session:
        rows = list(session.scalars(select(EnvRecipe).order_by(EnvRecipe.era_date)))
        session.expunge_all()
    return rows


def config(tmp: Path, proxy: GoProxy) -> Path:
    target = tmp / "prchain.yaml"
    target.write_text(
        f"eras:\n  go_proxy: {proxy.url},https://proxy.golang.org\n  network_mode: host\n"
        "  suites: {bookworm: '3.11'}\n  extra_base_packages: []\n"
        f"environment:\n  log_dir: {tmp / 'logs'}\nchains:\n  min_chain_code_lines: 0\n"
    )
    return target


def remove_images(client: DockerClient) -> None:
    for kind in ("repo", "era"):
        for image in client.images({"prchain.repo": REPO, "prchain.kind": kind}):
            for tag in image["tags"]:
                client.remove_image(tag)


def run(tmp: Path, client: DockerClient, proxy: GoProxy, sums: dict[str, str]) -> None:
    url = f"sqlite:///{tmp / 'bench.db'}"
    common = ["--config", str(config(tmp, proxy)), "--db", url]
    invoke(
        "mine", "--source", "git", "--name", REPO, str(make_go_greeter(tmp / "g", sums)), *common
    )
    invoke("chains", "build", "--min-len", "2", *common)  # PR #2 follows up on PR #1
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
    print(f"{'era':18} {'status':11} {'go':10} {'cold s':>7} {'warm s':>7} {'test s':>7} {'MB':>6}")
    for key, row in cold.items():
        tag = row.image.rsplit(":", 1)[-1] if row.image else ""
        print(
            f"{key:18} {row.status:11} {row.interpreter:10} {row.build_seconds:7.1f} "
            f"{warm[key].build_seconds:7.1f} {row.verify_seconds:7.1f} {sizes.get(tag, 0) / 1e6:6.0f}"
        )
    print(
        f"env setup wall time: cold {cold_total:.1f} s, warm {warm_total:.1f} s, "
        f"from memory {memory_total:.1f} s ({len(cold)} eras)"
    )


def main_() -> int:
    client = DockerClient()
    with tempfile.TemporaryDirectory(prefix="bench-go-eras-") as tmp:
        sums = tinylib_proxy(Path(tmp) / "proxy")
        with GoProxy(Path(tmp) / "proxy") as proxy:
            try:
                run(Path(tmp), client, proxy, sums)
            finally:
                remove_images(client)
    return 0


if __name__ == "__main__":
    sys.exit(main_())
