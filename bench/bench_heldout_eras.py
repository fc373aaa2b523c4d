"""Eras on histories no one tuned on (issues 50 and 51): `env setup` then `tests verify` per stage,
default configuration, no LLM, as a new user would run them; one row per stage (its ecosystem,
toolchain, method, build and verify seconds, image size) and, per ecosystem, the share verified and
the medians per era.

Each stage is a PR named `owner/name#N`; its history is a local clone (a bare mirror works) under
`--clones`, as `owner+name/repo` or `owner+name` (the search tool's `fetch` layout). The repository is
mined from the clone, every PR becomes a one-stage chain (`chains build --strategy single`), and only
the named PRs' chains are set up and verified (`--setup-only`: no `tests verify`). Nothing here is
hermetic: the indexes are the registries, and the repositories' code is never committed. The
store, logs and the build-cache volume are the bench's own (under a temporary directory, prefix
`bench-heldout-`, or `--data` to keep the store and logs); the era images are left for a rerun
(`prchain env prune` removes them) unless `--clean`.

`--warm` builds each era the planner built once more, warm: its era image removed, the toolchain
layer and the repository's cache volume kept, memory off (another era's image would serve it
instead), the same ladder (a revision replays). The row's `warm s` is that build and the summary
gives its median per ecosystem: what a user pays for an era again after `env prune`.

    python bench/bench_heldout_eras.py --clones /work/.mirror \\
        pyparsing/pyparsing#209 tox-dev/filelock#110 google/gson#2233 pmndrs/zustand#1451

`--config` adds a prchain.yaml's settings under the bench's own (its cache volume, logs and chain
sizes win): a compiled project's submodule mirrors, build arguments and limits, e.g. for numpy

    eras:
      git_mirrors: {https://github.com/numpy/meson.git: /work/.mirror/numpy+meson/repo, ...}
      build_args: {numpy: [-Dcpu-dispatch=none, -Dbuildtype=debug]}
      verify_limits: {numpy/numpy: {memory: 6g, timeout: 420}}
    environment: {memory: 6g, disk_limit: 8g, test_timeout: 3600}
    verdicts: {timeout: 3600}
"""

from __future__ import annotations

import argparse
import secrets
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import yaml  # noqa: E402
from sqlalchemy import select  # noqa: E402

from bench.eras_common import invoke, remove_images, write_config  # noqa: E402
from prchain.app.config import load_config  # noqa: E402
from prchain.app.envsetup import era_builder, image_opener, image_size  # noqa: E402
from prchain.environments.cleanup import install_handlers  # noqa: E402
from prchain.environments.docker_client import DockerClient  # noqa: E402
from prchain.environments.eras.build import cache_volume  # noqa: E402
from prchain.environments.eras.config import ErasConfig  # noqa: E402
from prchain.environments.transfer import own_and_total  # noqa: E402
from prchain.setup.ladder import Setup, setup_eras  # noqa: E402
from prchain.store.db import session_scope  # noqa: E402
from prchain.store.models import (  # noqa: E402
    Chain,
    ChainStage,
    EnvRecipe,
    PullRequest,
    Repo,
    StageEra,
    StageVerification,
)
from prchain.store.opener import make_engine  # noqa: E402


def clone_of(root: Path, repo: str) -> Path:
    flat = root / repo.replace("/", "+")
    return flat / "repo" if (flat / "repo").exists() else flat


def chain_ids(url: str, wanted: list[tuple[str, int]]) -> dict[tuple[str, int], int]:
    """The one-stage chain of each named PR (absent when `chains build` did not make one)."""
    with session_scope(make_engine(url)) as session:
        rows = session.execute(
            select(Repo.full_name, PullRequest.number, Chain.id)
            .join(Chain, Chain.repo_id == Repo.id)
            .join(ChainStage, ChainStage.chain_id == Chain.id)
            .join(PullRequest, PullRequest.id == ChainStage.pr_id)
            .where(Chain.strategy == "single", Chain.length == 1)
        ).all()
    found = {(name, number): chain for name, number, chain in rows}
    return {key: found[key] for key in wanted if key in found}


@dataclass
class Row:
    year: int
    era: str
    status: str
    ecosystem: str
    toolchain: str
    method: str
    image_mb: float
    build: float
    verify: float
    verdict: str
    f2p: int
    why: str
    image: str = ""
    warm: float = 0.0  # the era's build again with its image gone (--warm), 0 when not rebuilt
    own_mb: float = 0.0  # what the era image adds over its parent (toolchain layer or grown-on era)


