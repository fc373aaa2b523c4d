"""What a C or C++ project's build files say, read from the stage base's texts alone: which build
system drives it, the tools it asks for at least, the libraries it looks for and the switches that
turn its tests on. Facts as data: one row per build system in `SYSTEMS`, one pattern per way a
build file names a library.

| system    | found by                 | minimum read from                        | libraries read from                                  |
|-----------|--------------------------|------------------------------------------|------------------------------------------------------|
| cmake     | root CMakeLists.txt      | cmake_minimum_required(VERSION x[...y])  | find_package(X), pkg_check_modules(P x y), check_include_file(h) |
| meson     | root meson.build         | project(meson_version: '>= x')           | dependency('x'), cc.find_library('x'), has_header('h')           |
| autotools | configure.ac/configure.in| AC_PREREQ([x])                           | PKG_CHECK_MODULES(P, [x >= 1 y]), AC_CHECK_LIB(x), AC_CHECK_HEADERS(h) |

A tree with several picks cmake first, then meson, then autotools: projects that keep a second
system keep it for old platforms, and CMake's is the one their CI runs. A repository whose root
holds no build file but one of its top-level folders does (libexpat's `expat/`) is built in that
folder: the one holding most of the stage's test files, then most C sources, then the first by name.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from prchain.environments.eras.manifests import Snapshot

System = str  # one of SYSTEMS' keys


@dataclass(frozen=True)
class Facts:
    """One build system's reading of a commit."""

    system: System
    minimum: str  # the oldest cmake/meson/autoconf the build files accept, "" when unsaid
    libraries: tuple[str, ...]  # names as the build files spell them (CMake package, pkg-config)
    headers: tuple[str, ...]  # headers the configure step checks for
    test_switches: tuple[str, ...]  # configure arguments that turn the project's tests on
    cxx: bool  # whether C++ is compiled
    root: str = ""  # the folder the build runs in, "" for the repository's root


# build system → the build files (root, and one level down) that say what it needs
SYSTEMS: dict[System, tuple[str, ...]] = {
    "cmake": ("CMakeLists.txt",),
    "meson": ("meson.build", "meson_options.txt", "meson.options"),
    "autotools": ("configure.ac", "configure.in", "Makefile.am"),
}
_NUMBER = r"(\d+(?:\.\d+)*)"  # `3.5` of a policy range `3.5...3.28`
_CMAKE_MIN = re.compile(rf"cmake_minimum_required\s*\(\s*VERSION\s+{_NUMBER}", re.I)
_MESON_MIN = re.compile(rf"meson_version\s*:\s*'>=\s*{_NUMBER}")
_AC_PREREQ = re.compile(rf"AC_PREREQ\(\[?{_NUMBER}")
# CMake: find_package(ZLIB REQUIRED), pkg_check_modules(X REQUIRED glib-2.0>=2.50 gio-2.0),
# pkg_search_module(X foo), check_include_file(foo.h HAVE_FOO)
_FIND_PACKAGE = re.compile(r"find_package\s*\(\s*([A-Za-z][\w.+-]*)", re.I)
_PKG_MODULES = re.compile(
    r"pkg_(?:check_modules|search_module)\s*\(\s*\w+((?:\s+[^)\s]+)+)\s*\)", re.I
)
_CHECK_HEADER = re.compile(r"check_include_files?\s*\(\s*\"?([\w/.+-]+\.h)", re.I)
# meson: dependency('zlib'), dependency('glib-2.0', version: ...), cc.find_library('m')
_DEPENDENCY = re.compile(r"dependency\s*\(\s*'([^']+)'")
_FIND_LIBRARY = re.compile(r"find_library\s*\(\s*'([^']+)'")
_HAS_HEADER = re.compile(r"(?:has_header|check_header)\s*\(\s*'([^']+)'")
# autoconf: PKG_CHECK_MODULES([X], [foo >= 1.2 bar]), AC_CHECK_LIB([z], ...), AC_SEARCH_LIBS
_AC_PKG = re.compile(r"PKG_CHECK_MODULES\(\s*\[?\w+\]?\s*,\s*\[?([^\],)]+)")
_AC_LIB = re.compile(r"AC_CHECK_LIB\(\s*\[?([\w+-]+)")
_AC_HEADERS = re.compile(r"AC_CHECK_HEADERS?\(\s*\[?([^\],)]+)")
# option(WITH_TESTS "Build unit tests" OFF); meson option('tests', type: 'boolean', value: false)
_CMAKE_OPTION = re.compile(r"option\s*\(\s*(\w*TEST\w*)\s+\"[^\"]*\"\s+OFF\s*\)", re.I)
# ...but not one that turns the tests off when ON (jansson's `JANSSON_WITHOUT_TESTS`) or runs them
# under a tool no era installs (`JANSSON_TEST_WITH_VALGRIND`, coverage)
_NOT_A_SWITCH = re.compile(
    r"WITHOUT|DISABLE|(^|_)NO_?TESTS?|SKIP|VALGRIND|MEMCHECK|COVERAGE|GCOV", re.I
)
_MESON_OPTION = re.compile(
    r"option\s*\(\s*'([\w-]*tests?[\w-]*)'\s*,\s*type\s*:\s*'(boolean|feature)'\s*,\s*value\s*:\s*"
    r"'?(false|disabled)'?",
    re.I,
)
_AC_ENABLE = re.compile(r"AC_ARG_ENABLE\(\s*\[?((?:unit-?)?tests?)\]?", re.I)
_ROOT_FILES = {files[0] for files in SYSTEMS.values()} | {"configure.in"}
_C_SOURCE = re.compile(r"\.(c|cc|cpp|cxx)$")
_CXX_SOURCE = re.compile(r"\.(cc|cpp|cxx|c\+\+|hpp|hh)$")
_CXX_LANGUAGE = re.compile(r"\bCXX\b|'cpp'|AC_PROG_CXX")
_VERSION_WORD = re.compile(r"^[<>=!]|^\d")


