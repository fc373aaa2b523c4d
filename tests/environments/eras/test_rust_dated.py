"""Rust eras without a Cargo.lock resolve against crates.io's index as of the era's date
(prchain/environments/eras/rust/dated.py): the dated view of a crates.io look-alike on 127.0.0.1
(tests/support/crates_index), its cache, the host's real cargo resolving through it, the plans
that say which resolve an era got, and git stand-ins chosen as of the date.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from prchain.environments.eras.config import ErasConfig
from prchain.environments.eras.ecosystems import ecosystem
from prchain.environments.eras.manifests import Snapshot
from prchain.environments.eras.rust import dated
from prchain.environments.eras.rust.standins import choose
from tests.support.crates_index import CratesIndex, publish

CARGO = shutil.which("cargo") or str(Path.home() / ".cargo/bin/cargo")
CUTOFF = "2021-01-01T00:00:00Z"
LIB = {"src/lib.rs": "pub fn value() -> u32 { 1 }\n"}


def _manifest(name: str, version: str, edition: str = "2018") -> dict[str, str]:
    toml = f'[package]\nname = "{name}"\nversion = "{version}"\nedition = "{edition}"\n'
    return {"Cargo.toml": toml, **LIB}


@pytest.fixture
def index(tmp_path: Path) -> Iterator[tuple[CratesIndex, dict[str, str]]]:
    """widget 1.0.0 (2018), 1.1.0 (2020), 1.2.0 (2024, edition 2024); ancient 0.1.0 (no time);
    newborn 0.1.0 (2024 only); retired 0.2.0 and 0.2.1 (2019, both yanked). Yields the index and
    each release's line by `name@version`."""
    root = tmp_path / "registry"
    lines = {}
    with CratesIndex(root) as served:
        for name, version, when, edition in (
            ("widget", "1.0.0", "2018-03-01T10:00:00Z", "2018"),
            ("widget", "1.1.0", "2020-12-31T23:59:59Z", "2018"),
            ("widget", "1.2.0", "2024-05-01T00:00:00Z", "2024"),
            ("ancient", "0.1.0", "", "2015"),
            ("newborn", "0.1.0", "2024-02-01T00:00:00Z", "2021"),
        ):
            files = _manifest(name, version, edition)
            lines[f"{name}@{version}"] = publish(root, name, version, files, pubtime=when)
        for version in ("0.2.0", "0.2.1"):  # a series yanked whole (after the date, or not)
            files = _manifest("retired", version)
            lines[f"retired@{version}"] = publish(
                root, "retired", version, files, yanked=True, pubtime="2019-01-01T00:00:00Z"
            )
        yield served, lines


@pytest.fixture
def view(
    index: tuple[CratesIndex, dict[str, str]], tmp_path: Path
) -> Iterator[tuple[str, dict[str, str]]]:
    """The dated view (at CUTOFF) of the look-alike, served; yields its URL and the lines."""
    served, lines = index
    running = dated.server(f"{served.url}/index", CUTOFF, str(tmp_path / "cache"))
    threading.Thread(target=running.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{running.server_address[1]}", lines
    finally:
        running.shutdown()
        running.server_close()


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=30) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def _snap(files: dict[str, str], when: str = "2020-06-01T12:00:00") -> Snapshot:
    date = datetime.fromisoformat(when).replace(tzinfo=UTC)
    return Snapshot("0" * 40, date, files, sorted(files))


# ---- the view -----------------------------------------------------------------------------------


def test_lines_published_after_the_cutoff_go_and_the_rest_stay_byte_for_byte() -> None:
    text = (
        '{"name":"a","vers":"1.0.0","pubtime":"2020-12-31T23:59:59Z"}\n'
        '{"name":"a","vers":"1.0.1"}\n'
        '{"name":"a","vers":"1.1.0","pubtime":"2021-01-01T00:00:00Z"}\n'
        '{"name":"a","vers":"2.0.0","pubtime":"2021-01-01T00:00:01Z"}\n'
        '{"name":"a", "vers":"2.0.1", "pubtime": "2025-01-01T00:00:00.123+00:00"}'
    )
    kept = dated.dated(text, dated.moment(CUTOFF))
    assert kept == "".join(text.splitlines(keepends=True)[:3])
    assert (
        dated.dated(text, dated.moment("2014-01-01T00:00:00Z")) == '{"name":"a","vers":"1.0.1"}\n'
    )


