"""Compiled extensions (C, C++, Cython, Fortran) of a Python project: toolchain, build requirements
and the per-stage build step that compiles the agent's own tree in place.

The project is never in the image (issue 52), so an extension built at image time would be B_t's of
the era's latest stage, and the agent's edit to a `.c` file would never run. Instead:
- the shared toolchain layer gets the suite's compilers (gcc, g++; gfortran when the tree has
  Fortran; python3-dev, pkg-config);
- the era's venv gets the build backend's own requirements (`[build-system] requires`: meson-python,
  Cython, pybind11, …) beside the test requirements, so the offline sandbox can build without
  build isolation;
- the recipe's `setup_command` is `prchain-build` (a script of the image): as the agent, offline,
  in /work/repo, at each stage entry and again in the clean room, it copies the era's git
  submodules into their empty places and builds the extensions in place, incrementally where the
  backend allows (setuptools skips up-to-date extensions; ninja rebuilds what changed). The build
  directory is /work/.cache/prchain-build (meson's build tree in `meson/`, setuptools' objects in
  `temp/`), outside the tree, in the sandbox and in the clean room alike (root gives the room's
  tester all of /work); only a user who cannot write /work (none of prchain's containers) falls
  back to `.prchain-build` in the tree, a hidden directory no agent's change can bring into a
  clean room (crossing.py). What lands in the tree (the `.so` files, generated modules) is
  untracked and never crosses into a clean room (crossing.py).

Backends with a per-stage build: setuptools (`build_ext --inplace`) and meson-python (meson setup
and compile, then each built file copied to its place in the tree, as meson-python's editable
install maps it). Others (scikit-build, maturin) get the toolchain only, said in the notes.
"""

from __future__ import annotations

import re
import shlex
import tomllib
from dataclasses import dataclass
from typing import Any

from prchain.environments.eras.manifests import Snapshot
from prchain.environments.eras.submodules import declared

BUILD_DIR = "/work/.cache/prchain-build"
SUBMODULES = "/opt/prchain-submodules"  # not under /opt/prchain: repository images lock that
BUILD_STEP = "prchain-build"
_SOURCES = re.compile(r"\.(c|cc|cpp|cxx|pyx|f|f90|f95|F|F90)$")
_CXX = re.compile(r"\.(cc|cpp|cxx|hpp|hh)$")
_FORTRAN = re.compile(r"\.(f|f90|f95|F|F90)$")
# Trees whose sources are not the package's extensions (a test's own C fixture still needs a compiler
# at test time, so Fortran anywhere asks for gfortran).
_NOT_PACKAGE = re.compile(r"(^|/)(docs?|examples?|benchmarks?|bench)/")
_SETUPTOOLS_EXT = re.compile(r"\b(Extension|ext_modules|cythonize|Pybind11Extension)\b")
# A build requirement that only pins the oldest numpy a wheel supports: the era's numpy instead.
_OLDEST_NUMPY = re.compile(r"^oldest-supported-numpy\b", re.I)
SUPPORTED = ("setuptools", "meson-python")


@dataclass(frozen=True)
class Compiled:
    """What a compiled project needs: its backend, its compilers and its build requirements."""

    backend: str  # setuptools | meson-python | scikit-build | maturin | setuptools-rust
    cxx: bool
    fortran: bool
    requires: tuple[str, ...]  # [build-system] requires, as the era installs them
    meson: str = ""  # [tool.meson-python] meson: a vendored meson.py (numpy), "" for the venv's
    meson_args: tuple[str, ...] = ()  # [tool.meson-python.args] setup

    @property
    def builds_per_stage(self) -> bool:
        return self.backend in SUPPORTED


def _toml(snap: Snapshot) -> dict[str, Any]:
    try:
        return tomllib.loads(snap.text("pyproject.toml"))
    except tomllib.TOMLDecodeError:
        return {}


