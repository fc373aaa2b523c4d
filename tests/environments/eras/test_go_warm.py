"""A Go era built again (after `env prune`, or a later era of the repository) takes what the first
build fetched and compiled from the repository's cache volume, and keeps no more than it uses.

gin-gonic/gin's eras, held out (issue 50): an era built a second time with its image removed took
102 s against the first build's 54 s: the Go room kept its module downloads and compiled packages
in the image only, so every build of every era downloaded and compiled everything again. Here the
second build runs with the module proxy gone: before the fix it failed (`connection refused`);
now the module comes from the volume. A compiled entry no build of this era uses, planted in the
volume, is not in the second image."""

from __future__ import annotations

import subprocess
import uuid
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from prchain.dev.repos import git
from prchain.environments.transfer import own_and_total
from tests.support.era_runs import remove_repo_images
from tests.support.go_proxy import TINYLIB, GoProxy, tinylib_proxy

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.timeout(1800)]  # builds Go

RUN = uuid.uuid4().hex[:8]
REPO = f"go-warm-{RUN}/hello"
GO_MOD = f"module example.com/hello\n\ngo 1.22.0\n\nrequire {TINYLIB} v0.1.0\n"
CODE = (
    f'package hello\n\nimport "{TINYLIB}"\n\n'
    "// Hi greets.\nfunc Hi(n string) string { return tinylib.Greet(n) }\n"
)
TEST = 'package hello\n\nimport "testing"\n\nfunc TestHi(t *testing.T) {\n\tif Hi("a") != "hi a" {\n\t\tt.Fatal(Hi("a"))\n\t}\n}\n'
FOREIGN = f"ff{RUN}-d"  # a compiled entry of no build of this era


def _repo(path: Path, go_sum: str) -> str:
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    files = {"go.mod": GO_MOD, "go.sum": go_sum, "hello.go": CODE, "hello_test.go": TEST}
    return _commit(path, files, "2024-03-01T10:00:00Z")


def _commit(path: Path, files: dict[str, str], when: str) -> str:
    for name, text in files.items():
        (path / name).write_text(text)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "change", date=when)
    return git(path, "rev-parse", "HEAD").strip()