def test_a_series_yanked_whole_is_served_unyanked_and_one_release_standing_keeps_it_yanked() -> (
    None
):
    """tokio 0.2 (2020) asks `security-framework = "0.2"`, every 0.2 release of which is yanked
    now: cargo found nothing to resolve to and all five of its eras stayed unverified."""
    text = (
        '{"name":"s","vers":"0.2.0","yanked":true,"pubtime":"2018-03-24T16:22:44Z"}\n'
        '{"name":"s", "vers": "0.2.4", "yanked": true, "pubtime":"2019-03-02T16:31:55Z"}\n'
        '{"name":"s","vers":"0.3.3","yanked":true,"pubtime":"2019-11-06T16:18:34Z"}\n'
        '{"name":"s","vers":"0.3.4","yanked":false,"pubtime":"2019-11-21T23:42:11Z"}\n'
        '{"name":"s","vers":"0.0.7","yanked":true}\n'
        '{"name":"s","vers":"1.0.0-beta.1","yanked":true,"pubtime":"2020-01-01T00:00:00Z"}\n'
        '{"name":"s","vers":"2.0.0","yanked":true,"pubtime":"2020-06-01T00:00:00Z"}\n'
        '{"name":"s","vers":"2.1.0","yanked":false,"pubtime":"2022-01-01T00:00:00Z"}\n'
    )
    served = dated.dated(text, dated.moment(CUTOFF)).splitlines()
    yanked = {json.loads(line)["vers"]: json.loads(line)["yanked"] for line in served}
    assert yanked == {
        "0.2.0": False,  # the whole 0.2 series was yanked: served as the era resolved it
        "0.2.4": False,
        "0.3.3": True,  # 0.3.4 stands: cargo takes it, as it did then
        "0.3.4": False,
        "0.0.7": False,  # 0.0.7 is a series of its own
        "1.0.0-beta.1": True,  # a pre-release is no series: never chosen by a plain requirement
        "2.0.0": False,  # 2.1.0 came after the cutoff
    }
    assert served[2:4] == text.splitlines()[2:4]  # the rest byte for byte
    assert [dated.series(v) for v in ("1.4.2", "0.2.4", "0.0.3", "1.0.0-rc.1")] == [
        (1,),
        (0, 2),
        (0, 0, 3),
        None,
    ]


def test_the_view_serves_each_crate_as_of_the_cutoff(
    view: tuple[str, dict[str, str]], index: tuple[CratesIndex, dict[str, str]]
) -> None:
    url, lines = view
    served, _ = index
    assert _get(f"{url}/config.json") == (200, json.dumps({"dl": f"{served.url}/crates"}))
    assert _get(f"{url}/wi/dg/widget") == (200, lines["widget@1.0.0"] + lines["widget@1.1.0"])
    assert _get(f"{url}/an/ci/ancient") == (200, lines["ancient@0.1.0"])  # no time: kept
    assert _get(f"{url}/ne/wb/newborn")[0] == 404  # nothing of it yet on that date
    assert _get(f"{url}/no/ne/nonesuch")[0] == 404
    assert _get(f"{url}/wi/dg/../../config.json")[0] == 404  # only index paths and config.json
    assert _get(f"{url}/Wi/dg/widget")[0] == 404


def test_a_cached_file_serves_a_cutoff_it_was_fetched_after_and_an_older_copy_is_fetched_again(
    index: tuple[CratesIndex, dict[str, str]], tmp_path: Path
) -> None:
    served, lines = index
    cache = tmp_path / "cache"
    upstream = dated.Upstream(f"{served.url}/index", str(cache), dated.moment(CUTOFF))
    view = dated.View(upstream, dated.moment(CUTOFF))
    assert view.answer("/wi/dg/widget") == (
        200,
        (lines["widget@1.0.0"] + lines["widget@1.1.0"]).encode(),
    )
    copy = cache / "wi" / "dg" / "widget"
    assert copy.read_text() == "".join(lines[f"widget@{v}"] for v in ("1.0.0", "1.1.0", "1.2.0"))

    copy.write_text(lines["widget@1.0.0"])  # what a copy holds is what it serves
    assert view.answer("/wi/dg/widget") == (200, lines["widget@1.0.0"].encode())
    fetched_before_the_cutoff = dated.moment("2020-06-01T00:00:00Z").timestamp()
    os.utime(copy, (fetched_before_the_cutoff, fetched_before_the_cutoff))
    status, body = view.answer("/wi/dg/widget")  # it may lack releases of up to the cutoff
    assert (status, body) == (200, (lines["widget@1.0.0"] + lines["widget@1.1.0"]).encode())
    assert os.path.getmtime(copy) > time.time() - 60


def test_an_unreachable_upstream_is_a_502_with_its_reason(tmp_path: Path) -> None:
    upstream = dated.Upstream("http://127.0.0.1:9/index", str(tmp_path), dated.moment(CUTOFF))
    status, body = dated.View(upstream, dated.moment(CUTOFF)).answer("/wi/dg/widget")
    assert status == 502 and body.startswith(b"upstream index: ")