def row(url: str, chain: int) -> Row:
    with session_scope(make_engine(url)) as session:
        stage = session.scalars(select(ChainStage).where(ChainStage.chain_id == chain)).one()
        era = session.scalars(
            select(StageEra).where(StageEra.chain_stage_id == stage.id)
        ).one_or_none()
        recipe = (
            session.scalars(select(EnvRecipe).where(EnvRecipe.era_key == era.era_key)).first()
            if era
            else None
        )
        verdict = session.scalars(
            select(StageVerification)
            .where(StageVerification.chain_stage_id == stage.id)
            .order_by(StageVerification.id.desc())
        ).first()
        merged = session.scalar(select(PullRequest.merged_at).where(PullRequest.id == stage.pr_id))
        return Row(
            merged.year if merged else 0,
            era.era_key if era else "",
            recipe.status if recipe else "none",
            recipe.ecosystem if recipe else "",
            f"{recipe.suite}/{recipe.interpreter}" if recipe else "",
            recipe.method if recipe else "",
            recipe.image_bytes / 1e6 if recipe else 0.0,
            recipe.build_seconds if recipe else 0.0,
            recipe.verify_seconds if recipe else 0.0,
            verdict.status if verdict else "none",
            len(verdict.fail_to_pass) if verdict else 0,
            (recipe.root_error if recipe and recipe.status != "verified" else "")
            or (verdict.reason if verdict and verdict.status != "usable" else "")
            or "",
            recipe.image if recipe else "",
        )


def warm_build(config_file: Path, url: str, chain: int, found: Row, repo: str) -> float:
    """Seconds of the era's build again, warm: only its era image removed (the toolchain layer and
    the repository's cache volume stay), memory off so that no other era's image serves it, the
    planner's ladder as the cold setup ran it (a revision replays). 0 when the cold setup built no
    image of its own (memory's, a failed build)."""
    client = DockerClient()
    if found.method != "planner" or not found.image or not client.image_id(found.image):
        return 0.0
    if client.image_labels(found.image).get("prchain.repo") != repo:
        return 0.0  # never another repository's image
    if not client.remove_image(found.image):
        return 0.0  # still in use: the ladder would find it and build nothing
    config = load_config(config_file, [f"store.url={url}"])
    setup = Setup(
        make_engine(url),
        config.eras,
        era_builder(config, print),
        image_opener(config.environment, None, config.eras),
        agent=None,  # the bench runs no LLM
        redo=True,  # the era's recipe is stored
        image_exists=lambda _image: False,  # memory off
        image_size=image_size,
    )
    setup_eras(setup, chain_ids=[chain])
    return row(url, chain).build


def bench_config(tmp: Path, volume: str, user: Path | None) -> Path:
    """The bench's config: the user's settings (if any) under its own volume, logs and sizes."""
    own = write_config(tmp, f"  cache_volume: {volume}\n")
    if user is None:
        return own
    merged = yaml.safe_load(user.read_text()) or {}
    for section, values in (yaml.safe_load(own.read_text()) or {}).items():
        merged[section] = {**(merged.get(section) or {}), **values}
    own.write_text(yaml.safe_dump(merged))
    return own


def run(
    tmp: Path,
    clones: Path,
    wanted: list[tuple[str, int]],
    volume: str,
    user: Path | None,
    setup_only: bool = False,
    warm: bool = False,
) -> None:
    url = f"sqlite:///{tmp / 'bench.db'}"
    config_file = bench_config(tmp, volume, user)
    common = ["--config", str(config_file), "--db", url]
    for repo in sorted({repo for repo, _ in wanted}):
        invoke("mine", "--source", "git", "--name", repo, str(clone_of(clones, repo)), *common)
    invoke("chains", "build", "--strategy", "single", "--min-len", "1", "--max-len", "1", *common)
    chains = chain_ids(url, wanted)
    print(
        f"{'stage':30} {'year':4} {'toolchain':18} {'method':8} {'era':10} {'build s':>7} "
        f"{'verify s':>8} {'MB':>6} {'own MB':>6} {'setup s':>7} {'tests s':>7} {'verdict':8} {'F2P':>4} "
        f"{'warm s':>6}  why not"
    )
    rows: list[Row] = []
    for repo, number in wanted:
        chain = chains.get((repo, number))
        if chain is None:
            print(f"{repo}#{number:<8} no one-stage chain (filtered by chains build)")
            continue
        setup_seconds = invoke("env", "setup", "--chain", str(chain), *common)
        started = time.perf_counter()
        if not setup_only:
            invoke("tests", "verify", "--chain", str(chain), *common)
        tests_seconds = time.perf_counter() - started
        found = row(url, chain)
        if found.image:  # measured before --warm removes and rebuilds it
            found.own_mb = own_and_total(DockerClient(), found.image)[0] / 1e6
        if warm:
            found.warm = warm_build(config_file, url, chain, found, repo)
        rows.append(found)
        print(
            f"{repo + '#' + str(number):30} {found.year:4} {found.toolchain:18} {found.method:8} "
            f"{found.status:10} {found.build:7.0f} {found.verify:8.0f} {found.image_mb:6.0f} "
            f"{found.own_mb:6.0f} "
            f"{setup_seconds:7.0f} {tests_seconds:7.0f} {found.verdict:8} {found.f2p:4} "
            f"{found.warm:6.0f}  {found.why[:120]}"
        )
    summary(rows, len(wanted))


