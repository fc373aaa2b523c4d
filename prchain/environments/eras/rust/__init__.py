"""The Rust ecosystem: toolchain, vendored dependencies and prebuilt dependency builds of an era.

Everything is read from the stage base's manifests; nothing here runs code of the repository.
The toolchain layer installs a Debian suite's rustc and cargo (toolchains.py says which). The era's
commands run as root where /opt/prchain/src is B_t's tree: a cargo that reads crates.io's sparse
index vendors what Cargo.lock pins into /opt/cargo/vendor (with no Cargo.lock, what cargo resolves
against the index as of the era's date: dated.py), $CARGO_HOME's config points crates.io at that
directory, and B_t's dependencies are built into /opt/cargo-target, the target directory of
every cargo run in the image. The repository's own crates are cleaned out of it again, so the
agent's first `cargo test` in /work/repo compiles its own crates only.
"""

from __future__ import annotations

import hashlib
import re
import shlex
from dataclasses import replace
from datetime import UTC
from pathlib import Path
from typing import Any

from prchain.environments.eras.config import ErasConfig
from prchain.environments.eras.ecosystems import ECOSYSTEMS, Plan
from prchain.environments.eras.growth import Unit
from prchain.environments.eras.manifests import Snapshot
from prchain.environments.eras.reports import TestReport
from prchain.environments.eras.rust.gitdeps import (
    INDEX,
    STANDINS,
    GitPlan,
    dependency_entry,
    replacement,
)
from prchain.environments.eras.rust.gitdeps import plan as git_plan
from prchain.environments.eras.rust.report import SUITE, Cargo
from prchain.environments.eras.rust.toolchains import (
    TOOLCHAINS,
    Toolchain,
    after,
    channel,
    choose,
    minor,
    wanted,
)
from prchain.environments.eras.sealed import SealedPlaces

PROJECT_SRC = "/opt/prchain/src"
CARGO_HOME = "/opt/cargo"
TARGET = "/opt/cargo-target"  # B_t's dependency builds (read-only in a tmpfs sandbox)
# The target directory of every run in a sandbox: writable by any uid in every disk mode (/tmp; a
# tmpfs of `scratch_limit` when the image is read-only), filled per stage from TARGET.
LIVE_TARGET = "/tmp/cargo-target"
VENDOR_NEW = "/tmp/prchain-vendor"  # the build's vendoring, merged into CARGO_HOME's vendor/
# How every build of an era compiles, the image's prebuild and the sandbox's alike (the same
# profile, or cargo would build the dependencies again): no debug information and no incremental
# state, which are most of a debug target directory: uutils/coreutils' whole test build of
# 2026-01 (a test binary per utility) wrote past a 10g scratch with them and takes 1.3 GB without
# them (and 245 s, not 404, on two cores). Panics still name their file and line (that is not
# debug information); only a backtrace's frames lose theirs.
LEAN_BUILDS = {
    "CARGO_PROFILE_DEV_DEBUG": "0",
    "CARGO_PROFILE_TEST_DEBUG": "0",
    "CARGO_INCREMENTAL": "0",
}
FETCHER = "/opt/rust-fetch"  # a newer cargo, unpacked, for toolchains whose cargo cannot fetch
# The build's downloads go to the repository's own cache volume (prchain/environments/eras/build.py).
DOWNLOADS = "/opt/prchain/uv-cache/cargo"
# What says a newer toolchain may get past a failed build: a crate's rust-version, an edition or a
# lock file this cargo does not know, a compile error (an old compiler rejecting newer code).
_NEEDS = re.compile(r"requires rustc (1\.\d+)|rustc (1\.\d+)(?:\.\d+)? or newer")
_NEWER = re.compile(
    r"edition20\d\d|lock file version|failed to parse (manifest|lock file)|error\[E\d+\]"
    r"|is required|unstable"
)
# A lint the project denies (`#![deny(warnings)]`) that a newer compiler than its own raises: the
# same toolchain with lints capped at warnings, as crater builds old code.
_DENIED = re.compile(r"lint level is defined here|implied by `#\[deny\(")
CAP_LINTS = '[build]\\nrustflags = ["--cap-lints", "warn"]\\n'
# A compile-time size check of static_assertions that fails: types are laid out by the compiler, and
# a newer rustc than the era's own packs some enums tighter (ruff's AST asserted its node sizes
# from 2023-08 to 2024-02; rustc 1.78, the nearest packaged, fails `assert_eq_size!(Pattern,
# [u8; 96])`). The check says nothing of behaviour, and no packaged rustc passes it.
_SIZES = re.compile(r"originates in the macro `(?:static_assertions::)?assert_eq_size`")
SIZES_UNCHECKED = "+sizes-unchecked"
# A tree without Cargo.lock resolves against crates.io's index as of the era's date (dated.py,
# served in the build); when that resolve finds no release for a requirement (a crate yanked
# since, an index line cargo cannot read), the newest that fit the toolchain.
NEWEST = "+newest"
_UNDATED = re.compile(r"failed to select a version for the requirement|no matching package named")
DATED_CONFIG = "/tmp/prchain-dated.toml"
DATED_CACHE = f"{DOWNLOADS}/dated-index"  # upstream index files, kept across builds
_UNPROXIED = "env -u HTTP_PROXY -u HTTPS_PROXY -u http_proxy -u https_proxy"


