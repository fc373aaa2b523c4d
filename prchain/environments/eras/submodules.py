"""Git submodules of an era build, from local mirrors (`eras.git_mirrors`).

`git archive` leaves a submodule's directory empty, and the hosts submodules live on (GitHub) may be
unreachable from the build. `eras.git_mirrors` maps a URL prefix to a local repository, with the
rule of git's `url.<local>.insteadOf <prefix>`: the longest prefix matching a submodule's URL is
replaced by its local path (`https://github.com/numpy/meson.git` →
`/work/.mirror/numpy+meson/repo`); an entry naming the repository itself matches its URL with or
without a trailing `.git`. The commit B_t
pins is then read from that repository into the build's tree. A submodule without a mirror, or
whose commit the mirror lacks, is one line in the era's notes and log; the build goes on without it.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from prchain.core import git

GITLINK = "160000"


def mirror_for(url: str, mirrors: dict[str, str]) -> str:
    """The local repository `url` maps to ("" when no prefix matches), insteadOf's rule."""
    matches = [prefix for prefix in mirrors if url.startswith(prefix)]
    if not matches:
        return ""
    prefix = max(matches, key=len)
    rest = url[len(prefix) :]
    # An entry naming the repository itself, written without `.git` or the slash the URL has.
    return mirrors[prefix] + ("" if rest in (".git", "/", ".git/") else rest)


def declared(text: str) -> list[tuple[str, str]]:
    """(path, url) of each submodule a `.gitmodules` text names."""
    found, path = [], ""
    for line in text.splitlines():
        key, _, value = line.strip().partition("=")
        if key.strip() == "path":
            path = value.strip()
        elif key.strip() == "url" and path:
            found.append((path, value.strip()))
            path = ""
    return found


def plan_notes(gitmodules: str, mirrors: dict[str, str]) -> list[str]:
    """One line per submodule that the build will lack: no mirror configured, or none on disk."""
    said = []
    for path, url in declared(gitmodules):
        local = mirror_for(url, mirrors)
        if not local:
            said.append(f"submodule {path} ({url}): no eras.git_mirrors entry; built without it")
        elif not Path(local).exists():
            said.append(f"submodule {path} ({url}): mirror {local} is missing; built without it")
    return said


def resolved(clone: str | Path, sha: str, mirrors: dict[str, str]) -> list[tuple[str, str, str]]:
    """(path, pinned commit, local mirror) of each submodule of `sha` that has a mirror on disk:
    part of the era image's identity, since the mirror decides what the build's tree holds."""
    if not mirrors:
        return []
    shown = git.run(clone, "show", f"{sha}:.gitmodules", check=False)
    if not shown.ok:
        return []
    urls = dict(declared(shown.stdout.decode(errors="replace")))
    found = []
    for path, commit in _gitlinks(clone, sha):
        local = mirror_for(urls.get(path, ""), mirrors) if urls.get(path) else ""
        if local and Path(local).exists():  # the others are said at plan time (plan_notes)
            found.append((path, commit, local))
    return found


def populate(target: Path, linked: list[tuple[str, str, str]]) -> list[str]:
    """Each `resolved` submodule's pinned commit read from its mirror into `target/<path>`; the
    lines said about those left empty (the mirror lacks the commit)."""
    said = []
    for path, commit, local in linked:
        where = target / path
        where.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(
            ["git", f"--git-dir={local}", "archive", commit], capture_output=True, check=False
        )
        if archive.returncode != 0:
            said.append(
                f"submodule {path}: commit {commit[:12]} is not in {local}; built without it"
            )
            continue
        subprocess.run(["tar", "-x", "-C", str(where)], input=archive.stdout, check=True)
    return said


def _gitlinks(clone: str | Path, sha: str) -> list[tuple[str, str]]:
    listed = git.output(clone, "ls-tree", "-r", sha)
    found = []
    for line in listed.splitlines():
        meta, _, path = line.partition("\t")
        parts = meta.split()
        if len(parts) == 3 and parts[0] == GITLINK:
            found.append((path, parts[2]))
    return found
