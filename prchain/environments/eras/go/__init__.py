"""The Go ecosystem: the era's Go release, its module cache and a warm build cache.

An era image holds, under /opt/go: the Go toolchain of the era with its standard library compiled
(a layer of its own, shared across eras and repositories asking for the same release), B_t's
modules and a build cache (GOCACHE) holding every dependency package compiled, so the agent's
first `go test` compiles the repository's own packages only. The repository's packages are never
compiled into the image: a stage of the era older than the commit the image was built from would
find them there. Each stage's container is fresh, so nothing the agent writes lasts.

Each stage starts by copying the warm cache to /work/.cache/go-build (the recipe's setup command),
the agent's GOCACHE: the sandbox's image may be read-only.

From go 1.15 (the first to read GOMODCACHE) the image keeps B_t's modules as a module proxy serves
them, zipped (/opt/go/proxy, the sandbox's GOPROXY), while they unpack to at most
`eras.go_zipped_mb`: GOMODCACHE (/opt/go/mod) is then a link to the stage's /work/.cache/mod, and go
unpacks there what a build needs, in seconds (goreleaser/nfpm's era of 2025-03: 77 MB of zips
against 181 MB unpacked, in every era image). A larger set is kept unpacked in /opt/go/mod itself,
without zips, so no stage carries it on its disk (ko-build/ko's of 2025: 1,058 MB). A compiled
package's cache key names its source directory, so the modules are at the same path either way,
and the dependency packages compile from a copy of B_t's tree where a stage's checkout is (a
vendored package's directory is in the tree). Older Go keeps the unpacked modules in GOPATH.

The standard library is compiled in the toolchain layer, its cache entries dated 2100, and so are an
era's own once built: go refreshes an entry's date when the entry is older than an hour, and on an
image layer a new date copies the whole file into the layer above (the standard library is 147 MB
on go1.23); a date in the future is never refreshed, and never trimmed. So an era grows on the
image of an earlier verified era of the same toolchain (prchain/setup/ladder.py) with a layer
of the modules that changed and the packages built on them. Every package compiles without debug
information (toolchain.LEAN).

Sandboxes are offline: GOPROXY is the image's modules, then off (nothing else is fetched),
GOTOOLCHAIN=local (no switch to a toolchain that would have to be downloaded), GOFLAGS=-mod=mod (a
go.mod that is not tidy is completed from the cache instead of refused; -mod=vendor when the tree
vendors its modules; none before go 1.14, which had no such flag and completed go.mod by itself).
The checksum database is unreachable here, so GOSUMDB=off: go.sum still checks every download.

The build keeps what it fetched and compiled on the repository's cache volume (prchain/environments/eras/
build.py), so a later era of the repository, or the same era built again after `env prune`, neither
downloads nor compiles it again: the module zips in GOPROXY's layout, read first as a `file://`
proxy (go 1.13 on; a module it lacks falls through to the network), and the compiled packages,
copied into the image's build cache before the build (never over an entry a lower layer
holds). Go marks every cache entry a build uses (it refreshes the file's mtime when older than an
hour), so the copied entries are dated 2000 first and those still dated 2000 afterwards, another
era's, are deleted: the image holds what a cold build would have compiled, no more.

A tree of several modules without a go.work (cloudquery's plugins, nested under a root module that
holds none of them) is tested module by module, each in module mode from its own directory:
`prchain-in-modules go test ./plugins/a/... ./plugins/b/x` (a script of the era image) runs
`go test` once per module the patterns fall in, with the patterns made relative to it. A workspace
joining them would merge their module graphs, and a graph no module has is one where two modules
provide a package (cloudquery's transformer of 2025-01: the monolithic genproto beside its split
modules, "ambiguous import").
"""

from __future__ import annotations

import re
import shlex
from dataclasses import replace
from datetime import UTC
from pathlib import Path

from prchain.environments.carry import WORKDIR
from prchain.environments.eras.build import CACHE, add_to_cache
from prchain.environments.eras.config import ErasConfig
from prchain.environments.eras.ecosystems import ECOSYSTEMS, NoPlan, Plan
from prchain.environments.eras.go import toolchain
from prchain.environments.eras.go.report import GO_TEST, IN_MODULES, GoTest
from prchain.environments.eras.manifests import Snapshot
from prchain.environments.eras.reports import TestReport
from prchain.environments.eras.sealed import SealedPlaces

