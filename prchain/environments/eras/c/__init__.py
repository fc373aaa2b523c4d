"""The C and C++ room: compilers, build tools and system libraries of an era from a Debian suite,
the project configured and built per stage, its tests run by its own runner.

Everything is read from the stage base's build files (systems.py): CMake, Meson or Autotools, the
oldest tool they accept, the libraries they look for, the switches that turn their tests on. The
era gets the newest Debian suite released by its date (a newer one when the build files ask for a
newer cmake or meson than it ships): its gcc, g++, cmake, meson and autotools come in the toolchain
layer, one per suite shared by every C/C++ repository; its `-dev` packages for the libraries in the
era layer (packages.py). The repository's own code is never built into the image: a stage older
than the era's base would find its future there.

Per stage, as the agent and offline, the setup command configures the tree into
`/work/.cache/c-build` (out of the tree: the agent's diffs never see it; Autotools builds in the
tree, whose generated files the setup leaves untracked and so out of every diff) and builds it,
going on past units that do not build. The test command builds again, which recompiles only what
the agent changed, then runs the suite:

| system    | setup (per stage)                                        | test command                                 |
|-----------|----------------------------------------------------------|----------------------------------------------|
| cmake     | cmake -S . -B B -G Ninja -DBUILD_TESTING=ON (+ test options); cmake --build B -- -k 0 | cmake -S . -B B; cmake --build B -- -k 0; cd B && ctest --output-on-failure |
| meson     | meson setup B (+ test options); ninja -C B -k 0          | ninja -C B -k 0; meson test -C B --no-rebuild --print-errorlogs |
| autotools | autoreconf -fi (no configure tracked); ./configure (+ --enable-tests); make -k | make -k check |

Both commands run in the build's folder (`cd expat && { … }`) when the root holds no build file
and a top-level folder does (systems.py).
"""

from __future__ import annotations

import re
import shlex
from datetime import UTC

from prchain.environments.eras.c import packages, systems
from prchain.environments.eras.c.report import BUILD_DIR, CTests
from prchain.environments.eras.config import ErasConfig
from prchain.environments.eras.ecosystems import ECOSYSTEMS, Plan
from prchain.environments.eras.manifests import Snapshot
from prchain.environments.eras.native import APT_LEFTOVERS
from prchain.environments.eras.reports import TestReport
from prchain.environments.eras.sealed import SealedPlaces

_SOURCE = re.compile(r"\.(c|h|cc|cpp|cxx|hpp|hh|hxx|c\+\+|inl|ipp)$")
_TEST_PATH = re.compile(r"(^|/)(tests?|testing|unittests?|t)/|(^|/)(test_[^/]+|[^/]+[_-]test)\.")
# What a configure step says when a library it requires is missing: the name to install.
_MISSING = re.compile(
    r"Could NOT find (\w+)|Could not find a package configuration file provided by \"(\w+)\""
    r"|No package '([^']+)' found|Package '([^']+)',? (?:required by|not found)"
    r"|Dependency \"?([\w.+-]+)\"? not found|Run-time dependency ([\w.+-]+) found: NO"
    r"|fatal error: ([\w/.+-]+\.h): No such file"
)
_JOBS = "-j2"  # make's parallelism (ninja picks its own); the machines here are small
SETUP = {
    "cmake": (
        "[ -f {build}/CMakeCache.txt ] || cmake -S . -B {build} -G Ninja "
        "-DCMAKE_BUILD_TYPE=Debug {switches}; cmake --build {build} -- -k 0 || true"
    ),
    "meson": (
        "[ -f {build}/build.ninja ] || meson setup {build} . {switches}; "
        "ninja -C {build} -k 0 || true"
    ),
    "autotools": (
        "{{ [ -x configure ] || autoreconf -fi; }} && {{ [ -f Makefile ] || ./configure "
        "{switches}; }} && {{ make -k {jobs} || true; }}"
    ),
}
TEST = {
    # configured again first: a `file(GLOB ...)` of sources or tests is read only at configure
    # time, and the hidden tests arrive after the setup configured the tree
    "cmake": (
        "cmake -S . -B {build} > /dev/null; cmake --build {build} -- -k 0; "
        "cd {build} && ctest --output-on-failure"
    ),
    "meson": "ninja -C {build} -k 0; prchain-meson-test {build} --print-errorlogs",
    "autotools": "make -k {jobs} check",
}


# LeakSanitizer needs ptrace, which no sandbox grants: a project that turns the sanitizers on in
# debug builds (libcbor's SANITIZE) would fail every test at exit with "LeakSanitizer has
# encountered a fatal error". Address checks stay on.
IMAGE_ENV = {
    "CTEST_OUTPUT_ON_FAILURE": "1",
    "CMAKE_GENERATOR": "Ninja",
    "ASAN_OPTIONS": "detect_leaks=0",
}


# `meson test --no-rebuild` refuses to run anything when one test's program is missing ("Cannot
# run tests before building them"): this runs the tests whose programs were built and names the
# others, so a unit that does not build takes only its own tests down.
MESON_TEST = r"""#!/usr/bin/python3
import json, os, subprocess, sys
build, flags = sys.argv[1], sys.argv[2:]
listed = subprocess.run(["meson", "introspect", "--tests", build], capture_output=True, text=True)
tests = json.loads(listed.stdout or "[]")
built = [t for t in tests if not t["cmd"] or not t["cmd"][0].startswith(build) or os.path.exists(t["cmd"][0])]
unbuilt = [t["name"] for t in tests if t not in built]
if unbuilt:
    print("prchain: not built, not run:", " ".join(unbuilt), flush=True)
if tests and not built:
    sys.exit(1)
names = [t["name"] for t in built] if unbuilt else []
sys.exit(subprocess.call(["meson", "test", "-C", build, "--no-rebuild", *flags, *names]))
"""
INSTALL_MESON_TEST = (
    f"cat > /usr/local/bin/prchain-meson-test <<'PRCHAIN_MESON'\n{MESON_TEST}PRCHAIN_MESON\n"
    "chmod 755 /usr/local/bin/prchain-meson-test"
)


