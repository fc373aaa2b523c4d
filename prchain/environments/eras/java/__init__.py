"""The Java ecosystem: a Debian suite's OpenJDK and Maven (Gradle where Debian's fits), the era's
dependencies in a local repository inside the image, surefire's reports for per-test outcomes.

The era image holds the JDK and Maven (the toolchain layer, shared by every era asking for the same
JDK on the same suite) and /opt/m2, the local repository filled at build time by running B_t's own
test phase (compile, test-compile and one test class per module: Maven fetches surefire's provider
only when a test runs, so `dependency:go-offline` or `-DskipTests` leave it out). The image's Maven
settings make /opt/m2 the local repository and Maven offline, so the agent's plain `mvn test` works
in the offline sandbox; each stage compiles into its own fresh worktree's `target/`.
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import NamedTuple

from prchain.environments.eras.build import CACHE, add_to_cache
from prchain.environments.eras.config import ErasConfig
from prchain.environments.eras.ecosystems import ECOSYSTEMS, Plan
from prchain.environments.eras.java import pom
from prchain.environments.eras.java.report import Surefire
from prchain.environments.eras.manifests import Snapshot
from prchain.environments.eras.reports import TestReport
from prchain.environments.eras.sealed import SealedPlaces

SRC = "/opt/prchain/src"
M2 = "/opt/m2"
JAVA_HOME = "/usr/lib/jvm/prchain-jdk"  # a link to the chosen JDK, whatever the suite calls it
# The OpenJDK packages of each Debian suite (main, amd64), oldest first; sid has them all but moves.
SUITE_JDKS: dict[str, tuple[int, ...]] = {
    "bullseye": (11, 17),
    "bookworm": (17,),
    "trixie": (21, 25),
}
SUITE_MAVEN = {"bullseye": "3.6.3", "bookworm": "3.8.7", "trixie": "3.9.9"}
SUITE_GRADLE = {"bullseye": "4.4.1", "bookworm": "4.4.1", "trixie": "4.4.1"}
# General availability of each JDK: a build that declares no level gets the newest LTS of its date.
JDK_RELEASED = {11: "2018-09-25", 17: "2021-09-14", 21: "2023-09-19", 25: "2025-09-16"}
# The oldest `-source` each javac still compiles (JDK 12 dropped 6, JDK 20 dropped 7).
OLDEST_SOURCE = {11: 6, 17: 7, 21: 8, 25: 8}
MVN = "mvn -B -ntp -Dstyle.color=never"
GRADLE_TEST_COMMAND = "gradle --offline --continue test"
WARM_TIMEOUT = 300  # seconds per forked test JVM while the build warms the repository up
_ERA_FILE = re.compile(
    r"(^|/)(pom\.xml|build\.gradle(\.kts)?|settings\.gradle(\.kts)?|gradle\.properties"
    r"|\.mvn/(wrapper/maven-wrapper\.properties|maven\.config|jvm\.config|extensions\.xml)"
    r"|gradle/wrapper/gradle-wrapper\.properties)$"
)
_TEST_CLASS = re.compile(r"^(?:(.*)/)?src/test/java/(?:.+/)?(\w*Tests?|Test\w+|\w*TestCase)\.java$")

# A truststore of the build's CA bundle: behind a TLS-re-signing network Maven (Java's own trust
# store) would reject Maven Central; it lives in /tmp and is deleted before the image is committed.
TRUST_JAVA = """\
import java.io.*; import java.security.KeyStore; import java.security.cert.*;
public class Trust { public static void main(String[] a) throws Exception {
  KeyStore ks = KeyStore.getInstance("PKCS12"); ks.load(null, null); int i = 0;
  try (InputStream in = new FileInputStream(a[0])) {
    for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(in))
      ks.setCertificateEntry("ca" + i++, c); }
  try (OutputStream out = new FileOutputStream(a[1])) { ks.store(out, "changeit".toCharArray()); }
} }
"""
TRUST_DIR = "/tmp/prchain-trust"
SETTINGS = f"""\
<settings>
  <localRepository>{M2}</localRepository>
  <offline>true</offline>
