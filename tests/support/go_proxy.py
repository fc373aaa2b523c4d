"""A Go module proxy on 127.0.0.1 serving made-up modules, and a Go history spanning two eras.

The proxy speaks GOPROXY's protocol (`<module>/@v/list`, `.info`, `.mod`, `.zip`) from a directory
and answers 404 for anything else, so a GOPROXY list `http://127.0.0.1:N,https://proxy.golang.org`
takes the made-up modules from here and Go's toolchain modules from the real proxy.

`example.com/tinylib` v0.1.0 (2022) has `Greet`; v0.2.0 (May 2023) drops it for `Hello`. The greeter
module requires v0.1.0, then v0.2.0:
  era 1 (2023 H1): code calls Greet;  PR #1 adds `Farewell` + a test;
  era 2 (2023 H2): code calls Hello;  PR #2 ("Follow-up to #1") adds `Shout` + a test.
Both eras declare `go 1.22.0`: one toolchain layer serves them.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import io
import json
import threading
import zipfile
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from prchain.dev.repos import git
from tests.support.eras_repo import commit_files

TINYLIB = "example.com/tinylib"
GO_LINE = "go 1.22.0"
V1 = (
    'package tinylib\n\n// Greet says hi.\nfunc Greet(name string) string { return "hi " + name }\n'
)
V2 = 'package tinylib\n\n// Hello says hello.\nfunc Hello(name string) string { return "hello " + name }\n'


def h1(files: dict[str, bytes]) -> str:
    """Go's dirhash Hash1: sha256 over the sorted `<sha256>  <name>` lines of the files."""
    lines = "".join(f"{hashlib.sha256(files[n]).hexdigest()}  {n}\n" for n in sorted(files))
    return "h1:" + base64.b64encode(hashlib.sha256(lines.encode()).digest()).decode()


def publish(
    root: Path, module: str, version: str, time: str, files: dict[str, str], go_line: str = GO_LINE
) -> str:
    """Lay out one version of `module` under `root` as a proxy serves it; its go.sum lines."""
    gomod = f"module {module}\n\n{go_line}\n".encode()
    prefix = f"{module}@{version}/"
    contents = {prefix + "go.mod": gomod, **{prefix + p: t.encode() for p, t in files.items()}}
    folder = root / module / "@v"
    folder.mkdir(parents=True, exist_ok=True)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in contents.items():
            archive.writestr(name, data)
    (folder / f"{version}.zip").write_bytes(buffer.getvalue())
    (folder / f"{version}.mod").write_bytes(gomod)
    (folder / f"{version}.info").write_text(json.dumps({"Version": version, "Time": time}))
    with (folder / "list").open("a") as listing:
        listing.write(version + "\n")
    return f"{module} {version} {h1(contents)}\n{module} {version}/go.mod {h1({'go.mod': gomod})}\n"


class GoProxy:
    """Serves `root` over HTTP on 127.0.0.1 (a context manager; `url` while open)."""

    def __init__(self, root: Path) -> None:
        handler = functools.partial(_Quiet, directory=str(root))
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def __enter__(self) -> GoProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


def tinylib_proxy(root: Path) -> dict[str, str]:
    """tinylib's two versions under `root`; version → go.sum lines."""
    return {
        "v0.1.0": publish(root, TINYLIB, "v0.1.0", "2022-06-01T00:00:00Z", {"tinylib.go": V1}),
        "v0.2.0": publish(root, TINYLIB, "v0.2.0", "2023-05-01T00:00:00Z", {"tinylib.go": V2}),
    }


def _gomod(version: str) -> str:
    return f"module example.com/greeter\n\n{GO_LINE}\n\nrequire {TINYLIB} {version}\n"


def _code(call: str, extra: str = "") -> str:
    return (
        f'package greeter\n\nimport "{TINYLIB}"\n\n'
        f"// Welcome greets.\nfunc Welcome(name string) string {{ return tinylib.{call}(name) }}\n"
        + PADDING
        + extra
    )


def _test(name: str, call: str, want: str) -> str:
    return (
        f'package greeter\n\nimport "testing"\n\nfunc Test{name}(t *testing.T) {{\n'
        f'\tif got := {call}("ada"); got != "{want}" {{\n\t\tt.Fatalf("got %q", got)\n\t}}\n}}\n'
    )


# Keeps the lines PR #1 adds out of the diff context of the line the move to v0.2.0 changes: the
# chain's stage 2 base reverts PR #1 at B_2, which must apply (prchain/chains/evidence/revertible.py).
PADDING = "\n// The greetings below\n// build on Welcome,\n// whatever tinylib\n// calls it.\n"
FAREWELL = '\n// Farewell says goodbye.\nfunc Farewell(name string) string { return Welcome(name) + ", bye" }\n'
FAREWELL_LOUD = (
    "\n// Farewell says goodbye.\nfunc Farewell(name string) string {\n"
    '\tif strings.HasSuffix(name, "!") {\n\t\treturn Shout(name) + ", BYE"\n\t}\n'
    '\treturn Welcome(name) + ", bye"\n}\n'
)
SHOUT = "\n// Shout greets loudly.\nfunc Shout(name string) string { return strings.ToUpper(Welcome(name)) }\n"


