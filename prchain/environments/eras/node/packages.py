"""How an era's node_modules are installed, and how each stage's fresh checkout gets them offline.

The install runs as root in the build with the project at /work/repo (a copy of B_t's tree), from the
lock file: `npm ci`, `yarn install --frozen-lockfile` (Yarn 1) or `--immutable` (Yarn 2+, with the
node-modules linker), `pnpm install --frozen-lockfile`; without a lock file, `npm install --before`
the commit's date. yarn and pnpm are npm packages of the lock file's generation (corepack would
download them from outside the registry). Every `node_modules` directory of the tree (the root's, and
workspace packages' own) then moves to /opt/prchain-node/deps at the same relative path, so links
between them keep working; links into the project itself (npm and pnpm link workspace packages)
become absolute links to /work/repo, where each stage's checkout is.

Per stage, `prchain-node-modules` (the setup command, run as the agent) makes each such
`node_modules` a real directory of the checkout holding one link per installed package: Node finds
`<dir>/node_modules/<name>` as usual, and runners can write their caches there (`.vite/`), while the
image's files stay read-only. That is a few hundred links per stage, against `npm ci --offline` from
a cache in the image, which unpacks and writes every file of every package at every stage.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from datetime import date

from prchain.environments.carry import WORKDIR
from prchain.environments.eras.node.toolchain import PREFIX

DEPS = "/opt/prchain-node/deps"  # not under /opt/prchain: repository images make that root-only
LINKER = "/usr/local/bin/prchain-node-modules"
PROJECT = WORKDIR  # where each stage's checkout is
LOCKS = ("package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml")

# pnpm's lock file generation → the newest pnpm writing it; a lock past the snapshot's size limit
# (its text is empty) is dated instead.
PNPM_BY_LOCK = {"5.3": "6.35.1", "5.4": "7.33.7", "6": "8.15.9", "9": "9.15.9"}
PNPM_BY_DATE = (("2021-06-01", "5.18.11"), ("2022-06-01", "6.35.1"), ("2023-03-01", "7.33.7"))
PNPM_NEWEST = "9.15.9"
YARN_CLASSIC = "1.22.22"
YARN_BERRY = {2: "2.4.2", 3: "3.8.7", 4: "4.18.1"}
# Yarn 1 fetches each package from the URL its lock file records, whatever registry is configured;
# most record the public registry's yarnpkg.com alias. The same tarballs (the lock's hashes check
# them) then come from the configured registry: the only one a mirrored machine reaches. This edits
# /work/repo's copy, never a stage's tree.
YARN_CLASSIC_HOSTS = (
    r"""sed -i -E 's#https?://registry\.(yarnpkg\.com|npmjs\.org)/#'"${npm_config_registry%/}/#g" """
    "yarn.lock"
)


@dataclass(frozen=True)
class Install:
    manager: str  # npm | yarn | pnpm
    version: str  # of yarn or pnpm ("" for the toolchain's npm)
    commands: list[str]  # from /work/repo, as root, with the network
    note: str


def lock_version(files: dict[str, str]) -> int:
    """package-lock.json's lockfileVersion (0 without one or unreadable)."""
    for path in ("npm-shrinkwrap.json", "package-lock.json"):
        try:
            found = json.loads(files.get(path) or "{}").get("lockfileVersion", 0)
        except (json.JSONDecodeError, AttributeError):
            continue
        if isinstance(found, int) and found:
            return found
    return 0


def declared_manager(manifest: dict[str, object]) -> tuple[str, str]:
    """`packageManager: "pnpm@8.6.0+sha512…"` → ("pnpm", "8.6.0")."""
    found = re.match(r"(npm|yarn|pnpm)@(\d+\.\d+\.\d+)", str(manifest.get("packageManager", "")))
    return (found.group(1), found.group(2)) if found else ("", "")


