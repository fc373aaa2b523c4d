"""What a Rust era build writes over an earlier era's image: the vendoring merged crate by crate
(`rust._merge_vendor`) and modes set only where missing (`rust._readable`), so that what did not
change stays in the lower layer. The commands run in bash on directories of this test, the
image's paths swapped for them."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from prchain.environments.eras.rust import CARGO_HOME, TARGET, VENDOR_NEW, _merge_vendor, _readable


def _crate(root: Path, name: str, checksum: str) -> Path:
    (root / name / "src").mkdir(parents=True)
    (root / name / ".cargo-checksum.json").write_text(checksum)
    (root / name / "src" / "lib.rs").write_text(f"// {name} {checksum}\n")
    return root / name


def _run(command: str, tmp: Path) -> None:
    swaps = ((VENDOR_NEW, "new"), (TARGET, "target"), (CARGO_HOME, "home"))  # target first
    for inside, outside in swaps:
        command = command.replace(inside, str(tmp / outside))
    subprocess.run(["bash", "-euo", "pipefail", "-c", command], check=True)


def test_the_vendor_merge_touches_only_the_crates_that_changed(tmp_path: Path) -> None:
    old, new = tmp_path / "home" / "vendor", tmp_path / "new"
    same = _crate(old, "itoa-1.0.3", '{"package": "a"}')
    _crate(old, "serde-1.0.1", '{"package": "b"}')
    _crate(old, "gone-0.1.0", '{"package": "c"}')
    kept = (same / "src" / "lib.rs").stat()
    _crate(new, "itoa-1.0.3", '{"package": "a"}')
    _crate(new, "serde-1.0.1", '{"package": "b2"}')  # the same name, another content (a patch)
    _crate(new, "fresh-2.0.0", '{"package": "d"}')
    _run(_merge_vendor(), tmp_path)
    assert sorted(p.name for p in old.iterdir()) == ["fresh-2.0.0", "itoa-1.0.3", "serde-1.0.1"]
    now = (same / "src" / "lib.rs").stat()
    assert (now.st_ino, now.st_mtime_ns) == (kept.st_ino, kept.st_mtime_ns)  # never rewritten
    assert (old / "serde-1.0.1" / ".cargo-checksum.json").read_text() == '{"package": "b2"}'
    assert not new.exists()


def test_the_first_vendoring_and_an_empty_one_both_merge(tmp_path: Path) -> None:
    old, new = tmp_path / "home" / "vendor", tmp_path / "new"
    old.mkdir(parents=True)
    new.mkdir()
    _run(_merge_vendor(), tmp_path)  # a crate with no dependencies vendors nothing
    assert list(old.iterdir()) == []
    _crate(new, "itoa-1.0.3", "{}")
    _run(_merge_vendor(), tmp_path)
    assert [p.name for p in old.iterdir()] == ["itoa-1.0.3"]


def test_modes_change_only_on_files_that_lack_them(tmp_path: Path) -> None:
    (tmp_path / "home").mkdir()
    target = tmp_path / "target"
    target.mkdir()
    fine, private, tool = target / "fine.rlib", target / "private.rlib", target / "build-script"
    for path, mode in ((fine, 0o644), (private, 0o600), (tool, 0o700)):
        path.write_text("x")
        os.chmod(path, mode)
    before = fine.stat().st_ctime_ns
    _run(_readable(CARGO_HOME, TARGET), tmp_path)
    assert [p.stat().st_mode & 0o777 for p in (fine, private, tool)] == [0o644, 0o644, 0o755]
    assert fine.stat().st_ctime_ns == before  # untouched: in an image, not copied up
