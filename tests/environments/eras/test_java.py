"""The Java room: JDK choice and plans from real snapshots, surefire reports from real Maven runs.

The reader's tests run the host's Maven on a generated project (skipped where there is no `mvn`);
its reports and console output are what the sandbox's run leaves too.
"""

from __future__ import annotations

import shutil
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from prchain.dev.repos import git
from prchain.environments.eras.build import build_failure
from prchain.environments.eras.config import ErasConfig
from prchain.environments.eras.ecosystems import detect, ecosystem
from prchain.environments.eras.java import choose_jdk, warm_tests
from prchain.environments.eras.java.report import Surefire, root_error
from prchain.environments.eras.manifests import Snapshot, snapshot
from tests.support.maven_repo import KEYS_TEST, TESTS, make_yamlconf

CONFIG = ErasConfig()


@pytest.fixture(scope="module")
def yamlconf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_yamlconf(tmp_path_factory.mktemp("java") / "yamlconf")


def _sha(repo: Path, rev: str) -> str:
    return git(repo, "rev-parse", rev).strip()


def _pom_snapshot(properties: str, date: str = "2024-01-01") -> Snapshot:
    pom = f"<project><properties>{properties}</properties></project>"
    return Snapshot("0" * 40, datetime.fromisoformat(date).replace(tzinfo=UTC), {"pom.xml": pom})


def test_a_maven_project_gets_its_jdk_and_an_offline_maven(yamlconf: Path) -> None:
    snap = snapshot(yamlconf, _sha(yamlconf, "HEAD~3"))
    found = detect(snap, [f"{TESTS}/KeysTest.java"])
    assert found is not None and found.name == "java"
    plan = found.plans(snap, CONFIG)[0]
    assert (plan.suite, plan.interpreter, plan.caveat) == ("bookworm", "jdk17", "")
    assert "declares Java 17 (exactly)" in plan.notes[0]
    assert any("openjdk-17-jdk-headless maven" in c for c in plan.toolchain)
    assert plan.env == {"JAVA_HOME": "/usr/lib/jvm/prchain-jdk"}
    warm = next(c for c in plan.commands if "-Dmaven.repo.local=/opt/m2" in c)
    assert "-Dtest=ConfigTest " in warm  # one test per module: surefire's provider gets fetched
    assert plan.test_command.startswith("mvn -B -ntp -Dstyle.color=never -o ")


def test_the_era_changes_with_the_dependency_pins_not_with_the_version(yamlconf: Path) -> None:
    java = ecosystem("java")
    facts = [java.era_facts(snapshot(yamlconf, _sha(yamlconf, f"HEAD~{n}"))) for n in (3, 2, 1, 0)]
    assert facts[0] == facts[1] and facts[2] == facts[3]  # code-only commits share an era
    assert facts[1] != facts[2]  # snakeyaml 1.33 → 2.0 (the project's own version bump is ignored)
    assert "snakeyaml" in str(facts[0]) and "1.1-SNAPSHOT" not in str(facts[2])


@pytest.mark.parametrize(
    ("properties", "date", "expected"),
    [
        ("<maven.compiler.source>1.8</maven.compiler.source>", "2019-01-01", ("bullseye", 11)),
        ("<java.version>17</java.version>", "2024-01-01", ("bookworm", 17)),
        (
            "<v>21</v><maven.compiler.release>${v}</maven.compiler.release>",
            "2024-01-01",
            ("trixie", 21),
        ),
        ("<maven.compiler.release>22</maven.compiler.release>", "2024-06-01", ("trixie", 25)),
        ("", "2020-06-01", ("bullseye", 11)),  # no level: the newest LTS of its date
        ("", "2022-06-01", ("bookworm", 17)),
    ],
)
def test_the_jdk_is_the_declared_one_or_the_nearest_newer(
    properties: str, date: str, expected: tuple[str, int]
) -> None:
    suite, jdk, _why = choose_jdk(_pom_snapshot(properties, date), CONFIG.suites)
    assert (suite, jdk) == expected