def _backend(snap: Snapshot, pyproject: dict[str, Any]) -> str:
    system = pyproject.get("build-system", {})
    name = str(system.get("build-backend", "")) if isinstance(system, dict) else ""
    requires = " ".join(map(str, system.get("requires", []))) if isinstance(system, dict) else ""
    if name.startswith("mesonpy"):
        return "meson-python"
    if name.startswith(("scikit_build_core", "skbuild")):
        return "scikit-build"
    if name.startswith("maturin"):
        return "maturin"
    if "setuptools-rust" in requires or "setuptools_rust" in snap.text("setup.py"):
        return "setuptools-rust"
    tool = pyproject.get("tool", {}).get("setuptools", {}) if isinstance(pyproject, dict) else {}
    if _SETUPTOOLS_EXT.search(snap.text("setup.py")) or (
        isinstance(tool, dict) and tool.get("ext-modules")
    ):
        return "setuptools"
    return ""


def compiled(snap: Snapshot) -> Compiled | None:
    """The project's compiled side, None when it has none (or no backend that builds it)."""
    sources = [p for p in snap.paths if _SOURCES.search(p) and not _NOT_PACKAGE.search(p)]
    pyproject = _toml(snap)
    backend = _backend(snap, pyproject)
    if not backend or not (sources or backend in ("maturin", "setuptools-rust")):
        return None
    system = pyproject.get("build-system", {})
    requires = [str(r) for r in system.get("requires", [])] if isinstance(system, dict) else []
    requires = ["numpy" if _OLDEST_NUMPY.match(r) else r for r in requires]
    if backend == "setuptools":
        requires += _setup_py_imports(snap, sources, requires)
    if backend == "meson-python":
        requires.append("ninja")  # meson-python asks for it at build time when none is installed
    meson_python = pyproject.get("tool", {}).get("meson-python", {})
    meson_python = meson_python if isinstance(meson_python, dict) else {}
    setup_args = meson_python.get("args", {}).get("setup", [])
    return Compiled(
        backend,
        cxx=any(_CXX.search(p) for p in sources) or "pybind11" in " ".join(requires).lower(),
        fortran=any(_FORTRAN.search(p) for p in snap.paths),
        requires=tuple(requires),
        meson=str(meson_python.get("meson", "")),
        meson_args=tuple(map(str, setup_args if isinstance(setup_args, list) else [])),
    )


def _setup_py_imports(snap: Snapshot, sources: list[str], requires: list[str]) -> list[str]:
    """What a setup.py of the years before [build-system] imports to build its extensions:
    setuptools itself (and wheel, which setuptools before 70.1 builds wheels with, when it builds
    in the venv), Cython for `.pyx` sources, numpy for its headers."""
    named = {re.split(r"[<>=!~;\[ ]", r, maxsplit=1)[0].lower() for r in requires}
    text = snap.text("setup.py")
    wanted = ["setuptools", "wheel"]
    wanted += ["Cython"] if "Cython" in text or any(p.endswith(".pyx") for p in sources) else []
    wanted += ["numpy"] if re.search(r"\bnumpy\b", text) else []
    return [w for w in wanted if w.lower() not in named]


def toolchain_commands(found: Compiled) -> list[str]:
    """Root commands of the shared toolchain layer: the suite's compilers and Python headers."""
    packages = ["gcc", "g++", "libc6-dev", "python3-dev", "pkg-config", "make"]
    packages += ["gfortran"] if found.fortran else []
    packages += ["cargo", "rustc"] if found.backend in ("maturin", "setuptools-rust") else []
    install = "DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends"
    return [
        "apt-get update -q",
        f"{install} {' '.join(packages)}",
        "rm -rf /var/lib/apt/lists/*",
        "gcc --version | head -1",
    ]