def choose_install(
    paths: set[str], files: dict[str, str], manifest: dict[str, object], cutoff: str
) -> Install:
    """The install of the root's lock file (the declared manager's when it has one)."""
    name, version = declared_manager(manifest)
    if "pnpm-lock.yaml" in paths and name in ("", "pnpm"):
        return _pnpm(version or pnpm_version(files.get("pnpm-lock.yaml", ""), cutoff[:10]))
    if "yarn.lock" in paths and name in ("", "yarn"):
        return _yarn(files.get("yarn.lock", ""), version, paths)
    if {"package-lock.json", "npm-shrinkwrap.json"} & paths:
        return Install("npm", "", ["npm ci"], "npm ci from package-lock.json")
    return Install(
        "npm",
        "",
        [f"npm install --before={cutoff}"],
        f"no lock file: npm install of the packages published before {cutoff[:10]}",
    )


def pnpm_version(lock: str, day: str) -> str:
    found = re.search(r"^lockfileVersion:\s*'?(\d+)(?:\.(\d+))?", lock, re.M)
    if found:
        major, minor = found.group(1), found.group(2) or "0"
        by_lock = PNPM_BY_LOCK.get(f"{major}.{minor}") or PNPM_BY_LOCK.get(major)
        if by_lock:
            return by_lock
    return next((v for until, v in PNPM_BY_DATE if day < until), PNPM_NEWEST)


def _pnpm(version: str) -> Install:
    return Install(
        "pnpm",
        version,
        [
            f"npm install -g pnpm@{version}",
            "pnpm install --frozen-lockfile --config.confirmModulesPurge=false",
        ],
        f"pnpm {version} install --frozen-lockfile",
    )


def _yarn(lock: str, version: str, paths: set[str]) -> Install:
    berry = "__metadata:" in lock or (version and not version.startswith("1."))
    if not berry:
        version = version or YARN_CLASSIC
        return Install(
            "yarn",
            version,
            [
                f"npm install -g yarn@{version}",
                YARN_CLASSIC_HOSTS,
                "yarn install --frozen-lockfile --ignore-engines --non-interactive",
            ],
            f"yarn {version} install --frozen-lockfile",
        )
    bundled = sorted(p for p in paths if re.fullmatch(r"\.yarn/releases/yarn-[\w.-]+\.c?js", p))
    if bundled:
        run = f"node {shlex.quote(bundled[-1])}"
        note = f"the repository's own {bundled[-1]}"
    else:
        metadata = re.search(r"^\s+version:\s*(\d+)", lock.split("__metadata:", 1)[-1], re.M)
        version = version or YARN_BERRY[4 if metadata and int(metadata.group(1)) >= 7 else 3]
        run, note = "yarn", f"yarn {version} (@yarnpkg/cli-dist)"
    install = [] if bundled else [f"npm install -g @yarnpkg/cli-dist@{version}"]
    # The node-modules linker (Plug'n'Play keeps no node_modules for a stage's checkout to link);
    # the lock file does not depend on the linker.
    return Install(
        "yarn",
        version,
        [*install, f"YARN_NODE_LINKER=node-modules YARN_ENABLE_IMMUTABLE_INSTALLS=0 {run} install"],
        f"{note} install with the node-modules linker",
    )


# Install scripts that fetch a browser or a binary from their vendor's servers, which no era
# build can reach (only the registries are): told to skip it, the package installs and the rest of
# its scripts run. eslint/eslint's eras of 2022 and 2024 (held out) failed in puppeteer's.
SKIP_DOWNLOADS = {
    "PUPPETEER_SKIP_DOWNLOAD": "1",
    "PUPPETEER_SKIP_CHROMIUM_DOWNLOAD": "1",
    "PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD": "1",
    "CYPRESS_INSTALL_BINARY": "0",
    "ELECTRON_SKIP_BINARY_DOWNLOAD": "1",
    "CHROMEDRIVER_SKIP_DOWNLOAD": "true",
    "GECKODRIVER_SKIP_DOWNLOAD": "true",
}


