"""Issue 20 finding 5: a stored diff is git's diff and nothing else, and any size degrades to the
cap's summary instead of a crash."""

from __future__ import annotations

import pytest

from prchain.environments.protocol import diff_cap_hit

pytestmark = pytest.mark.docker


def test_git_warnings_never_enter_a_diff_nor_hide_the_cap(make_env) -> None:
    env = make_env(max_diff_bytes=20_000)
    env.enter_stage(1)
    # An embedded repository and CRLF under `* text=auto`: git warns about both on stderr.
    env.execute("mkdir -p vendor/lib && cd vendor/lib && git init -q && echo x > f && git add f")
    env.execute("printf '* text=auto\\n' > .gitattributes && printf 'a\\r\\nb\\r\\n' > dos.txt")
    small = env.diff()
    assert "warning" not in small and "hint:" not in small
    assert small.startswith("diff --git ") and "dos.txt" in small
    env.execute("head -c 300000 /dev/urandom | base64 > big.txt")
    for diff in (env.diff(), env.cumulative_diff()):
        hit = diff_cap_hit(diff)
        assert hit is not None and hit[0] > 300_000 and hit[1] == 20_000
        assert "warning" not in diff and "big.txt" in diff
    assert len(env.cumulative_patch()) == diff_cap_hit(env.diff())[0]  # the whole Δ, uncapped


def test_forty_thousand_small_files_give_the_cap_reason_not_a_crash(make_env) -> None:
    env = make_env(max_diff_bytes=100_000)
    env.enter_stage(1)
    made = env.execute(
        "mkdir -p many && cd many && for i in $(seq 40000); do echo $i > f$i.txt; done; echo made",
        timeout=300,
    )
    assert made.output.strip().endswith("made")
    for diff in (env.diff(), env.cumulative_diff()):
        hit = diff_cap_hit(diff)
        assert hit is not None and hit[0] > 100_000
        assert len(diff) < 100_000 + 500 and "many/f1.txt" in diff
    env.execute("rm -rf many")
    assert env.diff() == ""
