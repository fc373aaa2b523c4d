"""Finding 4 of issue 23: `prchain report DIR` deleted whatever was in DIR/chains and DIR/assets
(`prchain report .` in a checkout deleted the `prchain/chains/` package), a report killed mid-write left an
index with dead links, and an unwritable place printed a traceback. The site is now written into
a fresh directory beside DIR and swapped in whole; DIR must be new, empty or an earlier report."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from prchain.cli import main
from prchain.core.files import REPORT_MARKER
from tests.report.test_report_store import _mined_with_chains


def _report(out: Path | str, url: str) -> Result:
    return CliRunner().invoke(main, ["report", str(out), "--db", url])


def _one_line(result: Result, fragment: str) -> None:
    errors = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert result.exit_code != 0 and len(errors) == 1 and fragment in errors[0], result.output
    assert "Traceback" not in result.output


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_a_directory_of_the_users_own_files_is_refused_untouched(
    tmp_path: Path, sqlite_url: str
) -> None:
    _mined_with_chains(tmp_path, sqlite_url)
    checkout = tmp_path / "checkout"  # `prchain report .` in a source checkout
    (checkout / "chains").mkdir(parents=True)
    (checkout / "chains" / "__init__.py").write_text("# the user's package\n")
    (checkout / "assets").mkdir()
    (checkout / "assets" / "logo.svg").write_text("<svg/>")
    before = _tree(checkout)
    _one_line(_report(checkout, sqlite_url), "not written by prchain")
    assert _tree(checkout) == before
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".checkout")) == []


def test_reports_replace_their_own_directory_whole(tmp_path: Path, sqlite_url: str) -> None:
    _mined_with_chains(tmp_path, sqlite_url)
    out = tmp_path / "site"
    out.mkdir()  # an empty directory is fine
    assert _report(out, sqlite_url).exit_code == 0
    assert (out / REPORT_MARKER).is_file() and (out / "index.html").is_file()
    (out / "notes.txt").write_text("left by the user in the report")
    again = _report(out, sqlite_url)
    assert again.exit_code == 0, again.output
    assert not (out / "notes.txt").exists()  # a report directory is replaced whole, as documented
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".site")] == []


def test_a_killed_writer_leaves_the_previous_report_and_its_leftovers_go(
    tmp_path: Path, sqlite_url: str
) -> None:
    _mined_with_chains(tmp_path, sqlite_url)
    out = tmp_path / "site"
    assert _report(out, sqlite_url).exit_code == 0
    before = _tree(out)
    killed = subprocess.run(  # a writer that dies halfway through its pages
        [
            sys.executable,
            "-c",
            "import os, signal, sys\n"
            "from prchain.core.files import atomic_directory\n"
            "with atomic_directory(sys.argv[1]) as work:\n"
            "    (work / 'index.html').write_text('half')\n"
            "    os.kill(os.getpid(), signal.SIGKILL)\n",
            str(out),
        ],
        check=False,
    )
    assert killed.returncode == -9
    assert _tree(out) == before  # the old report, whole
    leftovers = [p for p in tmp_path.iterdir() if p.name.startswith(".site")]
    assert len(leftovers) == 1
    assert _report(out, sqlite_url).exit_code == 0
    assert [p for p in tmp_path.iterdir() if p.name.startswith(".site")] == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_an_unwritable_place_is_one_line(tmp_path: Path, sqlite_url: str) -> None:
    _mined_with_chains(tmp_path, sqlite_url)
    locked = tmp_path / "locked"
    locked.mkdir(mode=0o555)
    _one_line(_report(locked / "site", sqlite_url), "cannot write")


def test_output_errors_are_one_line(tmp_path: Path, sqlite_url: str) -> None:
    _mined_with_chains(tmp_path, sqlite_url)
    a_file = tmp_path / "site.html"
    a_file.write_text("mine")
    refused = _report(a_file, sqlite_url)  # click refuses a file as OUT_DIR: usage, one line
    assert refused.exit_code == 2 and "is a file" in refused.output
    _one_line(_report(a_file / "site", sqlite_url), "cannot write")  # parent is a file
    _one_line(_report("/proc/prchain-site", sqlite_url), "cannot write")  # no such place to write
    assert a_file.read_text() == "mine"