def era_commands(
    snap: Snapshot, found: Compiled, src: str, version: str, extra: list[str] | None = None
) -> list[str]:
    """Root commands after the venv is made: the submodule trees B_t's export holds kept in the
    image, and the per-stage build step written to /usr/local/bin."""
    paths = [p for p, _ in declared(snap.text(".gitmodules"))]
    keep = [
        f"mkdir -p {SUBMODULES}",
        *(
            f'if [ -n "$(ls -A {shlex.quote(f"{src}/{p}")} 2>/dev/null)" ]; then '
            f"mkdir -p {shlex.quote(f'{SUBMODULES}/{p}')} && "
            f"cp -a {shlex.quote(f'{src}/{p}')}/. {shlex.quote(f'{SUBMODULES}/{p}')}/; fi"
            for p in paths
        ),
        f"chmod -R a+rX {SUBMODULES}",
    ]
    script = build_script(found, version, extra or [])
    return [
        *keep,
        f"cat > /usr/local/bin/{BUILD_STEP} <<'PRCHAIN_BUILD'\n{script}PRCHAIN_BUILD",
        f"chmod 755 /usr/local/bin/{BUILD_STEP}",
    ]


def build_script(found: Compiled, version: str, extra: list[str] | None = None) -> str:
    """The per-stage build step: a Python script the venv's interpreter runs in /work/repo.
    `extra`: the configured arguments of this project's build (`eras.build_args`)."""
    settings = {
        "BACKEND": found.backend,
        "MESON": found.meson,
        "MESON_ARGS": list(found.meson_args),
        "EXTRA": list(extra or []),
        "BUILD": BUILD_DIR,
        "SUBMODULES": SUBMODULES,
        "VERSION": version,
    }
    head = "".join(f"{k} = {v!r}\n" for k, v in settings.items())
    return f"#!/opt/venv/bin/python\n{head}{_BUILD_BODY}"