</settings>
"""


def image_settings(switches: tuple[str, ...]) -> str:
    """The image's settings: offline on /opt/m2, and the plan's switches (`-Dname=value`) as the
    properties of an active profile, so the agent's plain `mvn test` runs as the room's does."""
    if not switches:
        return SETTINGS
    pairs = (switch.removeprefix("-D").split("=", 1) for switch in switches)
    properties = "".join(f"<{name}>{value}</{name}>" for name, value in pairs)
    profile = (
        f"  <profiles><profile><id>prchain-era</id><properties>{properties}</properties>"
        "</profile></profiles>\n"
        "  <activeProfiles><activeProfile>prchain-era</activeProfile></activeProfiles>\n"
    )
    return SETTINGS.replace("</settings>", f"{profile}</settings>")


# The build's own settings: the repository's download cache (the era build's cache volume, a
# Maven repository in file:// layout) is asked before the POMs' repositories and Maven Central,
# so a warm build downloads only what no earlier era of this repository fetched. Only what B_t's
# build asks for is copied from it into /opt/m2: later eras' artifacts stay in the cache. They
# are the global settings (`-gs`): the user settings the egress proxy writes name the proxy, and
# Maven 3.9's transport reads no JVM proxy property (`-s` replaced them: gson #3034's Maven 3.9.6
# could not resolve a host).
CACHED = f"{CACHE}/m2"
BUILD_SETTINGS = "/tmp/prchain-maven-settings.xml"
_CACHE_REPOSITORY = f"""\
<id>prchain-cache</id><url>file://{CACHED}</url>
<releases><checksumPolicy>ignore</checksumPolicy></releases>
<snapshots><enabled>false</enabled></snapshots>"""
CACHE_SETTINGS = f"""\
<settings>
  <localRepository>{M2}</localRepository>
  <profiles><profile><id>prchain-cache</id>
    <repositories><repository>{_CACHE_REPOSITORY}</repository></repositories>
    <pluginRepositories><pluginRepository>{_CACHE_REPOSITORY}</pluginRepository></pluginRepositories>
  </profile></profiles>
  <activeProfiles><activeProfile>prchain-cache</activeProfile></activeProfiles>
