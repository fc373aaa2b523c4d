"""Resuming a killed rollout: the counters of the steps already stored, and the sandbox at the end of
the last passed stage rebuilt from its stored Δ.

The rebuild applies `carried_patch`, Δ_t byte for byte as `git diff --binary` gave it, and then
checks that the sandbox's Δ equals it. When it cannot be exact (a row from before revision 0011,
or a Δ that held a known secret value and was therefore not stored), it applies the redacted text
and says exactly which files may differ from what the agent left (issue 23, finding 5).
"""

from __future__ import annotations

import base64
import re
import uuid
from collections.abc import Iterable, Sequence

from prchain.agent.loop import Counters
from prchain.core.errors import EnvironmentFailure
from prchain.core.secrets import REDACTED, Redactor
from prchain.core.text import REPLACEMENT
from prchain.environments.protocol import Environment
from prchain.store.rollouts import StageRow, StepRow

_FILE_HEADER = re.compile(rb"^diff --git a/(.*?) b/(.*)$", re.MULTILINE)


def carried(patch: bytes, secrets: tuple[str, ...] = ()) -> bytes | None:
    """What to store as the carried Δ: the exact bytes, or None when they hold a known secret
    value (this process's credentials never rest in the store, not even inside the agent's work)."""
    text = patch.decode("utf-8", "surrogateescape")
    return None if any(value in text for value in Redactor(secrets).known) else patch


def rebuild(env: Environment, kept: Sequence[StageRow], replayed: bool = False) -> list[str]:
    """Bring a fresh sandbox to the end of the last `kept` stage: its start state plus the stored
    Δ. Where the chain has a stage entered by replay (`replayed`), a stage's start holds the
    agent's earlier work, so every kept stage is entered and its Δ applied in turn.

    Returns what differs from the tree the agent left: nothing when each Δ was restored byte for
    byte, else one line per cause naming the files."""
    notes: list[str] = []
    for row in kept if replayed else kept[-1:]:
        env.enter_stage(row.stage_idx)
        if row.carried_patch is not None:
            notes += _exact(env, row.stage_idx, row.carried_patch)
        else:
            notes += _from_text(env, row.stage_idx, row.cumulative_diff)
    return notes


def _exact(env: Environment, stage_idx: int, patch: bytes) -> list[str]:
    if not patch.strip():
        return []
    marker = f"PRCHAIN_DELTA_{uuid.uuid4().hex}"
    encoded = base64.encodebytes(patch).decode("ascii")
    path = f"/tmp/{marker}.patch"
    script = (
        f"base64 -d > {path} <<'{marker}'\n{encoded}{marker}\n"
        f"git apply --binary --whitespace=nowarn {path}; status=$?; rm -f {path}; exit $status"
    )
    _applied(env, stage_idx, script)
    now = env.cumulative_patch()
    if now == patch:
        return []
    files = sorted(set(_files(now)) ^ set(_files(patch)) | _changed_files(now, patch))
    return [f"stage {stage_idx}: the rebuilt change differs from the stored one in {_names(files)}"]


def _from_text(env: Environment, stage_idx: int, delta: str) -> list[str]:
    """Rows stored before byte-exact Δs, or whose Δ held a secret: the redacted text is all there is."""
    if not delta.strip():
        return []
    marker = f"PRCHAIN_DELTA_{uuid.uuid4().hex}"
    _applied(env, stage_idx, f"git apply --whitespace=nowarn - <<'{marker}'\n{delta}\n{marker}\n")
    lossy = _lossy_files(delta)
    if not lossy:
        return [f"stage {stage_idx}: restored from the stored text diff (no exact copy was kept)"]
    return [
        f"stage {stage_idx}: restored from text; these files may differ from what the agent left "
        f"(redacted secrets, undecodable bytes or binary content): {_names(lossy)}"
    ]


def _applied(env: Environment, stage_idx: int, script: str) -> None:
    result = env.execute(script)
    if result.exit_code != 0:
        raise EnvironmentFailure(
            f"could not restore stage {stage_idx}'s changes on resume: {result.output[-500:]}"
        )


def _files(patch: bytes) -> list[str]:
    return [m.group(2).decode("utf-8", "replace") for m in _FILE_HEADER.finditer(patch)]


def _sections(patch: bytes) -> dict[str, bytes]:
    starts = list(_FILE_HEADER.finditer(patch))
    ends = [m.start() for m in starts[1:]] + [len(patch)]
    return {
        m.group(2).decode("utf-8", "replace"): patch[m.start() : end]
        for m, end in zip(starts, ends, strict=True)
    }


def _changed_files(one: bytes, other: bytes) -> set[str]:
    a, b = _sections(one), _sections(other)
    return {name for name in a.keys() & b.keys() if a[name] != b[name]}


def _lossy_files(delta: str) -> list[str]:
    """Files whose part of a text Δ lost something: a redaction, a replaced byte, binary content."""
    lossy = []
    for name, section in _sections(delta.encode("utf-8", "surrogateescape")).items():
        text = section.decode("utf-8", "replace")
        if REDACTED in text or REPLACEMENT in text or "\nBinary files " in text:
            lossy.append(name)
    return lossy


def _names(files: list[str]) -> str:
    shown = ", ".join(files[:10]) or "(no file header)"
    return shown + (f" and {len(files) - 10} more" if len(files) > 10 else "")


def restored_counters(steps: Iterable[StepRow]) -> Counters:
    """The chain counters as they stood after `steps` (policy replies only)."""
    counters = Counters()
    for step in steps:
        if step.kind in ("assistant", "format_error") and step.message.get("role") == "assistant":
            counters.steps += 1
            counters.tool_calls += len(step.message.get("tool_calls") or [])
            counters.prompt_tokens += step.prompt_tokens
            counters.completion_tokens += step.completion_tokens
            counters.context_tokens = step.prompt_tokens + step.completion_tokens
    return counters
