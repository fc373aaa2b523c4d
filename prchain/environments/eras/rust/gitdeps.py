"""Git dependencies of a Cargo.lock: from a local mirror (the exact commit), else crates.io stand-ins.

GitHub is not reachable from era builds, only crates.io. A git package of `B_t`'s Cargo.lock
(`source = "git+https://github.com/…?rev=…#<commit>"`) is served, per git source, by:

* **a mirror**: `eras.git_mirrors` maps the source's URL to a local repository (git's insteadOf
  rule, as for submodules) that holds the locked commit; the build mounts it read-only and cargo's
  vendoring fetches the locked commit from it with the git CLI. The era gets exactly what
  Cargo.lock pins. A mirror without that commit serves nothing (a stand-in, said in the notes).
* **a stand-in**: each package of the source from crates.io, a release semver-compatible with its
  locked version and not older, as of the era's date: the newest published by then (the index
  lines' `pubtime`), else the lowest published after (`standins.py`, run in the build). The era's
  notes say which sources stand in; the build's log says which release stood in for what. A package without such
  a release fails the build with that reason (the era unverified).

Either way `$CARGO_HOME/config.toml` replaces the git source by the vendor directory, as `cargo
vendor` does for git dependencies: cargo resolves nothing anew and Cargo.lock, which is in the
agent's tree, stays byte for byte as the tree has it (the dependency build runs `--locked`, so an
era whose stand-ins would make cargo rewrite it fails here rather than in the agent's diff).
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from prchain.environments.eras.submodules import mirror_for

MIRRORS = "/opt/prchain/git-mirrors"  # where a build mounts the local mirrors it uses
STANDINS = "/opt/cargo/git-standins"  # the stand-ins' directory source, during the build only
INDEX = "https://index.crates.io"
DOWNLOAD = "https://static.crates.io/crates"
_REFERENCES = ("rev", "branch", "tag")


@dataclass(frozen=True)
class GitSource:
    url: str  # as the manifest names the repository (no `git+`, query or commit)
    query: str  # the manifest's reference: `rev=…`, `branch=…`, `tag=…`, or "" (default branch)
    commit: str  # what Cargo.lock pins
    packages: tuple[tuple[str, str], ...]  # (name, locked version)
    # (name, its dependencies as Cargo.lock lists them: (name, locked version)) per package
    depends: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = ()

    @property
    def key(self) -> str:
        """cargo's name of the source (its `[source."…"]` key in a vendor config)."""
        return f"git+{self.url}" + (f"?{self.query}" if self.query else "")

    @property
    def reference(self) -> str:
        """The reference in words: `rev 3512a9f`, `branch main`, or ""."""
        kind, _, value = self.query.partition("=")
        return f"{kind} {value[:12]}" if value else ""

    def said(self) -> str:
        names = ", ".join(f"{n} {v}" for n, v in self.packages)
        return f"{names} from {self.url}" + (f" ({self.reference})" if self.reference else "")


def git_sources(lock: str) -> list[GitSource]:
    """The git sources of a Cargo.lock with their packages, in the lock's order."""
    try:
        packages = tomllib.loads(lock).get("package", [])
    except tomllib.TOMLDecodeError:
        return []
    packages = packages if isinstance(packages, list) else []
    found: dict[str, tuple[str, str, str, list[tuple[str, str]], list[Any]]] = {}
    for package in packages:
        source = str(package.get("source", ""))
        if not source.startswith("git+"):
            continue
        located, _, commit = source[4:].partition("#")
        parts = urlsplit(located)
        query = "&".join(f"{k}={v}" for k, v in parse_qsl(parts.query) if k in _REFERENCES)
        url = parts._replace(query="", fragment="").geturl()
        entry = found.setdefault(located, (url, query, commit, [], []))
        name = str(package.get("name"))
        entry[3].append((name, str(package.get("version"))))
        entry[4].append((name, _locked_dependencies(package, packages)))
    return [GitSource(u, q, c, tuple(p), tuple(d)) for u, q, c, p, d in found.values()]


def dependency_entry(entry: str) -> tuple[str, str, str]:
    """A Cargo.lock dependency, `name`, `name version` or `name version (source)`, as (name,
    version, source); "" for what it leaves out."""
    name, _, rest = entry.partition(" ")
    version, _, source = rest.partition(" ")
    return name, version, source.strip("()")