</settings>
"""


# ---- which JDK -------------------------------------------------------------------------------------


def choose_jdk(snap: Snapshot, suites: dict[str, str]) -> tuple[str, int, str]:
    """(suite, JDK, why): the JDK the build declares or the nearest newer one; without a
    declaration, the newest LTS released before the commit."""
    offered = [(jdk, suite) for suite in suites for jdk in SUITE_JDKS.get(suite, ())]
    if not offered:
        offered = [(17, "bookworm")]
    levels = pom.declared_levels(snap)
    if levels:
        want = max(levels)
        fitting = sorted(o for o in offered if o[0] >= want) or [max(offered)]
        # The newest suite with that JDK (a newer Maven), and the oldest JDK that compiles it.
        jdk = fitting[0][0]
        suite = [s for j, s in offered if j == jdk][-1]
        how = "exactly" if jdk == want else "nearest newer" if jdk > want else "newest here"
        return suite, jdk, f"declares Java {want} ({how})"
    when = snap.date.date().isoformat()
    released = [o for o in sorted(offered) if JDK_RELEASED.get(o[0], "9999") <= when]
    jdk, suite = released[-1] if released else min(offered)
    suite = [s for j, s in offered if j == jdk][-1]
    return suite, jdk, f"declares no Java level: newest LTS of {when}"


def next_jdks(jdk: int, suites: dict[str, str]) -> list[tuple[str, int]]:
    """The (suite, JDK) pairs newer than `jdk`, oldest first."""
    offered = {(j, s) for s in suites for j in SUITE_JDKS.get(s, ())}
    return [(s, j) for j, s in sorted(offered) if j > jdk]


def level_caveat(snap: Snapshot, jdk: int) -> str:
    levels = pom.declared_levels(snap)
    if levels and min(levels) < OLDEST_SOURCE.get(jdk, 6):
        return f"declares Java {min(levels)}; the oldest JDK here ({jdk}) compiles {OLDEST_SOURCE[jdk]} and newer"
    if levels and max(levels) > jdk:
        return f"declares Java {max(levels)}; the newest JDK here is {jdk}"
    return ""


# ---- the build ------------------------------------------------------------------------------------


def toolchain_commands(jdk: int, gradle: bool = False, maven: str = "") -> list[str]:
    """Debian's OpenJDK and Maven (and Gradle), linked where sandboxes look for binaries; with
    `maven`, that Maven release instead, fetched from Maven Central by Debian's own Maven (Central
    serves every release as `org.apache.maven:apache-maven:<v>:tar.gz:bin`)."""
    packages = f"openjdk-{jdk}-jdk-headless maven" + (" gradle" if gradle else "")
    return [
        "apt-get update -qq",
        f"DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends {packages}",
        "rm -rf /var/lib/apt/lists/*",
        f"ln -sfn /usr/lib/jvm/java-{jdk}-openjdk-$(dpkg --print-architecture) {JAVA_HOME}",
        f"for b in java javac jar; do ln -sf {JAVA_HOME}/bin/$b /usr/local/bin/$b; done",
        "ln -sf /usr/share/maven/bin/mvn /usr/local/bin/mvn",
        *(central_maven(maven) if maven else []),
        *(["ln -sf /usr/bin/gradle /usr/local/bin/gradle"] if gradle else []),
        "java -version && mvn -v",
    ]


FETCH_DIR = "/tmp/prchain-maven-fetch"
DEPENDENCY_PLUGIN = "org.apache.maven.plugins:maven-dependency-plugin:3.6.1"


def central_maven(version: str) -> list[str]:
    dist = f"org.apache.maven:apache-maven:{version}:tar.gz:bin"
    return [
        *trust_commands(),
        f"{MVN} -Dmaven.repo.local={FETCH_DIR}/m2 {DEPENDENCY_PLUGIN}:copy -Dartifact={dist}"
        f" -DoutputDirectory={FETCH_DIR}",
        f"tar -xzf {FETCH_DIR}/apache-maven-{version}-bin.tar.gz -C /opt",
        f"ln -sfn /opt/apache-maven-{version} /opt/maven && ln -sf /opt/maven/bin/mvn /usr/local/bin/mvn",
        f"rm -rf {FETCH_DIR} {TRUST_DIR}",
    ]


def trust_commands() -> list[str]:
    return [
        f"mkdir -p {TRUST_DIR} && printf %s {shlex.quote(TRUST_JAVA)} > {TRUST_DIR}/Trust.java",
        'if [ -n "${SSL_CERT_FILE:-}" ] && [ -f "$SSL_CERT_FILE" ]; then '
        f'java {TRUST_DIR}/Trust.java "$SSL_CERT_FILE" {TRUST_DIR}/store.p12 && '
        f'export MAVEN_OPTS="-Djavax.net.ssl.trustStore={TRUST_DIR}/store.p12 '
        '-Djavax.net.ssl.trustStorePassword=changeit -Djavax.net.ssl.trustStoreType=PKCS12"; fi',
    ]


def warm_tests(snap: Snapshot) -> list[str]:
    """One test class per module: running it makes surefire fetch its provider for that module."""
    chosen: dict[str, str] = {}
    for path in snap.paths:
        found = _TEST_CLASS.match(path)
        if found:
            chosen.setdefault(found.group(1) or "", found.group(2))
    return sorted(set(chosen.values()))


# The repository Maven asks when the POMs name none: a released parent's POM comes from there.
CENTRAL = "https://repo.maven.apache.org/maven2"
_STANDIN_SCRIPT = Path(__file__).with_name("parent_standin.py")
_STANDIN_ARGS = re.compile(
    rf"^python3 - {re.escape(M2)} \S+ (\S+) (\S+) (\S+) (\S+) <<'PRCHAIN_PARENT'"
)


class Parent(NamedTuple):
    """A parent POM that is a development version, and the release that stands in for it
    (parent_standin.py; "-": the newest release below it, chosen while the era builds)."""

    group: str
    artifact: str
    snapshot: str
    release: str

    def command(self) -> str:
        script = _STANDIN_SCRIPT.read_text(encoding="utf-8")
        args = " ".join(shlex.quote(a) for a in (M2, CENTRAL, *self))
        return f"python3 - {args} <<'PRCHAIN_PARENT'\n{script}PRCHAIN_PARENT"

    def note(self) -> str:
        where = (
            "the parent the last release before B_t named"
            if self.release != "-"
            else "the newest release below it (the last release before B_t named no release of "
            "it; not dated)"
        )
        release = self.release if self.release != "-" else "a release"
        return (
            f"parent POM {self.group}:{self.artifact}:{self.snapshot} (a development version no "
            f"release repository serves) stood in by {release}: {where}"
        )


def _parents(plan: Plan) -> tuple[Parent, ...]:
    """The stand-ins the plan's build writes."""
    found = (_STANDIN_ARGS.match(command) for command in plan.commands)
    return tuple(Parent(*match.groups()) for match in found if match)