def _unchecked_sizes() -> str:
    """The vendored static_assertions' `assert_eq_size!` still names both types but compares no
    sizes, and its checksum file says so (a directory source checks every file it lists)."""
    rehash = (
        "import hashlib, json, sys; d = sys.argv[1]; p = d + '/.cargo-checksum.json'; "
        "j = json.load(open(p)); f = 'src/assert_eq_size.rs'; "
        "j['files'][f] = hashlib.sha256(open(d + '/' + f, 'rb').read()).hexdigest(); "
        "json.dump(j, open(p, 'w'))"
    )
    return (
        f"for d in {CARGO_HOME}/vendor/static_assertions*/; do "
        '[ -f "$d/src/assert_eq_size.rs" ] || continue; '
        "sed -i 's/\\$crate::_core::mem::transmute::<\\$x, \\$xs>/"
        '$crate::_core::marker::PhantomData::<($x, $xs)>/\' "$d/src/assert_eq_size.rs"; '
        'grep -q PhantomData "$d/src/assert_eq_size.rs"; '
        f'python3 -c "{rehash}" "$d"; done'
    )


def toolchain_commands(chain: Toolchain) -> list[str]:
    """Root commands of the shared toolchain layer: the suite's packages, linked into
    /usr/local/bin; for a cargo older than the sparse index, a newer cargo of the suite unpacked
    beside it (with the libraries it needs) that only fetches."""
    rustc, cargo = chain.packages
    install = "DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends"
    commands = [
        "apt-get update -q",
        # build scripts compile C and C++ and drive make and cmake (tikv-jemalloc-sys runs
        # jemalloc's configure and `make`: ruff's 2025 eras stopped on "No such file" without it)
        # strace: root's witness of each hidden test's pass in a clean room (clean_room.RUN_EACH)
        f"{install} {rustc} {cargo} gcc g++ libc6-dev make cmake pkg-config strace",
        "for b in rustc rustdoc cargo; do ln -sf /usr/bin/$b /usr/local/bin/$b; done",
    ]
    if chain.fetcher:
        libraries = (
            f"apt-cache depends {chain.fetcher} | sed -nE 's/^ *\\|?Depends: //p' "
            "| grep -vE '^(<|rustc|gcc|clang|binutils|libc-dev)'"
        )
        commands += [
            f"cd /tmp && apt-get download {chain.fetcher} && dpkg -x {chain.fetcher}_*.deb {FETCHER}"
            f" && rm -f {chain.fetcher}_*.deb",
            f"{install} $({libraries})",
            f"{FETCHER}/usr/bin/cargo --version",
        ]
    return [*commands, "rm -rf /var/lib/apt/lists/*", "rustc --version && cargo --version"]


