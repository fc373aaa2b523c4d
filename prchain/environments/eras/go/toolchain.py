"""Which Go an era gets, and the root commands that install it from the Go module proxy.

Go publishes every release as a module, `golang.org/toolchain@v0.0.1-go1.X.Y.linux-amd64`: the
proxy serves each one as a zip holding a whole GOROOT, whatever the Debian suite, so one source
gives the exact release a go.mod names (Debian's golang packages give one per suite: bullseye 1.15,
bookworm 1.19, trixie 1.24). The go command itself can switch to such a toolchain
(`GOTOOLCHAIN=go1.X.Y`), but only from go 1.21 on and only with the checksum database reachable;
fetching the zip directly works for every version and every suite.

The rule, by what go.mod says (the `go` line meant a language version before go 1.21, a minimum
toolchain from then on):
| go.mod says               | the era gets                                   | why                     |
| toolchain go1.22.3        | go1.22.3                                       | the exact toolchain     |
| go 1.21.4 (a patch)       | go1.21.4                                       | the exact minimum       |
| go 1.22 (no patch, ≥1.21) | the newest of 1.22 and the Go of the commit's  | what its authors ran    |
| go 1.16 (before 1.21)     | date, at that minor's last patch               | (never below the line)  |
| no go line                | the Go of the commit's date                    |                         |
"""

from __future__ import annotations

import re
import shlex
from datetime import datetime

from prchain.environments.eras.build import GO_PROXY_VARIABLE

# When each minor came out (go.dev/doc/devel/release), and its last patch the proxy served on
# 2026-11-24 (`golang.org/toolchain/@v/list`). A minor newer than the table is taken as its .0.
RELEASED = {
    11: "2018-08-24",
    12: "2019-02-25",
    13: "2019-09-03",
    14: "2020-02-25",
    15: "2020-08-11",
    16: "2021-02-16",
    17: "2021-08-16",
    18: "2022-03-15",
    19: "2022-08-02",
    20: "2023-02-01",
    21: "2023-08-08",
    22: "2024-02-06",
    23: "2024-08-13",
    24: "2025-02-11",
    25: "2025-08-12",
    26: "2026-02-10",
    27: "2026-08-18",
}
LAST_PATCH = {
    11: 13,
    12: 17,
    13: 15,
    14: 15,
    15: 15,
    16: 15,
    17: 13,
    18: 10,
    19: 13,
    20: 14,
    21: 13,
    22: 12,
    23: 12,
    24: 13,
    25: 14,
    26: 11,
    27: 4,
}
OLDEST = min(RELEASED)  # modules came with go 1.11
GOROOTS = "/opt/go/toolchains"
_GO_LINE = re.compile(r"^go\s+1\.(\d+)(?:\.(\d+))?\s*(?://.*)?$", re.M)
_TOOLCHAIN_LINE = re.compile(r"^toolchain\s+go1\.(\d+)(?:\.(\d+))?\s*(?://.*)?$", re.M)


def go_line(gomod: str) -> tuple[int, int | None] | None:
    """(minor, patch or None) of go.mod's `go` line."""
    found = _GO_LINE.search(gomod)
    return (int(found.group(1)), _int(found.group(2))) if found else None


def toolchain_line(gomod: str) -> tuple[int, int | None] | None:
    found = _TOOLCHAIN_LINE.search(gomod)
    return (int(found.group(1)), _int(found.group(2))) if found else None


def _int(text: str | None) -> int | None:
    return int(text) if text is not None else None


def of_date(when: datetime) -> int:
    """The newest Go minor released before `when` (the oldest module-aware one before that)."""
    day = when.date().isoformat()
    out = [minor for minor, released in RELEASED.items() if released <= day]
    return max(out) if out else OLDEST


def choose(gomods: list[str], when: datetime) -> tuple[str, str]:
    """(version such as "1.22.3", why) for a project whose go.mod files are `gomods` (the main
    module's first; a workspace's modules after it, their highest line wins)."""
    toolchains = [t for t in map(toolchain_line, gomods) if t]
    lines = [g for g in map(go_line, gomods) if g]
    if toolchains:
        minor, patch = max(toolchains, key=_order)
        return _release(minor, patch), f"go.mod's toolchain line names go1.{minor}.{patch or 0}"
    top = max(lines, key=_order) if lines else None
    if top and top[0] >= 21 and top[1] is not None:
        return _release(*top), f"go.mod's go line asks for at least go1.{top[0]}.{top[1]}"
    dated = of_date(when)
    said = f"go.mod's go line says 1.{top[0]}" if top else "go.mod has no go line"
    if top and top[0] > dated:
        return _release(top[0], None), f"{said}, newer than the Go of {when.date()}"
    return _release(dated, None), f"{said}; go1.{dated} was current on {when.date()}"