def build_commands(install: Install, registry: str, cache: str) -> list[str]:
    """The era's root commands: B_t's tree to /work/repo, the install, the move to /opt."""
    variables = {
        "npm_config_registry": registry,
        "npm_config_offline": "false",
        "npm_config_cache": f"{cache}/npm",
        "npm_config_unsafe_perm": "true",  # npm 6 as root runs install scripts as nobody otherwise
        # node-gyp builds addons against the toolchain layer's headers, never downloads them.
        "npm_config_nodedir": PREFIX,
        "npm_config_store_dir": f"{cache}/pnpm-store",
        "YARN_CACHE_FOLDER": f"{cache}/yarn",
        "YARN_NPM_REGISTRY_SERVER": registry,
        "YARN_REGISTRY": registry,
        "YARN_ENABLE_GLOBAL_CACHE": "0",
        **SKIP_DOWNLOADS,
    }
    exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in variables.items())
    return [
        f"export {exports}",
        'if [ -n "${SSL_CERT_FILE:-}" ]; then export NODE_EXTRA_CA_CERTS="$SSL_CERT_FILE"; fi',
        f"rm -rf {PROJECT} && mkdir -p /work && cp -a /opt/prchain/src {PROJECT} && cd {PROJECT}",
        *install.commands,
        f"python3 -c {shlex.quote(RELOCATE)} {PROJECT} {DEPS}",
        f"cd / && rm -rf {PROJECT} && (rmdir /work 2>/dev/null || true)",
    ]


# Moves every top-most node_modules of the tree to the same path under DEPS; a link that leads into
# the project (outside every node_modules) becomes absolute, so it leads into each stage's checkout.
RELOCATE = """
import os, shutil, sys
root, deps = sys.argv[1], sys.argv[2]
dirs = []
for here, subdirs, _ in os.walk(root):
    subdirs[:] = [d for d in subdirs if d != ".git"]
    if "node_modules" in subdirs:
        subdirs.remove("node_modules")
        dirs.append(os.path.join(here, "node_modules"))
inside = lambda path: any(path == d or path.startswith(d + "/") for d in dirs)
for top in dirs:
    for here, subdirs, files in os.walk(top):
        for name in subdirs + files:
            path = os.path.join(here, name)
            target = os.path.realpath(path) if os.path.islink(path) else ""
            if target.startswith(root + "/") and not inside(target):
                os.remove(path)
                os.symlink(target, path)
os.makedirs(deps, exist_ok=True)
for top in dirs:
    dest = os.path.join(deps, os.path.relpath(top, root))
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    shutil.move(top, dest)
with open(os.path.join(deps, ".dirs"), "w") as listing:
    listing.write("".join(os.path.relpath(top, root) + "\\n" for top in dirs))
print(f"node_modules moved to {deps}:", len(dirs))
"""

# The setup command: per directory of the image's listing that the stage's checkout has, a
# node_modules of links to the image's packages (one `ln` per directory, not per package).
LINK_SCRIPT = f"""#!/bin/sh
# Links the era image's node_modules into the stage's checkout (run in /work/repo, as the agent).
set -e
[ -f {DEPS}/.dirs ] || exit 0
while IFS= read -r rel; do
  if [ ! -d "$(dirname "$rel")" ] || [ -e "$rel" ] || [ -L "$rel" ]; then continue; fi
  mkdir "$rel"
  set --
  for entry in {DEPS}/"$rel"/* {DEPS}/"$rel"/.[!.]*; do
    if [ -e "$entry" ] || [ -L "$entry" ]; then set -- "$@" "$entry"; fi
  done
  if [ $# -gt 0 ]; then ln -s "$@" "$rel"/; fi
done < {DEPS}/.dirs
"""


def linker_commands() -> list[str]:
    return [f"printf %s {shlex.quote(LINK_SCRIPT)} > {LINKER} && chmod 755 {LINKER}"]


def dated(day: date) -> str:
    return f"{day.isoformat()}T23:59:59Z"