def make_go_greeter(path: Path, sums: dict[str, str]) -> Path:
    """The greeter's history (see the module docstring); `sums` from `tinylib_proxy`."""
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    one = {"go.mod": _gomod("v0.1.0"), "go.sum": sums["v0.1.0"]}
    commit_files(
        path,
        {
            **one,
            "greeter.go": _code("Greet"),
            "greeter_test.go": _test("Welcome", "Welcome", "hi ada"),
        },
        "Start greeter",
        "2023-06-01T12:00:00Z",
    )
    commit_files(
        path,
        {
            "greeter.go": _code("Greet", FAREWELL),
            "farewell_test.go": _test("Farewell", "Farewell", "hi ada, bye"),
        },
        "Add a farewell (#1)\n\nSay goodbye too.",
        "2023-06-10T12:00:00Z",
    )
    two = {"go.mod": _gomod("v0.2.0"), "go.sum": sums["v0.2.0"]}
    commit_files(
        path,
        {
            **two,
            "greeter.go": _code("Hello", FAREWELL),
            "greeter_test.go": _test("Welcome", "Welcome", "hello ada"),
            "farewell_test.go": _test("Farewell", "Farewell", "hello ada, bye"),
        },
        "Move to tinylib's Hello",
        "2023-07-03T12:00:00Z",
    )
    # PR #2 builds on PR #1's lines (a link needs shared code): Farewell now shouts too.
    shout = _code("Hello", FAREWELL_LOUD + SHOUT).replace(
        'import "', 'import (\n\t"strings"\n\n\t"', 1
    )
    shout = shout.replace(f'"{TINYLIB}"\n', f'"{TINYLIB}"\n)\n', 1)
    commit_files(
        path,
        {"greeter.go": shout, "shout_test.go": _test("Shout", "Shout", "HELLO ADA")},
        "Add shouting (#2)\n\nFollow-up to #1: loud greetings too.",
        "2023-07-10T12:00:00Z",
    )
    return path


MONO = "example.com/mono"


def _plugin(name: str, requires: str = "") -> str:
    return f"module {MONO}/plugins/{name}\n\n{GO_LINE}\n" + (
        f"\nrequire {requires}\n" if requires else ""
    )


def make_go_monorepo(path: Path, sums: dict[str, str]) -> Path:
    """A monorepo of nested modules, laid out as cloudquery's is: a root module whose only package
    is a `main` without tests, and plugins that are modules of their own. `plugins/a` requires
    tinylib v0.1.0; `plugins/b` requires nothing. PR #1 adds a test to plugin a, PR #2 one to
    plugin b, both in 2023 H1: two eras of one half-year, one per module."""
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    a_code = f'package a\n\nimport "{TINYLIB}"\n\n// Welcome greets.\nfunc Welcome(n string) string {{ return tinylib.Greet(n) }}\n'
    b_code = "package b\n\n// Twice repeats.\nfunc Twice(s string) string { return s + s }\n"
    commit_files(
        path,
        {
            "go.mod": f"module {MONO}\n\n{GO_LINE}\n",
            "main.go": 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("mono") }\n',
            "plugins/a/go.mod": _plugin("a", f"{TINYLIB} v0.1.0"),
            "plugins/a/go.sum": sums["v0.1.0"],
            "plugins/a/a.go": a_code,
            "plugins/a/a_test.go": _test("Welcome", "Welcome", "hi ada").replace(
                "package greeter", "package a"
            ),
            "plugins/b/go.mod": _plugin("b"),
            "plugins/b/b.go": b_code,
            "plugins/b/b_test.go": _test("Twice", "Twice", "adaada").replace(
                "package greeter", "package b"
            ),
        },
        "Start the monorepo",
        "2023-06-01T12:00:00Z",
    )
    commit_files(
        path,
        {
            "plugins/a/a.go": a_code + FAREWELL,
            "plugins/a/farewell_test.go": _test("Farewell", "Farewell", "hi ada, bye").replace(
                "package greeter", "package a"
            ),
        },
        "plugin a: a farewell (#1)\n\nSay goodbye too.",
        "2023-06-10T12:00:00Z",
    )
    thrice = "\n// Thrice repeats more.\nfunc Thrice(s string) string { return Twice(s) + s }\n"
    commit_files(
        path,
        {
            "plugins/b/b.go": b_code + thrice,
            "plugins/b/thrice_test.go": _test("Thrice", "Thrice", "adaadaada").replace(
                "package greeter", "package b"
            ),
        },
        "plugin b: thrice (#2)\n\nRepeat more.",
        "2023-06-20T12:00:00Z",
    )
    return path
