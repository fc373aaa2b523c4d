"""The unlocker action language: what counts as replayable."""

from __future__ import annotations

import pytest

from prchain.p2t.unlock import Action, Unreplayable, normalize_observation

PROBE = "BASH python - <<'EOF'\nclass S:\n    def h(self): ...\nx = ...\nf(...)\nreturn ...\nEOF"


@pytest.mark.parametrize(
    "action", [PROBE, "VIEW a.py:1-5", "VIEW problem_statement", "THINK see ... later"]
)
def test_replayable(action: str) -> None:
    Action.parse(action)


@pytest.mark.parametrize(
    "action",
    [
        "VIEW a.py:1-...",
        "BASH grep -rn foo src/...",
        "BASH python -c '...'",
        "BASH cat <path>",
        "BASH echo …",
        "GREP foo",
        "BASH ",
        "STR_REPLACE a.py TODO",
    ],
)
def test_unreplayable(action: str) -> None:
    with pytest.raises(Unreplayable):
        Action.parse(action)


def test_reruns_compare_without_timings_and_addresses() -> None:
    a = "1 passed in 0.12s\n<obj at 0x7f00aa>"
    b = "1 passed in 3.4s  \n<obj at 0x7fffff>"
    assert normalize_observation(a) == normalize_observation(b)
