"""Incremental eras: per era, the image build time cold (the repository's download cache empty),
warm (the cache filled, the era built from the toolchain layer: what every era cost before eras
grew) and incremental (a thin layer on the previous era's image), with each image's own (unique)
and total size, by the accounting of `tasks images save` and `env prune`.

By default the made-up `digits` history (tests/support/rust_repo.py: itoa 0.4.8, then 1.0.3) on
bookworm's rustc 1.63. On a real repository: `--clone DIR --name owner/name --commits a,b,c`
(its eras in date order; the first is built cold and warm, each later one grown from the one
before where the ladder's rule lets it, else in full, and warm from the toolchain layer; a Go era
grows only on an era of its toolchain, as the ladder's do). Builds only: no era
is verified here (the ladder grows an era only from a verified one, and tries the nearest
verified image itself first). The toolchain layer is shared and kept; the era images and the cache volume this
makes are removed at the end unless `--keep`.
"""

from __future__ import annotations

import argparse
import os
import secrets
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from prchain.environments.cleanup import install_handlers  # noqa: E402
from prchain.environments.config import EnvironmentConfig  # noqa: E402
from prchain.environments.docker_client import DockerClient  # noqa: E402
from prchain.environments.eras import growth, native  # noqa: E402
from prchain.environments.eras.build import EraImage, cache_volume, ensure_era_image  # noqa: E402
from prchain.environments.eras.config import ErasConfig  # noqa: E402
from prchain.environments.eras.ecosystems import Plan  # noqa: E402
from prchain.environments.eras.era import Era, era_of  # noqa: E402
from prchain.environments.transfer import own_and_total  # noqa: E402

MB = 1_000_000


@dataclass
class Row:
    era: str
    date: str
    packages: int
    kind: str  # cold | warm | incremental
    seconds: float
    own: int
    total: int
    tag: str


def planned(eras: ErasConfig, clone: Path, sha: str) -> tuple[Era, Plan]:
    """The era of commit `sha` and the plan the ladder's planner tries first for it."""
    era = era_of(clone, sha)
    if era.ecosystem is None:
        raise SystemExit(f"{sha[:12]}: no ecosystem recognises it")
    return era, native.with_known(era.ecosystem.plans(era.snap, eras)[0], era.snap, eras)


def build(
    client: DockerClient,
    eras: ErasConfig,
    repo: str,
    clone: Path,
    sha: str,
    era: Era,
    plan: Plan,
    on: str = "",
) -> EraImage:
    made = ensure_era_image(
        client,
        EnvironmentConfig(),
        eras,
        repo=repo,
        clone=clone,
        sha=sha,
        plan=replace(plan, on=on if plan.grows else ""),
        era_key=era.key,
        notify=lambda line: print(f"  {line}", flush=True),
    )
    if not made.image_id:
        print(made.log[-3000:])
        raise SystemExit(f"{sha[:12]} ({'on ' + on if on else 'full'}): the build failed")
    return made


