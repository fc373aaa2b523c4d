"""What `prchain env …` does: base and repo images, listing, pruning, removing orphan containers."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prchain.core.errors import GitError, NothingToDo
from prchain.environments import cleanup, images, lifecycle
from prchain.environments.config import EnvironmentConfig
from prchain.environments.docker_client import MANAGED_LABEL, DockerClient
from prchain.environments.eras.build import cache_volume
from prchain.environments.eras.config import ErasConfig


def build_base(config: EnvironmentConfig, notify: images.Notify = print) -> str:
    """The base image's id, built once (quick when cached: one inspect call)."""
    return images.ensure_base_image(DockerClient(), config, notify)


@dataclass(frozen=True)
class StoreImages:
    """What the store says of its images: each repository's clone (None: it has none) and the era
    image of each verified recipe (repository, tag). Read by the composition layer."""

    clones: dict[str, Path | None]
    recipes: list[tuple[str, str]]


def build_repo(
    config: EnvironmentConfig, repo: str, path: Path, notify: images.Notify = print
) -> images.RepoImage:
    if not path.exists():
        raise GitError(f"clone {path} of {repo} does not exist")
    return images.ensure_repo_image(DockerClient(), config, repo, path, notify)


def list_all(
    config: EnvironmentConfig, store: StoreImages | None
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Managed images, each with what `prune` would do with it for this store (`store`: needed,
    unneeded, or "" for a base image and another repository's), and managed containers (with
    whether their owner still runs)."""
    client = DockerClient()
    containers = client.containers({MANAGED_LABEL: "1"})
    for container in containers:
        container["owner_alive"] = cleanup.owner_alive(container["labels"])
    found = images.list_images(client)
    decided = store_decisions(client, config, store) if store else {}
    for image in found:
        image["store"] = decided.get(str(image["id"]), "")
    return found, containers


def store_decisions(
    client: DockerClient, config: EnvironmentConfig, store: StoreImages
) -> dict[str, str]:
    """Image id → "needed" or "unneeded", as `prune` decides for this store; {} when the store has
    no repository."""
    plan = lifecycle.plan_prune(
        client, repos=set(store.clones), needed=needed_images(client, config, store)
    )
    return {c.id: "unneeded" for c in plan.remove} | {c.id: "needed" for c in plan.needed}


def default_image(
    client: DockerClient, config: EnvironmentConfig, repo: str, clone: Path | None
) -> str | None:
    """The tag `ensure_repo_image` would give the repository's image today (None: cannot tell,
    e.g. no clone or no base image, so no image of that recipe exists either)."""
    base = client.image_id(config.base_image)
    if base is None or clone is None or not clone.exists():
        return None
    try:
        recipe = images.repo_recipe(base, clone, config.install_commands.get(repo, []))
    except GitError:
        return None
    return images.repo_image_tag(repo, recipe)


def sandbox_image(
    client: DockerClient, repo: str, clone: Path | None, era_image: str
) -> str | None:
    """The tag of the sandbox image a stage of that era opens (the sandbox layer on the era image,
    as `ensure_repo_image(base_image=era image)` names it), None when it cannot be told."""
    era_id = client.image_id(era_image)
    if era_id is None or clone is None or not clone.exists():
        return None
    try:
        return images.repo_image_tag(repo, images.repo_recipe(era_id, clone, []))
    except GitError:
        return None


def prune(
    config: EnvironmentConfig,
    store: StoreImages,
    *,
    eras: ErasConfig | None = None,
    needed: Iterable[str] = (),
    dry_run: bool = False,
) -> lifecycle.PrunePlan:
    """Remove the images of the store's repositories that no recipe in use needs. Kept: each
    repository's current default image, every verified recipe's era image and the sandbox image
    built on it, the images in `needed`, and everything those are built from. With `eras`, also
    the repositories' build cache volumes larger than `eras.cache_limit_gb`."""
    client = DockerClient()
    repos = store.clones
    if not repos:
        raise NothingToDo("the store has no repository", hint="prune works on a store's images")
    keep = [*needed_images(client, config, store), *needed]
    plan = lifecycle.prune(client, repos=set(repos), needed=keep, dry_run=dry_run)
    if eras is not None:
        volumes = [cache_volume(eras, repo) for repo in repos]
        limit = int(eras.cache_limit_gb * 1e9)
        lifecycle.prune_caches(client, plan, volumes, limit=limit, dry_run=dry_run)
    return plan


def needed_images(client: DockerClient, config: EnvironmentConfig, store: StoreImages) -> list[str]:
    """The tags the store's recipes in use need: each repository's current default image, every
    verified recipe's era image and the sandbox image built on it."""
    repos, eras = store.clones, store.recipes
    defaults = [default_image(client, config, repo, clone) for repo, clone in repos.items()]
    on_eras = [sandbox_image(client, repo, repos.get(repo), image) for repo, image in eras]
    return [tag for tag in [*defaults, *(i for _, i in eras), *on_eras] if tag]


def gc(*, everything: bool = False, labels: dict[str, str] | None = None) -> list[dict[str, Any]]:
    return cleanup.gc(DockerClient(), everything=everything, labels=labels)
