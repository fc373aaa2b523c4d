"""An image archive read on the host, before any byte of it reaches the engine (issue 77, class 3).

`docker load` tags every image an archive names and moves a tag the engine already has onto the
archive's image. prchain reuses era images by tag, so an archive that carried, beside a task's
image, another repository's era image (or a base or toolchain layer) under its existing tag made
that repository's next rollouts and clean rooms run in the archive's image. So an archive is
read here first, `docker save`'s layout: `manifest.json` lists each image's config blob (whose
sha256 is the image id) and layers; `repositories` and the OCI `index.json` name images too.
`check` refuses any image or name the task file does not state, and `stream` gives the engine a
new archive of only the stated images with no tag at all: the caller tags them, and only names
the engine does not have yet.

What is read is bounded, since the archive may be hostile: the number of members, each naming
file and config blob, the images and layers a manifest lists; a path must stay inside the
archive, a link is followed only to a regular file inside it, and a name given twice is refused.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import posixpath
import tarfile
import threading
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, TypeGuard

from prchain.core.errors import ArchiveRefused

MAX_MEMBERS = 200_000  # a save of a dozen era images holds a few thousand
MAX_JSON = 4 << 20  # manifest.json, index.json, repositories
MAX_CONFIG = 16 << 20  # an image config; its history grows with its layers
MAX_IMAGES = 1000
MAX_LAYERS = 1000  # overlay2 itself stops at 128
MAX_LINK_HOPS = 8
NAMING = ("manifest.json", "index.json", "repositories")
CHUNK = 1 << 20


@dataclass(frozen=True)
class Member:
    """One entry of the archive as far as loading it needs."""

    is_file: bool
    link: str  # a link's target, as a path inside the archive ("" for anything else)
    digest: str  # sha256 of a regular file up to MAX_CONFIG bytes ("" for anything else)


@dataclass(frozen=True)
class ArchivedImage:
    image_id: str  # "sha256:" + the config blob's sha256: what the engine will call it
    config: str  # the config blob's path in the archive
    layers: tuple[str, ...]  # each layer's path, links resolved to the regular file
    tags: tuple[str, ...]  # its RepoTags, as references (`reference`)


@dataclass(frozen=True)
class Contents:
    images: tuple[ArchivedImage, ...]
    names: frozenset[str]  # every name the archive gives an image, wherever it gives it


def reference(name: str) -> str:
    """A name as the engine resolves it: Docker Hub's implicit parts dropped, `:latest` added."""
    for prefix in ("docker.io/", "index.docker.io/", "library/"):
        name = name.removeprefix(prefix)
    last = name.rsplit("/", 1)[-1]
    return name if ":" in last or "@" in last else f"{name}:latest"


def short(image_id: str) -> str:
    return image_id[:19]


def read(path: Path) -> Contents:
    """What the archive at `path` (plain or gzip tar) holds and names; ArchiveRefused when it is
    not an archive `docker save` could have written or breaks a bound."""
    members, naming = _scan(path)
    if "manifest.json" not in naming:
        raise ArchiveRefused(f"{path} has no manifest.json: not an archive `docker save` wrote")
    entries = _json(naming, "manifest.json", list)
    if len(entries) > MAX_IMAGES:
        raise ArchiveRefused(f"{path} lists {len(entries):,} images, over {MAX_IMAGES}")
    images = tuple(_image(members, entry) for entry in entries)
    names = {tag for image in images for tag in image.tags}
    names |= _repositories(naming) | _index_names(naming)
    return Contents(images, frozenset(names))


def check(contents: Contents, stated: Mapping[str, str]) -> list[ArchivedImage]:
    """The archive's images (each once), when every image and name in it is one `stated` (name →
    image id) states; otherwise ArchiveRefused naming the first that is not."""
    wanted = {reference(name): image_id for name, image_id in stated.items()}
    found: dict[str, ArchivedImage] = {}
    for image in contents.images:
        for tag in image.tags:
            _check_tag(tag, image.image_id, wanted)
        if image.image_id not in wanted.values():
            raise ArchiveRefused(
                f"the archive holds an image the task file does not name ({short(image.image_id)})"
            )
        found.setdefault(image.image_id, image)
    unnamed = sorted(contents.names - wanted.keys())
    if unnamed:
        raise ArchiveRefused(f"the archive names {unnamed[0]}, which the task file does not name")
    return list(found.values())