def maven_commands(
    snap: Snapshot,
    left_out: tuple[str, ...] = (),
    parents: tuple[Parent, ...] = (),
    phase: str = "test",
    switches: tuple[str, ...] = (),
) -> list[str]:
    """B_t's test phase (or `package`: `shaded_module`) as far as one test per module, fetching
    into /opt/m2 (from the repository's download cache first, then the registries; a development
    parent from its stand-in); what it fetched into the cache; then the image's settings (the
    local repository, offline) and a repository anyone may write to."""
    names = warm_tests(snap)
    selection = f" -Dtest={','.join(names)} {' '.join(_NARROW)}" if names else ""
    return [
        f"mkdir -p {M2} {CACHED}",
        *trust_commands(),
        *(parent.command() for parent in parents),
        f"cat > {BUILD_SETTINGS} <<'EOF'\n{CACHE_SETTINGS}EOF",
        f"cd {SRC} && {MVN} -gs {BUILD_SETTINGS} -fae -Dmaven.repo.local={M2} {phase}"
        f"{reactor(left_out)} -Dmaven.test.failure.ignore=true{_joined(switches)}"
        f" -Dsurefire.timeout={WARM_TIMEOUT}{selection}",
        *cache_commands(),
        # The settings of whichever Maven is linked (Debian's conf is a link to /etc/maven).
        'conf=$(dirname "$(readlink -f "$(command -v mvn)")")/../conf && '
        f"cat > \"$conf/settings.xml\" <<'EOF'\n{image_settings(switches)}EOF",
        f"rm -rf {TRUST_DIR} {BUILD_SETTINGS} && chmod -R a+rwX {M2}",
    ]


def cache_commands() -> list[str]:
    """Say where the build's artifacts came from; add the new ones to the repository's cache
    (`add_to_cache`: a concurrent build never reads half a jar); and make them B_t's own in
    /opt/m2. Maven records the repository each artifact came from and, offline, refuses one whose
    repository the build does not name; the image names no cache, so the records go."""
    return [
        f'echo "maven downloads by repository: $(find {M2} -name _remote.repositories -exec cat {{}} +'
        " | grep -oE '>[^=]*=' | tr -d '>=' | sort | uniq -c | xargs)\"",
        add_to_cache(M2, CACHED, skip=_NOT_CACHED, what="maven"),
        f"find {M2} \\( -name _remote.repositories -o -name '*.lastUpdated' \\) -delete",
    ]


# Bookkeeping of a local repository that a remote one (the cache, read over file://) has not.
_NOT_CACHED = (
    "_remote.repositories",
    "*.lastUpdated",
    "maven-metadata-*.xml",
    "resolver-status.properties",
)


_NARROW = ("-DfailIfNoTests=false", "-Dsurefire.failIfNoSpecifiedTests=false")


def reactor(left_out: tuple[str, ...]) -> str:
    """Maven's option that leaves these modules out of the reactor ("" for none)."""
    return f" -pl {shlex.quote(','.join(f'!{m}' for m in left_out))}" if left_out else ""


def test_command(
    left_out: tuple[str, ...] = (), phase: str = "test", switches: tuple[str, ...] = ()
) -> str:
    return (
        f"{MVN} -o -fae {phase}{reactor(left_out)} -Dmaven.test.failure.ignore=true"
        f"{_joined(switches)}"
    )


def _joined(switches: tuple[str, ...]) -> str:
    return "".join(f" {switch}" for switch in switches)


# The switches a revision may add to the plan's Maven runs (`old_jacoco`).
SWITCHES = ("-Djacoco.skip=true",)


def _switches(plan: Plan) -> tuple[str, ...]:
    return tuple(s for s in SWITCHES if f" {s}" in plan.test_command)


def _phase(plan: Plan) -> str:
    """The lifecycle phase the plan's Maven runs to (`test`, or `package` for a shading reactor)."""
    found = re.search(r" -fae (\w+)", plan.test_command)
    return found.group(1) if found else "test"


