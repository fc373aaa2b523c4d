"""Images that travel: the stage images a task file names, saved as one archive in which a layer
several images share is stored once, and loaded again on an engine that never built them.

The size is known before anything is written: an image's own layers weigh its size minus its
parent's (the classic builder and `docker commit` record the parent), so the archive holds each
image of the union of the chosen images' ancestries once. An image whose parent is unknown (one
loaded from an archive) counts whole, so the estimate errs high, never low.
"""

from __future__ import annotations

import gzip
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from prchain.core.errors import EnvironmentFailure
from prchain.core.files import check_target
from prchain.environments.docker_client import DockerClient, ImageInfo


@dataclass
class ImageSizes:
    """What the chosen images weigh: archived one by one, and together with shared layers once."""

    images: dict[str, str] = field(default_factory=dict)  # name → content digest (image id)
    separate: int = 0  # the sum of each image's size: one archive per image
    deduplicated: int = 0  # every layer once: one archive for them all
    missing: list[str] = field(default_factory=list)  # names the engine does not have


def _ancestry(client: DockerClient, info: ImageInfo) -> list[ImageInfo]:
    """The image and every image it was built from, as far as the engine knows them."""
    chain = [info]
    while chain[-1].parent and len(chain) < 1000:
        parent = client.image_info(chain[-1].parent)
        if parent is None:
            break
        chain.append(parent)
    return chain


def sizes(client: DockerClient, names: Iterable[str]) -> ImageSizes:
    """The sizes of the images `names` as separate archives and as one deduplicated archive."""
    found = ImageSizes()
    own: dict[str, int] = {}  # image id → bytes its own layers add over its parent
    for name in dict.fromkeys(names):
        info = client.image_info(name)
        if info is None:
            found.missing.append(name)
            continue
        found.images[name] = info.id
        found.separate += info.size
        chain = _ancestry(client, info)
        for image, parent in zip(chain, [*chain[1:], None], strict=True):
            own[image.id] = max(0, image.size - (parent.size if parent is not None else 0))
    found.deduplicated = sum(own.values())
    return found


def save(client: DockerClient, names: list[str], out: str | Path) -> int:
    """Write the images `names` into one archive at `out` (gzip-compressed when it ends in .gz),
    whole or not at all; returns the archive's size in bytes."""
    target = Path(out)
    check_target(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".partial")
    try:
        with os.fdopen(fd, "wb") as raw:
            if target.name.endswith(".gz"):
                with gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=1) as packed:
                    client.save_images(names, packed.write)
            else:
                client.save_images(names, raw.write)
        os.chmod(temp, 0o644)
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
    return target.stat().st_size


def load(client: DockerClient, archive: str | Path) -> list[str]:
    """Load an archive `save` wrote (or any `docker save` archive); the names loaded."""
    path = Path(archive)
    if not path.is_file():
        raise EnvironmentFailure(f"{path} is not an image archive (no such file)")
    # The engine reads gzip itself; the archive is streamed as it is, never whole in memory.
    with path.open("rb") as handle:
        return client.load_images(handle)


def push(client: DockerClient, names: list[str], registry: str) -> dict[str, str]:
    """Push each image as `registry/name` (the registry stores a shared layer once); name → the
    manifest digest. Only the registry's tag is added, and it is removed again."""
    pushed = {}
    for name in names:
        remote = f"{registry.rstrip('/')}/{name}"
        client.tag(name, remote)
        try:
            pushed[name] = client.push(remote)
        finally:
            client.remove_image(remote)  # the image keeps its own name: only the tag goes
    return pushed


def pull(client: DockerClient, names: list[str], registry: str) -> list[str]:
    """Pull each `registry/name` and name it `name` again; the names that could not be pulled."""
    missing = []
    for name in names:
        remote = f"{registry.rstrip('/')}/{name}"
        found = client.pull(remote)
        if found is None:
            missing.append(name)
            continue
        client.tag(found, name)
        client.remove_image(remote)
    return missing