PROJECT_SRC = "/opt/prchain/src"
# Where each stage's checkout is: the dependency packages compile from a copy of B_t's tree there,
# as a compiled package's cache key names its directory (a vendored package's is in the tree:
# compiled from /opt/prchain/src, none of ko's 518 served a stage).
CHECKOUT = WORKDIR
GO_HOME = "/opt/go"
GOPATH = f"{GO_HOME}/path"
# GOPATH's own: go before 1.15 knows no GOMODCACHE and keeps modules there whatever it says.
MODCACHE = f"{GOPATH}/pkg/mod"
BUILDCACHE = f"{GO_HOME}/cache"
# The repository's cache volume (mounted in its builds only): what earlier builds fetched, in GOPROXY's
# layout (no `list` files: a version query must reach the network, not this cache's partial lists),
# and what they compiled (entries keyed by their inputs, so any era may share them).
VOLUME_DOWNLOADS = f"{CACHE}/go/download"
VOLUME_BUILDS = f"{CACHE}/go/build"
# The date the entries copied from the volume get; those the build does not use keep it.
UNUSED_MARK = "/tmp/prchain-go-unused"
# Entries dated after this one are a lower layer's (toolchain.KEPT_DATE): no era build re-dates
# or replaces them.
LAYER_MARK = "/tmp/prchain-go-layer"
# go 1.15 on: GOMODCACHE. The image keeps the era's modules zipped, in GOPROXY's layout (SERVED),
# while they unpack to at most `eras.go_zipped_mb`, and MODULES is then a link to where each stage
# unpacks them (UNPACKED); a larger set is kept unpacked in MODULES itself. Either way a module's
# directory is the same path, so the image's compiled packages serve.
MODULES = f"{GO_HOME}/mod"
SERVED = f"{GO_HOME}/proxy"
UNPACKED = "/work/.cache/mod"
# The agent's build cache, a copy of the image's made per stage: a sandbox may be a read-only image
# with tmpfs mounts (disk_cap tmpfs), where go can neither add to /opt/go/cache nor, from go 1.24,
# build what is not in it (cobra's TestDeadcodeElimination runs `go build`: read-only file system).
AGENT_CACHE = "/work/.cache/go-build"
SEED_CACHE = (
    f"[ -d {AGENT_CACHE} ] || {{ mkdir -p /work/.cache && cp -a {BUILDCACHE} {AGENT_CACHE}; }}"
)
# go before 1.13 locks the module cache even to read it: its GOPATH is a per-stage copy too.
AGENT_GOPATH = "/work/.cache/gopath"
SEED_GOPATH = f"[ -d {AGENT_GOPATH} ] || cp -a {GOPATH} {AGENT_GOPATH}"
# `prchain-in-modules CMD SUB [FLAGS] PATTERN...`: the command once per module, from its directory,
# with the patterns (`./x/...`, `./x`, `.`) in it made relative to it; exit status the worst one.
IN_MODULES_SCRIPT = r"""#!/bin/bash
set -u
cmd=("$1" "$2"); shift 2
flags=(); mods=(); declare -A pats=()
for w in "$@"; do
  case "$w" in ./*|.) ;; *) flags+=("$w"); continue;; esac
  d=${w#./}; tail=""
  case "$d" in ...) d=""; tail="/...";; */...) d=${d%/...}; tail="/...";; .) d="";; esac
  m=$d
  while [ -n "$m" ] && [ ! -f "$m/go.mod" ]; do case "$m" in */*) m=${m%/*};; *) m="";; esac; done
  if [ -z "$m" ]; then rel="./$d$tail"; [ -n "$d" ] || rel=".$tail"
  elif [ "$d" = "$m" ]; then rel=".$tail"; else rel=".${d#"$m"}$tail"; fi
  key=${m:-.}
  [ -n "${pats[$key]+x}" ] || mods+=("$key")
  pats[$key]="${pats[$key]:-} $rel"
done
rc=0
for m in "${mods[@]}"; do
  # shellcheck disable=SC2086
  (cd "$m" && "${cmd[@]}" "${flags[@]}" ${pats[$m]}) || rc=$?
done
exit $rc
"""
# A GOPATH tree's go.mod and go.sum, as its build made them (gopath_mod.py), and the least Go it
# gets (module mode by default, `go mod tidy -e`).
MADE_MOD = f"{GO_HOME}/made-mod"
GOPATH_FLOOR = 16
# When each Debian suite was released: an era gets the newest one of its date (its gcc builds the
# era's cgo packages), the oldest configured one before that.
DEBIAN_RELEASED = {
    "buster": "2019-07-06",
    "bullseye": "2021-08-14",
    "bookworm": "2023-06-10",
    "trixie": "2025-08-09",
}
_USE = re.compile(r"^\s*(?:use\s+)?(\.[^\s()]*|\"\.[^\"]*\")\s*$", re.M)
_REQUIRES_GO = re.compile(r"requires [Gg]o (?:>= ?)?1\.(\d+)(?:\.(\d+))?")
# The packages a warm cache holds: everything the suite imports that is not the main module's.
_DEPS = "{{if not (and .Module .Module.Main)}}{{.ImportPath}}{{end}}"