def build_commands(
    snap: Snapshot,
    chain: Toolchain,
    cap_lints: bool = False,
    gits: GitPlan | None = None,
    sizes: bool = True,
    dated: bool = True,
) -> list[str]:
    """The era's dependency layer: vendor, point crates.io at the vendor directory, prebuild.
    `cap_lints`: lints the project denies only warn (in $CARGO_HOME's config, for every run).
    `gits`: Cargo.lock's git dependencies, from mirrors or crates.io stand-ins (gitdeps.py).
    `sizes`: static_assertions' size checks hold (else they check types only).
    `dated`: without Cargo.lock, resolve against the index as of B_t's date (else the newest)."""
    gits = gits or GitPlan({}, [])
    cutoff = _cutoff(snap)
    fetch = f"{FETCHER}/usr/bin/cargo" if chain.fetcher else "cargo"
    online = (
        f"CARGO_HOME={DOWNLOADS} CARGO_NET_OFFLINE=false "
        "CARGO_HTTP_CAINFO=${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt} "
        "CARGO_RESOLVER_INCOMPATIBLE_RUST_VERSIONS=fallback"
    )
    config = (
        '[source.crates-io]\\nreplace-with = "vendored-sources"\\n\\n'
        f'[source.vendored-sources]\\ndirectory = "{CARGO_HOME}/vendor"\\n'
        + (f"\\n{_printf(replacement(gits.sources, 'vendored-sources'))}" if gits.sources else "")
        + (f"\\n{CAP_LINTS}" if cap_lints else "")
    )
    commands = [
        # The vendor directory exists even when nothing is vendored: `cargo vendor` makes none
        # for a crate with no dependencies, and the size report below would fail the build.
        f"mkdir -p {CARGO_HOME}/vendor {TARGET} {DOWNLOADS}",
        f"export CARGO_TARGET_DIR={TARGET}",
        f"cd {PROJECT_SRC}",
    ]
    if "Cargo.lock" in snap.files:
        commands.append("cp Cargo.lock /tmp/prchain-Cargo.lock")
    elif dated:  # nothing pinned them: what cargo resolved on B_t's date
        commands += _dated_lockfile(fetch, online, cutoff)
    else:  # the newest versions that fit the toolchain
        commands.append(f"{online} {fetch} generate-lockfile")
    commands += _git_commands(gits, cutoff)
    vendor = f"{fetch} vendor --quiet"
    if gits.mirrored:  # the git CLI reads the vendoring's own config: mirrored URLs are mounts
        online += " HOME=/tmp/prchain-git-home CARGO_NET_GIT_FETCH_WITH_CLI=true"
    if gits.standins:
        vendor += " --respect-source-config --config /tmp/prchain-standins.toml"
    commands += [
        f"{online} {vendor} {VENDOR_NEW} > /dev/null",
        _merge_vendor(),
        *([] if sizes else [_unchecked_sizes()]),
        f"printf '{config}' > {CARGO_HOME}/config.toml",
        # The tree's own lock again (the vendoring cargo may have rewritten it in a newer format).
        "cp /tmp/prchain-Cargo.lock Cargo.lock"
        if "Cargo.lock" in snap.files
        else "rm -f Cargo.lock",
        # --locked with git dependencies: a stand-in that made cargo rewrite Cargo.lock would
        # otherwise rewrite it in the agent's tree, and the agent's diff would carry it.
        SUITE.replace("--no-fail-fast", "--no-run") + (" --locked" if gits.sources else ""),
        *([f"rm -rf {STANDINS} /tmp/prchain-git-home"] if gits.sources else []),
        _clean_own_crates(),
        _readable(CARGO_HOME, TARGET),
        f"du -sh {CARGO_HOME}/vendor {TARGET}",
    ]
    return commands


