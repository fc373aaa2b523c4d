"""The dependency manifests of one commit, read from the clone without checking anything out."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from prchain.core import git

# Files whose content decides what an environment needs, for every ecosystem. CI workflows count for
# their toolchain matrix only (the ecosystem extracts it), so an action bump is no new era. Build
# manifests of workspaces and multi-module builds sit below the root too (`crates/*/Cargo.toml`);
# none is read from vendored or generated trees.
MANIFEST = re.compile(
    r"^(pyproject\.toml|setup\.py|setup\.cfg|tox\.ini|noxfile\.py|pytest\.ini|Pipfile(\.lock)?"
    r"|poetry\.lock|uv\.lock|pdm\.lock|\.python-version|\.travis\.yml|\.gitmodules"
    r"|package-lock\.json|npm-shrinkwrap\.json|yarn\.lock|pnpm-lock\.yaml|pnpm-workspace\.yaml"
    r"|\.nvmrc|\.node-version|\.tool-versions"
    r"|Cargo\.lock|rust-toolchain(\.toml)?|go\.work|settings\.gradle(\.kts)?"
    r"|gradle/wrapper/gradle-wrapper\.properties|\.mvn/wrapper/maven-wrapper\.properties"
    r"|[^/]*requirements[^/]*\.(txt|in)|requirements/[^/]+\.(txt|in)"
    r"|\.github/workflows/[^/]+\.ya?ml"
    r"|([^/]+/)?(CMakeLists\.txt|meson\.build|meson_options\.txt|meson\.options|configure\.(ac|in)|Makefile\.am)"
    r"|(?!(.*/)?(node_modules|vendor|third_party|testdata|target)/)(.*/)?"
    r"(package\.json|Cargo\.toml|go\.mod|pom\.xml|build\.gradle(\.kts)?))$"
)
# Requirement files named by a manifest or CI file read above (`-r {toxinidir}/tests/requirements-
# tools.txt` in tox.ini, `pip install -r ci/requirements.txt` in a workflow) and, in turn, by those
# files (relative to their own directory): read wherever they are. pyinstaller's 2020 test tools
# (flaky, whose options its setup.cfg passes to pytest) were named only there.
_NAMES_REQUIREMENTS = re.compile(
    r"^(tox\.ini|noxfile\.py|\.travis\.yml|\.github/workflows/[^/]+\.ya?ml)$"
)
REQUIREMENTS_FILE = re.compile(r"(^|/)[^/]*requirements[^/]*\.(txt|in)$|^requirements/")
_NAMED = re.compile(
    r"(?:^|[\s'\"(\[,])(?:-r|--requirement|-c|--constraint)[\s=]*(?:\{toxinidir\}/)?([\w./-]+\.(?:txt|in))\b"
)
# The root manifests read at the last release too: a Maven build's parent is looked up there.
RELEASED = ("pom.xml",)
MAX_BYTES = 400_000  # a lock file past this is not read (it would only pin what it already pins)


@dataclass(frozen=True)
class Snapshot:
    """What an ecosystem may look at: the commit, its date, its manifest texts and its file list."""

    sha: str
    date: datetime
    files: dict[str, str]  # manifest path → text
    paths: list[str] = field(default_factory=list)  # every tracked path (layout detection)
    version: str = "0.0.0"  # the newest tag reachable from the commit, for version-from-VCS builds
    # The stage's test files (its gold test patch's paths), when the era is a stage's: in a
    # monorepo of nested modules they choose the module the era is for (`go/`).
    tests: tuple[str, ...] = ()
    # The root's manifests at that tag: what the build named at the last release before the
    # commit (a development version's parent POM, which no release repository serves, had a
    # released predecessor there: `snapshot_parent` in prchain/environments/eras/java/).
    released: dict[str, str] = field(default_factory=dict)

    def text(self, path: str) -> str:
        return self.files.get(path, "")


def commit_date(clone: str | Path, sha: str) -> datetime:
    stamp = git.output(clone, "show", "-s", "--format=%ct", sha).strip()
    return datetime.fromtimestamp(int(stamp), tz=UTC)


def snapshot(clone: str | Path, sha: str) -> Snapshot:
    """The manifests of commit `sha` in `clone` (a git error names the commit when it is unknown)."""
    paths = git.output(clone, "ls-tree", "-r", "--name-only", sha).splitlines()
    files = {}
    for path in paths:
        if MANIFEST.match(path):
            files[path] = _text(clone, sha, path)
    files |= _named_requirements(clone, sha, files, set(paths))
    tag = _newest_tag(clone, sha)
    digits = re.search(r"\d+(\.\d+)*", tag)
    version = digits.group(0) if digits else "0.0.0"
    return Snapshot(
        sha, commit_date(clone, sha), files, paths, version, released=_root_manifests(clone, tag)
    )


def _named_requirements(
    clone: str | Path, sha: str, files: dict[str, str], tracked: set[str]
) -> dict[str, str]:
    """The tracked requirement files that `files` name and that are not among them, read."""
    found: dict[str, str] = {}
    todo = [p for p in files if _NAMES_REQUIREMENTS.match(p) or REQUIREMENTS_FILE.search(p)]
    while todo:
        source = todo.pop()
        here = posixpath.dirname(source) if REQUIREMENTS_FILE.search(source) else ""
        for name in _NAMED.findall(files.get(source) or found.get(source, "")):
            path = posixpath.normpath(posixpath.join(here, name))
            if path in tracked and path not in files and path not in found:
                found[path] = _text(clone, sha, path)
                todo.append(path)
    return found


def _text(clone: str | Path, sha: str, path: str) -> str:
    """A manifest's text at `sha`, "" past MAX_BYTES."""
    text = git.output(clone, "show", f"{sha}:{path}")
    return text if len(text) <= MAX_BYTES else ""


def _newest_tag(clone: str | Path, sha: str) -> str:
    found = git.run(clone, "describe", "--tags", "--abbrev=0", sha, check=False)
    return found.stdout.decode(errors="replace").strip() if found.ok else ""


def _root_manifests(clone: str | Path, tag: str) -> dict[str, str]:
    """The `RELEASED` manifests at the root of `tag`'s tree ({} without a tag)."""
    return _root_texts(clone, tag, RELEASED) if tag else {}


def _root_texts(clone: str | Path, rev: str, names: Iterable[str]) -> dict[str, str]:
    """The texts of those of `names` that the root of `rev`'s tree holds."""
    held = git.output(clone, "ls-tree", "--name-only", rev, "--", *names).splitlines()
    return {name: git.output(clone, "show", f"{rev}:{name}") for name in held}


def root_snapshot(clone: str | Path, sha: str, names: Iterable[str]) -> Snapshot:
    """Commit `sha` with only these root files read: for a rule that needs a config file, not
    the whole tree's manifests."""
    return Snapshot(sha, commit_date(clone, sha), _root_texts(clone, sha, names))
