"""A released stand-in for a parent POM that is a development version (`-SNAPSHOT`).

This file runs inside the era build (`python3 - <args> < this file`, Python 3.9 and up: bullseye's)
and is imported by the tests; it uses the standard library only. A project between releases names
its parent's next development version (jackson-core's `jackson-base:2.15.0-SNAPSHOT`), which only a
snapshot repository ever served; those repositories keep a snapshot for weeks, and an era build
reaches none of them. The release that stands in for it is the one the caller names (the parent
the project's last release named: prchain/environments/eras/java/__init__.py, `snapshot_parent`),
else the newest release on the repository below the snapshot's version. Its POM is written into the
local repository under the snapshot's coordinates, with its own version set to the snapshot's and
the local metadata Maven reads for a snapshot installed on this machine, so Maven resolves the
parent there, online while the era builds and offline in every sandbox.

    python3 - M2 REPOSITORY GROUP ARTIFACT SNAPSHOT RELEASE   (RELEASE "-": the newest below)

One line says which release stood in; a failure is one `error:` line and exit status 1.
"""

from __future__ import annotations

import os
import re
import sys
import urllib.request
import xml.etree.ElementTree as ET
from collections.abc import Sequence

POM_NS = "http://maven.apache.org/POM/4.0.0"
_RELEASE = re.compile(r"^\d+(\.\d+)*$")  # no qualifier: not an rc, a milestone or a snapshot
TIMEOUT = 60


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version))


def newest_below(versions: Sequence[str], snapshot: str) -> str:
    """The newest plain release older than `snapshot`'s version ("" when there is none)."""
    ceiling = version_key(snapshot.removesuffix("-SNAPSHOT"))
    older = [v for v in versions if _RELEASE.match(v) and version_key(v) < ceiling]
    return max(older, key=version_key, default="")


def listed_versions(metadata: str) -> list[str]:
    """The versions a repository's `maven-metadata.xml` lists."""
    return [(v.text or "").strip() for v in ET.fromstring(metadata).iter("version")]


def as_snapshot(pom: str, snapshot: str) -> str:
    """The released POM with its own version set to `snapshot` (added after `<parent>` when it
    inherited its parent's); its parent, dependencies and plugins unchanged."""
    ET.register_namespace("", POM_NS)
    ET.register_namespace("xsi", "http://www.w3.org/2001/XMLSchema-instance")
    root = ET.fromstring(pom)
    ns = f"{{{POM_NS}}}" if root.tag.startswith(f"{{{POM_NS}}}") else ""
    version = root.find(f"{ns}version")
    if version is None:
        version = ET.Element(f"{ns}version")
        parent = root.find(f"{ns}parent")
        at = list(root).index(parent) + 1 if parent is not None else 0
        root.insert(at, version)
    version.text = snapshot
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def local_metadata(group: str, artifact: str, snapshot: str) -> str:
    """What `mvn install` writes beside a snapshot it installed: Maven takes the local copy."""
    return (
        '<?xml version="1.0" encoding="UTF-8"?>\n<metadata modelVersion="1.1.0">\n'
        f"  <groupId>{group}</groupId>\n  <artifactId>{artifact}</artifactId>\n"
        f"  <version>{snapshot}</version>\n"
        "  <versioning><snapshot><localCopy>true</localCopy></snapshot></versioning>\n"
        "</metadata>\n"
    )


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=TIMEOUT) as response:  # noqa: S310 (https only)
        return str(response.read().decode("utf-8"))


def stand_in(
    m2: str, repository: str, group: str, artifact: str, snapshot: str, release: str
) -> str:
    """Write the stand-in into `m2`; the release that stood in."""
    base = f"{repository.rstrip('/')}/{group.replace('.', '/')}/{artifact}"
    if release in ("", "-"):
        release = newest_below(listed_versions(_get(f"{base}/maven-metadata.xml")), snapshot)
        if not release:
            raise LookupError(f"{base} lists no release of {artifact} below {snapshot}")
    pom = _get(f"{base}/{release}/{artifact}-{release}.pom")
    where = os.path.join(m2, *group.split("."), artifact, snapshot)
    os.makedirs(where, exist_ok=True)
    with open(os.path.join(where, f"{artifact}-{snapshot}.pom"), "w", encoding="utf-8") as out:
        out.write(as_snapshot(pom, snapshot))
    with open(os.path.join(where, "maven-metadata-local.xml"), "w", encoding="utf-8") as out:
        out.write(local_metadata(group, artifact, snapshot))
    return release


def main(argv: Sequence[str]) -> int:
    m2, repository, group, artifact, snapshot, release = argv
    try:
        used = stand_in(m2, repository, group, artifact, snapshot, release)
    except (OSError, ValueError, LookupError, ET.ParseError) as exc:
        print(f"error: no stand-in for the parent POM {group}:{artifact}:{snapshot}: {exc}")
        return 1
    print(f"parent POM {group}:{artifact}:{snapshot} stood in by its release {used}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