def _merge_vendor() -> str:
    """The build's vendoring into the image's vendor directory, touching only what differs: a
    crate whose checksum file is the same stays as it is (on an earlier era's image it stays in
    the lower layer, and its compiled build stays fresh), one that differs or is new takes its
    place, one no longer vendored goes. From the toolchain layer, every crate is new."""
    v, n = f"{CARGO_HOME}/vendor", VENDOR_NEW
    gone = f'for d in {v}/*/; do d=${{d%/}}; [ -d "$d" ] && [ ! -d "{n}/${{d##*/}}" ] && rm -rf "$d"; done'
    changed = (
        f'for d in {n}/*/; do d=${{d%/}}; [ -d "$d" ] || continue; c="{v}/${{d##*/}}"; '
        'cmp -s "$d/.cargo-checksum.json" "$c/.cargo-checksum.json" || '
        '{ rm -rf "$c" && mv "$d" "$c"; }; done'
    )
    return f"{gone}; {changed}; rm -rf {n}"


def _readable(*dirs: str) -> str:
    """What the agent and the tester must read made readable by all, touching only the files
    that are not: a mode change copies a file into the era's own layer (on an earlier era's
    image, `chmod -R` would copy every crate and build of the lower layer)."""
    return (
        f"find {' '.join(dirs)} \\( ! -perm -444 -o -perm /111 ! -perm -111 \\) "
        "-exec chmod a+rX {} +"
    )


def _cutoff(snap: Snapshot) -> str:
    return snap.date.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _dated_lockfile(fetch: str, online: str, cutoff: str) -> list[str]:
    """Cargo.lock resolved against the index without the releases published after `cutoff`:
    dated.py serves that view on the build's loopback while cargo resolves (unproxied: the proxy
    reaches no loopback; the view itself goes through it), with a throwaway cargo home."""
    script = (Path(__file__).parent / "dated.py").read_text()
    resolve = online.replace(f"CARGO_HOME={DOWNLOADS}", "CARGO_HOME=/tmp/prchain-dated-home")
    return [
        f"python3 - serve {INDEX} {cutoff} {DATED_CACHE} {DATED_CONFIG} <<'PRCHAIN_DATED' &\n"
        f"{script}PRCHAIN_DATED",
        "dated=$!",
        f"for _ in $(seq 600); do [ -s {DATED_CONFIG} ] && break; kill -0 $dated; sleep 0.1; done",
        f"test -s {DATED_CONFIG}",
        f"{resolve} {_UNPROXIED} {fetch} generate-lockfile --config {DATED_CONFIG}",
        'kill "$dated" || true',
    ]


def _printf(text: str) -> str:
    """`text` for printf's format inside single quotes (newlines as \\n, no % or ')."""
    return text.replace("%", "%%").replace("'", "").replace("\n", "\\n")


def _git_commands(gits: GitPlan, cutoff: str) -> list[str]:
    """Stand-ins unpacked (and a config that makes the vendoring read them), mirrors configured."""
    commands = []
    if gits.standins:
        config = replacement(gits.standins, "prchain-standins")
        config += f'\n[source.prchain-standins]\ndirectory = "{STANDINS}"\n'
        commands += [
            gits.standin_command(cutoff),
            f"printf '{_printf(config)}' > /tmp/prchain-standins.toml",
        ]
    if gits.mirrored:
        commands += gits.git_home()
    return commands


# Per stage, as the agent (and the tester): the live target directory gets the dependency builds
# as symbolic links (rustc replaces an output by renaming, so a rebuild never writes through one)
# and its own copies of what cargo and rustc rewrite in place: the fingerprints and the dep-info
# files (`.d`, small), with their times, so `cargo test` starts warm. A dependency cargo finds
# stale is rebuilt then, not refused: ruff's 2025-10 image lacked serde's `.rmeta`, and rebuilding
# compact_str after it failed on "error writing dependencies to …compact_str-….d: Permission
# denied" through a link to the image's file. A build script's run directory (`invoked.timestamp`,
# its output, OUT_DIR) is copied too when under RUN_COPY_KB: cargo runs some scripts again at every
# build and writes there (unicode_names2, a git dependency of ruff's 2023 eras, names a
# `generator/` directory its package leaves out, so its script is never fresh). A larger one
# (tikv-jemalloc-sys keeps jemalloc's 300 MB build tree there) stays a link; its script reruns
# only when its inputs change.
RUN_COPY_KB = 16384
SETUP = (
    f"[ -e {LIVE_TARGET} ] || ( mkdir -p {LIVE_TARGET} && cd {TARGET} && for p in */; do "
    'p=${p%/}; [ -d "$p/deps" ] || continue; '
    f'mkdir -p "{LIVE_TARGET}/$p/deps" "{LIVE_TARGET}/$p/build"; '
    f'cp -rp "$p/.fingerprint" "{LIVE_TARGET}/$p/"; '
    'for f in "$p"/deps/* "$p"/build/*; do [ -e "$f" ] || continue; case "$f" in '
    f'*.d) cp -p "$f" "{LIVE_TARGET}/$f";; '
    f'*) if [ -e "$f/invoked.timestamp" ] && [ "$(du -sk "$f" | cut -f1)" -lt {RUN_COPY_KB} ]; '
    f'then cp -rp "$f" "{LIVE_TARGET}/$f"; else ln -s "{TARGET}/$f" "{LIVE_TARGET}/$f"; fi;; esac; '
    "done; done; true )"
)