def test_a_javac_that_does_not_know_the_release_moves_to_one_that_does() -> None:
    java = ecosystem("java")
    snap = _pom_snapshot("<java.version>17</java.version>")
    plan = java.plans(snap, CONFIG)[0]
    log = "[ERROR] Fatal error compiling: error: invalid target release: 21 -> [Help 1]"
    revised = java.revise(snap, CONFIG, plan, log, ran=False)
    assert revised is not None and (revised.suite, revised.interpreter) == ("trixie", "jdk21")
    assert "javac 17 does not know release 21" in revised.notes[0]
    assert java.revise(snap, CONFIG, plan, "Tests run: 1, Failures: 1", ran=True) is None
    enforcer = (
        "[WARNING] Rule 1: org.apache.maven.enforcer.rules.version.RequireJavaVersion failed with "
        "message:\nDetected JDK version 17.0.13 (JAVA_HOME=/usr/lib/jvm/prchain-jdk) is not in the "
        "allowed range [21,)."
    )
    revised = java.revise(snap, CONFIG, plan, enforcer, ran=False)
    assert revised is not None and revised.interpreter == "jdk21"


def test_a_module_whose_tests_need_the_packaged_jar_is_left_out_of_the_reactor() -> None:
    """gson from 2024: test-jpms requires `com.google.gson`, whose module-info ModiTect adds to
    the jar at `package`; `mvn test` cannot compile test-jpms at B_t. The same plan without it;
    a later revision (a newer JDK) keeps it out."""
    java = ecosystem("java")
    snap = _pom_snapshot("<java.version>17</java.version>")
    plan = java.plans(snap, CONFIG)[0]
    log = (
        "[ERROR] /opt/prchain/src/test-jpms/src/test/java/module-info.java:[19,22] module not "
        "found: com.google.gson\n"
        "[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.13.0:"
        "testCompile (default-testCompile) on project test-jpms: Compilation failure: "
        "Compilation failure: \n"
    )
    revised = java.revise(snap, CONFIG, plan, log, ran=False)
    assert revised is not None and (revised.suite, revised.interpreter) == (
        plan.suite,
        plan.interpreter,
    )
    assert revised.test_command.split(" -o -fae test ")[1].startswith("-pl '!test-jpms' ")
    assert any(" test -pl '!test-jpms' " in c for c in revised.commands)
    assert any("left out of the reactor: test-jpms" in n for n in revised.notes)
    assert java.revise(snap, CONFIG, revised, log, ran=False) is None  # asked once only
    newer = java.revise(snap, CONFIG, revised, "invalid target release: 21", ran=False)
    assert newer is not None and "-pl '!test-jpms'" in newer.test_command
    narrowed = Surefire().narrowed(newer.test_command)
    assert "-pl '!test-jpms'" in narrowed and narrowed.endswith("{files}")


def test_a_module_that_misses_a_class_shaded_in_before_it_gets_maven_run_to_package() -> None:
    """pmd from 2021: pmd-core shades jaxen into its jar at `package`; under `mvn test` pmd-test
    compiles against pmd-core's classes and javac cannot find jaxen's. The build and the test
    command run to `package` instead, once; a reactor that shades nothing gets no such plan."""
    java = ecosystem("java")
    shading = "<build><plugins><plugin><artifactId>maven-shade-plugin</artifactId></plugin>"
    files = {
        "pom.xml": "<project><modules><module>core</module><module>test</module></modules>"
        "<properties><java.version>17</java.version></properties></project>",
        "core/pom.xml": f"<project>{shading}</plugins></build></project>",
        "test/pom.xml": "<project/>",
    }
    snap = Snapshot("0" * 40, datetime(2021, 10, 23, tzinfo=UTC), files)
    plan = java.plans(snap, CONFIG)[0]
    log = (
        "[ERROR] /opt/prchain/src/test/src/main/java/t/DummyNode.java:[9,8] cannot access "
        "org.jaxen.JaxenException\n  class file for org.jaxen.JaxenException not found\n"
    )
    revised = java.revise(snap, CONFIG, plan, log, ran=False)
    assert revised is not None and revised.interpreter == plan.interpreter
    assert " -o -fae package -Dmaven.test.failure.ignore=true" in revised.test_command
    assert any(" -Dmaven.repo.local=/opt/m2 package " in c for c in revised.commands)
    assert any("Maven runs to `package`" in n and "(core)" in n for n in revised.notes)
    assert java.revise(snap, CONFIG, revised, log, ran=False) is None  # asked once only
    newer = java.revise(snap, CONFIG, revised, "invalid target release: 21", ran=False)
    assert newer is not None and " -fae package" in newer.test_command  # later revisions keep it
    plain = Snapshot(snap.sha, snap.date, {**files, "core/pom.xml": "<project/>"})
    assert java.revise(plain, CONFIG, java.plans(plain, CONFIG)[0], log, ran=False) is None


