"""The lexer for a file name, looked up from an index of Pygments' globs, is the class Pygments'
own lookup gives, for every glob of every lexer filled in several ways and for real names."""

from __future__ import annotations

import subprocess
from pathlib import Path

from pygments.lexers import find_lexer_class_for_filename
from pygments.lexers._mapping import LEXERS

from prchain.chains.reading.lexer_names import lexer_class_for_filename

REAL = [
    "mod.rs", "Cargo.toml", "CMakeLists.txt", "Makefile", "Makefile.am", "GNUmakefile",
    "config.h.in", "loops.c.src", "B006_1.py", "B006_1.py.snap", "x.PY", "Dockerfile",
    "go.mod", "go.sum", "a.tar.gz", ".bashrc", "SConstruct", "index.d.ts", "app.test.tsx", "",
    ".", "py", ".py", "noext", "a..py", "weird name ü.rs",
]  # fmt: skip


def _names() -> set[str]:
    names = set(REAL)
    for _module, _name, _aliases, globs, _types in LEXERS.values():
        for glob in globs:
            for fill in ("", "x", "a.b"):
                plain = glob.replace("*", fill)
                names |= {
                    plain,
                    f"pre{plain}",
                    plain.replace("?", "z").replace("[", "").replace("]", ""),
                }
    root = Path(__file__).resolve().parents[2]
    listed = subprocess.run(["git", "-C", str(root), "ls-files"], capture_output=True, text=True)
    return names | {path.rsplit("/", 1)[-1] for path in listed.stdout.split()}


def test_the_lexer_for_a_name_is_pygments_own() -> None:
    names = _names()
    assert len(names) > 5000
    different = [
        n for n in names if lexer_class_for_filename(n) is not find_lexer_class_for_filename(n)
    ]
    assert different == []