def _check_tag(tag: str, image_id: str, wanted: Mapping[str, str]) -> None:
    if tag not in wanted:
        raise ArchiveRefused(
            f"the archive carries {tag} ({short(image_id)}), which the task file does not name"
        )
    if wanted[tag] != image_id:
        raise ArchiveRefused(
            f"the archive's {tag} is {short(image_id)}, the task file's is {short(wanted[tag])}"
        )


# ---- reading -----------------------------------------------------------------------------------


def _open(path: Path) -> tarfile.TarFile:
    try:
        return tarfile.open(path, mode="r|*")  # a stream: gzip is read once, never seeked
    except (tarfile.TarError, OSError) as exc:
        raise ArchiveRefused(f"{path} is not an image archive ({exc})") from None


def _inside(raw: str, base: str = "") -> str:
    """`raw` (relative to the directory `base`) as a path inside the archive; "" when it leaves."""
    if raw.startswith("/") or "\\" in raw:
        return ""
    name = posixpath.normpath(posixpath.join(base, raw))
    return "" if name in (".", "..") or name.startswith("../") else name


def _scan(path: Path) -> tuple[dict[str, Member], dict[str, bytes]]:
    """Every member's kind, link and digest, and the naming files' bytes, in one pass."""
    members: dict[str, Member] = {}
    naming: dict[str, bytes] = {}
    with _open(path) as tar:
        try:
            for info in tar:
                name = _inside(info.name)
                if not name:
                    continue  # never used: nothing outside the archive is sent on
                if name in members:  # which of the two would the engine read? neither
                    raise ArchiveRefused(f"{path} holds {name[:80]} twice")
                if len(members) >= MAX_MEMBERS:
                    raise ArchiveRefused(f"{path} holds over {MAX_MEMBERS:,} entries")
                members[name] = _member(path, tar, info, name, naming)
        except (tarfile.TarError, EOFError, OSError) as exc:
            raise ArchiveRefused(f"{path} is not a whole image archive ({exc})") from None
    return members, naming


def _member(
    path: Path, tar: tarfile.TarFile, info: tarfile.TarInfo, name: str, naming: dict[str, bytes]
) -> Member:
    if info.issym():
        return Member(False, _inside(info.linkname, posixpath.dirname(name)), "")
    if info.islnk():  # a hard link names its target from the archive's root
        return Member(False, _inside(info.linkname), "")
    if name in NAMING and info.size > MAX_JSON:
        raise ArchiveRefused(f"{path}: its {name} is {info.size:,} bytes, over {MAX_JSON:,}")
    if not info.isfile() or info.size > MAX_CONFIG:
        return Member(info.isfile(), "", "")
    data = _bytes(tar, info)
    if name in NAMING:
        naming[name] = data
    return Member(True, "", hashlib.sha256(data).hexdigest())


def _bytes(tar: tarfile.TarFile, info: tarfile.TarInfo) -> bytes:
    handle = tar.extractfile(info)
    return handle.read(MAX_CONFIG + 1) if handle is not None else b""


def _json(naming: Mapping[str, bytes], name: str, kind: type) -> Any:
    """The naming file `name` decoded; an empty `kind` when the archive has none."""
    if name not in naming:
        return kind()
    try:
        found = json.loads(naming[name])
    except (ValueError, RecursionError):
        found = None
    if not isinstance(found, kind):
        raise ArchiveRefused(f"the archive's {name} is not what `docker save` writes")
    return found


def _image(members: Mapping[str, Member], entry: Any) -> ArchivedImage:
    """One manifest entry, its config hashed and its paths resolved inside the archive."""
    config, layers, tags = _entry_fields(entry)
    config_path = _file(members, config, "image config")
    digest = members[config_path].digest
    if not digest:
        raise ArchiveRefused(f"the archive's image config {config} is over {MAX_CONFIG:,} bytes")
    return ArchivedImage(
        f"sha256:{digest}",
        config_path,
        tuple(_file(members, layer, "layer") for layer in layers),
        tuple(reference(tag) for tag in tags),
    )


def _entry_fields(entry: Any) -> tuple[str, list[str], list[str]]:
    if isinstance(entry, dict):
        config, layers, tags = entry.get("Config"), entry.get("Layers"), entry.get("RepoTags")
        tags = [] if tags is None else tags
        if isinstance(config, str) and _strings(layers, MAX_LAYERS) and _strings(tags, MAX_IMAGES):
            return config, layers, tags
    shown = json.dumps(entry)[:80]
    raise ArchiveRefused(
        f"the archive's manifest.json has an entry `docker save` never writes: {shown}"
    )