def test_test_jvms_an_old_jacoco_aborts_run_without_it_in_the_room_and_for_the_agent() -> None:
    """alibaba/nacos of 2019: Java 8 declared, JDK 11 here, jacoco 0.7.8's agent in every forked
    test JVM, each aborting (exit 134): one test of four ran. The same plan with JaCoCo skipped in
    the build, the test command and the image's settings; once; a newer JaCoCo is no cause."""
    java = ecosystem("java")
    snap = _pom_snapshot("<maven.compiler.source>1.8</maven.compiler.source>", "2019-06-01")
    plan = java.plans(snap, CONFIG)[0]
    log = (
        "The forked VM terminated without properly saying goodbye. VM crash or System.exit "
        "called?\nCommand was /bin/sh -c cd /work/repo/common && /usr/lib/jvm/java-11-openjdk-"
        "amd64/bin/java -javaagent:/opt/m2/org/jacoco/org.jacoco.agent/0.7.8/org.jacoco.agent-"
        "0.7.8-runtime.jar=destfile=/work/repo/common/target/jacoco.exec -jar surefirebooter.jar\n"
        "Process Exit Code: 134\n"
    )
    revised = java.revise(snap, CONFIG, plan, log, ran=True)
    assert revised is not None and revised.interpreter == plan.interpreter
    assert revised.test_command.endswith(" -Dmaven.test.failure.ignore=true -Djacoco.skip=true")
    assert any(" -Djacoco.skip=true -Dsurefire.timeout=" in c for c in revised.commands)
    settings = next(c for c in revised.commands if "settings.xml" in c and "<offline>" in c)
    assert "<properties><jacoco.skip>true</jacoco.skip></properties>" in settings
    assert any("JaCoCo's agent left out" in n for n in revised.notes)
    assert java.revise(snap, CONFIG, revised, log, ran=True) is None  # asked once only
    narrowed = Surefire().narrowed(revised.test_command)
    assert " -Djacoco.skip=true" in narrowed and narrowed.endswith("{files}")
    newer = log.replace("0.7.8", "0.8.5")
    assert java.revise(snap, CONFIG, plan, newer, ran=True) is None


def test_a_build_whose_jacoco_predates_the_jdk_skips_it_from_the_first_plan() -> None:
    """nacos of 2020–2021 names jacoco-maven-plugin 0.7.8 through a property; its eras verified
    on the modules whose JVMs did not abort, and a stage's narrowed run in one that did read as
    "no test outcome". The first plan skips JaCoCo; a JaCoCo that knows JDK 11 is kept."""
    java = ecosystem("java")
    jacoco = (
        "<build><plugins><plugin><artifactId>jacoco-maven-plugin</artifactId>"
        "<version>${jacoco-maven-plugin.version}</version></plugin></plugins></build>"
    )
    for version, skipped in (("0.7.8", True), ("0.8.7", False)):
        text = (
            "<project><properties><maven.compiler.source>1.8</maven.compiler.source>"
            f"<jacoco-maven-plugin.version>{version}</jacoco-maven-plugin.version>"
            f"</properties>{jacoco}</project>"
        )
        snap = Snapshot("0" * 40, datetime(2021, 6, 30, tzinfo=UTC), {"pom.xml": text})
        plan = java.plans(snap, CONFIG)[0]
        assert plan.interpreter == "jdk11"
        assert (" -Djacoco.skip=true" in plan.test_command) is skipped, version
        assert any("JaCoCo's agent left out" in n for n in plan.notes) is skipped


