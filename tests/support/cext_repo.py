"""A made-up Python project with a C extension (setuptools), over two dependency eras.

`fastsum` computes in C (`fastsum/_speed.c`), with a header from a git submodule
(`vendor/mathlib`, declared at an unreachable GitHub URL and served by a local mirror through
`eras.git_mirrors`); a second submodule (`vendor/docs-theme`) has no mirror, so the era's notes
must say so while the build goes on.
  era 1 (2023): setup.py only;                       PR #1 adds `sub` in C + a test;
  era 2 (2024): pyproject.toml's [build-system] too;  PR #2 adds `mul` in C + a test.
"""

from __future__ import annotations

from pathlib import Path

from prchain.dev.repos import git
from tests.support.eras_repo import commit_files

MATHLIB_URL = "https://github.com/prchain-test/mathlib.git"
THEME_URL = "https://github.com/prchain-test/docs-theme.git"
MATHLIB_H = "static long ml_add(long a, long b) { return a + b; }\n"
SETUP_PY = (
    "from setuptools import Extension, setup\n\n"
    "setup(\n    name='fastsum',\n    version='1.0',\n    packages=['fastsum'],\n"
    "    ext_modules=[Extension('fastsum._speed', ['fastsum/_speed.c'],"
    " include_dirs=['vendor/mathlib'])],\n)\n"
)
PYPROJECT = (
    '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n'
)
FUNCTION = (
    "static PyObject *{name}(PyObject *self, PyObject *args) {{\n"
    "    long a, b;\n"
    '    if (!PyArg_ParseTuple(args, "ll", &a, &b)) return NULL;\n'
    "    return PyLong_FromLong({body});\n}}\n\n"
)
ENTRY = '    {{"{name}", {name}, METH_VARARGS, ""}},\n'
TEST = "from fastsum import {name}\n\n\ndef test_{name}():\n    assert {name}(6, 3) == {value}\n"
OPS = {"add": ("ml_add(a, b)", 9), "sub": ("a - b", 3), "mul": ("a * b", 18)}


def speed_c(names: list[str]) -> str:
    """The extension's source with these functions (each from OPS)."""
    functions = "".join(FUNCTION.format(name=n, body=OPS[n][0]) for n in names)
    table = "".join(ENTRY.format(name=n) for n in names)
    return (
        '#define PY_SSIZE_T_CLEAN\n#include <Python.h>\n#include "mathlib.h"\n\n'
        f"{functions}static PyMethodDef methods[] = {{\n{table}    {{NULL, NULL, 0, NULL}}\n}};\n\n"
        'static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_speed", NULL, -1, methods};\n\n'
        "PyMODINIT_FUNC PyInit__speed(void) { return PyModule_Create(&module); }\n"
    )


def _init(names: list[str]) -> str:
    return f"from fastsum._speed import {', '.join(names)}\n"


def _test(name: str) -> str:
    return TEST.format(name=name, value=OPS[name][1])


def make_mathlib(path: Path) -> Path:
    """The submodule's repository (bare, as a mirror is) holding mathlib.h."""
    work = path.with_name(path.name + "-work")
    work.mkdir()
    git(work, "init", "-q", "-b", "main")
    commit_files(work, {"mathlib.h": MATHLIB_H}, "mathlib", "2022-01-01T12:00:00Z")
    git(path.parent, "clone", "-q", "--bare", str(work), str(path))
    return path


def _submodules(repo: Path, mathlib: Path) -> None:
    """Gitlinks as `git submodule add` would leave them, without reaching their URLs."""
    pinned = git(mathlib, "rev-parse", "HEAD")
    (repo / ".gitmodules").write_text(
        f'[submodule "vendor/mathlib"]\n\tpath = vendor/mathlib\n\turl = {MATHLIB_URL}\n'
        f'[submodule "vendor/docs-theme"]\n\tpath = vendor/docs-theme\n\turl = {THEME_URL}\n'
    )
    for path in ("vendor/mathlib", "vendor/docs-theme"):
        (repo / path).mkdir(parents=True)  # unpopulated, as a clone leaves it
        git(repo, "update-index", "--add", "--cacheinfo", f"160000,{pinned},{path}")


def make_fastsum(path: Path, mathlib: Path) -> Path:
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    _submodules(path, mathlib)
    start = {
        "setup.py": SETUP_PY,
        "fastsum/__init__.py": _init(["add"]),
        "fastsum/_speed.c": speed_c(["add"]),
        "tests/test_add.py": _test("add"),
    }
    commit_files(path, start, "Start fastsum", "2023-03-01T12:00:00Z")
    pr1 = {
        "fastsum/__init__.py": _init(["add", "sub"]),
        "fastsum/_speed.c": speed_c(["add", "sub"]),
        "tests/test_sub.py": _test("sub"),
    }
    commit_files(path, pr1, "Add sub in C (#1)\n\nSubtract too.", "2023-04-01T12:00:00Z")
    commit_files(path, {"pyproject.toml": PYPROJECT}, "Declare the build", "2024-02-01T12:00:00Z")
    pr2 = {
        "fastsum/__init__.py": _init(["add", "sub", "mul"]),
        "fastsum/_speed.c": speed_c(["add", "sub", "mul"]),
        "tests/test_mul.py": _test("mul"),
    }
    commit_files(path, pr2, "Add mul in C (#2)\n\nMultiply too.", "2024-03-01T12:00:00Z")
    return path
