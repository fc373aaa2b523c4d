"""Whether a submitted stage passes: the deterministic gates, then the judge, whose comment goes
back to the agent for another try while the score stays below the threshold; then the keep
signal (agent.keep_on), by which the stage's hidden tests pass the stage or must agree."""

from __future__ import annotations

from dataclasses import dataclass

from prchain.agent.config import AgentConfig
from prchain.agent.gates import before_judge
from prchain.agent.judge import Judge, Judged
from prchain.agent.keep import stage_passes
from prchain.agent.persist import Recorder
from prchain.agent.scaffold import StageAgent
from prchain.agent.tasks import StageTask
from prchain.core.errors import JudgeInputTooLarge
from prchain.environments.protocol import Environment, diff_cap_hit
from prchain.verdicts.oracle import TestVerdict


@dataclass(frozen=True)
class StageOutcome:
    passed: bool
    score: float | None  # None when no judge verdict stands (a gate failed it, or a contradiction)
    reason: str | None = None
    judged: bool = False  # the stage ended on the judge's verdict (the keep signal may apply)


@dataclass
class StageJudging:
    """Judges the stages of one runner's rollouts."""

    config: AgentConfig
    judge: Judge

    def rounds(
        self,
        env: Environment,
        loop: StageAgent,
        recorder: Recorder,
        stage: StageTask,
        submitted: bool,
        reason: str | None,
    ) -> tuple[StageOutcome, int]:
        """Judge the submitted patch; below the threshold the comment goes back for another try."""
        config, score = self.config, None
        for round_ in range(config.max_refinements + 1):
            if not submitted:
                return StageOutcome(False, score, f"stage {stage.idx}: {reason}"), round_
            judged = self._round(env, loop, recorder, stage, round_, score)
            if isinstance(judged, StageOutcome):
                return judged, round_
            score = judged.score
            if round_ == config.max_refinements:
                if judged.contradicted:
                    why = f"stage {stage.idx}: the judge's score contradicts its own comment"
                    return StageOutcome(False, None, why), round_
                break
            loop.add("feedback", loop.feedback(judged.comment))
            run = loop.work()
            submitted, reason = run.submitted, run.reason
        why = (
            f"stage {stage.idx}: score {score:.2f} below {config.judge_threshold:g} "
            f"after {config.max_refinements} refinements"
        )
        return StageOutcome(False, score, why, judged=True), config.max_refinements

    def _round(
        self,
        env: Environment,
        loop: StageAgent,
        recorder: Recorder,
        stage: StageTask,
        round_: int,
        score: float | None,
    ) -> StageOutcome | Judged:
        """One round: the gates, then the judge's verdict, recorded. The outcome when the round
        ends the stage (a gate, an oversized input, a pass), else the verdict that failed it."""
        agent_patch = env.diff()
        if hit := over_cap(stage.idx, "diff", agent_patch):
            return StageOutcome(False, score, hit)
        if gated := before_judge(stage.idx, agent_patch, stage.gold_patch):
            return StageOutcome(False, None, gated)
        try:
            judged = self.judge.judge(
                query=stage.query,
                gold_patch=stage.gold_patch,
                agent_patch=agent_patch,
                rollout_id=loop.rollout_id,
            )
        except JudgeInputTooLarge as exc:
            return StageOutcome(False, score, f"stage {stage.idx}: {exc}")
        passed = judged.score >= self.config.judge_threshold and not judged.contradicted
        recorder.judgement(
            stage.idx,
            round_,
            score=judged.score,
            comment=judged.comment,
            passed=passed,
            attempts=judged.attempts,
            redacted=judged.redacted,
        )
        return StageOutcome(True, judged.score, judged=True) if passed else judged

    def signal(self, idx: int, outcome: StageOutcome, verdict: TestVerdict | None) -> StageOutcome:
        """Apply agent.keep_on: the hidden tests pass the stage, or must agree with the judge."""
        config = self.config
        tests = verdict.passed if verdict is not None else None
        passed = stage_passes(outcome.score, tests, config.judge_threshold, config.keep_on)
        if passed == outcome.passed:
            return outcome
        if passed:
            return StageOutcome(True, outcome.score, None, judged=True)
        failing = ", ".join(verdict.failing[:3]) if verdict and verdict.failing else "none named"
        why = f"stage {idx}: the judge passed it but its hidden tests failed (failing: {failing})"
        return StageOutcome(False, outcome.score, why, judged=True)


def over_cap(idx: int, what: str, diff: str) -> str | None:
    """The stage's reason when `diff` is only the summary of a diff past the environment's cap."""
    hit = diff_cap_hit(diff)
    if hit is None:
        return None
    size, cap = hit
    return (
        f"stage {idx}: the {what} is {size} bytes, over environment.max_diff_bytes ({cap}); "
        "a diffstat was stored instead and the stage was not judged"
    )