def _left_out(plan: Plan) -> tuple[str, ...]:
    found = re.search(r" -pl '?([^' ]+)'?", plan.test_command)
    return tuple(m.removeprefix("!") for m in found.group(1).split(",")) if found else ()


def gradle_commands() -> list[str]:
    return [
        "mkdir -p /opt/gradle-home",
        *trust_commands(),
        f'export GRADLE_OPTS="${{MAVEN_OPTS:-}}"; cd {SRC} && gradle --continue test || true',
        f"rm -rf {TRUST_DIR} && chmod -R a+rwX /opt/gradle-home",
    ]


# ---- the room -------------------------------------------------------------------------------------


# The test frameworks' and assertion libraries' packages: a class of the agent's in one of them,
# compiled into target/classes (which precedes the dependency jars on surefire's classpath), or a
# resource there, would replace the image's. At any depth: every source set and resource root.
SEALED = SealedPlaces(
    namespaces=(
        "org/junit", "junit/framework", "junit/extensions", "junit/runner", "junit/textui",
        "org/hamcrest", "org/assertj", "org/mockito", "org/testng", "org/opentest4j",
        "org/apiguardian", "com/google/common/truth", "org/easymock", "org/powermock",
        "org/spockframework", "io/kotest", "org/jmock", "org/awaitility", "org/skyscreamer",
        "org/xmlunit", "net/bytebuddy", "org/objenesis", "org/apache/maven/surefire",
    ),
    libraries=frozenset({"junit", "hamcrest", "assertj", "mockito", "testng", "truth"}),
)  # fmt: skip


@ECOSYSTEMS.register("java")
class Java:
    name = "java"
    report: TestReport = Surefire()
    sealed = SEALED

    def owns(self, path: str) -> bool:
        return path.endswith((".java", ".kt", ".groovy"))

    def detects(self, snap: Snapshot) -> bool:
        return bool(pom.pom_paths(snap)) or any(
            p in snap.files for p in ("build.gradle", "build.gradle.kts")
        )

    def era_facts(self, snap: Snapshot) -> dict[str, object]:
        """The build files (POMs without their own version), the wrapper pins, the Java levels."""
        files = {
            path: pom.without_own_versions(text) if path.endswith("pom.xml") else text
            for path, text in snap.files.items()
            if _ERA_FILE.search(path)
        }
        return {"files": files, "levels": pom.declared_levels(snap)}

    def plans(self, snap: Snapshot, config: ErasConfig) -> list[Plan]:
        suite, jdk, why = choose_jdk(snap, config.suites)
        first = self._plan(snap, suite, jdk, why)
        later = [
            self._plan(snap, s, j, f"{why}; JDK {jdk} did not do, the next newer", "newer-jdk")
            for s, j in next_jdks(jdk, config.suites)[:1]
        ]
        return [first, *later]

    def _plan(
        self,
        snap: Snapshot,
        suite: str,
        jdk: int,
        why: str,
        variant: str = "dated",
        maven: str = "",
        left_out: tuple[str, ...] = (),
        parents: tuple[Parent, ...] = (),
        phase: str = "test",
        switches: tuple[str, ...] = (),
    ) -> Plan:
        cutoff = snap.date.strftime("%Y-%m-%dT%H:%M:%SZ")
        if not pom.pom_paths(snap):
            return self._gradle_plan(snap, suite, jdk, why, cutoff, variant)
        switches = tuple(dict.fromkeys((*switches, *jacoco_switch(snap, jdk))))
        debian = SUITE_MAVEN.get(suite, "")
        maven = maven or pom.maven_wanted(snap)
        if not maven or pom.version_key(maven) <= pom.version_key(debian):
            maven = ""  # Debian's is as new as the build asks
        notes = [
            f"OpenJDK {jdk} and Maven {maven or debian} on {suite}: {why}",
            f"Maven {maven} from Maven Central (the build asks for it; Debian's is {debian})"
            if maven
            else f"Debian's Maven {debian}",
            f"dependencies and plugins from Maven Central into {M2} (B_t's test phase); "
            "the POMs pin them, so the date does not choose",
            *(
                [
                    f"left out of the reactor: {', '.join(left_out)} (its tests compile only "
                    "against a packaged jar: `mvn test` cannot build them at B_t)"
                ]
                if left_out
                else []
            ),
            *(parent.note() for parent in parents),
            *(
                [
                    "Maven runs to `package`: a module shades a dependency into its jar there "
                    f"({', '.join(shading_modules(snap))}), and the modules after it compile "
                    "against that jar"
                ]
                if phase == "package"
                else []
            ),
            *(
                [
                    "JaCoCo's agent left out of the test JVMs (`-Djacoco.skip=true`): the "
                    "build's JaCoCo is older than this JDK and aborts every forked JVM"
                ]
                if "-Djacoco.skip=true" in switches
                else []
            ),
        ]
        return Plan(
            "java",
            suite,
            f"jdk{jdk}",
            cutoff,
            maven_commands(snap, left_out, parents, phase, switches),
            test_command(left_out, phase, switches),
            "",
            notes,
            variant,
            level_caveat(snap, jdk),
            toolchain_commands(jdk, maven=maven),
            {"JAVA_HOME": JAVA_HOME},
        )

    def _gradle_plan(
        self, snap: Snapshot, suite: str, jdk: int, why: str, cutoff: str, variant: str
    ) -> Plan:
        wanted, debian = pom.gradle_version(snap), SUITE_GRADLE.get(suite, "4.4.1")
        caveat = ""
        if not wanted or wanted.split(".")[0] != debian.split(".")[0]:
            caveat = (
                f"asks for Gradle {wanted or '(no wrapper)'}; Gradle distributions cannot be "
                f"fetched here and Debian's gradle is {debian}"
            )
        notes = [f"OpenJDK {jdk} and Debian's Gradle {debian} on {suite}: {why}"]
        return Plan(
            "java",
            suite,
            f"jdk{jdk}",
            cutoff,
            gradle_commands(),
            GRADLE_TEST_COMMAND,
            "",
            notes,
            variant,
            caveat,
            toolchain_commands(jdk, gradle=True),
            {"JAVA_HOME": JAVA_HOME, "GRADLE_USER_HOME": "/opt/gradle-home"},
        )

    def revise(
        self, snap: Snapshot, config: ErasConfig, plan: Plan, log: str, ran: bool
    ) -> Plan | None:
        """What the build's own checks say, as one rule each (`REVISIONS`): the JDK javac asks
        for, or the Maven the enforcer asks for."""
        for rule in REVISIONS:
            revised = rule(self, snap, config, plan, log)
            if revised is not None:
                return revised
        return None