def system(snap: Snapshot) -> System | None:
    """The build system that drives the commit, by its root build file."""
    found = located(snap)
    return found[1] if found else None


def located(snap: Snapshot) -> tuple[str, System] | None:
    """(folder, build system) of the build: the repository's root when it holds a build file,
    else the top-level folder that does, chosen by the stage's test files, then by C sources."""
    for root in [""] + _folders(snap):
        for name, files in SYSTEMS.items():
            if _under(root, files[0]) in snap.paths or (
                name == "autotools" and _under(root, "configure.in") in snap.paths
            ):
                return root, name
    return None


def _folders(snap: Snapshot) -> list[str]:
    """Top-level folders holding a build file of their own, best first."""
    roots = {
        path.split("/", 1)[0]
        for path in snap.paths
        if path.count("/") == 1 and path.split("/", 1)[1] in _ROOT_FILES
    }

    def rank(root: str) -> tuple[int, int, str]:
        inside = [p for p in snap.paths if p.startswith(root + "/")]
        tests = sum(t.startswith(root + "/") for t in snap.tests)
        return -tests, -sum(bool(_C_SOURCE.search(p)) for p in inside), root

    return sorted(roots, key=rank)


def _under(root: str, path: str) -> str:
    return f"{root}/{path}" if root else path


def build_files(snap: Snapshot, name: System, root: str = "") -> dict[str, str]:
    """The texts of the system's build files in the build's folder and one level down
    (tests/CMakeLists.txt registers the tests; src/meson.build looks up the libraries)."""
    wanted = SYSTEMS[name]
    prefix = _under(root, "")
    return {
        path: text
        for path, text in sorted(snap.files.items())
        if path.startswith(prefix)
        and path.rsplit("/", 1)[-1] in wanted
        and path[len(prefix) :].count("/") <= 1
    }


def read(snap: Snapshot, name: System, root: str = "") -> Facts:
    """The facts of system `name` in the commit's build files (in folder `root`)."""
    text = "\n".join(build_files(snap, name, root).values())
    libraries, headers, switches = _READERS[name](text)
    return Facts(
        name,
        _minimum(name, text),
        tuple(dict.fromkeys(libraries)),
        tuple(dict.fromkeys(headers)),
        tuple(dict.fromkeys(switches)),
        cxx=bool(_CXX_LANGUAGE.search(text)) or any(_CXX_SOURCE.search(p) for p in snap.paths),
        root=root,
    )


def _minimum(name: System, text: str) -> str:
    pattern = {"cmake": _CMAKE_MIN, "meson": _MESON_MIN, "autotools": _AC_PREREQ}[name]
    found = pattern.findall(text)
    return max(found, key=version_tuple) if found else ""


def version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", version)[:3])


def _cmake(text: str) -> tuple[list[str], list[str], list[str]]:
    modules = [w for group in _PKG_MODULES.findall(text) for w in _module_words(group)]
    found = [p for p in _FIND_PACKAGE.findall(text) if not p.startswith("$")]
    options = [o for o in _CMAKE_OPTION.findall(text) if not _NOT_A_SWITCH.search(o)]
    switches = [f"-D{o}=ON" for o in options]
    return [*found, *modules], _CHECK_HEADER.findall(text), ["-DBUILD_TESTING=ON", *switches]


def _meson(text: str) -> tuple[list[str], list[str], list[str]]:
    libraries = [*_DEPENDENCY.findall(text), *_FIND_LIBRARY.findall(text)]
    switches = [
        f"-D{name}={'true' if kind.lower() == 'boolean' else 'enabled'}"
        for name, kind, _ in _MESON_OPTION.findall(text)
    ]
    return libraries, _HAS_HEADER.findall(text), switches


def _autotools(text: str) -> tuple[list[str], list[str], list[str]]:
    modules = [w for group in _AC_PKG.findall(text) for w in _module_words(group)]
    headers = [h for group in _AC_HEADERS.findall(text) for h in group.split()]
    switches = [f"--enable-{name}" for name in _AC_ENABLE.findall(text)]
    return [*modules, *_AC_LIB.findall(text)], headers, switches


def _module_words(group: str) -> list[str]:
    """pkg-config module names of `glib-2.0>=2.50 gio-2.0 >= 2 REQUIRED` (no versions, keywords)."""
    words = re.split(r"\s+|(?=[<>=])", group.strip())
    return [
        re.split(r"[<>=]", w, maxsplit=1)[0]
        for w in words
        if w and not _VERSION_WORD.match(w) and not w.isupper() and not w.startswith("$")
    ]


_READERS = {"cmake": _cmake, "meson": _meson, "autotools": _autotools}
