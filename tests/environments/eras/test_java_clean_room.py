"""Issue 77 in the Java room, gold before attack, in a rollout's clean room and as predictions.

Class 2: on the code before, the surefire report script touched `report.start` beside root's
report pipe, in a directory the tester cannot write: no report reached root and no Java stage
could pass in a clean room. The tiny `calc` project (tests/support/calc_maven.py: JUnit and two
plugins, one era) is mined, set up, verified and exported; both gold stages resolve through
`tasks eval`, and the gold code written by an agent resolves in its rollout's clean room.

Class 1: a wrong `twice` plus a main-source `org/junit/Assert.java` whose `assertEquals` never
fails (`target/classes` precedes JUnit's jar on surefire's test classpath, so it answers the
hidden test's static import) passes neither in the clean room nor as a prediction under `tasks
eval --predictions`: nothing in a test framework's namespace crosses.

Forged reports: surefire writes each class's TEST-*.xml in `target/surefire-reports`, which the
forked JVM (the agent's code, called by the hidden test) can write too. A wrong method that writes
an all-passed file of its test class and halts the JVM, or whose shutdown hook takes every failure
out of every file, passed on the code before (in the clean room and as a prediction); root's
canary class (`Surefire.canary`, run last) never reports its failure in the first and shows none
in the second."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select

from prchain.store.db import session_scope
from prchain.store.models import ChainStage
from prchain.store.opener import make_engine
from prchain.verdicts.oracle import run_tests, stage_tests
from tests.support.calc_maven import (
    PACKAGE,
    SQUARE,
    TWICE,
    TWICE_ID,
    calc,
    make_calc,
)
from tests.support.era_runs import (
    chain_sandbox,
    invoke,
    remove_repo_images,
    verdicts_by_pr,
    write_config,
)
from tests.support.planted import patch_of

pytestmark = [pytest.mark.docker, pytest.mark.slow, pytest.mark.timeout(1800)]
REPO = f"java-room-test-{uuid.uuid4().hex[:8]}/calc"  # this run's own images
PLANTED = "src/main/java/org/junit/Assert.java"
FAKE_ASSERT = (
    "package org.junit;\n\npublic class Assert {\n"
    "  public static void assertEquals(long expected, long actual) {}\n"
    "  public static void assertEquals(Object expected, Object actual) {}\n}\n"
)
WRONG_TWICE = TWICE.replace("2 * n", "n + 1")


@pytest.fixture(scope="module")
def verified(
    tmp_path_factory: pytest.TempPathFactory, docker_client: Any, base_image: str
) -> Iterator[tuple[list[str], str, Path, Path]]:
    """(CLI options, store URL, clone, exported tasks), once per module: one era image."""
    work = tmp_path_factory.mktemp("java-room")
    clone = make_calc(work / "calc")
    config = write_config(work, {"suites": {"bookworm": "3.11"}, "extra_base_packages": []})
    url = f"sqlite:///{work / 'store.db'}"
    common = ["--config", str(config), "--db", url]
    try:
        assert invoke("mine", "--source", "git", "--name", REPO, str(clone), *common).exit_code == 0
        built = invoke("chains", "build", "--min-len", "2", "--max-len", "2", *common)
        assert built.exit_code == 0, built.output
        setup = invoke("env", "setup", *common)
        assert "0 not" in setup.output, setup.output
        invoke("tests", "verify", "--gold-runs", "1", *common)
        tasks = work / "tasks.jsonl"
        exported = invoke("tasks", "export", str(tasks), "--runnable", *common)
        assert exported.exit_code == 0, exported.output
        yield common, url, clone, tasks
    finally:
        remove_repo_images(docker_client, REPO, ("repo", "era", "sandbox"))


def _forged_exit(method: str, test: str, case: str) -> str:
    """A `method` that writes an all-passed report of `test` (its one case `case`) and halts the
    JVM before the hidden test's assertion fails."""
    return (
        f"\n  public static int {method}(int n) {{\n    try {{\n      " + _REPORTS
        + "      java.nio.file.Files.createDirectories(d);\n"
        f'      java.nio.file.Files.writeString(d.resolve("TEST-org.acme.calc.{test}.xml"),\n'
        f'        "<testsuite name=\\"org.acme.calc.{test}\\" tests=\\"1\\" failures=\\"0\\">"\n'
        f'        + "<testcase name=\\"{case}\\" classname=\\"org.acme.calc.{test}\\"/></testsuite>");\n'
        "    } catch (java.io.IOException e) {\n      throw new RuntimeException(e);\n    }\n"
        "    Runtime.getRuntime().halt(0);\n    return 0;\n  }\n"
    )  # fmt: skip