def summary(rows: list[Row], wanted: int) -> None:
    """Per ecosystem: the share verified (of the stages asked for) by method, and the medians of
    the eras built for a stage (a stage served from memory built none)."""
    print(f"verified without the agent: {sum(r.status == 'verified' for r in rows)} of {wanted}")
    for name in sorted({r.ecosystem for r in rows}):
        mine = [r for r in rows if r.ecosystem == name]
        methods = sorted({r.method for r in mine if r.status == "verified"})
        by_method = ", ".join(
            f"{m} {sum(r.method == m and r.status == 'verified' for r in mine)}" for m in methods
        )
        print(
            f"{name or '(none)'}: {sum(r.status == 'verified' for r in mine)} of {len(mine)} "
            f"verified ({by_method or 'none'}); FAIL_TO_PASS on {sum(r.f2p > 0 for r in mine)}"
        )
        built = {r.era: r for r in mine if r.method != "memory" and (r.build or r.verify)}
        for start, end in ((2016, 2019), (2020, 2022), (2023, 2026)):
            eras = [r for r in built.values() if start <= r.year <= end]
            if eras:
                print(
                    f"  eras {start}–{end}: {len(eras)}, build median "
                    f"{statistics.median(r.build for r in eras):.0f} s, verify median "
                    f"{statistics.median(r.verify for r in eras):.0f} s, image median "
                    f"{statistics.median(r.image_mb for r in eras):.0f} MB, own median "
                    f"{statistics.median(r.own_mb for r in eras):.0f} MB"
                )
        rebuilt = [r.warm for r in mine if r.warm]
        if rebuilt:
            print(
                f"  warm builds: {len(rebuilt)}, median {statistics.median(rebuilt):.0f} s "
                f"({min(rebuilt):.0f}–{max(rebuilt):.0f} s)"
            )


def main_() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clones", type=Path, required=True, help="where the clones are")
    parser.add_argument("--clean", action="store_true", help="remove the era images at the end")
    parser.add_argument(
        "--data", type=Path, help="keep the store and logs here (default: a temporary directory)"
    )
    parser.add_argument("--config", type=Path, help="a prchain.yaml whose settings are added")
    parser.add_argument(
        "--setup-only",
        action="store_true",
        help="set up and verify each stage's era, without `tests verify` (no FAIL_TO_PASS)",
    )
    parser.add_argument(
        "--warm",
        action="store_true",
        help="build each era the planner built again with its image removed (warm build time)",
    )
    parser.add_argument("stages", nargs="+", help="owner/name#N")
    args = parser.parse_args()
    client = DockerClient()
    volume = f"bench-heldout-{secrets.token_hex(4)}"
    wanted = [(s.split("#")[0], int(s.split("#")[1])) for s in args.stages]
    with tempfile.TemporaryDirectory(prefix="bench-heldout-") as tmp:
        data = args.data or Path(tmp)
        data.mkdir(parents=True, exist_ok=True)
        try:
            run(data, args.clones, wanted, volume, args.config, args.setup_only, args.warm)
        finally:
            for repo in sorted({repo for repo, _ in wanted}):
                if args.clean:
                    remove_images(client, repo)
                client.remove_volume(cache_volume(ErasConfig(cache_volume=volume), repo))
    return 0


if __name__ == "__main__":
    install_handlers()  # a SIGTERM then runs the `finally` that removes what the bench made
    sys.exit(main_())
