"""Java era environments: per-era build time cold (no era image; the toolchain layer built too when
this engine has none), warm (era images removed, the shared toolchain layer kept), from memory
(recipe stored: nothing built), the era image's size, and the agent's first offline `mvn test` in
a stage's sandbox. The warm pass runs with Maven Central left out of the registries: the cache
alone must serve both eras, and era 1's /opt/m2 must still hold only its own snakeyaml (the cache
holds era 2's too: nothing after B_t crosses into an image through it).

The made-up yamlconf history (tests/support/maven_repo.py: snakeyaml 1.33, then 2.0, which removed
the constructor the older code calls) on the real Maven Central. A warm build reads the artifacts
the cold ones fetched from the repository's cache volume (a Maven repository over file://) and
downloads only what it lacks. The era images and the cache volume this makes are its own and
removed at the end; the toolchain layer is shared by design and stays.
"""

from __future__ import annotations

import json
import secrets
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


from bench.eras_common import (  # noqa: E402
    invoke,
    print_passes,
    recipes,
    remove_images,
    three_passes,
    write_config,
)
from prchain.environments.cleanup import install_handlers  # noqa: E402
from prchain.environments.docker_client import DockerClient  # noqa: E402
from prchain.environments.eras.build import cache_volume  # noqa: E402
from prchain.environments.eras.config import ErasConfig  # noqa: E402
from tests.support.era_runs import chain_sandbox  # noqa: E402
from tests.support.maven_repo import make_yamlconf  # noqa: E402

RUN = secrets.token_hex(4)
REPO = f"bench-java-eras-{RUN}/yamlconf"
VOLUME = f"prchain-bench-m2-{RUN}"  # its cache volume's prefix: the product's is never used


MAVEN_CENTRAL = {"repo1.maven.org", "repo.maven.apache.org"}


def config(tmp: Path, registries: list[str] | None = None) -> Path:
    """The bench's config in `tmp`; `registries`, when given, the only ones era builds reach."""
    reach = f"  registries: {json.dumps(registries)}\n" if registries is not None else ""
    return write_config(
        tmp,
        f"  suites: {{bookworm: '3.11'}}\n  extra_base_packages: []\n  cache_volume: {VOLUME}\n"
        + reach,
    )


def snakeyaml_of_each_era(client: DockerClient, url: str) -> None:
    """Which snakeyaml each era image's /opt/m2 holds (era 1: 1.33 only; era 2: 2.0 only)."""
    for row in recipes(url):
        container, code, log = client.run_to_end(
            row.image, ["ls", "/opt/m2/org/yaml/snakeyaml"], name=f"{RUN}-{secrets.token_hex(3)}",
            labels={"prchain.bench": RUN}, environment={}, binds={}, network_mode="none",
            timeout=120,
        )  # fmt: skip
        client.remove_container(container)
        print(f"{row.era_key}: {row.status}, /opt/m2 snakeyaml {log.split()} (exit {code})")


def first_test_run(tmp: Path, url: str, clone: Path) -> None:
    """The agent's first `mvn test` in stage 1's offline sandbox: dependencies from the image."""
    with chain_sandbox(url, tmp / "logs", REPO, clone) as env:
        env.enter_stage(1)
        start = time.perf_counter()
        run = env.run_tests()
        ok = run is not None and "BUILD SUCCESS" in run.output
        print(f"agent's first offline mvn test: {time.perf_counter() - start:.1f} s, ok={ok}")


def run(tmp: Path, client: DockerClient) -> None:
    url = f"sqlite:///{tmp / 'bench.db'}"
    common = ["--config", str(config(tmp)), "--db", url]
    clone = make_yamlconf(tmp / "yamlconf")
    invoke("mine", "--source", "git", "--name", REPO, str(clone), *common)
    invoke("chains", "build", "--min-len", "2", "--max-len", "2", *common)  # #2 follows up on #1
    (tmp / "warm").mkdir()
    without_central = [r for r in ErasConfig().registries if r not in MAVEN_CENTRAL]
    warm = ["--config", str(config(tmp / "warm", without_central)), "--db", url]
    print_passes(three_passes(client, REPO, url, common, warm_common=warm), "jdk")
    print("warm pass without Maven Central:")
    snakeyaml_of_each_era(client, url)
    first_test_run(tmp, url, clone)


def main_() -> int:
    client = DockerClient()
    with tempfile.TemporaryDirectory(prefix="bench-java-eras-") as tmp:
        try:
            run(Path(tmp), client)
        finally:
            remove_images(client, REPO)
            client.remove_volume(cache_volume(ErasConfig(cache_volume=VOLUME), REPO))
    return 0


if __name__ == "__main__":
    install_handlers()  # a SIGTERM then runs the `finally` that removes what the bench made
    sys.exit(main_())
