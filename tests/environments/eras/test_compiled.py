"""Compiled Python projects and git submodules in the planner (no container): the toolchain
layer, the build requirements, the per-stage build step, and submodules from local mirrors."""

from __future__ import annotations

import subprocess
from datetime import UTC, datetime
from pathlib import Path

from prchain.environments.eras.config import ErasConfig
from prchain.environments.eras.ecosystems import ecosystem
from prchain.environments.eras.manifests import Snapshot, snapshot
from prchain.environments.eras.python import REQUIREMENTS, written_lines
from prchain.environments.eras.python.compiled import BUILD_DIR, BUILD_STEP, build_script, compiled
from prchain.environments.eras.submodules import mirror_for, populate, resolved
from tests.support.cext_repo import MATHLIB_H, MATHLIB_URL, THEME_URL, make_fastsum, make_mathlib

MESON_PYPROJECT = """[build-system]
build-backend = "mesonpy"
requires = ["meson-python>=0.15.0", "Cython>=3.0.6"]

[project]
name = "numlike"
version = "2.0.0.dev0"
dependencies = ["packaging"]

[tool.meson-python]
meson = "vendored-meson/meson/meson.py"
"""


def _snap(files: dict[str, str], paths: list[str]) -> Snapshot:
    return Snapshot("0" * 40, datetime(2024, 1, 20, tzinfo=UTC), files, paths)


def _plan(snap: Snapshot, config: ErasConfig | None = None):  # type: ignore[no-untyped-def]
    return ecosystem("python").plans(snap, config or ErasConfig())[0]


def test_a_setuptools_extension_gets_compilers_and_a_per_stage_build(tmp_path: Path) -> None:
    clone = make_fastsum(tmp_path / "fastsum", make_mathlib(tmp_path / "mathlib.git"))
    snap = snapshot(clone, "HEAD")
    plan = _plan(snap)
    assert any("gcc g++" in c for c in plan.toolchain), plan.toolchain
    assert plan.setup_command == BUILD_STEP
    assert any(c.startswith(f"cat > /usr/local/bin/{BUILD_STEP} <<") for c in plan.commands)
    assert any("cp -a /opt/prchain/src/vendor/mathlib/." in c for c in plan.commands)
    # The submodules are another project's trees: never collected as the suite's.
    assert "--ignore=vendor/mathlib --ignore=vendor/docs-theme" in plan.test_command
    said = [n for n in plan.notes if n.startswith("submodule ")]
    assert len(said) == 2 and all("no eras.git_mirrors entry" in n for n in said), said
    mirrored = _plan(snap, ErasConfig(git_mirrors={MATHLIB_URL: str(tmp_path / "mathlib.git")}))
    assert [n for n in mirrored.notes if n.startswith("submodule ")] == [
        f"submodule vendor/docs-theme ({THEME_URL}): no eras.git_mirrors entry; built without it"
    ]


def test_a_pure_python_project_gets_no_toolchain_nor_build_step() -> None:
    snap = _snap({"setup.py": "from setuptools import setup\nsetup(name='x')\n"}, ["x/a.py"])
    plan = _plan(snap)
    assert compiled(snap) is None and plan.toolchain == [] and plan.setup_command == ""


def test_a_meson_project_installs_its_build_requirements_not_itself() -> None:
    """numpy's shape: meson-python with a vendored meson, C++ and Fortran sources, dependencies
    stated in pyproject.toml (so the project is not built at image time)."""
    paths = ["numlike/core/a.c", "numlike/core/b.cpp", "numlike/f2py/tests/src/x.f", "meson.build"]
    snap = _snap({"pyproject.toml": MESON_PYPROJECT}, paths)
    found = compiled(snap)
    assert found is not None and found.backend == "meson-python" and found.cxx and found.fortran
    plan = _plan(snap)
    assert any("gfortran" in c for c in plan.toolchain)
    wanted = next(w for c in plan.commands if (w := written_lines(c, REQUIREMENTS)) is not None)
    assert {"Cython>=3.0.6", "ninja", "packaging"} <= set(wanted), wanted
    assert any(w.startswith("meson-python") for w in wanted), wanted
    install = next(c for c in plan.commands if f"-r {REQUIREMENTS}" in c)
    assert "'.'" not in install.split() and " . " not in install, install
    script = build_script(found, "2.0.0")
    assert "MESON = 'vendored-meson/meson/meson.py'" in script and "introspect" in script


def test_a_backend_without_a_per_stage_build_says_so() -> None:
    pyproject = '[build-system]\nrequires = ["scikit-build-core"]\nbuild-backend = "scikit_build_core.build"\n'
    snap = _snap({"pyproject.toml": pyproject}, ["src/x.cpp"])
    plan = _plan(snap)
    assert plan.setup_command == "" and plan.toolchain
    assert any("no per-stage build for scikit-build" in n for n in plan.notes), plan.notes


def test_git_mirrors_follow_insteadofs_rule() -> None:
    mirrors = {"https://github.com/": "/m/all/", "https://github.com/numpy/": "/m/numpy/"}
    assert mirror_for("https://github.com/numpy/meson.git", mirrors) == "/m/numpy/meson.git"
    assert mirror_for("https://github.com/google/highway", mirrors) == "/m/all/google/highway"
    assert mirror_for("https://gitlab.com/x/y", mirrors) == ""
    exact = {"https://github.com/numpy/meson": "/m/meson"}  # written without .git
    assert mirror_for("https://github.com/numpy/meson.git", exact) == "/m/meson"