def facts(snap: Snapshot) -> systems.Facts | None:
    found = systems.located(snap)
    return systems.read(snap, found[1], found[0]) if found else None


def suite(snap: Snapshot, config: ErasConfig, found: systems.Facts) -> str:
    day = snap.date.date().isoformat()
    return packages.choose_suite(day, config.suites, found.minimum, found.system)


def libraries(found: systems.Facts) -> list[str]:
    """The names to find packages for: every library, and the headers the table knows (a
    header check of libc's own `stdlib.h` has nothing to install)."""
    return [*found.libraries, *(h for h in found.headers if h.lower() in packages.KNOWN)]


def toolchain_commands() -> list[str]:
    install = "DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends"
    return [
        "apt-get update -q",
        f"{install} {' '.join(packages.TOOLCHAIN)}",
        "rm -rf /var/lib/apt/lists/*",
        "gcc --version | head -1 && cmake --version | head -1 && meson --version",
    ]


def era_commands(names: list[str], extra: list[str]) -> list[str]:
    """The era's -dev packages, each library's first candidate the suite has."""
    return [
        "apt-get update -q",
        packages.install_script(names, extra),
        APT_LEFTOVERS,
        "mkdir -p /work/.cache && chmod 1777 /work/.cache || true",
        INSTALL_MESON_TEST,
    ]


def setup_command(found: systems.Facts) -> str:
    switches = " ".join(shlex.quote(s) for s in found.test_switches)
    return _in_root(
        found, SETUP[found.system].format(switches=switches, build=BUILD_DIR, jobs=_JOBS)
    )


def test_command(found: systems.Facts) -> str:
    return _in_root(found, TEST[found.system].format(build=BUILD_DIR, jobs=_JOBS))


def _in_root(found: systems.Facts, command: str) -> str:
    """The command run in the build's folder (a top-level folder, when the root has no build)."""
    return f"cd {shlex.quote(found.root)} && {{ {command}; }}" if found.root else command


def missing(log: str) -> list[str]:
    """The libraries a configure or compile step said it could not find, in order."""
    names = [next(g for g in m.groups() if g) for m in _MISSING.finditer(log)]
    return list(dict.fromkeys(names))


# A C test links the framework the build finds: a copy in the tree (third_party/googletest) is
# read from B_t, never from the agent's change; the build files themselves are test configuration
# the clean room already keeps to B_t's.
SEALED = SealedPlaces(
    libraries=frozenset(
        {"googletest", "gtest", "googlemock", "cmocka", "check", "unity", "Unity", "catch2"}
        | {"Catch2", "catch", "doctest", "criterion", "cunit", "CUnit", "munit", "acutest"}
    ),
)


@ECOSYSTEMS.register("c")
class C:
    name = "c"
    report: TestReport = CTests()
    sealed = SEALED

    def owns(self, path: str) -> bool:
        return bool(_SOURCE.search(path) and _TEST_PATH.search(path))

    def detects(self, snap: Snapshot) -> bool:
        return systems.system(snap) is not None and any(_SOURCE.search(p) for p in snap.paths)

    def era_facts(self, snap: Snapshot) -> dict[str, object]:
        """The build system, the minimum it asks, the libraries and test switches its build files
        name, whether C++ is compiled: not the files' other lines (a new source file is no era)."""
        found = facts(snap)
        if found is None:
            return {}
        return {
            "system": found.system,
            "minimum": found.minimum,
            "libraries": sorted(libraries(found)),
            "switches": list(found.test_switches),
            "cxx": found.cxx,
            **({"root": found.root} if found.root else {}),
        }

    def plans(self, snap: Snapshot, config: ErasConfig) -> list[Plan]:
        found = facts(snap)
        return [self._plan(snap, config, found, [])] if found else []

    def _plan(
        self, snap: Snapshot, config: ErasConfig, found: systems.Facts, extra: list[str]
    ) -> Plan:
        chosen = suite(snap, config, found)
        tools = packages.SUITE_TOOLS.get(chosen, {})
        said = f"{found.system} {found.minimum or '(no minimum)'}"
        return Plan(
            "c",
            chosen,
            f"gcc {tools.get('gcc', '?')}",
            snap.date.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            era_commands([*libraries(found), *extra], []),
            test_command(found),
            setup_command(found),
            notes=[
                f"gcc {tools.get('gcc', '?')}, {found.system} {tools.get(found.system, '?')} on "
                f"{chosen}: the suite of {snap.date.date()} whose {said} fits",
                f"libraries named by the build files: {', '.join(libraries(found)) or 'none'}",
                *(
                    [f"added after the configure step missed them: {', '.join(extra)}"]
                    * bool(extra)
                ),
            ],
            variant="missing:" + ",".join(extra) if extra else "dated",
            toolchain=toolchain_commands(),
            env=IMAGE_ENV,
        )

    def revise(
        self, snap: Snapshot, config: ErasConfig, plan: Plan, log: str, ran: bool
    ) -> Plan | None:
        """A library the configure step (or the compiler: a missing header) says it lacks: the
        era again with its package added."""
        found = facts(snap)
        before = plan.variant.removeprefix("missing:").split(",") if plan.variant != "dated" else []
        new = [n for n in missing(log) if n not in before and packages.candidates(n)]
        if found is None or not new:
            return None
        return self._plan(snap, config, found, [*before, *new])