def measure(
    client: DockerClient,
    eras: ErasConfig,
    repo: str,
    clone: Path,
    commits: list[str],
    warm_first: bool = True,
    full_later: int | None = None,
    always_grow: bool = False,
) -> list[Row]:
    """Rows in build order: the first era cold (and warm), each later era grown from the one
    before it where the ladder's rule lets it (growth.refusal; `always_grow`: wherever it can),
    else built from the toolchain layer ("full"), then the first `full_later` later eras (all
    by default) warm from the toolchain layer. An ecosystem whose eras do not grow builds each
    later era once, warm on the repository's cache volume."""
    rows: list[Row] = []
    plans = {sha: planned(eras, clone, sha) for sha in commits}  # each commit planned once

    def made_for(sha: str, on: str = "") -> EraImage:
        return build(client, eras, repo, clone, sha, *plans[sha], on=on)

    def row(sha: str, kind: str, made: EraImage) -> Row:
        own, total = own_and_total(client, made.tag)
        packages = _dependencies(clone, sha)
        era = plans[sha][0]
        found = Row(era.key, era.date, packages, kind, made.seconds, own, total, made.tag)
        print(
            f"  {kind:<11} {sha[:10]} {found.seconds:7.1f} s own {own / MB:7.1f} MB "
            f"total {total / MB:7.1f} MB",
            flush=True,
        )
        rows.append(found)
        return found

    first = commits[0]
    for _era, plan in plans.values():  # shared by every era that asks for it: built once, not timed
        _toolchain(client, eras, plan)
    made = made_for(first)
    row(first, "cold", made)
    if warm_first:
        if not client.remove_image(made.tag):  # else the "warm" build would reuse this image
            raise SystemExit(f"{made.tag}: still in use, so its warm build cannot be timed")
        made = made_for(first)
        row(first, "warm", made)
    grows, units = plans[first][1].grows, plans[first][1].units
    previous = made.tag
    built_full: list[str] = []  # their warm build is the one above: not built twice
    for sha in commits[1:]:
        later = plans[sha][1].units
        why = "" if always_grow or not grows else growth.refusal(units, later)
        try:
            if why:
                raise SystemExit(f"{sha[:12]}: not grown: {why}")
            grown = made_for(sha, on=previous)
            row(sha, "incremental" if grows else "warm", grown)
        except SystemExit as refused:  # another toolchain: the ladder builds it in full too
            print(f"  {refused}; built in full", flush=True)
            grown = made_for(sha)
            row(sha, "full", grown)
            built_full.append(sha)
        previous, units = grown.tag, later
    grown_ones = [sha for sha in commits[1:] if sha not in built_full]
    for sha in grown_ones[:full_later] if grows else []:  # what each cost before eras grew
        row(sha, "warm", made_for(sha))
    return rows


def _toolchain(client: DockerClient, eras: ErasConfig, plan: Plan) -> None:
    from prchain.environments.eras.build import base_config, ensure_toolchain_image
    from prchain.environments.images import ensure_base_image

    env = EnvironmentConfig()
    base = ensure_base_image(client, base_config(env, eras, plan.suite), print)
    if plan.toolchain:
        ensure_toolchain_image(client, env, eras, "", base, plan, print)


def _dependencies(clone: Path, sha: str) -> int:
    """The packages its lock file pins: Cargo.lock's crates, or go.sum's modules."""
    import subprocess

    def shown(path: str) -> str:
        out = subprocess.run(
            ["git", "-C", str(clone), "show", f"{sha}:{path}"], capture_output=True, text=True
        )
        return out.stdout if out.returncode == 0 else ""

    if lock := shown("Cargo.lock"):
        return lock.count('\nname = "')
    return len({line.split()[0] for line in shown("go.sum").splitlines() if line.strip()})


