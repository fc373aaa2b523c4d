"""Issue 77, class 3: `tasks images load` trusted every tag in an archive.

An archive that carried, beside the task's image, another image under a tag the engine already
had (another repository's era image, a base image, a toolchain layer) replaced that image
silently; prchain reuses era images by tag, so that repository's next rollouts and clean rooms
ran in the attacker's image. Now an archive loads only what the task file names, each image
checked against the name and content digest it states, and an existing image is never replaced.

Every image here is a tiny `docker import` of a one-file tar, under this run's own made-up
repository names (never a name the product uses), and only those are removed afterwards.
"""

from __future__ import annotations

import io
import json
import tarfile
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from prchain.cli import main

pytestmark = [pytest.mark.docker]
RUN = uuid.uuid4().hex[:8]
LABEL = {"prchain-test.archive": RUN}  # not a prchain label: marks what this module made
TASK = f"archive-test-{RUN}/stage:1"  # the task file's stage image
VICTIM = f"archive-test-{RUN}/other-era:1"  # an image the engine already has, of "another repo"


@dataclass
class Made:
    client: Any
    ids: set[str]

    def image(self, name: str, content: str) -> str:
        """A one-file image under `name`; its id (import dates the config, so each is new)."""
        found = self.client.import_tar(iter([_tar(content)]), name, LABEL)
        self.ids.add(found)
        return str(found)

    def id_of(self, name: str) -> str | None:
        info = self.client.image_info(name)
        return info.id if info is not None else None

    def save(self, names: list[str], out: Path) -> Path:
        with out.open("wb") as handle:
            self.client.save_images(names, handle.write)
        return out


def _tar(content: str) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        data = content.encode()
        member = tarfile.TarInfo("content.txt")
        member.size = len(data)
        tar.addfile(member, io.BytesIO(data))
    return buffer.getvalue()


@pytest.fixture
def made(docker_client: Any) -> Iterator[Made]:
    """Images this test makes or loads; only they are removed afterwards (by tag, then by id)."""
    found = Made(docker_client, set())
    yield found
    for image in docker_client.images(LABEL):
        for ref in image["tags"]:
            docker_client.remove_image(ref)
        found.ids.add(image["id"])
    for image_id in found.ids:
        docker_client.remove_image(image_id)


def _task_file(path: Path, name: str, image_id: str) -> Path:
    """A runnable task file (the chain form `tasks export --runnable` writes) whose one stage
    runs in `name`, stated with its content digest."""
    env = {
        "runnable": True,
        "image": name,
        "image_id": image_id,
        "era_image": "",
        "era_image_id": "",
    }
    chain = {"chain_id": 1, "stages": [{"idx": 1, "instance_id": "x__y-1", "environment": env}]}
    path.write_text(json.dumps(chain) + "\n")
    return path


def _load(archive: Path, tasks: Path) -> Result:
    args = ["tasks", "images", "load", str(archive), "--tasks", str(tasks)]
    return CliRunner().invoke(main, args, catch_exceptions=False)


def _lines(result: Result) -> list[str]:
    return [line for line in result.output.splitlines() if line.strip()]


def test_an_extra_image_under_an_existing_tag_is_refused_and_replaces_nothing(
    made: Made, tmp_path: Path
) -> None:
    task_id = made.image(TASK, "the task's stage image")
    made.image(VICTIM, "the attacker's image")
    archive = made.save([TASK, VICTIM], tmp_path / "images.tar")
    made.client.remove_image(VICTIM)
    made.client.remove_image(TASK)
    victim_id = made.image(VICTIM, "another repository's era image, built here")
    result = _load(archive, _task_file(tmp_path / "tasks.jsonl", TASK, task_id))
    assert result.exit_code == 1, result.output
    assert len(_lines(result)) == 1 and VICTIM in result.output, result.output
    assert made.id_of(VICTIM) == victim_id
    assert made.id_of(TASK) is None  # refused whole: not even the named image is loaded


def test_the_named_image_with_other_content_is_refused(made: Made, tmp_path: Path) -> None:
    task_id = made.image(TASK, "the task's stage image")
    made.client.remove_image(TASK)
    forged_id = made.image(TASK, "the attacker's image under the task's name")
    archive = made.save([TASK], tmp_path / "images.tar")
    made.client.remove_image(TASK)
    result = _load(archive, _task_file(tmp_path / "tasks.jsonl", TASK, task_id))
    assert result.exit_code == 1, result.output
    assert len(_lines(result)) == 1 and TASK in result.output, result.output
    assert made.id_of(TASK) is None and made.id_of(forged_id) is None


def test_an_existing_tag_is_never_replaced_by_the_named_image(made: Made, tmp_path: Path) -> None:
    task_id = made.image(TASK, "the task's stage image")
    archive = made.save([TASK], tmp_path / "images.tar")
    made.client.remove_image(TASK)
    local_id = made.image(TASK, "what this engine already calls by the task's name")
    result = _load(archive, _task_file(tmp_path / "tasks.jsonl", TASK, task_id))
    assert result.exit_code == 1, result.output
    assert len(_lines(result)) == 1 and TASK in result.output, result.output
    assert made.id_of(TASK) == local_id


def test_the_honest_archive_loads_the_named_image_under_its_name(
    made: Made, tmp_path: Path
) -> None:
    task_id = made.image(TASK, "the task's stage image")
    archive = made.save([TASK], tmp_path / "images.tar")
    made.client.remove_image(TASK)
    result = _load(archive, _task_file(tmp_path / "tasks.jsonl", TASK, task_id))
    assert result.exit_code == 0, result.output
    assert made.id_of(TASK) == task_id


def test_an_existing_identical_image_is_kept_not_loaded_again(made: Made, tmp_path: Path) -> None:
    task_id = made.image(TASK, "the task's stage image")
    archive = made.save([TASK], tmp_path / "images.tar")
    result = _load(archive, _task_file(tmp_path / "tasks.jsonl", TASK, task_id))
    assert result.exit_code == 0, result.output
    assert "already" in result.output and made.id_of(TASK) == task_id