def test_a_submodule_is_read_from_its_mirror_and_a_missing_commit_is_one_line(
    tmp_path: Path,
) -> None:
    mathlib = make_mathlib(tmp_path / "mathlib.git")
    clone = make_fastsum(tmp_path / "fastsum", mathlib)
    linked = resolved(clone, "HEAD", {MATHLIB_URL: str(mathlib)})
    assert [(p, local) for p, _, local in linked] == [("vendor/mathlib", str(mathlib))]
    target = tmp_path / "tree"
    assert populate(target, linked) == []
    assert (target / "vendor/mathlib/mathlib.h").read_text() == MATHLIB_H

    empty = tmp_path / "empty.git"
    subprocess.run(["git", "init", "-q", "--bare", str(empty)], check=True)
    gone = resolved(clone, "HEAD", {MATHLIB_URL: str(empty)})
    said = populate(tmp_path / "other", gone)
    assert len(said) == 1 and said[0].startswith("submodule vendor/mathlib: commit "), said
    assert "built without it" in said[0]


def test_a_setup_py_of_the_cython_years_gets_what_it_imports_to_build() -> None:
    setup_py = (
        "from Cython.Build import cythonize\nimport numpy\nfrom setuptools import setup\n"
        "setup(name='x', ext_modules=cythonize('x/_a.pyx'), include_dirs=[numpy.get_include()])\n"
    )
    found = compiled(_snap({"setup.py": setup_py}, ["x/_a.pyx", "x/__init__.py"]))
    assert found is not None and found.requires == ("setuptools", "wheel", "Cython", "numpy")


def test_a_projects_build_arguments_reach_its_build_step_and_its_notes() -> None:
    paths = ["numlike/core/a.c", "meson.build"]
    snap = _snap({"pyproject.toml": MESON_PYPROJECT}, paths)
    plan = _plan(snap, ErasConfig(build_args={"numlike": ["-Dcpu-dispatch=none"]}))
    script = next(c for c in plan.commands if c.startswith(f"cat > /usr/local/bin/{BUILD_STEP}"))
    assert "EXTRA = ['-Dcpu-dispatch=none']" in script
    assert any(n.endswith("with -Dcpu-dispatch=none (eras.build_args)") for n in plan.notes)


# msgpack 2020's setup.py: the module Cython generates is made again only when the top .pyx is
# newer than it, though the code lives in the .pyx files that one includes. Its `cythonize` (here
# the includes inlined into the .cpp, as Cython does) and build_ext (the .cpp copied to the built
# file) are stand-ins; the rule on times is msgpack's own.
MSGPACK_SETUP = """import os, re
src, pyx = "pkg/_mod.cpp", "pkg/_mod.pyx"
def cythonize():
    text = open(pyx).read()
    text = re.sub(r'include "(.+)"', lambda m: open("pkg/" + m.group(1)).read(), text)
    open(src, "w").write(text)
if not os.path.exists(src) or os.stat(src).st_mtime < os.stat(pyx).st_mtime:
    cythonize()
open("pkg/_mod.built", "w").write(open(src).read())
"""


def test_the_build_step_generates_a_cython_module_again_when_an_included_source_changed(
    tmp_path: Path,
) -> None:
    import os
    import sys

    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "setup.py").write_text(MSGPACK_SETUP)
    (repo / "pkg/_mod.pyx").write_text('include "_part.pxi"\n')
    (repo / "pkg/_part.pxi").write_text("X = 1\n")
    (repo / ".gitignore").write_text("*.cpp\n*.built\n")
    git = ["git", "-C", str(repo)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "add", "-A"], check=True)
    found = compiled(_snap({"setup.py": "from setuptools import setup, Extension\n"}, ["a.pyx"]))
    assert found is not None and found.backend == "setuptools"
    script = tmp_path / "prchain-build"
    script.write_text(build_script(found, "1.0").replace(BUILD_DIR, str(tmp_path / "build")))
    step = [sys.executable, str(script)]
    subprocess.run(step, cwd=repo, check=True, capture_output=True)
    assert (repo / "pkg/_mod.built").read_text() == "X = 1\n\n"
    # The agent (or the gold patch) edits the included file; the top .pyx is unchanged.
    (repo / "pkg/_part.pxi").write_text("X = 2\n")
    later = os.stat(repo / "pkg/_mod.cpp").st_mtime + 5
    os.utime(repo / "pkg/_part.pxi", (later, later))
    done = subprocess.run(step, cwd=repo, check=True, capture_output=True, text=True)
    assert (repo / "pkg/_mod.built").read_text() == "X = 2\n\n"
    assert "pkg/_mod.cpp is older than the Cython sources" in done.stdout
    # A generated module the project tracks is its own: never aged.
    subprocess.run([*git, "add", "-f", "pkg/_mod.cpp"], check=True)
    (repo / "pkg/_part.pxi").write_text("X = 3\n")
    os.utime(repo / "pkg/_part.pxi", (later + 10, later + 10))
    subprocess.run(step, cwd=repo, check=True, capture_output=True)
    assert (repo / "pkg/_mod.built").read_text() == "X = 2\n\n"
