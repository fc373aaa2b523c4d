"""The one command by which Go and Java builds add what they fetched and compiled to their
repository's cache volume (`add_to_cache`), run by a real bash on real directories.

Before it, Go wrote to the volume in place (`cp -an`, `tar --skip-old-files`): a concurrent build
of the same repository, reading the volume as its module proxy, could read half a zip. Java staged
a copy of its whole local repository on every build. Now each file appears whole, by a hard link
from a staging copy beside the cache, and only the files the cache lacks are staged."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from prchain.environments.eras.build import add_to_cache

SKIP = ("list", "*.lock")


def _run(command: str) -> subprocess.CompletedProcess[str]:
    script = f"set -euo pipefail\n{command}\n"
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True)


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_missing_files_are_added_and_a_cached_file_is_never_rewritten(tmp_path: Path) -> None:
    source, cached = tmp_path / "image" / "download", tmp_path / "volume" / "download"
    _write(
        source,
        {
            "mod/a/@v/v1.0.0.zip": "the build's zip",
            "mod/b/@v/v2.0.0.zip": "a new zip",
            "mod/b/@v/list": "v2.0.0\n",  # a proxy's answer to "which versions": never cached
            "mod/b/@v/v2.0.0.lock": "",
            "odd names/-dash 1.info": "spaces and a leading dash",
        },
    )
    _write(cached, {"mod/a/@v/v1.0.0.zip": "the cached zip"})
    os.utime(source / "mod/b/@v/v2.0.0.zip", (946684800, 946684800))  # 2000-01-01

    done = _run(add_to_cache(str(source), str(cached), skip=SKIP, what="test"))

    assert "not updated" not in done.stdout
    found = sorted(str(p.relative_to(cached)) for p in cached.rglob("*") if p.is_file())
    assert found == ["mod/a/@v/v1.0.0.zip", "mod/b/@v/v2.0.0.zip", "odd names/-dash 1.info"]
    assert (cached / "mod/a/@v/v1.0.0.zip").read_text() == "the cached zip"
    assert (cached / "mod/b/@v/v2.0.0.zip").read_text() == "a new zip"
    assert os.stat(cached / "mod/b/@v/v2.0.0.zip").st_mtime == 946684800  # its date kept
    # The staging copies are gone; the files live on as the cache's links.
    assert list(Path(f"{cached}.incoming").iterdir()) == []
    assert os.stat(cached / "mod/b/@v/v2.0.0.zip").st_nlink == 1


def test_only_the_files_the_cache_lacks_are_staged(tmp_path: Path) -> None:
    """A name the cache holds is not staged. Here the cache holds it as a directory: staged, the
    source's file would fail the link into the cache (a file cannot replace a directory), and the
    command would say "not updated"."""
    source, cached = tmp_path / "m2", tmp_path / "volume" / "m2"
    _write(source, {"org/x/x-1.jar": "x", "org/z/z-1.jar": "z"})
    (cached / "org/x/x-1.jar").mkdir(parents=True)

    done = _run(add_to_cache(str(source), str(cached), what="test"))

    assert "not updated" not in done.stdout
    assert (cached / "org/z/z-1.jar").read_text() == "z"
    assert (cached / "org/x/x-1.jar").is_dir()


def test_a_cache_that_cannot_be_written_costs_a_line_not_the_build(tmp_path: Path) -> None:
    source, cached = tmp_path / "src", tmp_path / "volume" / "cache"
    _write(source, {"a.zip": "a"})
    cached.parent.mkdir()
    cached.write_text("a file where the cache directory should be")

    done = _run(add_to_cache(str(source), str(cached), what="go module"))

    assert "go module cache: not updated" in done.stdout
    assert cached.read_text() == "a file where the cache directory should be"
