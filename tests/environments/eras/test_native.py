"""Native dependencies without an LLM: error lines → missing files → Debian packages (a real
excerpt of bookworm's Contents index, served over HTTP), the known table, and plan revisions."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from prchain.environments.eras import native
from prchain.environments.eras.config import ErasConfig
from prchain.environments.eras.ecosystems import Plan
from prchain.environments.eras.manifests import Snapshot
from prchain.environments.eras.native import known
from prchain.environments.eras.native.contents import ContentsIndex, ContentsUnavailable
from prchain.environments.eras.native.missing import Missing, missing

DATA = Path(__file__).parents[2] / "data" / "environments" / "native"
# Real messages: gcc 12, binutils' ld, dash and pkgconf printed the files under errors/ on a
# Debian host (the absent names renamed to the ones looked up); the others are copied from builds:
# selinux-sys in uutils/coreutils (issue 81), Rust's pkg-config crate for alsa-sys, clang, Rust's
# cmake crate, meson.
SELINUX_SYS = (
    "  thread 'main' panicked at 'Failed to find 'selinux/selinux.h'. Please make sure the C "
    "header files of libselinux are installed', selinux-sys/build.rs:54:9"
)
ALSA_SYS = """\
  The system library `alsa` required by crate `alsa-sys` was not found.
  The file `alsa.pc` needs to be installed and the PKG_CONFIG_PATH environment variable must contain its parent directory.
  The PKG_CONFIG_PATH environment variable is not set.
"""
CLANG = "src/main.c:3:10: fatal error: 'openssl/ssl.h' file not found"
CMAKE_CRATE = "is `cmake` not installed?"
# google/gousb's `go test ./...` (cgo's `#cgo pkg-config: libusb-1.0`) in Go's toolchain layer
CGO_PKG_CONFIG = (
    "# pkg-config --cflags  -- libusb-1.0\n"
    'pkg-config: exec: "pkg-config": executable file not found in $PATH\n'
)
# pycurl/pycurl's setup.py of 2023 in a layer without libcurl's development files (uv's output)
PYCURL = """\
           File "/usr/lib/python3.11/subprocess.py", line 1901, in _execute_child
             raise child_exception_type(errno_num, err_msg, err_filename)
         FileNotFoundError: [Errno 2] No such file or directory: 'curl-config'
