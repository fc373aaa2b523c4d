"""Root's witness of a libtest pass (prchain/environments/eras/rust/witness.py), on real traces.

The traces in tests/data/rust_witness/ are strace's record of tests/data/rust_witness/forgeries.rs
(rustc 1.78, bullseye's strace 5.10), each test run as the clean room runs it, through the clean
room's own filter (regenerate.sh). Every forgery printed a console that the line check alone
passed (`test <name> ... ok`, the one-passed summary last, status 0); the witness passes only the
honest passes (a plain one, one with a child process, a `#[should_panic]` one)."""

from __future__ import annotations

from pathlib import Path

import pytest

from prchain.environments.clean_room import EACH_SUMMARY
from prchain.environments.eras.reports import judged_only
from prchain.environments.eras.rust.report import Cargo
from prchain.environments.eras.rust.witness import WITNESSED, judge

DATA = Path(__file__).parents[2] / "data" / "rust_witness"


def _judge(name: str, lines: list[str] | None = None) -> str:
    text = lines if lines is not None else (DATA / f"{name}.trace").read_text().splitlines()
    return judge(text, "/tmp/f", name, EACH_SUMMARY)


@pytest.mark.parametrize("name", ["plain", "with_child", "panics"])
def test_an_honest_pass_is_witnessed_a_child_process_included(name: str) -> None:
    """`panics` is a `#[should_panic]` test: libtest's line is `test panics - should panic ...
    ok` (coreutils' test_sleep::…_then_panic tests failed every clean room before)."""
    assert _judge(name) == WITNESSED


@pytest.mark.parametrize(
    ("name", "why"),
    [
        ("by_hook", "did not end the process with status 0"),  # exit(0) in a panic hook
        ("by_exec", "ran another program"),  # the test thread execs a shell that prints
        ("by_signal", "a handler of SIGUSR1 ran on libtest's main thread"),
        ("by_atexit", "did not end on one summary"),  # stdout swapped, atexit prints and _exit(0)
        ("fails", "did not end the process with status 0"),
    ],
)
def test_each_forgery_breaks_the_rule_written_for_it(name: str, why: str) -> None:
    assert why in _judge(name)


def test_a_trace_that_is_cut_or_of_another_program_witnesses_nothing() -> None:
    lines = (DATA / "plain.trace").read_text().splitlines()
    ended = [i for i, line in enumerate(lines) if "exit_group(0)" in line]
    assert ended and "status 0" in _judge("plain", lines[: ended[0]])
    assert "starting" in judge(lines, "/tmp/other", "plain", EACH_SUMMARY)
    assert "did not report the test's pass" in judge(lines, "/tmp/f", "by_hook", EACH_SUMMARY)
    single = [line for line in lines if "CLONE_THREAD" not in line]
    assert _judge("plain", single) == "libtest ran the test on its main thread"


def test_doc_tests_are_not_judged_in_the_rust_room_only() -> None:
    outcomes = {"shapes(doc)::src/lib.rs - area": "passed", "shapes/areas::areas": "passed"}
    assert judged_only(Cargo(), outcomes) == {"shapes/areas::areas": "passed"}
    assert judged_only(object(), outcomes) == outcomes
