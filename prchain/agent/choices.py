"""The closed sets of values of a rollout, each defined once: configs, the store and the CLI derive
their choices from these."""

from __future__ import annotations

from typing import Literal, get_args

KeepPolicyName = Literal["all", "prefix"]
"""all: a chain is kept only when every stage passes; prefix: the stages up to the first failure."""
KEEP_POLICIES: tuple[str, ...] = get_args(KeepPolicyName)

KeepSignal = Literal["judge", "tests", "both"]
"""What makes a stage pass: judge (its score) or both (the judge and, where a stage has verified
tests, the tests). `tests` alone is refused (prchain.agent.keep.refuse_tests_alone)."""
KEEP_SIGNALS: tuple[str, ...] = get_args(KeepSignal)

ActionFormat = Literal["tools", "text"]
"""tools: native OpenAI tool calls; text: one fenced command per reply (servers without tool calling)."""
ACTION_FORMATS: tuple[str, ...] = get_args(ActionFormat)

Scaffold = Literal["builtin", "mini-swe-agent"]
"""builtin: prchain's own loop and tools (bash, str_replace_editor, submit); mini-swe-agent: the
scaffold the daVinci-Agency paper rolled out with (its prompts, its bash-only tool, its model class),
run inside the same stage sandbox (prchain.agent.mini)."""
SCAFFOLDS: tuple[str, ...] = get_args(Scaffold)

RolloutStatus = Literal["running", "kept", "rejected", "failed"]
ROLLOUT_STATUSES: tuple[str, ...] = get_args(RolloutStatus)
FINISHED: tuple[RolloutStatus, ...] = ("kept", "rejected")

StageStatus = Literal["running", "passed", "failed", "stopped"]
STAGE_STATUSES: tuple[str, ...] = get_args(StageStatus)