"""
MESON = 'meson.build:7:0: ERROR: Dependency "gtk+-3.0" not found, tried pkgconfig'


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # noqa: A002 (the base's name)
        return


@pytest.fixture(scope="module")
def archive() -> Iterator[str]:
    """A local HTTP server in front of the excerpt (dists/bookworm/main/Contents-*.gz)."""
    handler = partial(_Quiet, directory=str(DATA))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


@pytest.fixture
def index(archive: str, tmp_path: Path) -> ContentsIndex:
    return ContentsIndex(archive, "bookworm", "amd64", tmp_path / "contents")


def _error(name: str) -> str:
    return (DATA / "errors" / name).read_text()


@pytest.mark.parametrize(
    ("text", "kind", "name", "file"),
    [
        (_error("gcc-missing-header.txt"), "header", "selinux/selinux.h", "selinux/selinux.h"),
        (_error("ld-missing-library.txt"), "library", "pq", "libpq.so"),
        (_error("sh-missing-program.txt"), "program", "protoc", "protoc"),
        (_error("pkgconf-missing-module.txt"), "pkgconfig", "alsa", "alsa.pc"),
        (SELINUX_SYS, "header", "selinux/selinux.h", "selinux/selinux.h"),
        (ALSA_SYS, "pkgconfig", "alsa", "alsa.pc"),
        (CLANG, "header", "openssl/ssl.h", "openssl/ssl.h"),
        (CMAKE_CRATE, "program", "cmake", "cmake"),
        (MESON, "pkgconfig", "gtk+-3.0", "gtk+-3.0.pc"),
        (PYCURL, "program", "curl-config", "curl-config"),
        (CGO_PKG_CONFIG, "program", "pkg-config", "pkg-config"),
    ],
)
def test_reads_what_a_build_lacks(text: str, kind: str, name: str, file: str) -> None:
    found = missing(text)
    assert [(m.kind, m.name, m.file) for m in found] == [(kind, name, file)]
    assert found[0].line in text


def test_reads_nothing_from_a_build_that_lacks_nothing() -> None:
    log = "error[E0425]: cannot find value `x` in this scope\nsh: 1: gcc: not found\nok"
    assert missing(log) == []  # a compile error, and the toolchain's own compiler


@pytest.mark.parametrize(
    ("wanted", "package", "path"),
    [
        (Missing("header", "selinux/selinux.h", ""), "libselinux1-dev", "usr/include/selinux/selinux.h"),
        (Missing("header", "openssl/ssl.h", ""), "libssl-dev", "usr/include/openssl/ssl.h"),
        (Missing("header", "alsa/asoundlib.h", ""), "libasound2-dev", "usr/include/alsa/asoundlib.h"),
        (Missing("header", "ffi.h", ""), "libffi-dev", "usr/include/x86_64-linux-gnu/ffi.h"),
        (Missing("header", "sqlite3.h", ""), "libsqlite3-dev", "usr/include/sqlite3.h"),
        (Missing("header", "glib.h", ""), "libglib2.0-dev", "usr/include/glib-2.0/glib.h"),
        (Missing("header", "libxml/xmlversion.h", ""), "libxml2-dev", "usr/include/libxml2/libxml/xmlversion.h"),
        (Missing("pkgconfig", "alsa", ""), "libasound2-dev", "usr/lib/x86_64-linux-gnu/pkgconfig/alsa.pc"),
        (Missing("library", "pq", ""), "libpq-dev", "usr/lib/x86_64-linux-gnu/libpq.so"),
        (Missing("program", "clang", ""), "clang", "usr/bin/clang"),
        (Missing("program", "live-boot", ""), "live-boot", "bin/live-boot"),
    ],
)  # fmt: skip
def test_finds_the_package_in_the_contents_index(
    index: ContentsIndex, wanted: Missing, package: str, path: str
) -> None:
    assert index.providers(wanted)[0] == native.Provider(package, path)


def test_ranks_near_misses_after_and_ties_by_name(index: ContentsIndex) -> None:
    ssl = [p.package for p in index.providers(Missing("header", "openssl/ssl.h", ""))]
    assert ssl[0] == "libssl-dev"  # the wolfssl, boringssl compat copies lie deeper
    assert "python3-pycparser" not in ssl  # not under usr/include: no compiler looks there
    boost = [p.package for p in index.providers(Missing("header", "boost/optional.hpp", ""))]
    assert boost[:2] == ["libboost1.74-dev", "libboost1.81-dev"]  # one line, two owners
    assert index.providers(Missing("program", "gtk+-3.0", "")) == []
    assert index.providers(Missing("header", "nowhere/absent.h", "")) == []


def test_the_index_is_fetched_once(archive: str, tmp_path: Path) -> None:
    cache = tmp_path / "contents"
    ContentsIndex(archive, "bookworm", "amd64", cache).providers(Missing("program", "cmake", ""))
    built = next(cache.glob("bookworm-amd64-*.sqlite"))
    stamp = built.stat().st_mtime_ns
    dead = ContentsIndex("http://127.0.0.1:9", "bookworm", "amd64", cache)  # nothing listens
    assert dead.providers(Missing("program", "cmake", ""))[0].package == "cmake"
    assert built.stat().st_mtime_ns == stamp
    assert [p.name for p in cache.iterdir()] == [built.name]  # no partial file left beside it


def test_an_unreachable_archive_is_one_line(tmp_path: Path) -> None:
    dead = ContentsIndex("http://127.0.0.1:9", "trixie", "amd64", tmp_path)
    with pytest.raises(
        ContentsUnavailable, match=r"cannot read http://127\.0\.0\.1:9/dists/trixie"
    ):
        dead.providers(Missing("program", "cmake", ""))
    assert list(tmp_path.iterdir()) == []


def _plan(**kwargs: object) -> Plan:
    fields: dict = {
        "ecosystem": "rust",
        "suite": "bookworm",
        "interpreter": "1.63",
        "cutoff": "2024-01-01",
        "test_command": "cargo test",
        "commands": ["cargo build"],
        "notes": ["bookworm's rustc"],
    } | kwargs
    return Plan(**fields)


def _config(archive: str, tmp_path: Path, **kwargs: object) -> ErasConfig:
    return ErasConfig(debian_archive=archive, contents_cache=str(tmp_path / "c"), **kwargs)


def test_a_failed_build_is_revised_with_the_package_and_why(archive: str, tmp_path: Path) -> None:
    config = _config(archive, tmp_path)
    plan = native.revise(_plan(), "warning: x\n" + ALSA_SYS + SELINUX_SYS, config)
    assert plan is not None
    assert plan.native == ("libasound2-dev", "libselinux1-dev")
    assert plan.variant == "dated+native" and plan.native_rounds == 1
    assert (
        plan.commands[0].endswith(native.MARK)
        and "libasound2-dev libselinux1-dev" in plan.commands[0]
    )
    assert plan.commands[1:] == ["cargo build"]
    assert plan.notes[1] == (
        "native: libasound2-dev (Debian bookworm, /usr/lib/x86_64-linux-gnu/pkgconfig/alsa.pc) for "
        "the pkg-config module `alsa`, asked by: The system library `alsa` required by crate "
        "`alsa-sys` was not found."
    )
    assert "selinux/selinux.h" in plan.notes[2] and "Failed to find" in plan.notes[2]
    # the same failure again names nothing new: no loop
    assert native.revise(plan, ALSA_SYS, config) is None
    again = native.revise(plan, _error("ld-missing-library.txt"), config)
    assert again is not None and again.native_rounds == 2 and again.variant == "dated+native"
    assert sum(c.endswith(native.MARK) for c in again.commands) == 1  # one install command


def test_revisions_are_bounded(archive: str, tmp_path: Path) -> None:
    config = _config(archive, tmp_path, native_rounds=1)
    once = native.revise(_plan(), ALSA_SYS, config)
    assert once is not None
    assert native.revise(once, _error("ld-missing-library.txt"), config) is None
    never = _config(archive, tmp_path, native_rounds=0)
    assert native.revise(_plan(), ALSA_SYS, never) is None


def test_a_room_that_plans_anew_keeps_the_packages(archive: str, tmp_path: Path) -> None:
    revised = native.revise(_plan(), ALSA_SYS, _config(archive, tmp_path))
    assert revised is not None
    fresh = _plan(commands=["cargo +1.78 build"], interpreter="1.78")
    kept = native.carried(revised, fresh)
    assert kept.native == ("libasound2-dev",) and kept.native_rounds == 1
    assert kept.commands[0].endswith(native.MARK) and kept.commands[1] == "cargo +1.78 build"


def _snap(files: dict[str, str]) -> Snapshot:
    return Snapshot("0" * 40, datetime(2024, 1, 1, tzinfo=UTC), files, list(files))


CARGO_LOCK = """\
version = 3