def _current(plan: Plan) -> tuple[int, str]:
    """The plan's JDK and its Maven from Central ("" for Debian's)."""
    found = pom.MAVEN_DIST.search(" ".join(plan.toolchain))
    return int(plan.interpreter.removeprefix("jdk") or 0), found.group(1) if found else ""


def _same_why(plan: Plan) -> str:
    """Why the plan has its JDK, for a revision that keeps the JDK."""
    return plan.notes[0].split(": ", 1)[-1] if plan.notes else ""


def _replan(
    java: Java,
    snap: Snapshot,
    plan: Plan,
    why: str,
    change: str,
    *,
    suite: str = "",
    jdk: int = 0,
    maven: str | None = None,
    left_out: tuple[str, ...] | None = None,
    parents: tuple[Parent, ...] | None = None,
    phase: str = "",
    switches: tuple[str, ...] | None = None,
) -> Plan:
    """`plan` with what a revision changes (its variant gets `change`); what it does not name
    stays the plan's: its suite and JDK, its Maven, the modules left out, the parents stood in,
    the phase Maven runs to, its switches."""
    current_jdk, current_maven = _current(plan)
    return java._plan(
        snap,
        suite or plan.suite,
        jdk or current_jdk,
        why,
        f"{plan.variant}{change}",
        current_maven if maven is None else maven,
        _left_out(plan) if left_out is None else left_out,
        _parents(plan) if parents is None else parents,
        phase or _phase(plan),
        _switches(plan) if switches is None else switches,
    )


def _offered(config: ErasConfig) -> list[tuple[int, str]]:
    return sorted({(j, s) for s in config.suites for j in SUITE_JDKS.get(s, ())})