# The workspace's own packages out of the target directory, by exact name: `<name>-<16 hex>` in
# `.fingerprint/`, `build/` and `deps/` (with `lib` before and an extension after the hash, the
# name's dashes as underscores) and the uplifted `lib<name>.rlib`/`<name>` beside them. Not
# `cargo clean -p`: cargo before 1.7x cleans by glob, so `-p alsa` also took alsa-sys's
# fingerprints, and the sandbox's cargo, finding alsa-sys stale, rebuilt its build script into
# the image's read-only target ("error writing dependencies to …alsa-sys-…/build_script_build-….d:
# Read-only file system"), which made diwic/alsa-rs's 2022 era unverifiable.
OWN_CRATES = """
import glob, json, os, re, shutil, sys
target = sys.argv[1]
packages = json.load(sys.stdin)["packages"]
names = {p["name"] for p in packages}
names |= {t["name"] for p in packages for t in p["targets"] if "custom-build" not in t["kind"]}
names |= {n.replace("-", "_") for n in names}
words = "|".join(sorted(map(re.escape, names)))
hashed = re.compile(r"^(?:lib)?(?:%s)-[0-9a-f]{16}(?:\\..+)?$" % words)
uplifted = re.compile(r"^(?:lib)?(?:%s)(?:\\.(?:rlib|rmeta|so|a|d))?$" % words)
def remove(path):
    shutil.rmtree(path) if os.path.isdir(path) and not os.path.islink(path) else os.remove(path)
for marker in glob.glob(f"{target}/*/.fingerprint") + glob.glob(f"{target}/*/*/.fingerprint"):
    profile = os.path.dirname(marker)  # debug/, release/, <triple>/debug/
    for inner in (".fingerprint", "build", "deps", "examples"):
        where = os.path.join(profile, inner)
        for entry in os.listdir(where) if os.path.isdir(where) else ():
            if hashed.match(entry):
                remove(os.path.join(where, entry))
    for entry in os.listdir(profile):
        if uplifted.match(entry) and os.path.isfile(os.path.join(profile, entry)):
            remove(os.path.join(profile, entry))
"""


def _clean_own_crates() -> str:
    """The workspace's own packages out of the target directory (their paths differ from the
    agent's /work/repo, so they would only take space), and nothing else (`OWN_CRATES`)."""
    script = shlex.quote(OWN_CRATES)
    return f"cargo metadata --no-deps --format-version 1 | python3 -c {script} {TARGET}"


def lock_units(text: str) -> tuple[Unit, ...]:
    """Cargo.lock's registry and git packages as growth units (the workspace's own, with no
    source, are cleaned out of every image): `name version source`, the checksum (version 1
    locks keep none per package: the key says it all), and the packages each is built on, a
    dependency being `name`, `name version` or `name version (source)`. () for no lock or one
    that does not parse."""
    import tomllib

    try:
        return _units([p for p in tomllib.loads(text).get("package", []) if p.get("source")])
    except (tomllib.TOMLDecodeError, AttributeError, KeyError, TypeError):
        return ()


