"""The carry-forward fallback by replay (`replay`), asked of git before a chain is kept.

A link found in code is a later PR rewriting an earlier PR's lines, and in a busy codebase other
PRs rewrite them too: then no revert of the earlier gold patch at B_t can be made, and entry by
hunks refuses the stage because its own lines are the kept ones. Entry by replay does not revert:
stage t starts from B_t itself, with the agent's earlier work carried as its difference from the
history it stands for (docs/architecture.md, "Carry-forward"). At the end of stage t−1 the agent's
tree A_(t−1) is compared with H_(t−1) = B_(t−1) + g_(t−1), the tree a perfect agent would have
left, and that difference is applied to B_t three ways; where history rewrote the lines the agent
wrote otherwise, B_t's lines are kept and the conflict is recorded (carry.STAGE_BASE). An agent
that did as history did starts from B_t exactly, which is the state `tests verify` checks.

Once a stage of a chain is replayed, every later stage is too: the stage base then holds the
agent's earlier work, which a revert of the earlier gold patches cannot take out again.

The one condition, asked of git: every earlier stage's merge commit is an ancestor of B_t, so that
B_t holds the history the agent's work is measured against (and nothing after B_t is read).
"""

from __future__ import annotations

from collections.abc import Sequence

from prchain.chains.evidence.propagation import EarlierStage, MergedInto


class Replay(MergedInto):
    """Answers, per repository clone, whether a stage can be entered by replay."""

    def enters(self, repo_id: int, base: str, earlier: Sequence[EarlierStage], gold: str) -> bool:
        """Whether stage t (base B_t) can be entered by replay after the `earlier` stages (oldest
        first): each was merged into B_t. `gold` (the stage's own patch) does not matter."""
        del gold
        if not earlier or not base or repo_id not in self.clones:
            return False
        return self.all_merged(repo_id, earlier, base)
