"""`prchain env`: sandbox images and containers."""

from __future__ import annotations

import click
from rich.console import Console
from rich.table import Table

from prchain.cli import CONTEXT_SETTINGS, main
from prchain.cli.options import build_config, config_options

console = Console()


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
def list_() -> None:
    """List prchain's images and containers (and whether each container's owner still runs).

    Example:

    \b
      prchain env ls
    """
    from prchain.app import sandbox as admin

    images, containers = admin.list_all()
    table = Table("image", "kind", "repo", "size MB", "created", title="images")
    for image in images:
        labels = image["labels"] or {}
        tags = ", ".join(image["tags"]) or image["id"][7:19]
        table.add_row(
            tags,
            labels.get("prchain.kind", ""),
            labels.get("prchain.repo", ""),
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
@click.option(
    "--all", "everything", is_flag=True, help="Remove every repo image, not only superseded ones."
)
def prune(everything: bool) -> None:
    """Remove repo images whose recipe was superseded by a newer build (base images are kept).

    Example:

    \b
      prchain env prune
      prchain env prune --all
    """
    from prchain.app import sandbox as admin

    removed = admin.prune(everything=everything)
    for tag in removed:
        _say(f"removed {tag}")
    _say(f"{len(removed)} image(s) removed")


@env.command()
@click.option(
    "--all", "everything", is_flag=True, help="Remove every prchain container, even of live owners."
)
def gc(everything: bool) -> None:
    """Remove sandbox containers whose owning process is gone (e.g. a rollout killed with SIGKILL).

    Example:

    \b
      prchain env gc
    """
    from prchain.app import sandbox as admin

    removed = admin.gc(everything=everything)
    for container in removed:
        _say(
            f"removed {container['name']} (owner pid {container['labels'].get('prchain.owner_pid', '?')})"
        )
    _say(f"{len(removed)} container(s) removed")