def _units(packages: list[dict[str, Any]]) -> tuple[Unit, ...]:
    def key(p: dict[str, Any]) -> str:
        return f"{p['name']} {p['version']} {p['source']}"

    named: dict[str, list[dict[str, Any]]] = {}
    for p in packages:
        named.setdefault(p["name"], []).append(p)

    def resolved(dependency: str) -> list[str]:
        name, version, source = dependency_entry(dependency)
        return [
            key(p)
            for p in named.get(name, [])
            if (not version or p["version"] == version) and (not source or p["source"] == source)
        ][:1]

    return tuple(
        (
            key(p),
            p.get("checksum", ""),
            tuple(d for dep in p.get("dependencies", []) for d in resolved(dep)),
        )
        for p in packages
    )


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _without_versions(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not re.match(r"\s*version\s*=", line))


# Cargo reads the hidden tests' crates from the registry cache of the image, unless a vendored
# source (`cargo vendor`'s vendor/, named in .cargo/config) or a `[patch]`/path override points
# elsewhere: .cargo/ and Cargo.toml never cross (crossing.py), vendor/ and copies of test
# libraries are sealed here.
SEALED = SealedPlaces(
    dirs=frozenset({"vendor"}),
    libraries=frozenset(
        {"pretty_assertions", "proptest", "quickcheck", "insta", "rstest", "assert_cmd"}
        | {"assert_fs", "predicates", "trybuild", "mockall", "similar-asserts", "test-case"}
        | {"serial_test", "expect-test", "libtest-mimic"}
    ),
)