def gopath(snap: Snapshot) -> bool:
    """Whether the tree is a Go project from before modules: Go files, and no go.mod or go.work
    anywhere (kelseyhightower/envconfig of 2016). Its build makes it a go.mod as of its date
    (gopath_mod.py), which each stage's setup puts in its tree."""
    return not any(_is_gomod(p) or p == "go.work" for p in snap.files) and any(
        p.endswith(".go") for p in snap.paths
    )


def module_dirs(snap: Snapshot) -> list[str]:
    """Where the suite's modules are: in a tree of nested modules (a monorepo of plugins), the
    modules owning the stage's test files; else the root module (a GOPATH tree's, made at the
    build); else a root go.work's modules; else every go.mod of the tree (a repository of
    independent modules)."""
    if gopath(snap):
        return ["."]
    owners = stage_modules(snap)
    if owners and owners != ["."]:
        return owners
    if "go.mod" in snap.files:
        return ["."]
    if stranded(snap):
        return []
    if "go.work" in snap.files:
        used = [u.strip('"').removeprefix("./").rstrip("/") or "." for u in workspace(snap)]
        return used or ["."]
    dirs = [p.rsplit("/", 1)[0] for p in snap.files if p.endswith("/go.mod")]
    return sorted(d for d in dirs if not re.search(r"(^|/)(examples?|_\w+)(/|$)", d))


def stage_modules(snap: Snapshot) -> list[str]:
    """The modules (directories of the nearest go.mod above each) of the stage's `_test.go` files,
    [] when the era is no stage's or a root go.work makes the tree one workspace already."""
    if "go.work" in snap.files:
        return []
    roots = {p.removesuffix("go.mod").rstrip("/") or "." for p in snap.files if _is_gomod(p)}
    found: set[str] = set()
    for path in snap.tests:
        if not path.endswith("_test.go"):
            continue
        parts = path.split("/")[:-1]
        above = ["/".join(parts[:i]) or "." for i in range(len(parts), -1, -1)]
        found.update(next(([d] for d in above if d in roots), []))
    return sorted(found)


def stranded(snap: Snapshot) -> list[str]:
    """The stage's `_test.go` files when none of them lies in a module of B_t (no go.mod above
    them, none at the root, no go.work): the PR adds the module they are in (cloudquery's
    plugins/destination/file of 2022-12). Its suite cannot run at B_t, and its go.mod, which
    would say its dependencies, is the gold patch's."""
    tests = [p for p in snap.tests if p.endswith("_test.go")]
    if not tests or "go.work" in snap.files or "go.mod" in snap.files or gopath(snap):
        return []
    return [] if stage_modules(snap) else tests


def in_modules(snap: Snapshot) -> bool:
    """Whether the suite is several modules no go.work joins: each is tested from its own
    directory (`prchain-in-modules`)."""
    return module_dirs(snap) != ["."] and "go.work" not in snap.files


def _is_gomod(path: str) -> bool:
    return path == "go.mod" or path.endswith("/go.mod")


def workspace(snap: Snapshot) -> list[str]:
    """The `use` directories of the root go.work (both the one-line and the block form)."""
    return _USE.findall(re.sub(r"//.*", "", snap.text("go.work")))


