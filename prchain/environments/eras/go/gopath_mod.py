"""A go.mod for a Go project from before modules (a GOPATH tree: no go.mod anywhere), as of its date.

This file runs inside the era build (`python3 - CUTOFF GO_LINE < this file`, in the build's copy of
B_t, with go on PATH and GOPROXY set), standard library only, and is imported by the tests. It

1. finds the module path: the import comment of a package clause (`package envconfig // import
   "github.com/kelseyhightower/envconfig"`), else the path the tree's own files import it by (an
   external test package imports the package under test by its full path; a package imports its
   siblings by theirs), else `example.com/<package name>`;
2. writes `module PATH` and the era's `go` line;
3. requires the module of each package the tree imports (the longest prefix of its path a proxy
   knows) at its newest release published by the era's date (the proxy's `@v/list` and `.info`
   times), else at its first release;
4. lets `go mod tidy` add the rest (a module with no release listed at its newest commit, as `go
   get` of the time fetched HEAD; what the required modules need, at the versions they name);
5. prints the go.mod it made; a go command that fails ends the build on go's own error line.
"""

from __future__ import annotations

import functools
import json
import os
import re
import subprocess
import sys
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Callable, Iterator

_PACKAGE = re.compile(r'^package\s+(\w+)\s*(?://\s*import\s+"([^"]+)")?', re.M)
_IMPORT_ONE = re.compile(r'^import\s+(?:[\w.]+\s+)?"([^"]+)"', re.M)
_IMPORT_BLOCK = re.compile(r"^import\s*\((.*?)\)", re.M | re.S)
_QUOTED = re.compile(r'"([^"]+)"')
_SKIP = re.compile(r"(^|/)(vendor|testdata|Godeps|_[^/]*|\.[^/]*)(/|$)")
_PRERELEASE = re.compile(r"^v\d+\.\d+\.\d+-")


def go_files(root: str) -> Iterator[tuple[str, str]]:
    """(directory relative to `root`, text) of each .go file outside vendor/, testdata/ and
    hidden or underscored directories."""
    for here, dirs, files in os.walk(root):
        rel = os.path.relpath(here, root).replace(os.sep, "/")
        rel = "" if rel == "." else rel
        dirs[:] = [d for d in dirs if not _SKIP.search(f"{rel}/{d}".lstrip("/"))]
        for name in files:
            if name.endswith(".go"):
                with open(os.path.join(here, name), encoding="utf-8", errors="replace") as f:
                    yield rel, f.read()


def imports(text: str) -> list[str]:
    found = _IMPORT_ONE.findall(text)
    for block in _IMPORT_BLOCK.findall(text):
        found += _QUOTED.findall(block)
    return found


def module_path(files: list[tuple[str, str]]) -> str:
    """The tree's module path (see the module docstring)."""
    dirs = {d for d, _ in files}
    names: dict[str, str] = {}
    for directory, text in files:
        clause = _PACKAGE.search(text)
        if clause is None:
            continue
        name, comment = clause.groups()
        if comment:  # the path of this directory: the module's is what is left above it
            suffix = f"/{directory}" if directory else ""
            if not suffix or comment.endswith(suffix):
                return comment[: len(comment) - len(suffix)]
        if not name.endswith("_test"):
            names.setdefault(directory, name)
    votes: Counter[str] = Counter()
    for _, text in files:
        for path in imports(text):
            if "." not in path.split("/")[0]:
                continue  # the standard library
            for directory in dirs:
                if directory and path.endswith(f"/{directory}"):
                    votes[path[: -len(directory) - 1]] += 1
            if "" in names and path.rsplit("/", 1)[-1] == names[""]:
                votes[path] += 1
    if votes:
        return votes.most_common(1)[0][0]
    return f"example.com/{names.get('', 'project')}"


def escaped(module: str) -> str:
    """A module path as the proxy protocol spells it (an upper-case letter is `!` and its lower)."""
    return re.sub(r"[A-Z]", lambda m: "!" + m.group(0).lower(), module)


