"""SWE-bench's FAIL_TO_PASS / PASS_TO_PASS, flaky tests dropped, unusable stages with a reason."""

from __future__ import annotations

from prchain.verdicts.classify import classify, flaky_tests, unsteady_suspects

START = {
    "t.py::old": "passed",
    "t.py::broken": "failed",
    "t.py::changed": "passed",
    "t.py::wobbly": "failed",
}
TESTS = {**START, "t.py::new": "failed", "t.py::changed": "failed"}
GOLD = {**TESTS, "t.py::new": "passed", "t.py::changed": "passed"}


def test_fail_to_pass_and_pass_to_pass() -> None:
    found = classify(START, TESTS, [GOLD, GOLD, GOLD])
    assert found.status == "usable" and found.reason is None
    assert found.fail_to_pass == ["t.py::changed", "t.py::new"]
    assert found.pass_to_pass == ["t.py::old"]
    assert found.gold_failing == [] and found.flaky == []


def test_flaky_tests_are_dropped_from_both_lists() -> None:
    runs = [
        {**GOLD, "t.py::wobbly": "passed", "t.py::old": "passed"},
        {**GOLD, "t.py::wobbly": "failed"},
        {**GOLD, "t.py::wobbly": "passed", "t.py::old": "error"},
    ]
    found = classify(START, TESTS, runs)
    assert found.flaky == ["t.py::old", "t.py::wobbly"] == flaky_tests(runs)
    assert found.pass_to_pass == [] and found.fail_to_pass == ["t.py::changed", "t.py::new"]
    # failed and error are both "not passing": not flaky
    assert flaky_tests([{"a": "failed"}, {"a": "error"}, {}]) == []
    assert flaky_tests([{"a": "passed"}, {}]) == ["a"]  # missing from a run counts as not passing


def test_a_gold_patch_failing_its_own_new_test_is_unusable() -> None:
    gold = {**GOLD, "t.py::new": "failed"}
    found = classify(START, TESTS, [gold, gold, gold])
    assert found.status == "unusable" and found.gold_failing == ["t.py::new"]
    assert found.reason == "the gold patch fails 1 of its own tests: t.py::new"


def test_a_regression_is_gold_failing_but_an_old_broken_test_is_ignored() -> None:
    gold = {**GOLD, "t.py::old": "error"}
    found = classify(START, TESTS, [gold] * 3)
    assert found.gold_failing == ["t.py::old"] and found.status == "unusable"
    assert "t.py::broken" not in found.gold_failing + found.fail_to_pass + found.pass_to_pass


def test_an_outcome_only_some_gold_runs_report_is_in_no_list() -> None:
    """gin #4053 (held out): one of two gold runs hung in a server test and was stopped, and the
    root package's run reported `(package)` failed; the other run never named it. Classifying
    raised KeyError on the first run and `tests verify` stopped with a traceback. Failing in one
    run and absent from the other is not failing in every run: not gold-failing, in no list."""
    stopped = {**GOLD, "pkg::(package)": "failed"}
    for runs in ([GOLD, stopped], [stopped, GOLD]):
        found = classify(START, TESTS, runs)
        assert found.status == "usable", found.reason
        assert found.fail_to_pass == ["t.py::changed", "t.py::new"]
        assert found.pass_to_pass == ["t.py::old"] and found.gold_failing == []
    # Failing in every run it is the gold patch's own failure, as before.
    found = classify(START, TESTS, [stopped, stopped])
    assert found.gold_failing == ["pkg::(package)"] and found.status == "unusable"


def test_no_fail_to_pass_or_no_outcome_is_unusable() -> None:
    found = classify(START, START, [START, START, START])
    assert found.status == "unusable"
    assert found.reason == "no test fails before the gold code patch and passes after it"
    assert found.pass_to_pass == ["t.py::changed", "t.py::old"]
    assert found.gold_failing == []  # wobbly and broken fail everywhere: old, broken, ignored
    empty = classify({}, {}, [{}, {}])
    assert empty.status == "unusable" and "no test outcome" in (empty.reason or "")