def gomods(snap: Snapshot) -> list[str]:
    return [snap.text("go.mod" if d == "." else f"{d}/go.mod") for d in module_dirs(snap)]


def vendored(snap: Snapshot) -> bool:
    return "go.mod" in snap.files and "vendor/modules.txt" in snap.paths


def go_flags(snap: Snapshot, version: str) -> str:
    """-mod=mod lets an untidy go.mod resolve from the cache; a workspace refuses it, and go
    before 1.14 knows no such flag (it updated go.mod by itself then). Every package compiles
    lean (toolchain.LEAN), the image's and the agent's alike, or the image's would not serve."""
    if vendored(snap):
        mode = "-mod=vendor"
    elif "go.work" in snap.files or _minor(version) < 14:
        mode = ""
    else:
        mode = "-mod=mod"
    return f"{mode} {toolchain.LEAN}".strip()


def _minor(version: str) -> int:
    return int(version.split(".")[1])


def served(version: str) -> bool:
    """Whether the era's modules are kept zipped and unpacked per stage (go 1.15 on)."""
    return _minor(version) >= 15


def module_cache(version: str) -> str:
    """GOMODCACHE, the image's build and the stage's alike."""
    return MODULES if served(version) else MODCACHE


def setup_command(version: str, made: bool = False) -> str:
    """Per stage, as the agent: the image's caches copied where the agent may write (and where
    go unpacks the modules kept zipped); for a GOPATH tree (`made`), the go.mod its build made,
    unless the tree has one."""
    if served(version):
        seed = f"{SEED_CACHE} && mkdir -p {UNPACKED}"
    else:
        seed = SEED_CACHE if _minor(version) >= 13 else f"{SEED_CACHE} && {SEED_GOPATH}"
    return f"{seed} && {{ [ -e go.mod ] || cp {MADE_MOD}/go.* . ; }}" if made else seed


def image_env(snap: Snapshot, version: str) -> dict[str, str]:
    return {
        # A module the image lacks falls through to `off`, whose error says the sandbox is offline.
        "GOPROXY": f"file://{SERVED},off" if served(version) else "off",
        "GOSUMDB": "off",
        "GOTOOLCHAIN": "local",
        "GOFLAGS": go_flags(snap, version),
        "GOMODCACHE": module_cache(version),
        "GOCACHE": AGENT_CACHE,
        "GOPATH": GOPATH if _minor(version) >= 13 else AGENT_GOPATH,
        "GOENV": "off",  # no go env file under a HOME the agent may not have
        **toolchain.LEAN_CGO,
    }


def test_command(snap: Snapshot) -> str:
    """`go test ./...` in the root module (without vet in a GOPATH tree); a workspace's modules by
    their patterns (`./...` of a root that is no module matches nothing); modules no workspace
    joins each from its own directory. `tests verify` narrows any of them to the stage's
    packages."""
    if gopath(snap):
        # Its Go is newer than its code (GOPATH_FLOOR or later), and `go test`'s vet has grown
        # stricter since: go-github's tests of 2017 stopped on "Errorf format %q has arg
        # tt.encoding of wrong type *string". Vet is no test of the code's behaviour.
        return f"{GO_TEST} -vet=off ./..."
    dirs = module_dirs(snap)
    if dirs == ["."]:
        return f"{GO_TEST} ./..."
    patterns = [shlex.quote("./..." if d == "." else f"./{d}/...") for d in dirs]
    return " ".join([IN_MODULES, GO_TEST, *patterns] if in_modules(snap) else [GO_TEST, *patterns])