def _locked_dependencies(
    package: dict[str, Any], packages: list[dict[str, Any]]
) -> tuple[tuple[str, str], ...]:
    """(name, version) of each dependency Cargo.lock lists for `package`: `name`, `name version`
    or `name version (source)`; a bare name is the lock's only package of that name."""
    found = []
    for entry in package.get("dependencies", []):
        name, version, _ = dependency_entry(str(entry))
        if not version:
            versions = [str(p.get("version")) for p in packages if p.get("name") == name]
            version = versions[0] if len(versions) == 1 else ""
        if version:
            found.append((name, version))
    return tuple(found)


def mirrored(source: GitSource, mirrors: dict[str, str]) -> str:
    """The local mirror (on disk) that holds `source`'s locked commit, "" when none does."""
    local = mirror_for(source.url, mirrors)
    if not local or not Path(local).exists():
        return ""
    held = subprocess.run(
        ["git", f"--git-dir={_git_dir(local)}", "cat-file", "-e", f"{source.commit}^{{commit}}"],
        capture_output=True,
        check=False,
    )
    return local if held.returncode == 0 else ""


def _git_dir(local: str) -> str:
    """A repository's git directory (a bare mirror is its own)."""
    dot = Path(local) / ".git"
    return str(dot) if dot.exists() else local


def mount_point(local: str) -> str:
    return f"{MIRRORS}/{hashlib.sha256(local.encode()).hexdigest()[:12]}"


def replacement(sources: list[GitSource], directory_source: str) -> str:
    """Config text replacing each git source by the directory source `directory_source`."""
    blocks = []
    for source in sources:
        kind, _, value = source.query.partition("=")
        reference = f"{kind} = {json.dumps(value)}\n" if value else ""
        blocks.append(
            f"[source.{json.dumps(source.key)}]\ngit = {json.dumps(source.url)}\n{reference}"
            f'replace-with = "{directory_source}"\n'
        )
    return "\n".join(blocks)


@dataclass(frozen=True)
class GitPlan:
    """How a build gets an era's git dependencies."""

    mirrored: dict[GitSource, str]  # source → local mirror on the host
    standins: list[GitSource]

    @property
    def sources(self) -> list[GitSource]:
        return [*self.mirrored, *self.standins]

    def notes(self, cutoff: str) -> list[str]:
        said = [f"git dependency {s.said()}: from the mirror {m}" for s, m in self.mirrored.items()]
        said += [
            f"git dependency {s.said()}: no eras.git_mirrors entry holds commit {s.commit[:12]} "
            "(GitHub is not reachable); a crates.io release semver-compatible with the locked "
            f"version stands in, the newest by {cutoff[:10]}, else the first after"
            for s in self.standins
        ]
        return said

    def mounts(self) -> dict[str, str]:
        """Container path → host path of each mirror the build reads."""
        return {mount_point(local): local for local in self.mirrored.values()}

    def git_home(self) -> list[str]:
        """Commands writing the vendoring's own git config: each mirrored URL is its mount."""
        config = "/tmp/prchain-git-home/.gitconfig"
        commands = [
            "mkdir -p /tmp/prchain-git-home",
            f"git config --file {config} safe.directory '*'",
        ]
        for source, local in self.mirrored.items():
            commands.append(
                f"git config --file {config} --add url.file://{mount_point(local)}.insteadOf "
                f"{json.dumps(source.url)}"
            )
        return commands

    def standin_command(self, cutoff: str) -> str:
        """The build's stand-in step (standins.py fed to the suite's python3); releases chosen as
        of `cutoff` (RFC 3339)."""
        script = (Path(__file__).parent / "standins.py").read_text()
        payload = json.dumps(
            [
                {
                    "url": s.url,
                    "reference": s.reference,
                    "packages": s.packages,
                    "dependencies": dict(s.depends),
                }
                for s in self.standins
            ]
        ).replace("'", "'\\''")
        return (
            f"python3 - {INDEX} {DOWNLOAD} {STANDINS} '{payload}' {cutoff} <<'PRCHAIN_STANDINS'\n"
            f"{script}PRCHAIN_STANDINS"
        )


def plan(lock: str, mirrors: dict[str, str]) -> GitPlan:
    sources = git_sources(lock)
    served = {s: mirrored(s, mirrors) for s in sources}
    return GitPlan({s: m for s, m in served.items() if m}, [s for s, m in served.items() if not m])