def test_only_modules_pytest_collects_are_the_scope() -> None:
    from prchain.verdicts.sandbox import collected_test_files

    def section(path: str, deleted: bool = False) -> str:
        mode = "deleted file mode 100644\n" if deleted else ""
        return (
            f"diff --git a/{path} b/{path}\n{mode}--- a/{path}\n+++ b/{path}\n@@ -1 +1 @@\n-a\n+b\n"
        )

    patch = "".join(
        [
            section("testing/test_hooks.py"),
            section("testing/benchmark.py"),  # under the test dir, but not collected by default
            section("testing/conftest.py"),
            section("pkg/io_test.py"),
            section("testing/test_gone.py", deleted=True),
        ]
    )
    assert collected_test_files(patch) == ["testing/test_hooks.py", "pkg/io_test.py"]


# ---- a unit that did not build with the test patch alone ----------------------------------------

UNIT_START = {"p::TestOld": "passed", "p::TestChanged": "passed", "p::TestBroken": "failed"}
UNIT_TESTS = {"p": "error"}  # the test patch calls a function the base lacks: p never built
UNIT_GOLD = {**UNIT_START, "p::TestChanged": "passed", "p::TestNew": "passed"}


def test_a_unit_that_did_not_build_takes_its_untouched_tests_from_the_start() -> None:
    touched = {"p::TestChanged": "TestChanged", "p::TestNew": "TestNew"}.get
    found = classify(UNIT_START, UNIT_TESTS, [UNIT_GOLD] * 2, touched)
    assert found.status == "usable"
    assert found.fail_to_pass == ["p::TestChanged", "p::TestNew"]
    assert found.pass_to_pass == ["p::TestOld"]  # it passed at the start; the patch leaves it be
    assert found.why == {
        "p::TestChanged": "touched by the test patch: TestChanged",
        "p::TestNew": "new: not at the start either",
        "p::TestOld": "passed at the start; the test patch does not touch it",
    }
    assert "p::TestBroken" not in found.fail_to_pass + found.pass_to_pass + found.gold_failing


def test_without_a_touched_reader_every_unrun_test_stays_fail_to_pass() -> None:
    found = classify(UNIT_START, UNIT_TESTS, [UNIT_GOLD])
    assert found.fail_to_pass == ["p::TestChanged", "p::TestNew", "p::TestOld"]
    assert found.pass_to_pass == [] and found.why["p::TestOld"].startswith("touched")


def test_an_unrun_test_that_passed_at_the_start_and_fails_with_gold_is_a_regression() -> None:
    gold = {**UNIT_GOLD, "p::TestOld": "failed"}
    found = classify(UNIT_START, UNIT_TESTS, [gold], lambda test: None)
    assert found.status == "unusable" and found.gold_failing == ["p::TestOld"]


def test_a_suspect_that_passes_when_its_run_is_repeated_is_flaky() -> None:
    """coreutils #10416 (a `tac` regex PR): dd's test_seek_do_not_overwrite passed on the start,
    failed with the test patch alone (which names no dd test) and passed in every gold run, so it
    was FAIL_TO_PASS of a stage that never touched dd."""
    start = {"t.py::steady": "passed", "t.py::dd": "passed", "t.py::fixture": "passed"}
    tests = {"t.py::steady": "passed", "t.py::dd": "failed", "t.py::fixture": "failed"}
    gold = {**start, "t.py::new": "passed"}

    def names_none(test: str) -> str | None:
        return None

    suspects = unsteady_suspects(start, {**tests, "t.py::new": "failed"}, names_none)
    assert suspects == ["t.py::dd", "t.py::fixture"]  # a new test is no suspect: it never passed
    # the patch names a suspect: no suspect, a changed test may fail before the gold code
    assert unsteady_suspects(start, tests, lambda t: "dd" if t == "t.py::dd" else None) == [
        "t.py::fixture"
    ]
    # repeated, dd passed; the fixture test failed again (a shared fixture the patch changed)
    found = classify(start, tests, [gold, gold], names_none, unsteady=["t.py::dd"])
    assert found.flaky == ["t.py::dd"]
    assert found.fail_to_pass == ["t.py::fixture", "t.py::new"]
    assert found.pass_to_pass == ["t.py::steady"]