def test_warm_tests_take_one_test_class_per_module() -> None:
    paths = [
        "core/src/test/java/a/BTest.java",
        "core/src/test/java/a/ATest.java",
        "core/src/test/java/a/Helper.java",
        "api/src/test/java/x/ApiTests.java",
        "src/test/java/RootTest.java",
    ]
    snap = Snapshot("0" * 40, datetime.now(UTC), {}, paths)
    assert warm_tests(snap) == ["ApiTests", "BTest", "RootTest"]


def test_targets_become_one_surefire_selection() -> None:
    reader = Surefire()
    paths = [f"{TESTS}/KeysTest.java", "core/src/test/java/a/DumpTest.java", "README.md"]
    assert reader.targets(paths) == ["-Dtest=KeysTest,DumpTest"]
    assert reader.targets(["docs/x.md"]) == []
    narrowed = reader.narrowed("mvn -B -o test")
    assert narrowed.endswith("-Dsurefire.failIfNoSpecifiedTests=false {files}")
    assert reader.narrowed("gradle --offline test") == "gradle --offline test"


# ---- the reader on real Maven runs -----------------------------------------------------------------

needs_maven = pytest.mark.skipif(shutil.which("mvn") is None, reason="no Maven on this host")


def _run(repo: Path, command: str, report: Path) -> tuple[dict[str, str], str]:
    reader = Surefire()
    script = reader.script(command, str(report))
    done = subprocess.run(
        ["bash", "-c", script], cwd=repo, capture_output=True, text=True, timeout=600
    )
    text = report.read_text() if report.exists() else None
    return reader.parse(text, done.stdout + done.stderr), done.stdout


@needs_maven
def test_surefire_reports_give_class_and_method_ids(yamlconf: Path, tmp_path: Path) -> None:
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", str(yamlconf), str(work))
    git(work, "checkout", "-q", "HEAD~2")  # era 1 after PR #1
    broken = KEYS_TEST.replace('List.of("a", "b")', 'List.of("b")')
    (work / TESTS / "KeysTest.java").write_text(broken)
    command = "mvn -B -ntp -fae test -Dmaven.test.failure.ignore=true"
    outcomes, _ = _run(work, command, tmp_path / "report.xml")
    assert outcomes == {
        "org.acme.yamlconf.ConfigTest::loadsAMapping": "passed",
        "org.acme.yamlconf.KeysTest::listsTheKeys": "failed",
    }
    narrowed = Surefire().narrowed(command).replace("{files}", "-Dtest=ConfigTest")
    again, _ = _run(work, narrowed, tmp_path / "report.xml")  # the first run's files do not count
    assert again == {"org.acme.yamlconf.ConfigTest::loadsAMapping": "passed"}