def report(rows: list[Row]) -> None:
    print("\n| era (date) | packages | build | seconds | own MB | total MB |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r.era[:8]} ({r.date}) | {r.packages} | {r.kind} | {r.seconds:.1f} | "
            f"{r.own / MB:.1f} | {r.total / MB:.1f} |"
        )
    cold = next(r for r in rows if r.kind == "cold")
    later_warm = [r for r in rows if r.kind == "warm" and r.era != cold.era] or [cold]
    grown = [r for r in rows if r.kind == "incremental"]
    before = [r.own for r in rows if r.kind in ("cold", "warm")]
    after = [rows[0].own] + [r.own for r in rows if r.kind in ("incremental", "full")]
    if grown:
        share = max(r.seconds for r in grown) / cold.seconds
        print(
            f"\nlater eras, incremental: {min(r.seconds for r in grown):.1f}–"
            f"{max(r.seconds for r in grown):.1f} s, at most {share:.0%} of the first era's cold "
            f"build ({cold.seconds:.1f} s); warm from the toolchain layer: "
            f"{statistics.median(r.seconds for r in later_warm):.1f} s median"
        )
    elif later_warm != [cold]:  # eras that do not grow: warm on the repository's cache volume
        print(
            f"\nlater eras, warm on the repository's cache: "
            f"{min(r.seconds for r in later_warm):.1f}–{max(r.seconds for r in later_warm):.1f} s, "
            f"at most {max(r.seconds for r in later_warm) / cold.seconds:.0%} of the first era's "
            f"cold build ({cold.seconds:.1f} s)"
        )
    built = [r for r in rows if r.kind in ("incremental", "full")]
    if built:  # every later era as the ladder would build it, against the first era's cold build
        cheap = [r for r in built if r.seconds <= 0.3 * cold.seconds]
        print(
            f"later eras as built: median {statistics.median(r.seconds for r in built):.1f} s; "
            f"{len(cheap)} of {len(built)} at most 30% of the first era's cold build"
        )
    grown_part = f", {statistics.median(after) / MB:.1f} MB grown" if grown else ""
    print(
        f"median own (unique) size per era: {statistics.median(before) / MB:.1f} MB each built "
        f"from the toolchain layer{grown_part}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clone", help="a clone of a real repository (default: made-up digits)")
    parser.add_argument("--name", help="its owner/name (a prefix is added: its own cache)")
    parser.add_argument("--commits", help="its era commits, comma-separated, in date order")
    parser.add_argument("--keep", action="store_true", help="keep the images and cache volume")
    parser.add_argument(
        "--git-mirror",
        action="append",
        default=[],
        metavar="URL=PATH",
        help="a local repository for a Cargo.lock git dependency (eras.git_mirrors; repeatable)",
    )
    parser.add_argument("--no-warm-first", action="store_true", help="the first era cold only")
    parser.add_argument("--full-later", type=int, help="later eras also built warm (default all)")
    parser.add_argument(
        "--always-grow", action="store_true", help="grow every era that can (not the ladder's rule)"
    )
    args = parser.parse_args()
    client = DockerClient()
    with tempfile.TemporaryDirectory(prefix="prchain-bench-incr-") as tmp:
        if args.clone:
            clone, commits = Path(args.clone), args.commits.split(",")
            mirrors = dict(pair.split("=", 1) for pair in args.git_mirror)
            eras = ErasConfig(git_mirrors=mirrors)
            repo = f"bench-incr-{secrets.token_hex(3)}/{args.name.split('/')[-1]}"
        else:
            from tests.support.rust_repo import make_digits

            clone = make_digits(Path(tmp) / "digits")
            commits = _digits_eras(clone)
            eras = ErasConfig(suites={"bookworm": "3.11"}, extra_base_packages=[])
            repo = f"bench-incr-{secrets.token_hex(3)}/digits"
        print(f"{repo}: {len(commits)} eras; load {os.getloadavg()[0]:.1f}", flush=True)
        started = time.monotonic()
        try:
            rows = measure(
                client,
                eras,
                repo,
                clone,
                commits,
                not args.no_warm_first,
                args.full_later,
                # the made-up history's one crate changes, which the rule builds in full: it
                # grows anyway, to time a thin build
                args.always_grow or not args.clone,
            )
        finally:
            if not args.keep:
                _remove(client, repo, eras)
        report(rows)
        print(f"wall {time.monotonic() - started:.0f} s; load {os.getloadavg()[0]:.1f}")
    return 0


def _digits_eras(clone: Path) -> list[str]:
    """The last commit of each of the history's two lock files."""
    import subprocess

    log = subprocess.run(
        ["git", "-C", str(clone), "log", "--reverse", "--format=%H", "--", "Cargo.lock"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return log[-2:] if len(log) >= 2 else log


def _remove(client: DockerClient, repo: str, eras: ErasConfig) -> None:
    """This bench's era images (labelled with its made-up repository) and its cache volume."""
    made = client.api.images(filters={"label": f"prchain.repo={repo}"})
    for image in sorted(made, key=lambda i: -int(i["Created"])):  # a grown era before its base
        client.remove_image(image["Id"])
    client.remove_volume(cache_volume(eras, repo))


if __name__ == "__main__":
    install_handlers()  # a SIGTERM then runs the `finally` that removes what the bench made
    sys.exit(main())
