"""Which Debian packages give a C or C++ project of an era its compilers, build tools and the
libraries its build files look for, and which suite an era is built on.

A library is named three ways (a CMake package `ZLIB`, a pkg-config module `zlib`, a header
`zlib.h`); `KNOWN` maps the names whose Debian package no rule guesses. Any other name is tried as
the suite's archive spells most of them, in order: `lib<name>-dev`, `<name>-dev`,
`lib<name without a lib prefix or a version suffix>-dev`; the first the suite has is installed,
and a name none fits is left out (said in the build log): an optional library the configure step
does without, or one `revise` adds from the configure step's own words (`Could NOT find X`,
`Dependency "x" not found`, `No package 'x' found`). Debian's per-suite Contents index (what
apt-file reads: path → package for every `.pc` file and header) would answer every name exactly;
it is ~50 MB a suite and not read yet.
"""

from __future__ import annotations

import re
import shlex

# When each Debian suite was released: an era gets the newest suite of its date (the compiler and
# libraries its authors built with), the oldest configured one before that.
DEBIAN_RELEASED = {
    "buster": "2019-07-06",
    "bullseye": "2021-08-14",
    "bookworm": "2023-06-10",
    "trixie": "2025-08-09",
}
# What each suite ships of the build tools the build files may ask a minimum of.
SUITE_TOOLS: dict[str, dict[str, str]] = {
    "buster": {"cmake": "3.13", "meson": "0.49", "autotools": "2.69", "gcc": "8"},
    "bullseye": {"cmake": "3.18", "meson": "0.56", "autotools": "2.69", "gcc": "10"},
    "bookworm": {"cmake": "3.25", "meson": "1.0", "autotools": "2.71", "gcc": "12"},
    "trixie": {"cmake": "3.31", "meson": "1.7", "autotools": "2.72", "gcc": "14"},
}
# The toolchain layer, one per suite for every C/C++ era of every repository: compilers, the three
# build systems, and what their generated steps call (bison, flex, gettext's autopoint).
TOOLCHAIN = [
    "gcc",
    "g++",
    "make",
    "cmake",
    "ninja-build",
    "meson",
    "pkg-config",
    "autoconf",
    "automake",
    "libtool",
    "autopoint",
    "gettext",
    "bison",
    "flex",
    "file",
    "ca-certificates",
]
# Names whose package no rule guesses (CMake's FindX modules, pkg-config modules, headers);
# None: nothing to install (part of the compiler or libc, a build tool already in TOOLCHAIN).
KNOWN: dict[str, str | None] = {
    "threads": None,
    "pkgconfig": None,
    "m": None,
    "dl": None,
    "rt": None,
    "pthread": None,
    "openmp": None,
    "git": None,
    "python": None,
    "python3": None,
    "perl": None,
    "doxygen": None,
    "sphinx": None,
    "zlib": "zlib1g-dev",
    "z": "zlib1g-dev",
    "zlib.h": "zlib1g-dev",
    "bzip2": "libbz2-dev",
    "bz2": "libbz2-dev",
    "liblzma": "liblzma-dev",
    "lzma": "liblzma-dev",
    "zstd": "libzstd-dev",
    "libzstd": "libzstd-dev",
    "openssl": "libssl-dev",
    "ssl": "libssl-dev",
    "crypto": "libssl-dev",
    "libcrypto": "libssl-dev",
    "curl": "libcurl4-openssl-dev",
    "libcurl": "libcurl4-openssl-dev",
    "gtest": "libgtest-dev",
    "googletest": "libgtest-dev",
    "gmock": "libgmock-dev",
    "cmocka": "libcmocka-dev",
    "check": "check",
    "catch2": "catch2",
    "boost": "libboost-all-dev",
    "libxml2": "libxml2-dev",
    "libxml-2.0": "libxml2-dev",
    "expat": "libexpat1-dev",
    "glib-2.0": "libglib2.0-dev",
    "gio-2.0": "libglib2.0-dev",
    "gobject-2.0": "libglib2.0-dev",
    "libpcre": "libpcre3-dev",
    "pcre": "libpcre3-dev",
    "libpcre2-8": "libpcre2-dev",
    "pcre2": "libpcre2-dev",
    "icu": "libicu-dev",
    "icu-uc": "libicu-dev",
    "icu-i18n": "libicu-dev",
    "sqlite3": "libsqlite3-dev",
    "libuv": "libuv1-dev",
    "libevent": "libevent-dev",
    "ncurses": "libncurses-dev",
    "curses": "libncurses-dev",
    "readline": "libreadline-dev",
    "xcb": "libxcb1-dev",
    "x11": "libx11-dev",
    "wayland-client": "libwayland-dev",
    "wayland-scanner": "libwayland-bin",
    "wayland-protocols": "wayland-protocols",
    "libsodium": "libsodium-dev",
    "sodium": "libsodium-dev",
    "gnutls": "libgnutls28-dev",
    "libbsd": "libbsd-dev",
    "libffi": "libffi-dev",
    "fmt": "libfmt-dev",
    "benchmark": "libbenchmark-dev",
}


