"""Unit: an image archive read on the host (prchain/environments/archive.py), hostile ones too.

The archives are built here in `docker save`'s layout (manifest.json, a config blob named by its
sha256, layer tars, `repositories`); no engine is involved. tests/attacks/test_image_archive.py
loads real ones into a real engine.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import tarfile
from pathlib import Path
from typing import Any

import pytest

from prchain.core.errors import ArchiveRefused, ConfigError
from prchain.environments import archive
from prchain.environments.archive import check, read, stream
from prchain.verdicts.taskfile import stated_images

NAME = "archive-unit/stage:1"
CONFIG = json.dumps({"rootfs": {"type": "layers", "diff_ids": []}, "history": []}).encode()
IMAGE_ID = f"sha256:{hashlib.sha256(CONFIG).hexdigest()}"
OTHER = b'{"other": true}'
OTHER_ID = f"sha256:{hashlib.sha256(OTHER).hexdigest()}"


def _entry(config: str = f"{IMAGE_ID[7:]}.json", tags: Any = (NAME,), layers: Any = ("l1/layer.tar",)) -> dict[str, Any]:  # fmt: skip
    return {"Config": config, "RepoTags": list(tags), "Layers": list(layers)}


def _archive(
    path: Path,
    manifest: Any = None,
    files: dict[str, bytes] | None = None,
    links: dict[str, str] | None = None,
) -> Path:
    """An archive at `path` holding `files`, symlinks `links` (name → target) and manifest.json."""
    files = {f"{IMAGE_ID[7:]}.json": CONFIG, "l1/layer.tar": b"layer one", **(files or {})}
    if manifest is not None:
        files["manifest.json"] = json.dumps(manifest).encode()
    with tarfile.open(path, "w:gz" if path.name.endswith(".gz") else "w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        for name, target in (links or {}).items():
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, target
            tar.addfile(info)
    return path


def _refusal(path: Path, stated: dict[str, str] | None = None) -> str:
    with pytest.raises(ArchiveRefused) as refused:
        check(read(path), stated or {NAME: IMAGE_ID})
    assert "\n" not in str(refused.value)
    return str(refused.value)


def test_the_honest_archive_gives_its_image_with_its_config_s_digest(tmp_path: Path) -> None:
    for name in ("a.tar", "a.tar.gz"):
        images = check(read(_archive(tmp_path / name, [_entry()])), {NAME: IMAGE_ID})
        assert [(i.image_id, i.layers, i.tags) for i in images] == [
            (IMAGE_ID, ("l1/layer.tar",), (NAME,))
        ]


def test_a_name_is_compared_as_the_engine_resolves_it(tmp_path: Path) -> None:
    path = _archive(tmp_path / "a.tar", [_entry(tags=["docker.io/library/busybox"])])
    assert check(read(path), {"busybox:latest": IMAGE_ID})


@pytest.mark.parametrize(
    ("manifest", "files", "says"),
    [
        (None, {}, "no manifest.json"),
        ([_entry(config="../../etc/passwd")], {}, "not inside it"),
        ([_entry(config="/etc/passwd")], {}, "not inside it"),
        ([_entry(layers=["l2/layer.tar"])], {}, "not inside it"),
        ([_entry(tags=["archive-unit/base:bookworm"])], {}, "carries archive-unit/base:bookworm"),
        ([_entry(tags=[])], {}, None),  # untagged and stated: fine (the caller names it)
        ([_entry(), _entry(config="o.json", tags=[])], {"o.json": OTHER}, "does not name"),
        ([_entry(config="o.json")], {"o.json": OTHER}, f"the task file's is {IMAGE_ID[:19]}"),
        ({"Config": "x"}, {}, "not what `docker save` writes"),
        ([{"Config": 1, "Layers": []}], {}, "never writes"),
        ([_entry(layers=["l1/layer.tar"] * 1001)], {}, "never writes"),
        ([_entry()], {"repositories": b'{"archive-unit/base": {"x": "1"}}'}, "base:x"),
        ([_entry()], {"repositories": b'{"a": 1}'}, "not what `docker save` writes"),
        ([_entry()], {"index.json": b"[1]"}, "not what `docker save` writes"),
        (
            [_entry()],
            {
                "index.json": json.dumps(
                    {
                        "manifests": [
                            {
                                "annotations": {
                                    "io.containerd.image.name": "docker.io/archive-unit/toolchain:rust"
                                }
                            }
                        ]
                    }
                ).encode()
            },  # fmt: skip
            "names archive-unit/toolchain:rust",
        ),
        ([_entry()], {"manifest.json\0x": b"[]"}, "twice"),  # a NUL ends a tar name: a second one
    ],
)
def test_what_the_task_file_does_not_state_is_refused_in_one_line(
    tmp_path: Path, manifest: Any, files: dict[str, bytes], says: str | None
) -> None:
    path = _archive(tmp_path / "a.tar", manifest, files)
    if says is None:
        assert check(read(path), {NAME: IMAGE_ID})
    else:
        assert says in _refusal(path)


def test_links_resolve_only_to_a_file_inside_the_archive(tmp_path: Path) -> None:
    inside = _archive(tmp_path / "in.tar", [_entry(layers=["l2/layer.tar"])], links={"l2/layer.tar": "../l1/layer.tar"})  # fmt: skip
    assert check(read(inside), {NAME: IMAGE_ID})[0].layers == ("l1/layer.tar",)
    for target in ("../../etc/shadow", "/etc/shadow", "layer.tar"):  # out, absolute, itself
        path = _archive(tmp_path / "out.tar", [_entry(layers=["l2/layer.tar"])], links={"l2/layer.tar": target})  # fmt: skip
        assert "inside it" in _refusal(path)


def test_a_name_given_twice_or_past_a_bound_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "twice.tar"
    with tarfile.open(path, "w") as tar:
        for data in (b"[]", json.dumps([_entry()]).encode()):
            info = tarfile.TarInfo("manifest.json")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    assert "twice" in _refusal(path)
    monkeypatch.setattr(archive, "MAX_JSON", 10)
    assert "over 10" in _refusal(_archive(tmp_path / "big.tar", [_entry()]))
    monkeypatch.setattr(archive, "MAX_MEMBERS", 2)
    assert "over 2 entries" in _refusal(_archive(tmp_path / "many.tar", [_entry()]))


def test_a_file_that_is_no_archive_is_one_line(tmp_path: Path) -> None:
    for data in (b"not a tar at all", gzip.compress(b"x" * 1000)[:-8]):
        path = tmp_path / "bad.tar"
        path.write_bytes(data)
        assert "image archive" in _refusal(path)


def _members(data: bytes) -> dict[str, bytes]:
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar if m.isfile()}  # type: ignore[union-attr]


def test_the_engine_gets_only_the_stated_image_untagged(tmp_path: Path) -> None:
    extra = {"o.json": OTHER, "l9/layer.tar": b"attacker", "repositories": b"{}"}
    manifest = [_entry(), _entry(config="o.json", tags=[], layers=["l9/layer.tar"])]
    path = _archive(tmp_path / "a.tar.gz", manifest, extra)
    mine = [i for i in read(path).images if i.image_id == IMAGE_ID]
    sent = _members(b"".join(stream(path, mine)))
    assert sorted(sent) == sorted([f"{IMAGE_ID[7:]}.json", "l1/layer.tar", "manifest.json"])
    assert json.loads(sent["manifest.json"]) == [
        {"Config": f"{IMAGE_ID[7:]}.json", "RepoTags": None, "Layers": ["l1/layer.tar"]}
    ]


def test_a_config_changed_after_the_check_ends_the_stream_before_its_manifest(
    tmp_path: Path,
) -> None:
    path = _archive(tmp_path / "a.tar", [_entry()])
    images = read(path).images
    _archive(path, [_entry()], {f"{IMAGE_ID[7:]}.json": OTHER})  # swapped under the same name
    with pytest.raises(ArchiveRefused, match="changed while it was loaded"):
        b"".join(stream(path, images))


def _chain(*envs: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"stages": [{"environment": env} for env in envs]}]


def test_a_task_file_states_one_digest_per_image_or_is_refused() -> None:
    good = {"image": NAME, "image_id": IMAGE_ID}
    assert stated_images("t.jsonl", _chain(good, good, {"image": ""})) == {NAME: IMAGE_ID}
    with pytest.raises(ConfigError, match="states no content digest"):
        stated_images("t.jsonl", _chain({"image": NAME, "image_id": ""}))
    with pytest.raises(ConfigError, match="two digests"):
        stated_images("t.jsonl", _chain(good, {"image": NAME, "image_id": OTHER_ID}))