def build_commands(snap: Snapshot, config: ErasConfig, version: str) -> list[str]:
    """Root commands with the network: B_t's modules into the cache, then every package the
    suite imports from outside the main module compiled into the build cache."""
    flags = shlex.quote(go_flags(snap, version))
    modcache = module_cache(version)
    fetch = (
        f"export GOPROXY={shlex.quote(build_proxy(config.go_proxy, version))} GOFLAGS={flags} "
        f"GOCACHE={BUILDCACHE} GOPATH={GOPATH} GOMODCACHE={modcache}"
    )
    # zipped unless a lower layer keeps its modules unpacked (or zipped already)
    zipped = (
        f"mkdir -p {UNPACKED} && {{ [ -L {MODULES} ] || [ -d {MODULES} ] || "
        f"ln -s {UNPACKED} {MODULES}; }}"
    )
    commands = [
        fetch,
        zipped if served(version) else f"mkdir -p {MODCACHE}",
        f"mkdir -p {BUILDCACHE} /work && rm -rf {CHECKOUT} && cp -a {PROJECT_SRC} {CHECKOUT}",
        *(made_module(snap, version) if gopath(snap) else []),
        *warm_start(),
    ]
    if in_modules(snap):
        script = f"/usr/local/bin/{IN_MODULES}"
        commands.append(
            f"printf '%s' {shlex.quote(IN_MODULES_SCRIPT)} > {script} && chmod 755 {script}"
        )
    for d in module_dirs(snap):
        where = shlex.quote(f"{CHECKOUT}/{d}")
        if not vendored(snap):
            commands.append(f"cd {where} && go mod download")
        # A package that does not build at B_t must not stop the image: the suite says so.
        commands.append(
            f"cd {where} && go list -e -deps -test -f {shlex.quote(_DEPS)} ./... | sort -u"
            " | xargs -r go build || echo 'some dependency packages did not build'"
        )
    return [
        *commands,
        f"cd / && rm -rf {CHECKOUT}",
        *warm_end(modcache, config.go_zipped_mb),
        *finish_commands(version),
    ]


def made_module(snap: Snapshot, version: str) -> list[str]:
    """A GOPATH tree's go.mod and go.sum, made in the build's copy as of the tree's date and kept
    in the image (MADE_MOD) for each stage's setup to copy."""
    script = (Path(__file__).parent / "gopath_mod.py").read_text()
    cutoff = snap.date.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    line = f"go 1.{_minor(version)}"
    return [
        f"cd {CHECKOUT} && python3 - {cutoff} {shlex.quote(line)} <<'PY'\n{script}PY",
        f"mkdir -p {MADE_MOD} && cp {CHECKOUT}/go.mod {MADE_MOD}/ && "
        f"{{ [ ! -f {CHECKOUT}/go.sum ] || cp {CHECKOUT}/go.sum {MADE_MOD}/; }} && "
        f"chmod -R a+rX {MADE_MOD}",
    ]


def build_proxy(proxy: str, version: str) -> str:
    """The build's GOPROXY: the volume's downloads first (a module they lack falls through on its
    404), from go 1.13, the first to take a list."""
    return f"file://{VOLUME_DOWNLOADS},{proxy}" if _minor(version) >= 13 else proxy


def warm_start() -> list[str]:
    """The volume's compiled packages in the build cache (none over an entry a lower layer holds:
    replacing one copies it into the era's layer), dated 2000 so that those this build does not
    use can be told apart; trim.txt says the cache was trimmed now, or go would delete entries
    that old (unused for 5 days) before the build got to them."""
    return [
        f"mkdir -p {VOLUME_DOWNLOADS} {VOLUME_BUILDS} && tar -C {VOLUME_BUILDS} -cf - . "
        f"| tar -C {BUILDCACHE} --skip-old-files -xf -",
        f"touch -d 2000-01-01 {UNUSED_MARK} && touch -d {toolchain.LAYER_BEFORE} {LAYER_MARK}",
        f"find {BUILDCACHE} -type f ! -newer {LAYER_MARK} -exec touch -h -d 2000-01-01 {{}} + "
        f"&& date +%s > {BUILDCACHE}/trim.txt",
    ]