_PACKAGE = re.compile(r"[a-z0-9][a-z0-9+.-]+")


def choose_suite(day: str, suites: dict[str, str], minimum: str, system: str) -> str:
    """The newest configured suite released by `day` whose build tool meets the build files'
    minimum; a newer suite when that one's is too old; the oldest configured before any."""
    known = sorted((DEBIAN_RELEASED.get(s, "9999"), s) for s in suites)
    released = [s for when, s in known if when <= day] or [known[0][1]]
    dated = released[-1]
    if not minimum or meets(dated, system, minimum):
        return dated
    newer = [s for _, s in known if s not in released[:-1] and meets(s, system, minimum)]
    return newer[0] if newer else dated


def meets(suite: str, system: str, minimum: str) -> bool:
    shipped = SUITE_TOOLS.get(suite, {}).get(system, "")
    return not shipped or _tuple(shipped) >= _tuple(minimum)[: len(_tuple(shipped))]


def _tuple(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", version)[:3])


def candidates(name: str) -> list[str]:
    """The Debian packages to try for a library `name`, in order; [] for none to install."""
    key = name.lower()
    if key in KNOWN:
        found = KNOWN[key]
        return [found] if found else []
    bare = re.sub(r"^lib|[-_.]?\d+(\.\d+)*$|\.h$", "", key).strip("-_/") or key
    if "/" in bare:  # a header in a directory (`openssl/ssl.h`): its directory names it
        bare = bare.split("/", 1)[0]
    tried = [f"lib{key}-dev", f"{key}-dev", f"lib{bare}-dev", f"{bare}-dev"]
    return [t for t in dict.fromkeys(tried) if _PACKAGE.fullmatch(t)]


def install_script(names: list[str], extra: list[str]) -> str:
    """Root shell: each library's first candidate the suite has, installed at once (with `extra`
    packages a revision added); a name no candidate fits is said and left out."""
    rows = [f"{shlex.quote(n)}:{' '.join(candidates(n))}" for n in names if candidates(n)]
    known = " ".join(p for p in extra if _PACKAGE.fullmatch(p))
    return (
        f"want='{known}'; for row in {' '.join(rows) or ':'}; do name=${{row%%:*}}; "
        'found=""; for p in ${row#*:}; do '
        'if apt-cache show "$p" >/dev/null 2>&1; then found=$p; break; fi; done; '
        'if [ -n "$found" ]; then want="$want $found"; '
        'elif [ -n "$name" ]; then echo "prchain: no Debian package found for $name"; fi; '
        'done; echo "prchain: installing $want"; '
        '[ -z "${want// /}" ] || DEBIAN_FRONTEND=noninteractive '
        "apt-get install -y -q --no-install-recommends $want"
    )