def _fetch(url: str) -> str | None:
    try:
        with urllib.request.urlopen(url, timeout=60) as answer:
            return str(answer.read().decode())
    except (urllib.error.URLError, OSError):
        return None


def dated_version(
    module: str, cutoff: str, proxies: list[str], fetch: Callable[[str], str | None] = _fetch
) -> str | None:
    """The newest release of `module` published by `cutoff` (RFC 3339) that a proxy lists; else
    its first release (the code of the time is most like it: ugorji/go's codec became a module of
    its own in 2019, and its newest release asks for go1.21, where msgpack's tree of 2015 asked
    for none); None when no proxy lists a release."""
    for proxy in proxies:
        base = f"{proxy.rstrip('/')}/{escaped(module)}/@v"
        listing = fetch(f"{base}/list")
        if listing is None:
            continue
        dated = []
        for version in listing.split():
            if _PRERELEASE.match(version):
                continue
            info = fetch(f"{base}/{version}.info")
            when = json.loads(info).get("Time", "") if info else ""
            if when:
                dated.append((when, version))
        by_then = [d for d in dated if d[0] <= cutoff]
        if by_then or dated:
            return max(by_then)[1] if by_then else min(dated)[1]
    return None


def module_of(
    package: str, proxies: list[str], fetch: Callable[[str], str | None] = _fetch
) -> str | None:
    """The module that provides import path `package`: the longest prefix of it a proxy knows
    (`golang.org/x/crypto` for `golang.org/x/crypto/ssh/terminal`), or None."""
    parts = package.split("/")
    for end in range(len(parts), 1, -1):
        prefix = "/".join(parts[:end])
        if any(fetch(f"{p.rstrip('/')}/{escaped(prefix)}/@v/list") is not None for p in proxies):
            return prefix
    return None


def external_imports(files: list[tuple[str, str]], own: str) -> list[str]:
    """The import paths of the tree that are neither the standard library nor its own."""
    found = {
        path
        for _, text in files
        for path in imports(text)
        if "." in path.split("/")[0] and path != own and not path.startswith(own + "/")
    }
    return sorted(found)


def _go(*args: str) -> None:
    """A go command of the build: its output shown; a failure ends the build on go's own last
    error line."""
    done = subprocess.run(["go", *args], capture_output=True, text=True)
    sys.stdout.write(done.stdout + done.stderr)
    if done.returncode != 0:
        lines = [line.strip() for line in done.stderr.splitlines() if line.strip()]
        sys.exit(f"gopath: go {' '.join(args)} failed: {lines[-1] if lines else done.returncode}")


def main(cutoff: str, go_line: str) -> None:
    """Requirements are dated before tidy runs: tidy alone takes each module's newest release,
    which may ask for a newer Go than the era's (go-github's tree of 2017: golang.org/x/oauth2's
    go.mod of 2026, which go1.16 cannot even parse)."""
    files = list(go_files("."))
    path = module_path(files)
    with open("go.mod", "w", encoding="utf-8") as gomod:
        gomod.write(f"module {path}\n\n{go_line}\n")
    print(f"gopath: module {path} (no go.mod at B_t)")
    proxies = [p for p in re.split(r"[,|]", os.environ.get("GOPROXY", "")) if p.startswith("http")]
    # one answer per URL: packages of a module probe the same prefixes, and the module's `list`
    # found by module_of is read again by dated_version
    fetch = functools.cache(_fetch)
    modules = {module_of(package, proxies, fetch) for package in external_imports(files, path)}
    for module in sorted(m for m in modules if m):
        version = dated_version(module, cutoff, proxies, fetch)
        if version:
            _go("mod", "edit", f"-require={module}@{version}")
            print(f"gopath: {module} {version}, its release nearest {cutoff[:10]}")
        else:
            print(f"gopath: {module}: no release listed, tidy chooses")
    _go("mod", "tidy", "-e")
    with open("go.mod", encoding="utf-8") as gomod:
        print(gomod.read())


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