_REPORTS = 'java.nio.file.Path d = java.nio.file.Path.of("target/surefire-reports");\n'
FORGED_EXIT = _forged_exit("twice", "TwiceTest", "doubles")
# A wrong `twice` whose shutdown hook, once surefire has written every class's file, takes every
# failure and error out of each of them.
FORGED_REWRITE = (
    "\n  private static boolean hooked;\n\n  public static int twice(int n) {\n"
    "    if (!hooked) {\n      hooked = true;\n"
    "      Runtime.getRuntime().addShutdownHook(new Thread(() -> {\n        try {\n"
    "          Thread.sleep(2000);\n          " + _REPORTS
    + "          try (var files = java.nio.file.Files.newDirectoryStream(d, \"TEST-*.xml\")) {\n"
    "            for (var f : files) {\n"
    "              String xml = java.nio.file.Files.readString(f);\n"
    '              xml = xml.replaceAll("(?s)<(failure|error)\\\\b[^>]*/>", "")\n'
    '                .replaceAll("(?s)<(failure|error)\\\\b.*?</\\\\1>", "");\n'
    "              java.nio.file.Files.writeString(f, xml);\n            }\n          }\n"
    "        } catch (Exception e) {\n          throw new RuntimeException(e);\n        }\n"
    "      }));\n    }\n    return n + 1;\n  }\n"
)  # fmt: skip


def _rows(results: Path) -> dict[str, dict[str, Any]]:
    rows = [json.loads(line) for line in results.read_text().splitlines() if line.strip()]
    return {row["instance_id"]: row for row in rows}


def test_gold_resolves_through_tasks_eval_and_a_planted_junit_or_forged_report_does_not(
    verified: Any, tmp_path: Path
) -> None:
    """The gold of both stages, then two predictions of stage 1, each its own `tasks eval` (a
    chain's later stage is entered on the earlier one's patch): the planted `org.junit.Assert`,
    and a `twice` that forges TwiceTest's report and halts."""
    common, url, clone, tasks = verified
    found = verdicts_by_pr(url)
    # The stage runs only its own test class (`-Dtest=TwiceTest`): no PASS_TO_PASS.
    assert found[1].fail_to_pass == [TWICE_ID] and found[1].pass_to_pass == []
    out = invoke("tasks", "eval", str(tasks), "--results", str(tmp_path / "gold.jsonl"), *common)
    assert "2 of 2 stages resolved" in out.output, out.output

    [chain] = [json.loads(line) for line in tasks.read_text().splitlines() if line.strip()]
    first = chain["stages"][0]
    attacks = {
        "planted": {f"{PACKAGE}/Calc.java": calc(SQUARE, WRONG_TWICE), PLANTED: FAKE_ASSERT},
        "forged": {f"{PACKAGE}/Calc.java": calc(SQUARE, FORGED_EXIT)},
    }
    for name, files in attacks.items():
        (tmp_path / name).mkdir()
        prediction = {
            "instance_id": first["instance_id"],
            "model_patch": patch_of(clone, first["base_commit"], files, tmp_path / name),
            "model_name_or_path": name,
        }
        predictions = tmp_path / name / "predictions.jsonl"
        predictions.write_text(json.dumps(prediction) + "\n")
        results = tmp_path / name / "results.jsonl"
        out = invoke(
            "tasks", "eval", str(tasks), "--predictions", str(predictions), "--chain",
            str(chain["chain_id"]), "--results", str(results), *common,
        )  # fmt: skip
        row = _rows(results)[first["instance_id"]]
        assert row["status"] != "resolved" and row["fail_to_pass"][0] == 0, (name, row, out.output)


