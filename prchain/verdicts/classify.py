"""From three kinds of runs to SWE-bench's lists: pure, so the rules are tested on their own.

Runs on the stage start: `start` (no gold patch), `tests` (gold test patch only), then `gold`
(gold test + code patch, repeated). A test's outcome *before* the gold code patch is its outcome in
`tests`; a test `tests` did not report (its unit did not build with the test patch alone: a Go
package, a Rust test target, a Java module, a Python module that did not import) takes its outcome
in `start`, with the base's own test files, unless it is new or the test patch touches it
(touched.py). A test is
  flaky         when it passes in some gold runs and not in others, or when it is unsteady before
                the gold code patch: it passed at the start, failed with the test patch alone,
                which does not touch it, and passed when that run was repeated
                (`unsteady_suspects`): dropped from both lists;
  FAIL_TO_PASS  when it passes in every gold run and did not pass before;
  PASS_TO_PASS  when it passes in every gold run and passed before;
  gold-failing  when it fails (or errors) in every gold run and is the stage's own: new in the test
                patch (absent from `start`), or passing before it (a regression; for a test
                `tests` did not report, passing at the start, touched or not).
A pre-existing test that fails before and after is broken in this environment and ignored, as
SWE-bench ignores it. A stage is usable for P2T only with FAIL_TO_PASS tests and no gold-failing one.
Why each test `tests` did not report was classed as it was is kept in `why` (audit).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Literal, get_args

from prchain.environments.eras.reports import is_passing

Status = Literal["usable", "unusable"]
STATUSES: tuple[str, ...] = get_args(Status)
SHOWN = 5  # test ids quoted in a reason


@dataclass
class Classification:
    status: Status
    reason: str | None = None
    fail_to_pass: list[str] = field(default_factory=list)
    pass_to_pass: list[str] = field(default_factory=list)
    flaky: list[str] = field(default_factory=list)
    gold_failing: list[str] = field(default_factory=list)
    # test id → why its outcome before the gold code patch was taken as it was, for the tests the
    # with-tests run did not report (WHY_* below)
    why: dict[str, str] = field(default_factory=dict)


WHY_NEW = "new: not at the start either"
WHY_TOUCHED = "touched by the test patch: {name}"
WHY_START = "{outcome} at the start; the test patch does not touch it"


def unusable(reason: str) -> Classification:
    return Classification("unusable", reason)


def flaky_tests(gold: list[dict[str, str]]) -> list[str]:
    """Tests that passed in some gold runs and not in others (missing from a run counts as not)."""
    ids = set().union(*gold) if gold else set()
    return sorted(t for t in ids if len({is_passing(run.get(t)) for run in gold}) > 1)


def unsteady_suspects(
    start: dict[str, str], tests: dict[str, str], touched: Callable[[str], str | None]
) -> list[str]:
    """Tests whose failure with the test patch alone may be chance: passing at the start, not
    passing with the test patch, which does not touch them. verify.py repeats that run when there
    are any; a suspect that passes then is flaky. One that fails again stays FAIL_TO_PASS: a test
    patch can break a test it does not name (a shared fixture) for the gold code to mend."""
    return sorted(
        t
        for t, outcome in tests.items()
        if not is_passing(outcome) and is_passing(start.get(t)) and touched(t) is None
    )


def _quoted(tests: list[str]) -> str:
    more = f" and {len(tests) - SHOWN} more" if len(tests) > SHOWN else ""
    return ", ".join(tests[:SHOWN]) + more


def before(
    test: str,
    start: dict[str, str],
    tests: dict[str, str],
    touched: Callable[[str], str | None] | None,
) -> tuple[str | None, str]:
    """The test's outcome before the gold code patch (None: it could not run) and, when `tests`
    did not report it, why. Without `touched`, every test the test patch leaves unrun is touched."""
    if test in tests:
        return tests[test], ""
    if test not in start:
        return None, WHY_NEW
    name = touched(test) if touched is not None else "(not looked for)"
    if name is not None:
        return None, WHY_TOUCHED.format(name=name)
    return start[test], WHY_START.format(outcome=start[test])


def classify(
    start: dict[str, str],
    tests: dict[str, str],
    gold: list[dict[str, str]],
    touched: Callable[[str], str | None] | None = None,
    unsteady: Iterable[str] = (),
    *,
    lent: bool = False,
) -> Classification:
    """`unsteady`: the suspects that passed when the with-tests run was repeated. `lent`: the test
    patch is a later stage's (prchain/chains/building/lent.py), so a test it adds that fails with
    the gold patch is the lender's work, not a failure of this stage's gold."""
    if not gold or not any(gold):
        return unusable("the gold run reported no test outcome (does the test command run?)")
    flaky = sorted(set(flaky_tests(gold)) | (set(unsteady) & set().union(*gold)))
    stable = sorted(set().union(*gold) - set(flaky))
    prior = {t: before(t, start, tests, touched) for t in stable}
    # A stable test passes in every gold run or in none; one a run did not report (a package whose
    # run timed out reports `(package)` only there) is in no list unless it fails in every run.
    passing = [t for t in stable if is_passing(gold[0].get(t))]
    found = Classification(
        "usable",
        fail_to_pass=[t for t in passing if not is_passing(prior[t][0])],
        pass_to_pass=[t for t in passing if is_passing(prior[t][0])],
        flaky=flaky,
        gold_failing=[
            t
            for t in stable
            if all(run.get(t) in ("failed", "error") for run in gold)
            and (is_passing(tests.get(t, start.get(t))) if lent or t in start else True)
        ],
        why={t: prior[t][1] for t in passing if prior[t][1]},
    )
    if found.gold_failing:
        found.status = "unusable"
        found.reason = f"the gold patch fails {len(found.gold_failing)} of its own tests: {_quoted(found.gold_failing)}"
    elif not found.fail_to_pass:
        found.status = "unusable"
        found.reason = "no test fails before the gold code patch and passes after it" + (
            f" ({len(flaky)} flaky tests dropped)" if flaky else ""
        )
    return found