def _strings(value: Any, most: int) -> TypeGuard[list[str]]:
    return isinstance(value, list) and len(value) <= most and all(isinstance(v, str) for v in value)


def _file(members: Mapping[str, Member], raw: str, what: str) -> str:
    """The regular file the manifest's path `raw` is, following links inside the archive."""
    name = _inside(raw)
    for _ in range(MAX_LINK_HOPS):
        member = members.get(name) if name else None
        if member is None:
            raise ArchiveRefused(f"the archive's {what} {raw[:80]!r} is not inside it")
        if member.is_file:
            return name
        name = member.link
    raise ArchiveRefused(f"the archive's {what} {raw[:80]!r} is not a file inside it")


def _repositories(naming: Mapping[str, bytes]) -> set[str]:
    """The names of the legacy `repositories` file: {repository: {tag: layer id}}."""
    found = _json(naming, "repositories", dict)
    if not all(isinstance(tags, dict) for tags in found.values()):
        raise ArchiveRefused("the archive's repositories is not what `docker save` writes")
    return {reference(f"{repo}:{tag}") for repo, tags in found.items() for tag in tags}


def _index_names(naming: Mapping[str, bytes]) -> set[str]:
    """The names the OCI index gives its manifests (a Docker 25+ save writes one)."""
    manifests = _json(naming, "index.json", dict).get("manifests") or []
    names = set()
    for manifest in manifests if isinstance(manifests, list) else [None]:
        notes = manifest.get("annotations") if isinstance(manifest, dict) else None
        if not isinstance(notes, dict | None):
            raise ArchiveRefused("the archive's index.json is not what `docker save` writes")
        name = (notes or {}).get("io.containerd.image.name")
        if name:
            names.add(reference(str(name)))
    return names


# ---- the archive the engine gets ---------------------------------------------------------------


def stream(path: Path, images: Sequence[ArchivedImage]) -> Iterator[bytes]:
    """A `docker save` archive of only `images`, untagged, made from `path` as it is sent (never
    whole in memory or on disk). A config whose bytes changed since `read` ends it before its
    manifest.json, which comes last, so the engine loads nothing of it."""
    read_end, write_end = os.pipe()
    failed: list[BaseException] = []

    def produce() -> None:
        try:
            with os.fdopen(write_end, "wb") as sink:
                _write(path, images, sink)
        except BaseException as exc:  # handed to the consumer below, whatever it was
            failed.append(exc)

    writer = threading.Thread(target=produce, name="archive-filter", daemon=True)
    writer.start()
    with os.fdopen(read_end, "rb") as source:
        while chunk := source.read(CHUNK):
            yield chunk
    writer.join()
    if failed:
        raise failed[0]


def _write(path: Path, images: Sequence[ArchivedImage], sink: IO[bytes]) -> None:
    configs = {image.config: image.image_id for image in images}
    keep = set(configs) | {layer for image in images for layer in image.layers}
    with _open(path) as source, tarfile.open(fileobj=sink, mode="w|") as out:
        for info in source:
            name = _inside(info.name)
            if name in keep and info.isfile():
                keep.discard(name)  # each once, as read, however often a manifest names it
                _copy(source, info, name, configs.get(name), out)
        entries = [{"Config": i.config, "RepoTags": None, "Layers": list(i.layers)} for i in images]
        _add(out, "manifest.json", json.dumps(entries).encode())


def _copy(
    source: tarfile.TarFile,
    info: tarfile.TarInfo,
    name: str,
    image_id: str | None,
    out: tarfile.TarFile,
) -> None:
    if image_id is None:
        entry = tarfile.TarInfo(name)
        entry.size, entry.mode, entry.mtime = info.size, 0o644, info.mtime
        out.addfile(entry, source.extractfile(info))
        return
    data = _bytes(source, info)
    if f"sha256:{hashlib.sha256(data).hexdigest()}" != image_id:
        raise ArchiveRefused(f"the archive's {name} changed while it was loaded; nothing loaded")
    _add(out, name, data)


def _add(out: tarfile.TarFile, name: str, data: bytes) -> None:
    entry = tarfile.TarInfo(name)
    entry.size, entry.mode = len(data), 0o644
    out.addfile(entry, io.BytesIO(data))