def newer_release(
    java: Java, snap: Snapshot, config: ErasConfig, plan: Plan, log: str
) -> Plan | None:
    """javac does not know the release the build asks for (`invalid target release: 21`,
    `release version 21 not supported`), or the enforcer wants a newer JDK: the oldest JDK here
    that does."""
    found = re.search(
        r"(?:invalid (?:target|source) release|release version):? (?:1\.)?(\d+)"
        # the enforcer's RequireJavaVersion: `Detected JDK version 17.0.9 (JAVA_HOME=…) is not in
        # the allowed range [21,).` (gson from 2026)
        r"|Detected JDK [Vv]ersion \S+(?: \([^)]*\))? is not in the allowed range \[?\s*(?:1\.)?(\d+)",
        log,
    )
    jdk, _ = _current(plan)
    want = int(found.group(1) or found.group(2)) if found else 0
    if want <= jdk:
        return None
    fitting = [o for o in _offered(config) if o[0] >= want]
    if not fitting:
        return None
    why = f"javac {jdk} does not know release {want}"
    return _replan(java, snap, plan, why, f"+jdk{want}", suite=fitting[0][1], jdk=fitting[0][0])


def older_source(
    java: Java, snap: Snapshot, config: ErasConfig, plan: Plan, log: str
) -> Plan | None:
    """javac no longer compiles the declared source (`Source option 5 is no longer supported`):
    the oldest JDK here."""
    if not re.search(r"(Source|Target) option \d+ is no longer supported", log):
        return None
    jdk, _ = _current(plan)
    older = [o for o in _offered(config) if o[0] < jdk][:1]
    if not older:
        return None
    why = f"javac {jdk} no longer compiles the declared source level"
    suite, oldest = older[0][1], older[0][0]
    return _replan(java, snap, plan, why, f"+jdk{oldest}", suite=suite, jdk=oldest)


def enforced_maven(
    java: Java, snap: Snapshot, config: ErasConfig, plan: Plan, log: str
) -> Plan | None:
    """The enforcer rejects this Maven (`Detected Maven Version: 3.6.3 is not in the allowed range
    [3.9.0,)`, a rule of a parent POM the snapshot does not hold), or a plugin requires a newer one:
    that release from Central."""
    found = re.search(
        r"Detected Maven Version: \S+ is not in the allowed range \[?\s*(\d+(?:\.\d+)+)"
        # a plugin's own prerequisite (gson's protobuf-maven-plugin 4 of 2026)
        r"|The plugin \S+ requires Maven version (\d+(?:\.\d+)+)",
        log,
    )
    _, maven = _current(plan)
    asked = (found.group(1) or found.group(2)) if found else ""
    if not asked or pom.release(asked) == maven:
        return None
    wanted = pom.release(asked)
    why = f"the build asks for Maven {asked} or newer"
    return _replan(java, snap, plan, why, f"+maven{wanted}", maven=wanted)


def unpackaged_module(
    java: Java, snap: Snapshot, config: ErasConfig, plan: Plan, log: str
) -> Plan | None:
    """A module whose test sources require another module of the reactor as a Java module that
    only its packaged jar declares (gson's test-jpms from 2024: ModiTect adds module-info.class to
    gson's jar at `package`, so `mvn test` finds `module not found: com.google.gson`): the same
    plan without that module, said in the notes. Its tests need the project's `verify` run."""
    if not re.search(r"module-info\.java:\[\d+,\d+\] module not found: ", log):
        return None
    found = re.search(
        r"Failed to execute goal \S+:testCompile \(\S+\) on project ([\w.-]+): Compilation", log
    )
    left_out = _left_out(plan)
    if not found or found.group(1) in left_out:
        return None
    module = found.group(1)
    return _replan(java, snap, plan, _same_why(plan), f"-{module}", left_out=(*left_out, module))


def shading_modules(snap: Snapshot) -> list[str]:
    """The modules (their directories; "." for the root) whose POM runs maven-shade-plugin."""
    return [
        path.removesuffix("pom.xml").rstrip("/") or "."
        for path in pom.pom_paths(snap)
        if "maven-shade-plugin" in snap.files[path]
    ]


