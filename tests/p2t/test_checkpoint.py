"""A curation killed after it stored a window's steps but before that window's checkpoint: the
resume drops those steps and continues from the checkpoint before them (real SQLite store)."""

from __future__ import annotations

from dataclasses import asdict
from pathlib import Path
from typing import Any

from prchain.agent.persist import Recorder, new_rollout
from prchain.p2t import store
from prchain.p2t.forward import Checkpoint, WindowLog
from prchain.store.opener import make_engine
from tests.agent.conftest import seed_chain


def _window(recorder: Recorder, n: int) -> None:
    call = {"id": f"c{n}", "type": "function", "function": {"name": "bash", "arguments": "{}"}}
    assistant = {"role": "assistant", "content": "", "tool_calls": [call]}
    recorder.step(1, "assistant", assistant, completion_tokens=10 + n)
    tool = {"role": "tool", "tool_call_id": f"c{n}", "name": "bash", "content": f"out {n}"}
    recorder.step(1, "tool", tool, observation=tool["content"])


def _checkpoint(recorder: Recorder, windows: list[dict[str, Any]], diff: str) -> None:
    with recorder.transaction() as session:
        store.save_checkpoint(
            session,
            recorder.rollout_id,
            1,
            graph_id=None,  # type: ignore[arg-type]  # no graph row needed for the bookkeeping
            windows=windows,
            established=["f0"],
            steps=len(windows),
            response_tokens=0,
            stage_diff=diff,
        )


def test_steps_stored_after_the_last_checkpoint_are_dropped(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'store.db'}"
    chain_id = seed_chain(url, tmp_path, prs=(1,)).chain_id
    engine = make_engine(url)
    rollout_id = new_rollout(engine, chain_id, source="p2t", conflict_policy="3way")
    recorder = Recorder(engine, rollout_id)
    recorder.stage_started(1)
    recorder.step(1, "system", {"role": "system", "content": "system"})
    recorder.step(1, "query", {"role": "user", "content": "task"})
    log = asdict(WindowLog(0, ["f0"], [], "seed0", 1, ["f0"]))
    _window(recorder, 1)
    _checkpoint(recorder, [log], "diff after window 1")
    _window(recorder, 2)  # stored, then killed before its checkpoint

    row = store.load_checkpoint_row(engine, rollout_id, 1)
    assert row is not None
    kept = store.trim_steps(
        engine,
        rollout_id,
        1,
        opening=2,
        assistant_steps=sum(w["committed"] for w in row.windows),
    )
    assert [s.message.get("content") for s in kept] == ["system", "task", "", "out 1"]
    resume = Checkpoint.stored(row.windows, row.established, kept[2:])
    assert resume.steps == 1 and resume.step_tokens == (11,) and resume.established == {"f0"}
    assert not resume.submitted and not resume.stopped
    # the resumed run writes window 2 again at the index the dropped one had
    assert (
        Recorder(engine, rollout_id, next_idx=kept[-1].idx + 1).step(
            1, "assistant", {"role": "assistant", "content": "again"}
        )
        == kept[-1].idx + 1
    )
    engine.dispose()
