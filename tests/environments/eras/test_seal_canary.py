"""Root's witness and canary in the Node and Java rooms (issue 77, reports.Sealed): the files and
command of a run, the canary's message read from each runner's real report format, and what a
report without them means. The real runs are in tests/attacks/test_planted_library_node.py and
tests/environments/eras/test_java_clean_room.py."""

from __future__ import annotations

import json

from prchain.environments.eras.java import report as java
from prchain.environments.eras.node import report as node
from prchain.environments.eras.reports import Seal, canary_message, sealed

NONCES = ("aaaa1111", "cccc2222", "ffff3333")
SPEC = "src/area.spec.ts"


def test_node_seal_beside_the_first_hidden_file_named_on_the_command_when_it_names_files() -> None:
    tests = {"src/util/helpers/x.js": "", SPEC: "", "test/b.test.js": ""}
    made = node.seal(tests, NONCES, "node_modules/.bin/jest src/area.spec.ts")
    assert made is not None and list(made.files) == ["src/zzzz_prchain_ffff3333.spec.ts"]
    assert (
        made.command == "node_modules/.bin/jest src/area.spec.ts src/zzzz_prchain_ffff3333.spec.ts"
    )
    text = made.files["src/zzzz_prchain_ffff3333.spec.ts"]
    assert "seal aaaa1111" in text and canary_message("cccc2222") in text
    whole = node.seal(tests, NONCES, "node_modules/.bin/jest --ci")
    assert (
        whole is not None and whole.command == "node_modules/.bin/jest --ci"
    )  # found by testMatch
    mocha = node.seal({"test/a.js": ""}, NONCES, "node_modules/.bin/mocha test/a.js")
    assert mocha is not None and mocha.command.endswith("test/a.js test/zzzz_prchain_ffff3333.js")
    for command in (
        "node_modules/.bin/mocha",  # its spec comes from its configuration
        "node_modules/.bin/jest -t area src/area.spec.ts",  # a name filter leaves root's out
        "node_modules/.bin/mocha --parallel test/a.js",
        "node_modules/.bin/vitest run src/area.spec.ts",  # reports from its own process
        "node --test test/a.js",
        "npm run build && node_modules/.bin/jest src/area.spec.ts",
    ):
        assert node.seal({**tests, "test/a.js": ""}, NONCES, command) is None, command


def _jest_report(canary_status: str, message: str) -> str:
    case = {"ancestorTitles": ["prchain"], "status": canary_status, "failureMessages": [message]}
    return json.dumps(
        {"testResults": [{"name": "/work/repo/src/x.test.js", "assertionResults": [
            {**case, "title": "canary cccc2222"},
            {"ancestorTitles": ["prchain"], "title": "seal aaaa1111", "status": "passed"},
        ]}]}
    )  # fmt: skip


def test_node_canary_must_fail_with_its_message() -> None:
    shown = f"Error: {canary_message('cccc2222')}\n    at Object.<anonymous>"
    assert node.canary_failed(_jest_report("failed", shown), "cccc2222")
    assert not node.canary_failed(_jest_report("passed", ""), "cccc2222")
    assert not node.canary_failed(_jest_report("failed", "Error: something else"), "cccc2222")
    assert not node.canary_failed(None, "cccc2222")
    assert not node.canary_failed("{not json", "cccc2222")


JUNIT4 = "package org.acme;\n\nimport org.junit.Test;\n"
JUPITER = "package org.acme;\n\nimport org.junit.jupiter.api.Test;\n"


def test_java_seal_per_module_sorted_last_and_selected() -> None:
    tests = {
        "core/src/test/java/org/acme/ATest.java": JUNIT4,
        "web/src/test/java/org/acme/BTest.java": JUPITER,
        "README.md": "org.junit",
    }
    command = "mvn -o -q test -Dtest=ATest,BTest -DfailIfNoTests=false"
    made = java.seal(tests, NONCES, command)
    assert made is not None and made.witnesses == 2
    name = "PrchainSealffff3333Test"
    assert sorted(made.files) == [
        f"core/src/test/java/zzzz/prchain/{name}.java",
        f"web/src/test/java/zzzz/prchain/{name}.java",
    ]
    assert made.command == (
        f"mvn -o -q test -Dtest=ATest,BTest,{name} -DfailIfNoTests=false "
        "-Dsurefire.runOrder=alphabetical"
    )
    core = made.files[f"core/src/test/java/zzzz/prchain/{name}.java"]
    assert "@org.junit.Test" in core and "void sealaaaa1111_0()" in core
    assert (
        "@org.junit.jupiter.api.Test" in made.files[f"web/src/test/java/zzzz/prchain/{name}.java"]
    )
    assert java.seal(tests, NONCES, "./gradlew test") is None
    assert (
        java.seal(
            {"src/test/java/ATest.java": "import org.testng.annotations.Test;"}, NONCES, command
        )
        is None
    )


def _surefire(canary: str) -> str:
    return (
        "\n<!-- prchain-report ./target/surefire-reports/TEST-zzzz.prchain.X.xml -->\n"
        '<testsuite name="zzzz.prchain.X"><testcase name="sealaaaa1111_0" classname="zzzz.prchain.X"/>'
        f'<testcase name="canarycccc2222" classname="zzzz.prchain.X">{canary}</testcase></testsuite>\n'
    )


def test_java_canary_must_fail_with_its_message() -> None:
    message = canary_message("cccc2222")
    failed = f'<failure message="{message}" type="java.lang.AssertionError">at x</failure>'
    assert java.canary_failed(_surefire(failed), "cccc2222")
    assert not java.canary_failed(_surefire(""), "cccc2222")  # rewritten to passed
    assert not java.canary_failed(_surefire('<failure message="other"/>'), "cccc2222")
    assert not java.canary_failed(None, "cccc2222")
    assert java.parse_reports(_surefire(failed))["zzzz.prchain.X::canarycccc2222"] == "failed"


def test_a_run_without_its_witness_or_failed_canary_passes_no_test() -> None:
    seal = Seal({}, "", "aaaa1111", "cccc2222", "ffff3333")
    ours = {
        "src/zzzz_prchain_ffff3333.test.js::prchain > seal aaaa1111": "passed",
        "src/zzzz_prchain_ffff3333.test.js::prchain > canary cccc2222": "failed",
    }
    stage = {"a::x": "passed", "a::y": "failed", "a": "error"}
    assert sealed({**stage, **ours}, seal, canary_failed=True) == stage
    failed_all = {"a::x": "failed", "a::y": "failed", "a": "error"}
    assert sealed({**stage, **ours}, seal, canary_failed=False) == failed_all
    assert sealed(stage, seal, canary_failed=True) == failed_all  # no witness
    twice = Seal({}, "", "aaaa1111", "cccc2222", "ffff3333", witnesses=2)
    assert sealed({**stage, **ours}, twice, canary_failed=True) == failed_all  # one module ended
