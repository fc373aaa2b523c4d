"""`prchain env`: sandbox images and containers."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

import click
from rich.markup import escape
from rich.table import Table

from prchain.cli import CONTEXT_SETTINGS, main
from prchain.cli.options import backend_options, build_config, config_options, registry_option
from prchain.cli.safe import SafeConsole

if TYPE_CHECKING:
    from prchain.setup.ladder import EraReport

console = SafeConsole()


def _say(message: str) -> None:
    console.print(f"[cyan]env:[/cyan] {message}")


@main.group(context_settings=CONTEXT_SETTINGS)
def env() -> None:
    """Sandbox images (base + one per repository) and the containers rollouts run in.

    Example:

    \b
      prchain env base
      prchain env build acme/calc
      prchain env gc
    """


@env.command()
@config_options
def base(config_path: str | None, overrides: tuple[str, ...], db_url: str | None) -> None:
    """Build the base image (python3 + git) if the engine lacks it; quick when it exists.

    No registry is needed: a `prchain/*` base is built locally with debootstrap and docker import.

    Example:

    \b
      prchain env base
      prchain env base --set environment.base_image=prchain/base:bookworm
    """
    config = build_config(config_path, overrides, db_url)
    from prchain.app import sandbox as admin

    image = admin.build_base(config.environment, _say)
    _say(f"base image {config.environment.base_image} is ready ({image[7:19]})")


@env.command()
@config_options
@click.argument("repo")
@click.option(
    "--clone",
    type=click.Path(exists=True, file_okay=False),
    help="Local clone (default: the store's).",
)
def build(
    config_path: str | None,
    overrides: tuple[str, ...],
    db_url: str | None,
    repo: str,
    clone: str | None,
) -> None:
    """Build the image of REPO (owner/name): base + full clone + its install commands.

    The install commands are environment.install_commands[REPO] followed by
    verdicts.repos.REPO.install (the test dependencies); the network is on only during this build.

    The tag is a hash of the recipe, so an unchanged clone and config is never rebuilt.

    Example:

    \b
      prchain env build astral-sh/ruff
      prchain env build acme/calc --clone ./calc
    """
    config = build_config(config_path, overrides, db_url)
    from prchain.app import sandbox as admin
    from prchain.app.verdicts import environment_config  # test installs join the recipe

    image = admin.build_repo(
        environment_config(config), repo, clone=clone, store_url=config.store.url, notify=_say
    )
    state = f"built (log {image.log_path})" if image.built else "up to date"
    _say(f"{image.tag} {state}")


@env.command(name="ls")
@config_options
def list_(config_path: str | None, overrides: tuple[str, ...], db_url: str | None) -> None:
    """List prchain's images and containers (and whether each container's owner still runs).

    The `store` column says what `prchain env prune` would do with an image for this store
    (--db / store.url): needed by a recipe in use, or unneeded; empty for base images and other
    repositories' images.

    Example:

    \b
      prchain env ls
      prchain env ls --config prchain.yaml
    """
    config = build_config(config_path, overrides, db_url)
    from prchain.app import sandbox as admin

    images, containers = admin.list_all(config)
    table = Table("image", "kind", "repo", "store", "size MB", "created", title="images")
    for image in images:
        labels = image["labels"] or {}
        tags = ", ".join(image["tags"]) or image["id"][7:19]
        table.add_row(
            tags,
            labels.get("prchain.kind", ""),
            labels.get("prchain.repo", ""),
            image["store"],
            f"{image['size'] / 1e6:.0f}",
            str(image["created"])[:19],
        )
    console.print(table)
    table = Table("container", "status", "repo", "owner pid", "owner alive", title="containers")
    for c in containers:
        labels = c["labels"]
        table.add_row(
            c["name"],
            c["status"],
            labels.get("prchain.repo", ""),
            labels.get("prchain.owner_pid", ""),
            "yes" if c["owner_alive"] else "no",
        )
    console.print(table)


@env.command()
@config_options
@click.option("--dry-run", is_flag=True, help="Say what would be removed; remove nothing.")
def prune(
    config_path: str | None, overrides: tuple[str, ...], db_url: str | None, dry_run: bool
) -> None:
    """Remove the images of this store's repositories that no recipe in use needs.

    Kept: each repository's current image (its clone and install commands as they are now), every
    era image recipe memory uses, and the images those are built from. Never touched: base images,
    images of repositories this store does not know (another store's, another user's) and anything
    prchain did not build. An image a container still uses is kept and reported. A repository's
    build cache volume larger than `eras.cache_limit_gb` goes too (its next build fetches again).
    Each image removed is listed, largest first, with the bytes its own layers hold (over the image
    it was built on: the accounting of `tasks images save`), and the total they free.

    Example:

    \b
      prchain env prune --dry-run
      prchain env prune --db postgresql+psycopg://prchain:prchain@127.0.0.1/prchain
    """
    config = build_config(config_path, overrides, db_url)
    from prchain.app import sandbox as admin

    plan = admin.prune(config, dry_run=dry_run)
    verb = "would remove" if dry_run else "removed"
    gone = {c.name for c in plan.remove} if dry_run else set(plan.removed)
    for c in sorted((c for c in plan.remove if c.name in gone), key=lambda c: -c.own):
        _say(f"{verb} {c.name} ({c.own / 1e6:,.0f} MB of its own)")
    for name in plan.busy:
        _say(f"kept {name}: a container still uses it")
    count = len(plan.remove) if dry_run else len(plan.removed)
    _say(
        f"{count} image(s) {verb} ({plan.freed(dry_run) / 1e6:,.0f} MB of their own layers); "
        f"{len(plan.needed)} kept for recipes in use; "
        f"{plan.other_repos} of other repositories left alone"
    )
    limit = f"{config.eras.cache_limit_gb * 1000:,.0f} MB"
    for name, size in plan.caches:
        if name in plan.caches_busy:
            _say(f"kept cache volume {name} ({size / 1e6:,.0f} MB): a build uses it")
        else:
            _say(f"{verb} cache volume {name} ({size / 1e6:,.0f} MB; the limit is {limit})")


@env.command()
@click.option(
    "--all", "everything", is_flag=True, help="Remove every prchain container, even of live owners."
)
@click.option(
    "--label",
    "labels",
    multiple=True,
    metavar="KEY=VALUE",
    help="Only containers carrying this label (repeatable), e.g. prchain.store=<tag> for one store's.",
)
def gc(everything: bool, labels: tuple[str, ...]) -> None:
    """Remove sandbox containers whose owning process is gone (e.g. a rollout killed with SIGKILL).

    Example:

    \b
      prchain env gc
      prchain env gc --label prchain.chain=12
    """
    from prchain.app import sandbox as admin

    removed = admin.gc(everything=everything, labels=_label_pairs(labels))
    for container in removed:
        _say(
            f"removed {container['name']} (owner pid {container['labels'].get('prchain.owner_pid', '?')})"
        )
    _say(f"{len(removed)} container(s) removed")


def _label_pairs(labels: tuple[str, ...]) -> dict[str, str]:
    pairs = {}
    for label in labels:
        key, sep, value = label.partition("=")
        if not sep or not key:
            raise click.BadParameter(f"{label!r} is not KEY=VALUE", param_hint="--label")
        pairs[key] = value
    return pairs


@env.command()
@config_options
@click.argument("repo", required=False)
@click.option(
    "--chain", "chains", type=int, multiple=True, metavar="ID", help="Only this chain (repeatable)."
)
@click.option("--redo", is_flag=True, help="Set up again eras whose recipe is stored.")
@backend_options
@registry_option
def setup(
    config_path: str | None,
    overrides: tuple[str, ...],
    db_url: str | None,
    repo: str | None,
    chains: tuple[int, ...],
    redo: bool,
    backend: str | None,
    ray_address: str | None,
    registry: str | None,
) -> None:
    """Build and verify an era image for every stage base the chains need (all repos by default).

    A stage's era comes from its base commit: the dependency manifests and the date. Per new era:
    the nearest verified era's image, else the planner (Debian suite and python from the manifests,
    packages uploaded before the commit's date), else the setup agent; a recipe is verified when
    the suite collects and most of it passes at the base. Reruns skip eras already stored.
    Exit status 1 when an era stays unverified.

    --backend ray sets up each era in its own Ray task, on a node with a free sandbox slot; with
    --registry each verified era image is pushed there, and a node that lacks an image pulls it
    instead of building it again.

    Example:

    \b
      prchain env setup pytest-dev/pluggy
      prchain env setup --chain 3 --chain 7
      prchain env setup --backend ray --ray-address auto --registry registry.lan:5000/prchain
    """
    config = build_config(
        config_path,
        overrides,
        db_url,
        **{"scale.backend": backend, "scale.ray_address": ray_address, "scale.registry": registry},
    )
    from prchain.app.envsetup import setup_from_config
    from prchain.cli.progress import progress_bar

    err = SafeConsole(stderr=True)
    with progress_bar(err) as progress:
        task = progress.add_task("eras", total=None)
        reports = setup_from_config(
            config,
            repo=repo,
            chain_ids=chains,
            redo=redo,
            notify=lambda m: progress.console.print(f"[cyan]env:[/cyan] {escape(m)}"),
            on_start=lambda n: progress.update(task, total=n),
            on_done=lambda r: progress.update(
                task, advance=1, description=f"{r.repo} era {r.era_key[:8]}: {r.result}"
            ),
        )
    console.print(_setup_table(reports))
    console.print(_setup_totals(reports))
    if any(r.result in ("unverified", "error", "busy") or r.reason for r in reports):
        raise SystemExit(1)  # an era stays unverified (or another run holds it): the user must act


def _setup_table(reports: list[EraReport]) -> Table:
    table = Table(title="Era environments")
    for column in (
        "repo",
        "era",
        "date",
        "stages",
        "result",
        "method",
        "tests",
        "seconds",
        "MB own/total",
        "node",
        "why not",
    ):
        table.add_column(column)
    for r in reports:
        c = r.counts
        tests = (
            f"{c.passed}/{c.ran} passed"
            + (f", {c.collection_errors} coll. err" if c.collection_errors else "")
            + (f", {len(c.excluded)} left out" if c.excluded and r.result != "unverified" else "")
        )
        table.add_row(
            r.repo,
            r.era_key[:8],
            r.date,
            str(r.stages),
            r.result,
            r.method,
            tests,
            f"{r.seconds:.0f}",
            f"{r.own_bytes / 1e6:,.0f}/{r.image_bytes / 1e6:,.0f}" if r.image_bytes else "",
            r.node,
            escape(r.reason[:90]),
        )
    return table


def _setup_totals(reports: list[EraReport]) -> str:
    verified = [
        r for r in reports if r.result == "verified" or (r.result == "known" and not r.reason)
    ]
    by_method: dict[str, int] = {}
    for r in verified:
        by_method[r.method] = by_method.get(r.method, 0) + 1
    methods = ", ".join(f"{n} by {m}" for m, n in sorted(by_method.items())) or "none"
    stages = sum(r.stages for r in reports)
    cost = sum(r.cost for r in reports)
    seconds = sum(r.seconds for r in reports)
    images = {r.image: r for r in reports if r.image_bytes}  # eras sharing an image count it once
    own = sorted(r.own_bytes for r in images.values())
    sizes = (
        f"; era images {sum(own) / 1e6:,.0f} MB of their own (median {own[len(own) // 2] / 1e6:,.0f}),"
        f" {sum(r.image_bytes for r in images.values()) / 1e6:,.0f} MB counted whole"
        if own
        else ""
    )
    kept = {id(r) for r in verified}
    lost = Counter(r.loss or r.result for r in reports if id(r) not in kept)
    why = ", ".join(f"{n} {reason}" for reason, n in lost.most_common())
    return (
        f"{len(reports)} eras for {stages} stages: {len(verified)} verified ({methods}), "
        f"{len(reports) - len(verified)} not{f' ({why})' if why else ''}; "
        f"cost ${cost:.2f}, {seconds:.0f} s{sizes}"
    )


@env.command()
@config_options
@click.argument("repo", required=False)
def recipes(
    config_path: str | None, overrides: tuple[str, ...], db_url: str | None, repo: str | None
) -> None:
    """List the recipe of every era in recipe memory (of REPO, or of all repositories).

    Example:

    \b
      prchain env recipes
      prchain env recipes pallets/click
    """
    config = build_config(config_path, overrides, db_url)
    from prchain.app.envsetup import recipes_from_config

    table = Table(title="Recipes")
    for column in (
        "repo",
        "era",
        "date",
        "status",
        "method",
        "python",
        "cutoff",
        "image",
        "tests",
        "test command",
    ):
        table.add_column(column)
    for r in recipes_from_config(config, repo):
        v = r["verification"]
        table.add_row(
            r["repo"],
            r["era_key"][:8],
            r["era_date"][:10],
            r["status"],
            r["method"],
            f"{r['interpreter']} ({r['suite']})",
            r["cutoff"][:10],
            r["image"],
            f"{v.get('passed', 0)} passed, {v.get('failed', 0)} failed, "
            f"{v.get('collection_errors', 0)} coll. err",
            escape(r["test_command"]),
        )
    console.print(table)
