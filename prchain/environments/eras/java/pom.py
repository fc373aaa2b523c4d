"""What a Maven or Gradle build declares, read from the snapshot's manifests (never run).

The Java level of an era comes from the properties Maven's compiler reads (`maven.compiler.release`,
`.source`, `.target`), the conventional `java.version`/`jdk.version` properties, the compiler
plugin's own `<release>`/`<source>`/`<target>`, or Gradle's `sourceCompatibility` and toolchain
`languageVersion`. `${...}` references are resolved against the properties of every POM of the
commit (a child's `${java.version}` is usually its parent's), which is what a reactor sees too.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator

from prchain.environments.eras.manifests import Snapshot

_NS = re.compile(r"^\{[^}]*\}")
LEVEL_PROPERTIES = (
    "maven.compiler.release",
    "maven.compiler.source",
    "maven.compiler.target",
    "java.version",
    "jdk.version",
    "java.release",
    "javaVersion",
)
_REFERENCE = re.compile(r"\$\{([^}]+)\}")
_GRADLE_LEVEL = re.compile(
    r"(?:sourceCompatibility|targetCompatibility|languageVersion)\s*[=(]?\s*"
    r"(?:JavaVersion\.VERSION_|JavaLanguageVersion\.of\(\s*)?['\"]?(1[._]\d+|\d+)"
)
_WRAPPER = re.compile(r"gradle-(\d+(?:\.\d+)*)-(?:bin|all)\.zip")


def pom_paths(snap: Snapshot) -> list[str]:
    return sorted(p for p in snap.files if p == "pom.xml" or p.endswith("/pom.xml"))


def gradle_paths(snap: Snapshot) -> list[str]:
    return sorted(p for p in snap.files if re.search(r"(^|/)(build|settings)\.gradle(\.kts)?$", p))


def parse_pom(text: str) -> ET.Element | None:
    """The POM's root with namespaces stripped from its tags, or None when it is no XML."""
    try:
        root = ET.fromstring(text)
    except ET.ParseError:
        return None
    for node in root.iter():
        node.tag = _NS.sub("", str(node.tag))
    return root


def _poms(snap: Snapshot) -> Iterator[ET.Element]:
    """The parsed POMs, the root's last."""
    paths = pom_paths(snap)
    for path in sorted(paths, key=lambda p: p == "pom.xml"):
        root = parse_pom(snap.text(path))
        if root is not None:
            yield root


def properties(snap: Snapshot) -> dict[str, str]:
    """Every `<properties>` entry of every POM (the root's win: children mostly inherit them)."""
    found: dict[str, str] = {}
    for root in _poms(snap):
        for prop in root.findall("properties/*"):
            found[str(prop.tag)] = (prop.text or "").strip()
    return found


def _resolve(value: str, props: dict[str, str]) -> str:
    for _ in range(5):  # `${a}` → `${b}` → 17, bounded against a cycle
        value = _REFERENCE.sub(lambda m: props.get(m.group(1), ""), value)
    return value.strip()


def level_number(text: str) -> int | None:
    """8 for "1.8" or "8", 17 for "17"; None for what is no Java level."""
    match = re.fullmatch(r"\s*(?:1[._])?(\d{1,2})(?:\.\d+)*\s*", text)
    return int(match.group(1)) if match else None


def declared_levels(snap: Snapshot) -> list[int]:
    """Every Java level the build declares (source, target, release; POMs and Gradle scripts)."""
    props = properties(snap)
    raw = [props[name] for name in LEVEL_PROPERTIES if name in props]
    for root in _poms(snap):
        for plugin in root.iter("plugin"):
            if (plugin.findtext("artifactId") or "").strip() == "maven-compiler-plugin":
                raw += [
                    n.text or ""
                    for key in ("release", "source", "target")
                    for n in plugin.iter(key)
                ]
    levels = [level_number(_resolve(value, props)) for value in raw]
    for path in gradle_paths(snap):
        levels += [level_number(found) for found in _GRADLE_LEVEL.findall(snap.text(path))]
    return sorted({level for level in levels if level and 1 < level < 40})


def plugin_versions(snap: Snapshot, artifact: str) -> list[str]:
    """The versions the POMs give the plugin `artifact` (properties resolved)."""
    props = properties(snap)
    return [
        _resolve((plugin.findtext("version") or "").strip(), props)
        for root in _poms(snap)
        for plugin in root.iter("plugin")
        if (plugin.findtext("artifactId") or "").strip() == artifact
        and (plugin.findtext("version") or "").strip()
    ]


def modules(snap: Snapshot) -> list[str]:
    """The directories of the reactor's POMs ("" for the root), the ones a build can run."""
    return [p.rsplit("/", 1)[0] if "/" in p else "" for p in pom_paths(snap)]


def gradle_version(snap: Snapshot) -> str:
    """The Gradle version the wrapper pins ("" without a wrapper)."""
    found = _WRAPPER.search(snap.text("gradle/wrapper/gradle-wrapper.properties"))
    return found.group(1) if found else ""


def without_own_versions(text: str) -> str:
    """A POM without its own and its parent's `<version>` (a release bumps them in every module
    and changes nothing a build fetches), canonicalised; the text itself when it is no XML."""
    root = parse_pom(text)
    if root is None:
        return text
    for holder in (root, root.find("parent")):
        version = holder.find("version") if holder is not None else None
        if holder is not None and version is not None:
            holder.remove(version)
    return ET.canonicalize(ET.tostring(root, encoding="unicode"), strip_text=True)


MAVEN_DIST = re.compile(r"apache-maven-(\d+(?:\.\d+)+)-bin")
_LOWER_BOUND = re.compile(r"^\s*[\[(]?\s*(\d+(?:\.\d+)*)")


def maven_wanted(snap: Snapshot) -> str:
    """The Maven release the build asks for: the wrapper's distribution, else the lower bound of
    a `requireMavenVersion` rule in a POM of the commit ("" when neither says)."""
    found = MAVEN_DIST.search(snap.text(".mvn/wrapper/maven-wrapper.properties"))
    if found:
        return found.group(1)
    props = properties(snap)
    for root in _poms(snap):
        for rule in root.iter("requireMavenVersion"):
            bound = _LOWER_BOUND.match(_resolve(rule.findtext("version") or "", props))
            if bound:
                return release(bound.group(1))
    return ""


def release(bound: str) -> str:
    """A version range's bound as a release Central serves (`[3.9,)` → 3.9.0)."""
    parts = (bound.split(".") + ["0", "0"])[:3]
    return ".".join(parts)


def version_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", version)[:3])


def released_parent(snap: Snapshot, group: str, artifact: str) -> str:
    """The version of `group:artifact` the root POM named as its parent at the last release
    before the commit (`Snapshot.released`); "" when it named another parent, a development
    version or none."""
    root = parse_pom(snap.released.get("pom.xml", ""))
    parent = root.find("parent") if root is not None else None
    if parent is None:
        return ""
    named = ((parent.findtext(k) or "").strip() for k in ("groupId", "artifactId", "version"))
    found_group, found_artifact, version = named
    if (found_group, found_artifact) != (group, artifact) or version.endswith("-SNAPSHOT"):
        return ""
    return version
