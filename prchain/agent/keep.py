"""Which part of a rolled-out chain becomes training data: `all` stages or the longest passing prefix."""

from __future__ import annotations

from dataclasses import dataclass

from prchain.agent.choices import KeepPolicyName


@dataclass(frozen=True)
class Decision:
    kept_stages: int  # stages 1..kept_stages are training data; 0 rejects the rollout
    reason: str | None = None  # why it was rejected (None when kept)

    @property
    def kept(self) -> bool:
        return self.kept_stages > 0


def passing_prefix(scores: list[float | None], threshold: float) -> int:
    """How many leading stages scored at least the threshold."""
    count = 0
    for score in scores:
        if score is None or score < threshold:
            break
        count += 1
    return count


class KeepPolicy:
    def decide(self, scores: list[float | None], n_stages: int, threshold: float) -> Decision:
        raise NotImplementedError


class KeepAll(KeepPolicy):
    """The paper's default: a chain is kept only when every stage passes."""

    def decide(self, scores: list[float | None], n_stages: int, threshold: float) -> Decision:
        passed = passing_prefix(scores, threshold)
        if passed == n_stages:
            return Decision(n_stages)
        return Decision(
            0, f"stage {passed + 1} of {n_stages} did not pass (threshold {threshold:g})"
        )


class KeepPrefix(KeepPolicy):
    """Short/long scaling: keep the stages up to the first failure."""

    def decide(self, scores: list[float | None], n_stages: int, threshold: float) -> Decision:
        passed = passing_prefix(scores, threshold)
        if passed:
            return Decision(passed)
        return Decision(0, f"stage 1 of {n_stages} did not pass (threshold {threshold:g})")


POLICIES: dict[KeepPolicyName, type[KeepPolicy]] = {"all": KeepAll, "prefix": KeepPrefix}


def decide(
    policy: KeepPolicyName, scores: list[float | None], n_stages: int, threshold: float
) -> Decision:
    return POLICIES[policy]().decide(scores, n_stages, threshold)