_BUILD_BODY = r'''"""prchain: build this project's compiled extensions in place, from the tree here (offline)."""
import filecmp, json, os, shutil, subprocess, sys, time

SITE = "/prchain-site"  # where meson is told Python modules go; mapped onto the tree below


def run(argv):
    print("+", " ".join(argv), flush=True)
    code = subprocess.call(argv)
    if code:
        sys.exit(f"prchain-build: `{' '.join(argv[:4])} ...` failed (exit {code})")


def submodules():
    """The era's submodule trees into their empty places (git ignores an unpopulated one's files)."""
    for root, dirs, _ in os.walk(SUBMODULES):
        rel = os.path.relpath(root, SUBMODULES)
        if rel != "." and os.path.isdir(rel) and not os.listdir(rel):
            shutil.copytree(root, rel, symlinks=True, dirs_exist_ok=True)
            dirs[:] = []


def untracked():
    """The files git does not track here (None when git cannot say)."""
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--others"], capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return {os.path.normpath(p) for p in out.stdout.decode(errors="replace").split("\0") if p}


def stale_cython():
    """A module Cython generated beside its .pyx (X.c, X.cpp; untracked) that is older than a
    Cython source of the tree is aged, so the project's own build generates it again: msgpack
    2020's setup.py compares only _cmsgpack.pyx's time with _cmsgpack.cpp, while the code is in
    the .pyx files it includes. A tracked one is the project's own: left alone."""
    sources, generated = [], []
    for root, dirs, files in os.walk("."):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        for name in files:
            if name.endswith((".pyx", ".pxd", ".pxi")):
                sources.append(os.path.join(root, name))
            if name.endswith(".pyx"):
                stem = os.path.join(root, name[:-4])
                generated += [stem + e for e in (".c", ".cpp") if os.path.exists(stem + e)]
    if not generated or (loose := untracked()) is None:
        return
    newest = max(os.stat(p).st_mtime for p in sources)
    for path in generated:
        if os.path.normpath(path) in loose and os.stat(path).st_mtime < newest:
            print(f"prchain-build: {path} is older than the Cython sources: generated again")
            os.utime(path, (0, 0))


def setuptools():
    stale_cython()
    env = dict(os.environ, SETUPTOOLS_SCM_PRETEND_VERSION=VERSION, PBR_VERSION=VERSION)
    os.environ.update(env)
    setup = ["setup.py"] if os.path.exists("setup.py") else ["-c", "from setuptools import setup; setup()"]
    temp = os.path.join(BUILD, "temp")
    started = int(time.time())
    run([sys.executable, *setup, "build_ext", "--inplace", "--build-temp", temp, *EXTRA])
    age_built(started)


def age_built(started):
    """distutils compares whole seconds (and its copies keep whole seconds): a source edited in the
    second its module was built would be up to date and never compiled. Each module this build
    wrote, in the tree or the build directory, is dated a second back, so any later edit is newer."""
    for top in (".", BUILD):
        for root, dirs, files in os.walk(top):
            dirs[:] = [d for d in dirs if d != ".git"]
            for name in files:
                if name.endswith((".so", ".pyd")):
                    path = os.path.join(root, name)
                    info = os.stat(path)
                    if info.st_mtime >= started:
                        os.utime(path, (info.st_atime, info.st_mtime - 1))


def meson_python():
    build = os.path.join(BUILD, "meson")
    meson = [sys.executable, MESON] if MESON.endswith(".py") else ["meson"]
    if not os.path.exists(os.path.join(build, "build.ninja")):
        shutil.rmtree(build, ignore_errors=True)
        os.makedirs(build)
        native = os.path.join(BUILD, "native.ini")
        with open(native, "w") as out:
            out.write(f"[binaries]\npython = '{sys.executable}'\n")
        options = [f"-Dpython.purelibdir={SITE}", f"-Dpython.platlibdir={SITE}"]
        for name in ("meson.options", "meson_options.txt"):
            if os.path.exists(name) and "allow-noblas" in open(name).read():
                options.append("-Dallow-noblas=true")  # no BLAS in the image: numpy's own fallback
        run([*meson, "setup", build, ".", "-Dbuildtype=release", "-Db_ndebug=if-release",
             f"--native-file={native}", *options, *MESON_ARGS, *EXTRA])
    run([*meson, "compile", "-C", build])
    installed = json.loads(subprocess.check_output([*meson, "introspect", build, "--installed"]))
    copied = 0
    for built, dest in installed.items():
        if not (built.startswith(build + os.sep) and dest.startswith(SITE + "/")):
            continue  # a source file already in the tree, or not a Python module
        target = dest[len(SITE) + 1 :]
        if os.path.exists(target) and filecmp.cmp(built, target, shallow=False):
            continue
        os.makedirs(os.path.dirname(target) or ".", exist_ok=True)
        if os.path.lexists(target):
            os.unlink(target)
        shutil.copy2(built, target)
        copied += 1
    print(f"prchain-build: {copied} built files copied into the tree", flush=True)


def writable(*places):
    """The first build directory this user can make: the clean room's tester cannot write /work."""
    for where in places:
        try:
            os.makedirs(where, exist_ok=True)
            return where
        except OSError:
            continue
    sys.exit("prchain-build: no writable build directory")


submodules()
BUILD = writable(BUILD, os.path.join(os.getcwd(), ".prchain-build"))
{"setuptools": setuptools, "meson-python": meson_python}.get(BACKEND, lambda: None)()
'''


def notes(found: Compiled, extra: list[str] | None = None) -> list[str]:
    """What the plan's notes say about the compiled side."""
    languages = "C" + (", C++" if found.cxx else "") + (", Fortran" if found.fortran else "")
    said = [
        f"compiled ({found.backend}; {languages}): the suite's compilers in the toolchain layer, "
        f"the build requirements {', '.join(found.requires) or '(none)'} in the venv"
    ]
    if found.builds_per_stage:
        said.append(
            f"each stage builds its extensions in place from the agent's tree (`{BUILD_STEP}`, "
            f"build directory {BUILD_DIR})"
            + (f", with {' '.join(extra)} (eras.build_args)" if extra else "")
        )
    else:
        said.append(f"no per-stage build for {found.backend}: the extensions are not built")
    return said