def _order(found: tuple[int, int | None]) -> tuple[int, int]:
    return found[0], found[1] if found[1] is not None else -1


def _release(minor: int, patch: int | None) -> str:
    """go 1.X.Y as asked, else 1.X's last patch (1.X.0 for a minor newer than the table)."""
    minor = max(minor, OLDEST)
    return f"1.{minor}.{patch if patch is not None else LAST_PATCH.get(minor, 0)}"


def module_version(version: str) -> str:
    """The proxy's version of a Go release: `v0.0.1-go1.22.3.linux-amd64` (1.X.0 is `go1.X`
    before 1.21, whose first releases had no `.0`)."""
    minor, patch = (int(p) for p in version.split(".")[1:3])
    name = f"1.{minor}" if patch == 0 and minor < 21 else version
    return f"v0.0.1-go{name}.linux-amd64"


# Unpacks the toolchain zip (module zips keep no file modes: the executables get theirs back) and
# puts wrappers for go and gofmt on /usr/local/bin (a wrapper, not a link: the go command finds
# its GOROOT from its own path). Python is in every base image; neither curl nor unzip is.
_INSTALL = """python3 - "$GOPROXY_URL" {module} {root} <<'PY'
import io, os, sys, urllib.request, zipfile
proxies, module, root = sys.argv[1:]
for proxy in [p for p in proxies.replace("|", ",").split(",") if "://" in p]:
    url = f"{{proxy.rstrip('/')}}/golang.org/toolchain/@v/{{module}}.zip"
    try:
        data = zipfile.ZipFile(io.BytesIO(urllib.request.urlopen(url, timeout=600).read()))
        break
    except OSError as exc:  # not served there (a proxy of the project's own modules): the next
        print(url, exc)
else:
    sys.exit(f"no Go proxy serves {{module}}")
prefix = f"golang.org/toolchain@{{module}}/"
for info in data.infolist():
    if info.is_dir() or not info.filename.startswith(prefix):
        continue
    path = os.path.join(root, info.filename[len(prefix):])
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as out:
        out.write(data.read(info))
    tool = "/bin/" in path or "/pkg/tool/" in path
    os.chmod(path, 0o755 if tool else 0o644)
print("unpacked", module, "in", root)
PY"""


# Packages compile without debug information, Go's (DWARF) and cgo's C (go's default C flags are
# `-O2 -g`): an era's compiled packages are a quarter smaller (goreleaser/nfpm of 2025-03: 188 →
# 139 MB with the standard library; DataDog/zstd's cgo package 10 MB less without `-g`) and a
# panic still names its file and line. A debugger has less to show; nothing else changes. Like
# Rust's LEAN_BUILDS.
LEAN = "-gcflags=all=-dwarf=false"
LEAN_CGO = {"CGO_CFLAGS": "-O2", "CGO_CXXFLAGS": "-O2"}
# The compiled entries an image layer holds (the standard library's here, an era's dependencies'
# above) are dated KEPT_DATE: go never refreshes (nor trims) an entry dated in the future, so a
# build on the layer reads them where they are, without copying them into its own layer. A build
# tells them from its own entries by LAYER_BEFORE.
KEPT_DATE = "2100-01-01"
LAYER_BEFORE = "2099-01-01"


def install_commands(version: str, cache: str) -> list[str]:
    """Root commands of the toolchain layer: go `version` in /opt/go/toolchains/<version>, from
    the first proxy of the build's GO_PROXY_VARIABLE (GOPROXY's syntax) that serves it, and its
    standard library compiled into the build cache `cache` (147 MB on go1.23, which every era
    image held again)."""
    root = f"{GOROOTS}/{version}"
    module = module_version(version)
    wrap = (
        f"for n in go gofmt; do printf '#!/bin/sh\\nexec {root}/bin/%s \"$@\"\\n' $n "
        "> /usr/local/bin/$n && chmod 755 /usr/local/bin/$n; done"
    )
    return [
        f'export GOPROXY_URL="${GO_PROXY_VARIABLE}"',
        _INSTALL.format(module=shlex.quote(module), root=shlex.quote(root)),
        wrap,
        "go version",
        f"mkdir -p {cache} && GOCACHE={cache} GOFLAGS={LEAN} go build std",
        f"find {cache} -type f -exec touch -h -d {KEPT_DATE} {{}} + && chmod -R a+rwX {cache}",
    ]
