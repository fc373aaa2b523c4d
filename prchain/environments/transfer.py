"""Images that travel: the stage images a task file names, saved as one archive in which a layer
several images share is stored once, and loaded again on an engine that never built them.

The size is known before anything is written: an image's own layers weigh its size minus its
parent's (the classic builder and `docker commit` record the parent), so the archive holds each
image of the union of the chosen images' ancestries once. An image whose parent is unknown (one
loaded from an archive) counts whole, so the estimate errs high, never low.

Loading trusts nothing the archive says about names: prchain.environments.archive reads it first,
and only the images the task file names, by name and content digest, reach the engine.
"""

from __future__ import annotations

import gzip
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from prchain.core.errors import ArchiveRefused, EnvironmentFailure
from prchain.core.files import check_target
from prchain.environments.archive import check, read, short, stream
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


def own_and_total(client: DockerClient, name: str) -> tuple[int, int]:
    """(bytes the image's own layers add over its parent, its whole size), by the accounting of
    `sizes`: an era image's own content over the base or toolchain layer it shares with other
    eras. (0, 0) when the engine lacks it; an image whose parent is unknown counts whole."""
    info = client.image_info(name)
    if info is None:
        return 0, 0
    parent = client.image_info(info.parent) if info.parent else None
    return max(0, info.size - (parent.size if parent is not None else 0)), info.size


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


@dataclass
class Loading:
    """What `load` did with each image the task file names and the archive holds."""

    loaded: list[str] = field(default_factory=list)  # names given to an image the archive brought
    kept: list[str] = field(default_factory=list)  # already in the engine as the file states


def load(client: DockerClient, archive: str | Path, stated: dict[str, str]) -> Loading:
    """Load from an archive `save` wrote only the images `stated` (name → image id) names, each
    checked against its id, and name them; nothing else of the archive reaches the engine, and
    an image the engine has is never replaced (ArchiveRefused, before anything is loaded)."""
    path = Path(archive)
    if not path.is_file():
        raise EnvironmentFailure(f"{path} is not an image archive (no such file)")
    images = check(read(path), stated)
    present = {image.image_id for image in images}
    names = {name: image_id for name, image_id in stated.items() if image_id in present}
    done = Loading()
    for name, image_id in names.items():
        if _kept(client, name, image_id):
            done.kept.append(name)
    absent = [image for image in images if client.image_info(image.image_id) is None]
    if absent:  # untagged, so the engine moves no tag; the names follow below
        client.load_images(stream(path, absent))
    for name, image_id in names.items():
        if name not in done.kept:
            client.tag(image_id, name)
            done.loaded.append(name)
    return done


def _kept(client: DockerClient, name: str, image_id: str) -> bool:
    """Whether the engine already has `name` as `image_id`; ArchiveRefused when it has it as
    another image, which an archive must never replace (another repository's rollouts use it)."""
    info = client.image_info(name)
    if info is None:
        return False
    if info.id != image_id:
        raise ArchiveRefused(
            f"{name} is already in this engine as {short(info.id)}; the archive's "
            f"({short(image_id)}) does not replace it, and nothing was loaded"
        )
    return True


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
