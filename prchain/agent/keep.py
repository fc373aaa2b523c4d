"""Which part of a rolled-out chain becomes training data.

Two settings: the keep policy (`all` stages or the longest passing `prefix`) and the keep signal,
what makes one stage pass (`judge`, `tests` or `both`, see prchain.agent.choices.KeepSignal).
A stage that was never judged (a gate failed it, or the judge contradicted itself) has no score
and never passes, whatever the signal.
"""

from __future__ import annotations

from dataclasses import dataclass

from prchain.agent.choices import KeepPolicyName, KeepSignal

TESTS_ALONE = (
    "keep_on=tests is refused: the agent's own code runs inside the hidden-test process, so it can "
    "subvert the runner from inside (docs/sandbox.md, the clean room's known limit) and nothing "
    "but the judge looks at what it did; use keep_on=both (the judge and the tests must agree)"
)


def refuse_tests_alone(signal: str) -> str:
    """`signal`, unless it lets the hidden tests pass a stage the judge rejected (issue 52)."""
    if signal == "tests":
        raise ValueError(TESTS_ALONE)
    return signal


@dataclass(frozen=True)
class Decision:
    kept_stages: int  # stages 1..kept_stages are training data; 0 rejects the rollout
    reason: str | None = None  # why it was rejected (None when kept)

    @property
    def kept(self) -> bool:
        return self.kept_stages > 0


def stage_passes(
    score: float | None, tests_passed: bool | None, threshold: float, signal: KeepSignal = "judge"
) -> bool:
    """Does one stage pass? `tests_passed` is None when the stage has no verified tests."""
    if score is None:
        return False
    judge_ok = score >= threshold
    if signal == "judge" or tests_passed is None:
        return judge_ok
    if signal == "tests":
        return tests_passed
    return judge_ok and tests_passed


def passing_prefix(passed: list[bool]) -> int:
    """How many leading stages passed."""
    count = 0
    for ok in passed:
        if not ok:
            break
        count += 1
    return count


class KeepPolicy:
    def decide(self, passed: list[bool], n_stages: int, threshold: float) -> Decision:
        raise NotImplementedError


class KeepAll(KeepPolicy):
    """The paper's default: a chain is kept only when every stage passes."""

    def decide(self, passed: list[bool], n_stages: int, threshold: float) -> Decision:
        count = passing_prefix(passed)
        if count == n_stages:
            return Decision(n_stages)
        return Decision(
            0, f"stage {count + 1} of {n_stages} did not pass (threshold {threshold:g})"
        )


class KeepPrefix(KeepPolicy):
    """Short/long scaling: keep the stages up to the first failure."""

    def decide(self, passed: list[bool], n_stages: int, threshold: float) -> Decision:
        count = passing_prefix(passed)
        if count:
            return Decision(count)
        return Decision(0, f"stage 1 of {n_stages} did not pass (threshold {threshold:g})")


POLICIES: dict[KeepPolicyName, type[KeepPolicy]] = {"all": KeepAll, "prefix": KeepPrefix}


def decide(policy: KeepPolicyName, passed: list[bool], n_stages: int, threshold: float) -> Decision:
    return POLICIES[policy]().decide(passed, n_stages, threshold)