@ECOSYSTEMS.register("rust")
class Rust:
    name = "rust"
    report: TestReport = Cargo()
    sealed = SEALED

    def owns(self, path: str) -> bool:
        """Rust sources, insta's snapshots, and whatever a workspace keeps under `crates/` (ruff's
        test patches are mostly Python fixtures that Rust tests read, and their snapshots)."""
        return path.endswith((".rs", ".snap")) or path.startswith("crates/")

    def detects(self, snap: Snapshot) -> bool:
        return "Cargo.toml" in snap.files

    def era_facts(self, snap: Snapshot) -> dict[str, object]:
        """The manifests without their version lines, the lock's digest, the toolchain asked for."""
        manifests = {
            path: _without_versions(text)
            for path, text in snap.files.items()
            if path == "Cargo.toml" or path.endswith("/Cargo.toml")
        }
        return {
            "manifests": manifests,
            "lock": _digest(snap.text("Cargo.lock")) if "Cargo.lock" in snap.files else "",
            "channel": channel(snap),
            "wanted": wanted(snap)[0],
        }

    def plans(self, snap: Snapshot, config: ErasConfig) -> list[Plan]:
        want, nightly, why = wanted(snap)
        chain, gap = choose(want, config.suites)
        return [self._plan(snap, config, chain, nightly, [why, *([gap] if gap else [])])]

    def _plan(
        self,
        snap: Snapshot,
        config: ErasConfig,
        chain: Toolchain,
        nightly: bool,
        why: list[str],
        cap: bool = False,
        sizes: bool = True,
        dated: bool = True,
    ) -> Plan:
        gits = git_plan(snap.text("Cargo.lock"), config.git_mirrors)
        cutoff = _cutoff(snap)
        env = {
            "CARGO_HOME": CARGO_HOME,
            "CARGO_TARGET_DIR": LIVE_TARGET,
            "CARGO_NET_OFFLINE": "true",
            "CARGO_TERM_COLOR": "never",
            **LEAN_BUILDS,
        }
        notes = [
            f"rustc {chain.version} ({chain.packages[0]} of {chain.suite}): {'; '.join(why)}",
            _resolve_note(snap, cutoff, dated),
            *gits.notes(cutoff),
        ]
        if nightly:  # nightly features on a stable compiler
            env["RUSTC_BOOTSTRAP"] = "1"
            notes.append(f"{channel(snap)} asked for: stable rustc with RUSTC_BOOTSTRAP=1")
        return Plan(
            "rust",
            chain.suite,
            chain.version,
            cutoff,
            build_commands(snap, chain, cap, gits, sizes, dated),
            SUITE,
            SETUP,
            notes=notes,
            variant=f"rustc-{chain.version}" + ("" if dated else NEWEST),
            toolchain=toolchain_commands(chain),
            env=env,
            caveat=_standins_caveat(gits),
            mounts=gits.mounts(),
            grows=True,
            units=lock_units(snap.text("Cargo.lock")),
        )

    def revise(
        self, snap: Snapshot, config: ErasConfig, plan: Plan, log: str, ran: bool
    ) -> Plan | None:
        """A build that failed on a lint the project denies: the same with lints capped. On a
        dependency that needs a newer rustc, a manifest, lock or edition this cargo cannot read, a
        compile error: the next newer toolchain, or the one the error names."""
        if ran:
            return None
        current = next((t for t in TOOLCHAINS if t.version == plan.interpreter), None)
        if current is None:
            return None
        capped = "+cap-lints" in plan.variant
        sizes = SIZES_UNCHECKED not in plan.variant
        nightly = "RUSTC_BOOTSTRAP" in plan.env
        dated = NEWEST not in plan.variant
        if dated and "Cargo.lock" not in snap.files and _UNDATED.search(log):
            revised = self._plan(snap, config, current, nightly, [], capped, sizes, dated=False)
            was, now = (
                _resolve_note(snap, plan.cutoff, True),
                _resolve_note(snap, plan.cutoff, False),
            )
            notes = [now if note == was else note for note in plan.notes]
            return replace(revised, notes=notes, variant=f"{plan.variant}{NEWEST}")
        if _DENIED.search(log) and not capped:
            revised = self._plan(snap, config, current, nightly, [], True, sizes, dated)
            note = "lints the project denies only warn (a newer compiler than its own raises them)"
            return replace(
                revised,
                notes=[*plan.notes, note],
                variant=f"{plan.variant}+cap-lints",
            )
        if _SIZES.search(log) and sizes:
            revised = self._plan(snap, config, current, nightly, [], capped, False, dated)
            note = (
                f"static_assertions' assert_eq_size! compares no sizes: rustc {current.version} "
                "lays some types out otherwise than the era's own compiler (a build-time check, "
                "no test)"
            )
            return replace(
                revised, notes=[*plan.notes, note], variant=f"{plan.variant}{SIZES_UNCHECKED}"
            )
        needed = [minor(m.group(1) or m.group(2)) for m in _NEEDS.finditer(log)]
        if not needed and (not _NEWER.search(log) or plan.caveat):
            # Unreachable sources, a broken tree: no toolchain helps. With crates.io stand-ins
            # for git dependencies, a compile error is first of all theirs (another API than
            # the commit the tree was written against), and each try rebuilds every dependency.
            return None
        nxt = after(current, config.suites, max(needed, default=0))
        if nxt is None:
            return None
        revised = self._plan(
            snap,
            config,
            nxt,
            nightly,
            [f"rustc {current.version} failed to build the era"],
            capped,
            sizes,
            dated,
        )
        variant = revised.variant + ("+cap-lints" if capped else "")
        variant += "" if sizes else SIZES_UNCHECKED
        notes = list(dict.fromkeys([*plan.notes[1:], *revised.notes]))
        return replace(revised, notes=notes, variant=variant)


def _resolve_note(snap: Snapshot, cutoff: str, dated: bool) -> str:
    """Which resolve the era's dependencies come from: locked, dated, or newest."""
    if "Cargo.lock" in snap.files:
        return "dependencies as Cargo.lock pins them"
    if dated:
        return (
            f"no Cargo.lock: dependencies as of {cutoff} (crates.io's index without the releases "
            "published after it)"
        )
    return (
        f"no Cargo.lock: the newest versions that fit the toolchain (as of {cutoff} no release "
        "met a requirement)"
    )


def _standins_caveat(gits: GitPlan) -> str:
    """What an era with stand-ins lacks, said with its failure: the git commits it was locked to."""
    if not gits.standins:
        return ""
    names = ", ".join(name for s in gits.standins for name, _ in s.packages)
    return f"git dependencies from GitHub (unreachable) stood in for by crates.io releases: {names}"