@needs_maven
def test_a_module_that_does_not_compile_is_an_error_with_javacs_words(
    yamlconf: Path, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", str(yamlconf), str(work))
    git(work, "checkout", "-q", "HEAD~2")
    pom = (work / "pom.xml").read_text().replace("<version>1.33<", "<version>2.0<")
    (work / "pom.xml").write_text(pom)  # era 1's code against era 2's snakeyaml
    outcomes, output = _run(work, "mvn -B -ntp -fae test", tmp_path / "report.xml")
    assert outcomes == {"yamlconf": "error"}
    error = root_error(output.replace(str(work) + "/", "/work/repo/"))
    assert error.startswith("src/main/java/org/acme/yamlconf/Config.java:11: constructor Safe")
    assert error.endswith("(org.yaml.snakeyaml.LoaderOptions)")


def test_an_unreadable_report_file_costs_only_its_own_cases() -> None:
    good = '<testsuite><testcase classname="a.B" name="c"/><testcase classname="a.B" name="d"><skipped/></testcase></testsuite>'
    report = f"\n<!-- prchain-report ./x.xml -->\n{good}\n<!-- prchain-report ./y.xml -->\n<testsuite><testc"
    assert Surefire().parse(report, "") == {"a.B::c": "passed", "a.B::d": "skipped"}


def test_the_maven_a_build_asks_for_comes_from_central_when_debians_is_older() -> None:
    java = ecosystem("java")
    snap = _pom_snapshot("<java.version>17</java.version>")
    wrapper = (
        "distributionUrl=https://example.invalid/apache-maven/3.9.6/apache-maven-3.9.6-bin.zip\n"
    )
    snap.files[".mvn/wrapper/maven-wrapper.properties"] = wrapper
    plan = java.plans(snap, CONFIG)[0]
    assert "Maven 3.9.6 from Maven Central" in plan.notes[1]
    assert any("apache-maven:3.9.6:tar.gz:bin" in c for c in plan.toolchain)
    snap.files[".mvn/wrapper/maven-wrapper.properties"] = wrapper.replace("3.9.6", "3.6.0")
    assert not any("apache-maven" in c for c in java.plans(snap, CONFIG)[0].toolchain)


def test_the_enforcers_maven_range_gets_that_maven() -> None:
    java = ecosystem("java")
    snap = _pom_snapshot("<java.version>17</java.version>")
    plan = java.plans(snap, CONFIG)[0]
    log = (
        "[WARNING] Rule 1: org.apache.maven.enforcer.rules.version.RequireMavenVersion failed "
        "with message:\nDetected Maven Version: 3.8.7 is not in the allowed range [3.9,)."
    )
    revised = java.revise(snap, CONFIG, plan, log, ran=False)
    assert revised is not None and revised.suite == plan.suite
    assert any("apache-maven:3.9.0:tar.gz:bin" in c for c in revised.toolchain)
    assert java.revise(snap, CONFIG, revised, log, ran=False) is None  # asked once only
    plugin = (
        "[ERROR] Failed to execute goal io.github.ascopes:protobuf-maven-plugin:4.0.3:generate-test "
        "(default) on project proto: The plugin io.github.ascopes:protobuf-maven-plugin:4.0.3 "
        "requires Maven version 3.9.6 -> [Help 1]"
    )
    revised = java.revise(snap, CONFIG, plan, plugin, ran=False)
    assert revised is not None and any(
        "apache-maven:3.9.6:tar.gz:bin" in c for c in revised.toolchain
    )


def test_a_gradle_build_gets_debians_gradle_and_says_what_it_asked_for() -> None:
    files = {
        "build.gradle": "plugins { id 'java' }\njava { sourceCompatibility = JavaVersion.VERSION_11 }\n",
        "gradle/wrapper/gradle-wrapper.properties": "distributionUrl=https\\://example.invalid/gradle-8.5-bin.zip\n",
    }
    snap = Snapshot("0" * 40, datetime(2024, 1, 1, tzinfo=UTC), files)
    plan = ecosystem("java").plans(snap, CONFIG)[0]
    assert (plan.suite, plan.interpreter) == ("bullseye", "jdk11")
    assert any("gradle" in c.split() for c in plan.toolchain)
    assert plan.test_command == "gradle --offline --continue test"
    assert "asks for Gradle 8.5; Gradle distributions cannot be fetched here" in plan.caveat


def test_a_failed_maven_build_is_named_by_the_goal_that_failed() -> None:
    """gson's eras of 2024 to 2026: Maven ends with help links and a resume hint; the failed goal
    and the line under it say why."""
    tail = (
        "[INFO] BUILD FAILURE\n"
        "[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.12.1:"
        "testCompile (default-testCompile) on project gson: Compilation failure\n"
        "[ERROR] warnings found and -Werror specified\n"
        "[ERROR] -> [Help 1]\n"
        "[ERROR] \n"
        "[ERROR] For more information about the errors and possible solutions, please read the "
        "following articles:\n"
        "[ERROR] [Help 1] http://cwiki.apache.org/confluence/display/MAVEN/MojoFailureException\n"
        "[ERROR] After correcting the problems, you can resume the build with the command\n"
        "[ERROR]   mvn <args> -rf :gson\n"
    )
    assert build_failure(tail, 1) == (
        "[ERROR] Failed to execute goal org.apache.maven.plugins:maven-compiler-plugin:3.12.1:"
        "testCompile (default-testCompile) on project gson: Compilation failure "
        "[ERROR] warnings found and -Werror specified"
    )
    missing = (
        "[ERROR] Failed to execute goal com.github.wvengen:proguard-maven-plugin:2.7.0:proguard "
        "(obfuscate-test-class) on project gson: Execution obfuscate-test-class of goal "
        "com.github.wvengen:proguard-maven-plugin:2.7.0:proguard failed: Plugin "
        "com.github.wvengen:proguard-maven-plugin:2.7.0 or one of its dependencies could not be "
        "resolved: Could not find artifact com.guardsquare:proguard-core:jar:9.3.0 in central "
        "(https://repo.maven.apache.org/maven2) -> [Help 1]\n"
        "[ERROR] \n"
        "[ERROR] [Help 1] http://cwiki.apache.org/confluence/display/MAVEN/PluginResolutionException\n"
    )
    assert build_failure(missing, 1).endswith(
        "Could not find artifact "
        "com.guardsquare:proguard-core:jar:9.3.0 in central (https://repo.maven.apache.org/maven2)"
    )


JUNIT4_TEST = "package org.acme;\n\nimport org.junit.Test;\n"
JUPITER_TEST = "package org.acme;\n\nimport org.junit.jupiter.api.Test;\n"


def test_the_canary_class_sorts_last_in_the_hidden_tests_module_and_is_selected_with_them() -> None:
    """reports.Canaried in the Java room: root's always-failing class, in the hidden classes'
    module, annotated as they import JUnit, added to `-Dtest=`, run in name order in one JVM."""
    from prchain.environments.eras.reports import canaried

    reader = Surefire()
    hidden = "core/src/test/java/org/acme/ATest.java"
    command = "mvn -o -q test -DfailIfNoTests=false -Dtest=ATest,BTest"
    made = reader.canary(command, [hidden], "n1", {hidden: JUNIT4_TEST})
    assert made is not None
    path = "core/src/test/java/zzzz/prchain/PrchainCanaryn1Test.java"
    assert list(made.files) == [path] and "@org.junit.Test" in made.files[path]
    assert made.command == (
        "mvn -o -q test -DfailIfNoTests=false -Dtest=ATest,BTest,PrchainCanaryn1Test "
        "-Dsurefire.runOrder=alphabetical -DforkCount=1 -DreuseForks=true "
        "-Dcheckstyle.skip=true -Dspotless.check.skip=true -Drat.skip=true -Dlicense.skip=true"
    )
    # nacos 2021 checks its test sources' style at `validate`: root's class two spaces deep
    # failed its indentation rule, and the module's hidden tests all read as failing. Its source
    # is indented as most styles ask, and the room's run checks no style.
    assert "\n    @org.junit.Test\n    public void canary() {\n        throw" in made.files[path]
    assert made.test_id == "zzzz.prchain.PrchainCanaryn1Test::canary"
    jupiter = reader.canary(command, [], "n2", {hidden: JUPITER_TEST})  # from the test patch
    assert jupiter is not None and "@org.junit.jupiter.api.Test" in next(
        iter(jupiter.files.values())
    )
    # none for Gradle, a chained command, two modules, TestNG, or no hidden class selected
    two = {hidden: JUNIT4_TEST, "web/src/test/java/org/acme/BTest.java": JUNIT4_TEST}
    testng = {hidden: "import org.testng.annotations.Test;"}
    for run, texts in (
        ("./gradlew test --tests ATest", {hidden: JUNIT4_TEST}),
        (f"mvn -q install -DskipTests && {command}", {hidden: JUNIT4_TEST}),
        (command, two),
        (command, testng),
        ("mvn -o -q test -Dtest=CTest", {hidden: JUNIT4_TEST}),
    ):
        assert reader.canary(run, [], "n3", texts) is None, run

    required = ["org.acme.ATest::works"]
    shown = {required[0]: "passed", made.test_id: "failed"}
    assert canaried(shown, required, made.test_id) == {required[0]: "passed"}
    forged = {required[0]: "passed", "calc": "error"}  # the JVM ended before root's class ran
    assert canaried(forged, required, made.test_id)[required[0]] == "failed"