def _docker(*args: str) -> str:
    done = subprocess.run(["docker", *args], capture_output=True, text=True, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def eras(docker_client: Any) -> Iterator[Any]:
    from prchain.environments.eras.build import cache_volume
    from prchain.environments.eras.config import ErasConfig

    config = ErasConfig(
        suites={"bookworm": "3.11"},
        extra_base_packages=[],
        cache_volume=f"prchain-go-warm-{RUN}",
        network_mode="host",  # the build reaches the module proxy on 127.0.0.1
    )
    yield config
    remove_repo_images(docker_client, REPO, volume=False)  # its volume has this test's prefix
    docker_client.remove_volume(cache_volume(config, REPO))


def _build(
    client: Any,
    eras: Any,
    clone: Path,
    sha: str,
    proxy: str,
    on: str = "",
    umask: str = "",
    **config: Any,
) -> Any:
    from prchain.environments.config import EnvironmentConfig
    from prchain.environments.eras.build import ensure_era_image
    from prchain.environments.eras.go import Go
    from prchain.environments.eras.manifests import snapshot

    # Go's toolchain module from the real proxy (the test's serves tinylib alone); its layer is
    # one for every run whatever the proxies (their list is not in its identity).
    eras = eras.model_copy(update={"go_proxy": f"{proxy},https://proxy.golang.org", **config})
    plan = Go().plans(snapshot(clone, sha), eras)[0]
    # the downloads alone under `umask` (a subshell: the build's later steps keep their own)
    commands = [
        f"(umask {umask} && {c})" if umask and c.endswith("go mod download") else c
        for c in plan.commands
    ]
    plan = replace(plan, commands=commands, on=on)
    return ensure_era_image(
        client, EnvironmentConfig(), eras, repo=REPO, clone=clone, sha=sha, plan=plan, era_key="w"
    )


def _stage(tag: str, tree: Path, source: str = f"/work/.cache/mod/{TINYLIB}@*") -> str:
    """A stage of `tag` on `tree`, offline, as a user of its own, with the checkout where a
    stage's is: the packages go would compile (the repository's own alone), `go test`, and
    tinylib's source where go reads it from (`source`, a glob)."""
    from prchain.environments.eras.go import setup_command

    stage = (
        f"{setup_command('1.22.0')} && go list -deps -test -f "
        "'{{if and .Stale (not .Standard)}}{{.ImportPath}}{{end}}' ./... "
        f"&& go test ./... && ls {source}/tinylib.go"
    )
    ran = _docker(
        "run", "--rm", "--network", "none", "-u", "4321:4321", "-v", f"{tree}:/work/repo:ro",
        "-w", "/work/repo", tag, "sh", "-c", stage,
    )  # fmt: skip
    stale = [line for line in ran.splitlines() if line.startswith("example.com/")]
    assert "example.com/hello" in stale and not any(TINYLIB in line for line in stale), ran
    assert "ok  \texample.com/hello" in ran and "tinylib.go" in ran, ran
    return ran


def _layer_files(tag: str) -> set[str]:
    """The paths of the files the image's own (top) layer holds, read from overlay2's directory."""
    upper = _docker("image", "inspect", "-f", "{{.GraphDriver.Data.UpperDir}}", tag).strip()
    if not upper or not Path(upper).is_dir():
        pytest.skip("the engine's storage is not overlay2 on this host")
    return {str(p.relative_to(upper)) for p in Path(upper).rglob("*") if p.is_file()}


def test_a_go_era_built_again_takes_modules_and_packages_from_the_volume(
    tmp_path: Path, docker_client: Any, base_image: str, eras: Any
) -> None:
    from prchain.environments.eras.build import cache_volume

    served = tmp_path / "proxy"
    sums = tinylib_proxy(served)
    sha = _repo(tmp_path / "hello", sums["v0.1.0"])
    with GoProxy(served) as proxy:
        cold = _build(docker_client, eras, tmp_path / "hello", sha, proxy.url)
        dead = proxy.url  # nothing answers there once the proxy is closed
    assert cold.image_id, cold.log[-3000:]
    volume = cache_volume(eras, REPO)
    _docker(
        "run", "--rm", "-v", f"{volume}:/c", base_image, "sh", "-c",
        f"mkdir -p /c/go/build/ff && echo x > /c/go/build/ff/{FOREIGN}",
    )  # fmt: skip
    assert docker_client.remove_image(cold.tag)

    # its downloads under umask 077, the module's zip its owner's alone, as go 1.17 left them
    # (gin's eras of 2021: "reading file:///opt/go/proxy/…/v0.1.0.zip: permission denied")
    warm = _build(docker_client, eras, tmp_path / "hello", sha, dead, umask="077")

    assert warm.built and warm.image_id, warm.log[-3000:]
    held = _docker("run", "--rm", warm.tag, "sh", "-c", "find /opt/go/cache -type f -name '*-d'")
    assert f"/{FOREIGN}" not in held
    assert len(held.split()) > 100  # the standard library and tinylib, compiled
    # the standard library is the toolchain layer's: the era's own layer holds tinylib's entry,
    # its zip and the build's small files, no copy of the library (43 MB of its own before)
    own, total = own_and_total(docker_client, warm.tag)
    assert 0 < own < 5_000_000 < total, (own, total)
    # the image keeps the module zipped, as a proxy serves it, and nothing unpacked; the volume
    # keeps the zip too
    kept = _docker("run", "--rm", warm.tag, "sh", "-c", "find /opt/go /work -name 'v0.1.0*'")
    assert sorted(Path(p).name for p in kept.split()) == [
        f"v0.1.0.{e}" for e in ("info", "mod", "zip", "ziphash")
    ], kept
    assert all(p.startswith(f"/opt/go/proxy/{TINYLIB}/@v/") for p in kept.split()), kept
    zips = _docker(
        "run", "--rm", "-v", f"{volume}:/c", base_image, "find", "/c/go", "-name", "*.zip"
    )
    assert zips.split() and all(z.endswith("v0.1.0.zip") for z in zips.split()), zips
    # a stage: go unpacks the module where the image's build did, so no dependency compiles again
    assert f"{TINYLIB}@v0.1.0/tinylib.go" in _stage(warm.tag, tmp_path / "hello")


def test_a_later_go_era_grows_on_the_earlier_one_by_what_changed(
    tmp_path: Path, docker_client: Any, eras: Any
) -> None:
    """Era 2 (tinylib v0.2.0) on era 1's image: its layer holds v0.2.0's zip and compiled entry,
    and no file of the layers below: go reads their entries where they are (dated ahead, never
    refreshed into the layer above), and nothing rewrites them."""
    served = tmp_path / "proxy"
    sums = tinylib_proxy(served)
    clone = tmp_path / "hello"
    first = _repo(clone, sums["v0.1.0"])
    later = {
        "go.mod": GO_MOD.replace("v0.1.0", "v0.2.0"),
        "go.sum": sums["v0.2.0"],
        "hello.go": CODE.replace("Greet", "Hello"),
        "hello_test.go": TEST.replace('"hi a"', '"hello a"'),
    }
    second = _commit(clone, later, "2024-03-09T10:00:00Z")
    with GoProxy(served) as proxy:
        one = _build(docker_client, eras, clone, first, proxy.url)
        assert one.image_id, one.log[-3000:]
        two = _build(docker_client, eras, clone, second, proxy.url, on=one.tag)
    assert two.image_id, two.log[-3000:]

    grown = _layer_files(two.tag)
    below = _layer_files(one.tag)
    # nothing of era 1's layer copied up: no compiled package, no zip; go writes a few index
    # entries again on each build (one line each, the same but for its time), and trim.txt
    again = {p for p in grown & below if not p.endswith("-a")}
    assert again == {"opt/go/cache/trim.txt"}, sorted(again)[:5]
    assert not [p for p in grown if p.startswith("opt/go/toolchains/")], sorted(grown)[:5]
    zips = [p for p in grown if p.endswith(".zip")]
    assert zips == [f"opt/go/proxy/{TINYLIB}/@v/v0.2.0.zip"], zips
    assert 0 < own_and_total(docker_client, two.tag)[0] < 1_000_000
    assert f"{TINYLIB}@v0.2.0/tinylib.go" in _stage(two.tag, clone)


def test_modules_past_the_limit_stay_unpacked_in_the_image(
    tmp_path: Path, docker_client: Any, eras: Any
) -> None:
    """A module set that would unpack past `eras.go_zipped_mb` is kept unpacked in the image, at
    the path go reads it from in every era (GOMODCACHE), so no stage unpacks it; no zip is kept."""
    served = tmp_path / "proxy"
    sha = _repo(tmp_path / "hello", tinylib_proxy(served)["v0.1.0"])
    with GoProxy(served) as proxy:
        made = _build(docker_client, eras, tmp_path / "hello", sha, proxy.url, go_zipped_mb=0)
    assert made.image_id, made.log[-3000:]
    assert "go modules: kept unpacked in the image" in made.log
    kept = _docker("run", "--rm", made.tag, "sh", "-c", "find /opt/go/mod/ /work -name '*.zip*'")
    assert [Path(p).name for p in kept.split()] == ["v0.1.0.ziphash"], kept
    assert "No such file" in _docker(
        "run", "--rm", made.tag, "sh", "-c", "ls /opt/go/proxy 2>&1 || true"
    )
    ran = _stage(made.tag, tmp_path / "hello", source=f"/opt/go/mod/{TINYLIB}@*")
    assert f"/opt/go/mod/{TINYLIB}@v0.1.0/tinylib.go" in ran, ran


VENDORED = f"# {TINYLIB} v0.1.0\n## explicit; go 1.22.0\n{TINYLIB}\n"


def test_a_vendored_era_compiles_its_packages_where_the_stage_s_checkout_is(
    tmp_path: Path, docker_client: Any, eras: Any
) -> None:
    """A vendored package's compiled entry names its directory in the tree: the image compiles
    the vendored packages from a copy of B_t's tree at the stage's checkout path, or not one of
    them serves a stage (ko's 518, compiled at /opt/prchain/src)."""
    from tests.support.go_proxy import V1

    clone = tmp_path / "hello"
    clone.mkdir()
    git(clone, "init", "-q", "-b", "main")
    (clone / "vendor" / TINYLIB).mkdir(parents=True)
    files = {
        "go.mod": GO_MOD,
        "hello.go": CODE,
        "hello_test.go": TEST,
        "vendor/modules.txt": VENDORED,
        f"vendor/{TINYLIB}/tinylib.go": V1,
    }
    sha = _commit(clone, files, "2024-03-01T10:00:00Z")
    made = _build(docker_client, eras, clone, sha, "http://127.0.0.1:9")  # nothing to fetch
    assert made.image_id, made.log[-3000:]
    _stage(made.tag, clone, source=f"vendor/{TINYLIB}")