def shaded_module(
    java: Java, snap: Snapshot, config: ErasConfig, plan: Plan, log: str
) -> Plan | None:
    """A module does not compile for want of a class a module before it shades into its jar
    (pmd's pmd-test of 2021: pmd-core shades jaxen in at `package` and declares it optional, so
    under `mvn test` the reactor hands pmd-test pmd-core's classes without jaxen, and javac says
    `class file for org.jaxen.JaxenException not found`): the same plan with Maven running to
    `package`, where the reactor hands on the shaded jar."""
    if _phase(plan) != "test" or not re.search(r"class file for [\w.$]+ not found", log):
        return None
    if not shading_modules(snap):
        return None
    return _replan(java, snap, plan, _same_why(plan), "+package", phase="package")


def jacoco_switch(snap: Snapshot, jdk: int) -> tuple[str, ...]:
    """JaCoCo skipped where the POMs name a jacoco-maven-plugin before 0.8.2 and the JDK is 11 or
    newer: its agent aborts every forked test JVM (alibaba/nacos of 2020–2021, jacoco 0.7.8: its
    eras verified on the modules that ran, and a stage's narrowed run in a module that aborted
    read as "no test outcome"). `old_jacoco` catches a version the snapshot does not show."""
    versions = pom.plugin_versions(snap, "jacoco-maven-plugin")
    return ("-Djacoco.skip=true",) if jdk >= 11 and any(map(_before_java11, versions)) else ()


def _before_java11(jacoco: str) -> bool:
    """A JaCoCo before 0.8.2, which does not know Java 11's class files: with its agent every
    forked test JVM of a JDK 11 or newer aborts (`Process Exit Code: 134`, after `FATAL ERROR in
    native method: processing of -javaagent failed`). An unresolved version is not known old."""
    key = pom.version_key(jacoco)
    return bool(key) and key < (0, 8, 2)


_JACOCO_AGENT = re.compile(r"-javaagent:\S*/org\.jacoco\.agent-(\d+(?:\.\d+)+)")


def old_jacoco(java: Java, snap: Snapshot, config: ErasConfig, plan: Plan, log: str) -> Plan | None:
    """Every forked test JVM aborts under the build's old JaCoCo agent (alibaba/nacos of 2019:
    jacoco 0.7.8 on the JDK 11 that stands in for its Java 8): the same plan with JaCoCo skipped,
    in the room's runs and in the image's settings for the agent's."""
    if "-Djacoco.skip=true" in _switches(plan) or "Process Exit Code: 134" not in log:
        return None
    if not any(map(_before_java11, _JACOCO_AGENT.findall(log))):
        return None
    switches = (*_switches(plan), "-Djacoco.skip=true")
    return _replan(java, snap, plan, _same_why(plan), "+nojacoco", switches=switches)


# Maven's words for a parent POM it could not fetch, the parent's coordinates on the same line:
# `Non-resolvable parent POM for com.fasterxml.jackson.core:jackson-core:2.15.0-SNAPSHOT: Could
# not transfer artifact com.fasterxml.jackson:jackson-base:pom:2.15.0-SNAPSHOT from/to …` (3.8),
# `…: The following artifacts could not be resolved: com.fasterxml.jackson:jackson-base:pom:
# 2.16.0-SNAPSHOT (absent): …` (3.9).
_SNAPSHOT_PARENT = re.compile(
    r"Non-resolvable parent POM for \S+: [^\n]*?([\w.-]+):([\w.-]+):pom:([\w.-]+-SNAPSHOT)\b"
)


def snapshot_parent(
    java: Java, snap: Snapshot, config: ErasConfig, plan: Plan, log: str
) -> Plan | None:
    """The parent POM is a development version that only a snapshot repository served
    (jackson-core's `jackson-base:2.15.0-SNAPSHOT`, from Sonatype's): the same plan with a
    release standing in for it (`Parent`), said in the notes. The release is the parent the
    project's last release before B_t named (its root POM at the newest tag reachable from B_t),
    so it was published by then; without one, the newest release below the snapshot."""
    found = _SNAPSHOT_PARENT.search(log)
    parents = _parents(plan)
    if not found or any(p[:3] == found.groups() for p in parents):
        return None
    group, artifact, snapshot = found.groups()
    release = pom.released_parent(snap, group, artifact) or "-"
    stand_in = Parent(group, artifact, snapshot, release)
    return _replan(java, snap, plan, _same_why(plan), "+parent", parents=(*parents, stand_in))


REVISIONS = (
    newer_release,
    older_source,
    enforced_maven,
    unpackaged_module,
    shaded_module,
    old_jacoco,
    snapshot_parent,
)