def test_the_gold_resolves_in_a_rollouts_clean_room_and_a_planted_junit_or_forged_report_does_not(
    verified: Any, tmp_path: Path
) -> None:
    _common, url, clone, _tasks = verified
    engine = make_engine(url)
    with session_scope(engine) as session:
        first = session.scalar(select(ChainStage.id).where(ChainStage.idx == 1))
    hidden = stage_tests(engine, first)
    assert hidden is not None and hidden.fail_to_pass == [TWICE_ID]
    with chain_sandbox(url, tmp_path / "logs", REPO, clone) as env:
        env.enter_stage(1)
        env.write_file(f"{PACKAGE}/Calc.java", calc(SQUARE, TWICE))
        gold = run_tests(env, hidden, timeout=600)
        assert gold.passed, (gold.outcomes, gold.output_tail)
        assert list(gold.outcomes) == [TWICE_ID]  # root's canary is not the stage's
        for name, forged in (("exit", FORGED_EXIT), ("rewrite", FORGED_REWRITE)):
            env.write_file(f"{PACKAGE}/Calc.java", calc(SQUARE, forged))
            wrong = run_tests(env, hidden, timeout=600)
            assert not wrong.passed and wrong.outcomes[TWICE_ID] == "failed", (name, wrong)
        env.write_file(f"{PACKAGE}/Calc.java", calc(SQUARE, WRONG_TWICE))
        env.write_file(PLANTED, FAKE_ASSERT)
        assert PLANTED in env.cumulative_patch().decode()
        wrong = run_tests(env, hidden, timeout=600)
        assert not wrong.passed and wrong.outcomes[TWICE_ID] == "failed", wrong.outcomes


@pytest.mark.bench  # bench/bench_harbor_rooms.py: CI's Harbor runs are Node's and Rust's
def test_harbor_judges_the_java_room_as_its_clean_room(verified: Any, tmp_path: Path) -> None:
    """The real Harbor, oracle agent, on the stages `tasks convert --to harbor` writes from the
    exported tasks, every variant in one job: stage 1's gold scores 1 (root's canary class fails
    beside it); a wrong `twice`, a wrong `twice` with the planted `org.junit.Assert`, and a
    `twice` that forges TwiceTest's report and halts the JVM each score 0. With every variant
    (bench/bench_harbor_rooms.py) stage 2's gold scores 1 and the shutdown hook that takes every
    failure out of the reports 0."""
    import shutil

    from tests.support.harbor import (
        every_variant,
        remove_harbor_images,
        run_oracle,
        solve_sh,
        variant,
        verdicts,
    )

    common, _url, _clone, tasks = verified
    out = tmp_path / "harbor"
    done = invoke("tasks", "convert", str(tasks), str(out), "--to", "harbor", *common)
    assert done.exit_code == 0 and "wrote 2 task directories" in done.output, done.output
    first, second = sorted(out.iterdir(), key=lambda p: p.name[-1])
    attacks = {
        "wrong": {f"{PACKAGE}/Calc.java": calc(SQUARE, WRONG_TWICE)},
        "planted": {f"{PACKAGE}/Calc.java": calc(SQUARE, WRONG_TWICE), PLANTED: FAKE_ASSERT},
        "forged": {f"{PACKAGE}/Calc.java": calc(SQUARE, FORGED_EXIT)},
    }
    if every_variant():
        attacks["rewrite"] = {f"{PACKAGE}/Calc.java": calc(SQUARE, FORGED_REWRITE)}
    for kind, files in attacks.items():
        variant(first, kind, solve_sh(files))
    expected = {first.name: 1.0} | {f"{first.name}-{kind}": 0.0 for kind in attacks}
    if every_variant():
        expected[second.name] = 1.0
    else:
        shutil.rmtree(second)
    try:
        rewards = run_oracle(out, tmp_path / "jobs")
        output = rewards.pop("_output")
        assert rewards == {f"prchain/{name}": r for name, r in expected.items()}, output
        found = verdicts(tmp_path / "jobs")
        assert found[first.name]["outcomes"] == {TWICE_ID: "passed"}, found[first.name]
        for kind in attacks:
            assert found[f"{first.name}-{kind}"]["outcomes"] == {TWICE_ID: "failed"}, kind
        dropped = verdicts(tmp_path / "jobs", "dropped.txt")
        assert PLANTED in dropped[f"{first.name}-planted"]
    finally:
        remove_harbor_images(out)