def test_the_hosts_cargo_resolves_through_the_view_to_the_release_of_the_date(
    view: tuple[str, dict[str, str]], tmp_path: Path
) -> None:
    """A crate asking widget = "1" with no Cargo.lock: 1.1.0 (2020), not 1.2.0 (edition 2024);
    retired = "0.2", its series yanked whole: 0.2.1."""
    if not os.access(CARGO, os.X_OK):
        pytest.skip("no cargo on this machine")
    url, lines = view
    port = int(url.rsplit(":", 1)[1])
    config = tmp_path / "dated.toml"
    config.write_text(dated.cargo_config(port))
    crate = tmp_path / "app"
    (crate / "src").mkdir(parents=True)
    (crate / "Cargo.toml").write_text(
        '[package]\nname = "app"\nversion = "0.1.0"\nedition = "2018"\n\n'
        '[dependencies]\nwidget = "1"\nancient = "0.1"\nretired = "0.2"\n'
    )
    (crate / "src" / "lib.rs").write_text("")
    env = {k: v for k, v in os.environ.items() if k.lower() not in ("http_proxy", "https_proxy")}
    env["CARGO_HOME"] = str(tmp_path / "cargo-home")
    done = subprocess.run(
        [CARGO, "generate-lockfile", "--config", str(config)],
        cwd=crate,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    lock = (crate / "Cargo.lock").read_text()
    widget = json.loads(lines["widget@1.1.0"])
    assert (
        f'name = "widget"\nversion = "1.1.0"\n'
        f'source = "registry+https://github.com/rust-lang/crates.io-index"\n'
        f'checksum = "{widget["cksum"]}"'
    ) in lock
    assert 'name = "ancient"\nversion = "0.1.0"' in lock
    assert 'name = "retired"\nversion = "0.2.1"' in lock  # its series yanked whole


# ---- plans and stand-ins ------------------------------------------------------------------------


def test_an_era_without_a_lock_resolves_as_of_its_date_and_says_so() -> None:
    rust = ecosystem("rust")
    unlocked = _snap({"Cargo.toml": _manifest("app", "0.1.0")["Cargo.toml"]})
    (plan,) = rust.plans(unlocked, ErasConfig())
    assert plan.notes[1] == (
        "no Cargo.lock: dependencies as of 2020-06-01T12:00:00Z (crates.io's index without the "
        "releases published after it)"
    )
    script = "\n".join(plan.commands)
    assert "python3 - serve https://index.crates.io 2020-06-01T12:00:00Z" in script
    assert "generate-lockfile --config /tmp/prchain-dated.toml" in script
    assert "env -u HTTP_PROXY -u HTTPS_PROXY -u http_proxy -u https_proxy" in script

    locked = _snap({**unlocked.files, "Cargo.lock": "version = 3\n"})
    (pinned,) = rust.plans(locked, ErasConfig())
    assert pinned.notes[1] == "dependencies as Cargo.lock pins them"
    assert "generate-lockfile" not in "\n".join(pinned.commands)


def test_a_dated_resolve_that_finds_no_release_falls_back_to_the_newest_once() -> None:
    rust = ecosystem("rust")
    snap = _snap({"Cargo.toml": _manifest("app", "0.1.0")["Cargo.toml"]})
    (plan,) = rust.plans(snap, ErasConfig())
    failed = 'error: failed to select a version for the requirement `widget = "^1.3"`'
    newest = rust.revise(snap, ErasConfig(), plan, failed, ran=False)
    assert newest is not None and newest.variant == f"{plan.variant}+newest"
    assert newest.interpreter == plan.interpreter and newest.notes[0] == plan.notes[0]
    assert newest.notes[1].startswith("no Cargo.lock: the newest versions that fit the toolchain")
    script = "\n".join(newest.commands)
    assert "prchain-dated" not in script and "cargo generate-lockfile\n" in script + "\n"
    again = rust.revise(snap, ErasConfig(), newest, failed, ran=False)
    assert again is None  # once
    # a newer toolchain keeps the resolve the era had
    edition = "error: failed to parse manifest: feature `edition2024` is required"
    newer = rust.revise(snap, ErasConfig(), newest, edition, ran=False)
    assert newer is not None and newer.variant.endswith("+newest")
    assert newer.interpreter != plan.interpreter


def test_a_git_stand_in_is_the_compatible_release_nearest_the_eras_date() -> None:
    releases = [
        {"vers": "0.2.1", "pubtime": "2019-01-01T00:00:00Z"},
        {"vers": "0.2.2", "pubtime": "2020-03-01T00:00:00Z"},
        {"vers": "0.2.3", "pubtime": "2022-01-01T00:00:00Z"},
        {"vers": "0.2.4", "pubtime": "2020-05-01T00:00:00Z", "yanked": True},
    ]
    assert choose("0.2.1", releases, "2020-06-01T00:00:00Z") == "0.2.2"  # newest by then
    assert choose("0.2.1", releases, "2018-06-01T00:00:00Z") == "0.2.1"  # none yet: lowest
    assert choose("0.2.1", releases) == "0.2.1"  # no date: the lowest
    undated = [{"vers": "0.2.1"}, {"vers": "0.2.5", "pubtime": "2030-01-01T00:00:00Z"}]
    assert choose("0.2.1", undated, "2020-06-01T00:00:00Z") == "0.2.1"
