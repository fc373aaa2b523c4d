"""A made-up Maven history spanning two dependency eras (snakeyaml 1.33, then 2.0, which removed
the no-argument `SafeConstructor()` that 1.33's code calls), for the Java room's tests.

  era 1 (2022): pom pins snakeyaml 1.33, code calls `new SafeConstructor()`;
                PR #1 adds `Config.keys` and KeysTest;
  era 2 (2023): pom pins snakeyaml 2.0, code calls `new SafeConstructor(new LoaderOptions())`,
                and the Maven wrapper asks for Maven 3.9.6 (from Central, not Debian's);
                PR #2 adds `Config.dump` and DumpTest.
Both eras declare Java 17 (`maven.compiler.release`) and pin their plugins, as real projects do.
"""

from __future__ import annotations

from pathlib import Path

from prchain.dev.repos import git
from tests.support.eras_repo import commit_files

POM = """\
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>org.acme</groupId>
  <artifactId>yamlconf</artifactId>
  <version>{version}</version>
  <properties>
    <maven.compiler.release>17</maven.compiler.release>
    <project.build.sourceEncoding>UTF-8</project.build.sourceEncoding>
  </properties>
  <dependencies>
    <dependency>
      <groupId>org.yaml</groupId><artifactId>snakeyaml</artifactId><version>{yaml}</version>
    </dependency>
    <dependency>
      <groupId>junit</groupId><artifactId>junit</artifactId><version>4.13.2</version>
      <scope>test</scope>
    </dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin>
        <artifactId>maven-compiler-plugin</artifactId><version>3.11.0</version>
      </plugin>
      <plugin>
        <artifactId>maven-surefire-plugin</artifactId><version>3.2.5</version>
      </plugin>
    </plugins>
  </build>
</project>
"""
PACKAGE = "src/main/java/org/acme/yamlconf"
TESTS = "src/test/java/org/acme/yamlconf"
CONFIG = """\
package org.acme.yamlconf;

import java.util.Map;
import org.yaml.snakeyaml.Yaml;
{imports}
public final class Config {{
  private Config() {{}}

  public static Map<String, Object> load(String text) {{
    return new Yaml(new SafeConstructor({options})).load(text);
  }}

  /** What the library is called (it keeps the era's line out of the context of later hunks). */
  public static String name() {{
    return "yamlconf";
  }}
{extra}}}
"""
IMPORTS_V1 = "import org.yaml.snakeyaml.constructor.SafeConstructor;\n"
IMPORTS_V2 = "import org.yaml.snakeyaml.LoaderOptions;\n" + IMPORTS_V1
KEYS = """
  public static java.util.List<String> keys(String text) {
    return new java.util.ArrayList<>(load(text).keySet());
  }
"""
# PR #2 changes #1's own line (sorted keys) besides adding `dump`: it builds on #1's code.
SORTED_KEYS = KEYS.replace("load(text).keySet()", "new java.util.TreeMap<>(load(text)).keySet()")
DUMP = """
  public static String dump(Map<String, Object> data) {
    return new Yaml().dump(data).trim();
  }
"""
LOAD_TEST = """\
package org.acme.yamlconf;

import static org.junit.Assert.assertEquals;

import org.junit.Test;

public class ConfigTest {
  @Test
  public void loadsAMapping() {
    assertEquals(3, Config.load("a: 3").get("a"));
  }
}
"""
KEYS_TEST = """\
package org.acme.yamlconf;

import static org.junit.Assert.assertEquals;

import java.util.List;
import org.junit.Test;

public class KeysTest {
  @Test
  public void listsTheKeys() {
    assertEquals(List.of("a", "b"), Config.keys("a: 1\\nb: 2"));
  }
}
"""
DUMP_TEST = """\
package org.acme.yamlconf;

import static org.junit.Assert.assertEquals;

import java.util.Map;
import org.junit.Test;

public class DumpTest {
  @Test
  public void dumpsAMapping() {
    assertEquals("{a: 1}", Config.dump(Map.of("a", 1)));
  }
}
"""


WRAPPER = (
    "distributionUrl=https://repo.maven.apache.org/maven2/org/apache/maven/apache-maven/3.9.6/"
    "apache-maven-3.9.6-bin.zip\n"
)


def config(v2: bool, extra: str = "") -> str:
    imports, options = (IMPORTS_V2, "new LoaderOptions()") if v2 else (IMPORTS_V1, "")
    return CONFIG.format(imports=imports, options=options, extra=extra)


def make_yamlconf(path: Path) -> Path:
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    (path / ".gitignore").write_text("target/\n")
    commit_files(
        path,
        {
            "pom.xml": POM.format(version="1.0-SNAPSHOT", yaml="1.33"),
            f"{PACKAGE}/Config.java": config(False),
            f"{TESTS}/ConfigTest.java": LOAD_TEST,
        },
        "Start yamlconf",
        "2022-03-01T12:00:00Z",
    )
    commit_files(
        path,
        {f"{PACKAGE}/Config.java": config(False, KEYS), f"{TESTS}/KeysTest.java": KEYS_TEST},
        "List the keys (#1)\n\nKeys of a document.",
        "2022-04-01T12:00:00Z",
    )
    commit_files(
        path,
        {
            "pom.xml": POM.format(version="1.1-SNAPSHOT", yaml="2.0"),
            f"{PACKAGE}/Config.java": config(True, KEYS),
            # A Maven from Central, not Debian's: its transport reads no JVM proxy property.
            ".mvn/wrapper/maven-wrapper.properties": WRAPPER,
        },
        "Move to snakeyaml 2.0",
        "2023-03-01T12:00:00Z",
    )
    commit_files(
        path,
        {
            f"{PACKAGE}/Config.java": config(True, SORTED_KEYS + DUMP),
            f"{TESTS}/DumpTest.java": DUMP_TEST,
        },
        "Dump a mapping (#2)\n\nFollow-up to #1, built on top of it: write YAML back.",
        "2023-04-01T12:00:00Z",
    )
    return path