def warm_end(modcache: str, zipped_mb: int) -> list[str]:
    """Entries this build did not use deleted from the image; what it fetched and compiled added
    to the volume (never a `list`, a lock or a partial download, nor the lower layers' entries);
    this build's entries dated as the lower layers'. Then the modules, whose zips the volume
    keeps for the next build either way: from go 1.15, zipped in the image (SERVED) and none
    unpacked while they unpack to at most `zipped_mb` (once unpacked in a layer, unpacked above
    it too); else unpacked without their zips (go reads a module from its tree once its
    `.ziphash` is there; goreleaser/nfpm's era of 2025: 77 of 438 MB)."""
    download = f"{modcache}/cache/download"
    modules = add_to_cache(download, VOLUME_DOWNLOADS, skip=_NOT_CACHED, what="go module")
    unzipped = f"find {download} -name '*.zip' -delete"
    commands = [
        f"find {BUILDCACHE} -type f ! -newer {UNUSED_MARK} -delete",
        add_to_cache(BUILDCACHE, VOLUME_BUILDS, what="go build", before=LAYER_MARK),
        # dated as the layers below: an era growing on this image reads them where they are
        f"find {BUILDCACHE} -type f ! -newer {LAYER_MARK} "
        f"-exec touch -h -d {toolchain.KEPT_DATE} {{}} + && rm -f {UNUSED_MARK} {LAYER_MARK}",
        f"if [ -d {download} ]; then {modules}; fi",
    ]
    if modcache != MODULES:
        return [*commands, f"if [ -d {download} ]; then {unzipped}; fi"]
    # the modules this image lacks (one grown on an earlier era's holds that era's already)
    names = "".join(f" ! -name {shlex.quote(pattern)}" for pattern in _NOT_CACHED)
    serve = (
        f"mkdir -p {SERVED} && (cd {download} && find . -type f{names} -print0) | tar -C "
        f"{download} --null -T - -cf - | tar -C {SERVED} --skip-old-files -xf -"
    )
    size = (
        f"kb=$(( $(du -sk {UNPACKED} | cut -f1) - "
        f"$( {{ du -sk {UNPACKED}/cache 2>/dev/null || echo 0; }} | cut -f1) ))"
    )
    return [
        *commands,
        f"if [ -L {MODULES} ]; then {size}; else kb=; fi",
        f'if [ -n "$kb" ] && [ "$kb" -le {zipped_mb * 1024} ]; then '
        f'echo "go modules: $kb kB unpacked, kept zipped"; [ ! -d {download} ] || {{ {serve}; }}; '
        f"else echo 'go modules: kept unpacked in the image'; "
        f"if [ -L {MODULES} ]; then rm {MODULES} && mv {UNPACKED} {MODULES}; fi; "
        f"[ ! -d {download} ] || {unzipped}; fi",
        # each stage unpacks its modules here, as whatever uid runs it
        f"rm -rf {UNPACKED} && chmod 1777 /work/.cache",
    ]


# What a module cache holds that a proxy serving it must not: `list` answers "which versions"
# with only those this build saw; the rest are go's locks and unfinished downloads.
_NOT_CACHED = ("list", "*.lock", "*.partial", "*.tmp")


def finish_commands(version: str) -> list[str]:
    """The caches handed to whatever uid runs the tests: GOPATH (the module cache in it) and the
    build cache writable (go takes lock files in the module cache, and each stage's container is
    fresh, so nothing lasts). Only what lacks the modes changes: a mode change, even to the same
    modes, copies the file into the era's layer (cobra's eras grew by the whole toolchain, ~400 MB,
    when the toolchain's tree was changed so; the standard library's entries would be next)."""
    lacking = r"\( -type d ! -perm -0777 -o -type f ! -perm -0666 \)"
    kept = f"{SERVED} {MODULES}/" if served(version) else MODCACHE
    commands = [
        f"mkdir -p {GOPATH} && find {GOPATH} {BUILDCACHE} {lacking} -exec chmod a+rwX {{}} +"
    ]
    if served(version):  # modules kept unpacked in the image (not a link to the stage's disk)
        commands.append(
            f"[ -L {MODULES} ] || [ ! -d {MODULES} ] || "
            f"find {MODULES} {lacking} -exec chmod a+rwX {{}} +"
        )
        # the zips served to every uid: go 1.17 left its downloads' zips its owner's alone (gin's
        # eras of 2021: "reading file:///opt/go/proxy/…/v0.1.0.zip: permission denied")
        unreadable = r"\( -type d ! -perm -0555 -o -type f ! -perm -0444 \)"
        commands.append(f"[ ! -d {SERVED} ] || find {SERVED} {unreadable} -exec chmod a+rX {{}} +")
    return [*commands, f"du -sh {kept} {BUILDCACHE} 2>/dev/null || true"]