[[package]]
name = "alsa-sys"
version = "0.3.1"

[[package]]
name = "libc"
version = "0.2.150"
"""


def test_known_native_dependencies_of_each_room() -> None:
    table = known.table({})
    rust = _snap({"Cargo.lock": CARGO_LOCK, "Cargo.toml": '[package]\nname = "x"\nlinks = "pq"\n'})
    assert known.needed(rust, table) == [("alsa-sys", ["libasound2-dev"]), ("pq", ["libpq-dev"])]
    unlocked = _snap(
        {"Cargo.toml": '[dependencies]\nsnd = { package = "alsa-sys", version = "0.3" }\n'}
    )
    assert known.needed(unlocked, table) == [("alsa-sys", ["libasound2-dev"])]
    python = _snap(
        {
            "requirements/test.txt": "Psycopg2==2.9.9  # the db tests\n-e .\n",
            "pyproject.toml": '[project]\nname = "p"\ndependencies = ["lxml>=4"]\n',
        }
    )
    assert [n for n, _ in known.needed(python, table)] == ["psycopg2", "lxml"]
    node = _snap({"package-lock.json": '{"packages": {"": {}, "node_modules/canvas": {}}}'})
    assert known.needed(node, table)[0][0] == "canvas"
    # a project that is a known native package itself builds its C code too
    own = _snap({"package.json": '{"name": "canvas", "scripts": {"test": "mocha"}}'})
    assert [n for n, _ in known.needed(own, table)] == ["canvas"]
    addon = replace(own, files={"package.json": '{"name": "twice"}'}, paths=["binding.gyp"])
    assert known.needed(addon, table) == [("binding.gyp", ["make", "g++"])]
    pycurl = _snap({"setup.py": 'from setuptools import setup\nsetup(\n    name="pycurl",\n)\n'})
    assert [n for n, _ in known.needed(pycurl, table)] == ["pycurl"]
    go = _snap({"go.mod": "module m\n\nrequire (\n\tgithub.com/google/gopacket v1.1.19\n)\n"})
    assert known.needed(go, table) == [("github.com/google/gopacket", ["libpcap-dev"])]
    # a bundled library needs nothing; nothing named, nothing added
    assert (
        known.needed(_snap({"go.mod": "require github.com/mattn/go-sqlite3 v1.14.0\n"}), table)
        == []
    )


def test_a_user_extends_and_overrides_the_table() -> None:
    table = known.table(
        {"rust": {"my-sys": ["libmy-dev"], "alsa-sys": []}, "python": {"My_Ext": ["x-dev"]}}
    )
    rust = _snap({"Cargo.lock": CARGO_LOCK + '\n[[package]]\nname = "my-sys"\nversion = "1.0.0"\n'})
    assert known.needed(rust, table) == [("my-sys", ["libmy-dev"])]
    assert known.needed(_snap({"requirements.txt": "my-ext\n"}), table) == [("my-ext", ["x-dev"])]


def test_known_packages_go_first_in_the_era_layer() -> None:
    snap = _snap({"Cargo.lock": CARGO_LOCK})
    plan = native.with_known(_plan(), snap, ErasConfig())
    assert plan.native == ("libasound2-dev",)
    assert plan.commands[0].endswith(native.MARK) and plan.commands[1:] == ["cargo build"]
    assert plan.notes[-1] == "native: libasound2-dev for alsa-sys (known native dependencies)"
    assert native.with_known(_plan(), _snap({}), ErasConfig()) == _plan()
