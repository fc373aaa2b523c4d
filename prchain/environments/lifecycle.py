"""Which images a store still needs, and removing only the ones it does not.

An image is a candidate for removal only when all of these hold:
- prchain built it (the managed label) and it is not a base image;
- it belongs to a repository of this store (its `prchain.repo` label): another store, user or
  test run sharing the engine keeps its images;
- no recipe in use needs it: the store's recipes name the images they use (`needed`), and each
  of those keeps every image it was built from (an era image under a sandbox image).
Nothing else is ever touched: images without the managed label, other repositories' images, base
images. Docker itself refuses to remove an image a container still uses; such images are reported
as kept.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from typing import Any

from prchain.environments.docker_client import MANAGED_LABEL, DockerClient

NEVER_PRUNED_KINDS = frozenset({"base"})


@dataclass(frozen=True)
class Candidate:
    id: str
    refs: tuple[str, ...]  # its tags (its id when it has none)
    # Bytes its own layers add over its parent (transfer.own_and_total, the accounting of `tasks
    # images save`): what removing it frees, its parent's layers being another image's.
    own: int = 0

    @property
    def name(self) -> str:
        return self.refs[0] if self.refs[0] != self.id else self.id[7:19]


@dataclass
class PrunePlan:
    """What a prune decided, image by image."""

    remove: list[Candidate] = field(default_factory=list)
    needed: list[Candidate] = field(default_factory=list)  # candidates a recipe in use needs
    other_repos: int = 0  # managed images of repositories this store does not know
    removed: list[str] = field(default_factory=list)
    busy: list[str] = field(default_factory=list)  # a container still uses it
    # The store's repositories' cache volumes over the limit, (name, bytes); of them, those
    # removed and those a container still mounts (a build running now).
    caches: list[tuple[str, int]] = field(default_factory=list)
    caches_removed: list[str] = field(default_factory=list)
    caches_busy: list[str] = field(default_factory=list)

    def freed(self, dry_run: bool) -> int:
        """Bytes the removed images (with dry_run, those to remove) held of their own. Every
        image a kept one is built from is kept, so no layer counted here stays in use."""
        gone = set(self.removed)
        return sum(c.own for c in self.remove if dry_run or c.name in gone)


def _candidate(client: DockerClient, image: dict[str, Any]) -> Candidate:
    from prchain.environments.transfer import own_and_total

    tags = tuple(str(t) for t in image.get("tags") or ())
    own = own_and_total(client, str(image["id"]))[0]
    return Candidate(str(image["id"]), tags or (str(image["id"]),), own)


def keep_ids(client: DockerClient, needed: Iterable[str]) -> set[str]:
    """Ids of the needed images and of every image they were built from."""
    keep: set[str] = set()
    for ref in needed:
        if ref:
            keep.update(client.image_ancestors(ref))
    return keep


def plan_prune(client: DockerClient, *, repos: Collection[str], needed: Iterable[str]) -> PrunePlan:
    """Sort this store's managed images into those to remove and those a recipe needs."""
    keep = keep_ids(client, needed)
    plan = PrunePlan()
    for image in client.images({MANAGED_LABEL: "1"}):
        labels: dict[str, str] = image.get("labels") or {}
        if labels.get("prchain.kind", "") in NEVER_PRUNED_KINDS:
            continue
        if labels.get("prchain.repo", "") not in repos:
            plan.other_repos += 1
            continue
        (plan.needed if image["id"] in keep else plan.remove).append(_candidate(client, image))
    return plan


def prune(
    client: DockerClient, *, repos: Collection[str], needed: Iterable[str], dry_run: bool = False
) -> PrunePlan:
    """Remove the images `plan_prune` found no recipe needs (nothing with dry_run)."""
    plan = plan_prune(client, repos=repos, needed=needed)
    if dry_run:
        return plan
    for candidate in plan.remove:
        # Checked first: untagging one of several tags never fails, so a refusal on the last tag
        # would leave an image used by a container with its other tags gone.
        if client.image_in_use(candidate.id):
            plan.busy.append(candidate.name)
        elif all([client.remove_image(ref) for ref in candidate.refs]):
            plan.removed.append(candidate.name)
        else:
            plan.busy.append(candidate.name)
    return plan


def prune_caches(
    client: DockerClient,
    plan: PrunePlan,
    volumes: Iterable[str],
    *,
    limit: int,
    dry_run: bool = False,
) -> None:
    """Remove the cache volumes among `volumes` holding more than `limit` bytes (into `plan`).
    A cache is only ever a head start: the next build fetches and compiles what it lacks. Docker
    refuses to remove a volume a container mounts, so a running build keeps its cache."""
    sizes = client.volume_sizes()
    for name in volumes:
        if sizes.get(name, -1) <= limit:
            continue
        plan.caches.append((name, sizes[name]))
        if not dry_run:
            (plan.caches_removed if client.remove_volume(name) else plan.caches_busy).append(name)