def choose(snap: Snapshot) -> tuple[str, str]:
    """(Go release, why): go.mod's rule (toolchain.choose); a GOPATH tree gets at least
    GOPATH_FLOOR, the first Go whose module mode is its default and that tidies with `-e`."""
    version, why = toolchain.choose(gomods(snap), snap.date)
    if gopath(snap) and _minor(version) < GOPATH_FLOOR:
        floor = toolchain.LAST_PATCH[GOPATH_FLOOR]
        return f"1.{GOPATH_FLOOR}.{floor}", (
            f"a GOPATH tree (no go.mod), in module mode from go1.{GOPATH_FLOOR} (its date: {why})"
        )
    return version, why


def choose_suite(snap: Snapshot, suites: dict[str, str]) -> str:
    day = snap.date.date().isoformat()
    known = sorted((DEBIAN_RELEASED.get(s, "9999"), s) for s in suites)
    released = [s for when, s in known if when <= day]
    return released[-1] if released else known[0][1]


# Where `go test` reads the hidden tests' packages from the tree: vendor/ (with -mod=vendor for a
# module, at every level in GOPATH mode), and copies of test libraries.
SEALED = SealedPlaces(
    dirs=frozenset({"vendor"}),
    libraries=frozenset(
        {"testify", "assert", "require", "gomega", "ginkgo", "check.v1", "gocheck", "go-cmp"}
        | {"quicktest", "gotest.tools", "goconvey", "gomock", "mock", "is"}
    ),
)


@ECOSYSTEMS.register("go")
class Go:
    name = "go"
    report: TestReport = GoTest()
    sealed = SEALED

    def owns(self, path: str) -> bool:
        return path.endswith("_test.go")

    def detects(self, snap: Snapshot) -> bool:
        return any(_is_gomod(p) or p == "go.work" for p in snap.files) or gopath(snap)

    def era_facts(self, snap: Snapshot) -> dict[str, object]:
        """The go.mod files of the suite's modules (requirements, go and toolchain lines), the
        workspace, whether the tree vendors its modules, and the Go the era gets."""
        version, _ = choose(snap)
        return {
            "modules": {d: text for d, text in zip(module_dirs(snap), gomods(snap), strict=True)},
            "work": snap.text("go.work"),
            "vendored": vendored(snap),
            "go": version,
            **({"gopath": True} if gopath(snap) else {}),
        }

    def plans(self, snap: Snapshot, config: ErasConfig) -> list[Plan]:
        if not module_dirs(snap):
            raise NoPlan(
                f"the stage's test files ({', '.join(stranded(snap)[:2])}) are in no Go module "
                "of B_t: the PR adds their module, whose go.mod is the gold patch's"
            )
        version, why = choose(snap)
        return [self._plan(snap, config, version, why)]

    def _plan(self, snap: Snapshot, config: ErasConfig, version: str, why: str) -> Plan:
        suite = choose_suite(snap, config.suites)
        return Plan(
            "go",
            suite,
            f"go{version}",
            snap.date.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
            build_commands(snap, config, version),
            test_command(snap),
            setup_command(version, gopath(snap)),
            notes=[
                f"go{version} on {suite}: {why}",
                f"Go's toolchain module {toolchain.module_version(version)} from the Go proxy",
                "no go.mod at B_t: one made at the build, each requirement at its release nearest "
                f"{snap.date.date()}, put in each stage's tree"
                if gopath(snap)
                else "modules as go.sum pins them, from the Go proxy (GOSUMDB off: unreachable)",
            ],
            toolchain=toolchain.install_commands(version, BUILDCACHE),
            env=image_env(snap, version),
            # a thin layer always pays: what the earlier era compiled and fetched is read where
            # it is, so the layer holds the changed modules and what builds on them, no more
            grows=True,
        )

    def revise(
        self, snap: Snapshot, config: ErasConfig, plan: Plan, log: str, ran: bool
    ) -> Plan | None:
        """A module (or the project) asking for a newer Go than the era's (`requires go >=
        1.23.4`): the release it names."""
        asked = [(int(a), int(b) if b else 0) for a, b in _REQUIRES_GO.findall(log)]
        if not asked:
            return None
        minor, patch = max(asked)
        version = f"1.{minor}.{patch}"
        if f"go{version}" == plan.interpreter:
            return None
        why = f"a module of the era requires go >= {version} (the era's go was {plan.interpreter})"
        return replace(self._plan(snap, config, version, why), variant="required-go")
