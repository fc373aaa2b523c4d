"""Root's witness of one libtest pass, read from the kernel's account of the test process.

In a clean room root runs each hidden test on its own, `<exe> --exact <name> --test-threads=2`,
under `strace -f` (root's tracer: the tester cannot stop it or write its record). libtest runs the
test on a thread of its own and reports from its main thread: the main thread writes `test <name>
... ok` and the summary once the test thread has sent its result, and ends the process. Code
under test runs on the test thread, so whatever it prints, and an `exit(0)` from a panic hook or
from the test itself, comes from the wrong thread. The pass is witnessed only when, after the test
executable started:

| rule | a forgery it stops |
| --- | --- |
| the process never runs another program (no later execve of its own, no thread's execve that supersedes it) | re-executing into a shell or a copy of the binary that prints libtest's lines |
| a second thread of the process exists (the test thread) | a libtest that ran the test on its main thread: nothing to tell apart |
| no signal whose handler the process installed reaches the main thread | a handler, set by the code under test and raised at the main thread, that prints and exits there |
| the main thread itself calls `exit_group(0)` | `std::process::exit(0)` on the test thread (a panic hook's included) |
| what the main thread wrote (every write, whatever the descriptor) holds `test <name> ... ok` (`test <name> - should panic ... ok` for a `#[should_panic]` test) and exactly one `test result:` line, the one-passed summary, last | lines printed into the main thread's output by an `atexit` handler after libtest wrote `FAILED` |

What it does not stop: code that rewrites libtest's own memory (its result channel, the main
thread's stack) from the test thread. Runs with the image's python3 (3.9 and newer, standard
library only): `python3 -I -S witness.py TRACE EXE NAME SUMMARY` prints `witnessed` or the rule that
failed.
"""

from __future__ import annotations

import re
import sys

_LINE = re.compile(r"^(\d+)\s+(.*)$")
_STRING = re.compile(r'"((?:\\x[0-9a-f]{2})*)"(\.\.\.)?')
_CALL = re.compile(r"^(?:<\.\.\. )?(\w+)(?:\(| resumed>)")
_RESULT = re.compile(r"\)\s+=\s+(-?\d+)")
_SIGNAL = re.compile(r"^--- (SIG\w+) ")
_HANDLER = re.compile(r"^rt_sigaction\((SIG\w+), \{sa_handler=(\w+)")
WITNESSED = "witnessed"


def _text(hexed: str) -> str:
    return bytes.fromhex(hexed.replace("\\x", "")).decode("utf-8", "replace")


def _strings(rest: str) -> list[tuple[str, bool]]:
    """The quoted strings of a syscall line (strace -xx), each with whether strace cut it."""
    return [(_text(m.group(1)), bool(m.group(2))) for m in _STRING.finditer(rest)]


class _Trace:
    """The trace's facts about the first traced process (P) after `exe` started in it."""

    def __init__(self, lines: list[str], exe: str) -> None:
        self.exe, self.pid, self.started = exe, "", False
        self.group: set[str] = set()
        self.pending: set[str] = set()  # members inside a clone of a thread
        self.handled: set[str] = set()  # signals with a handler the process set
        self.written: list[str] = []  # what P's main thread wrote
        self.problems: list[str] = []
        self.exited = False
        for line in lines:
            found = _LINE.match(line)
            if found:
                self._read(found.group(1), found.group(2))

    def _read(self, tid: str, rest: str) -> None:
        if not self.pid:
            self.pid = tid
            self.group = {tid}
        call = _CALL.match(rest)
        name = call.group(1) if call else ""
        if not self.started:
            self._start(tid, name, rest)
            return
        if "superseded by execve" in rest and tid in self.group:
            self.problems.append("a thread of the test process ran another program")
        if tid not in self.group:
            return
        self._member(tid, name, rest)

    def _start(self, tid: str, name: str, rest: str) -> None:
        strings = _strings(rest)
        if tid == self.pid and name == "execve" and _ok(rest) and strings:
            self.started = strings[0][0] == self.exe

    def _member(self, tid: str, name: str, rest: str) -> None:
        if name in ("clone", "clone3") and ("CLONE_THREAD" in rest or tid in self.pending):
            result = _RESULT.search(rest)
            if result and int(result.group(1)) > 0:
                self.group.add(result.group(1))
                self.pending.discard(tid)
            elif "<unfinished" in rest:
                self.pending.add(tid)
        elif name in ("execve", "execveat") and _ok(rest):
            self.problems.append("the test process ran another program")
        elif handler := _HANDLER.match(rest):
            if handler.group(2) not in ("SIG_DFL", "SIG_IGN"):
                self.handled.add(handler.group(1))
        elif tid == self.pid:
            self._main(name, rest)

    def _main(self, name: str, rest: str) -> None:
        signal = _SIGNAL.match(rest)
        if signal and signal.group(1) in self.handled:
            self.problems.append(f"a handler of {signal.group(1)} ran on libtest's main thread")
        elif name in ("write", "writev"):
            for text, cut in _strings(rest):
                self.written.append(text)
                if cut:
                    self.problems.append("a write of libtest's main thread was cut")
        elif name == "exit_group" and rest.startswith("exit_group(0)"):
            self.exited = True


def _ok(rest: str) -> bool:
    result = _RESULT.search(rest)
    return result is not None and result.group(1) == "0"


def judge(lines: list[str], exe: str, name: str, summary: str) -> str:
    """WITNESSED when the trace shows libtest's main thread reporting `name`'s pass; else the
    first rule the trace breaks."""
    trace = _Trace(lines, exe)
    if not trace.started:
        return "the trace does not show the test executable starting"
    if trace.problems:
        return trace.problems[0]
    if len(trace.group) < 2:
        return "libtest ran the test on its main thread"
    if not trace.exited:
        return "libtest's main thread did not end the process with status 0"
    text = [line for line in "".join(trace.written).splitlines() if line.strip()]
    results = [line for line in text if line.startswith("test result:")]
    # a `#[should_panic]` test's line says so: `test <name> - should panic ... ok`
    if not {f"test {name} ... ok", f"test {name} - should panic ... ok"} & set(text):
        return "libtest's main thread did not report the test's pass"
    if len(results) != 1 or not re.match(summary, results[0]) or text[-1] != results[0]:
        return "libtest's main thread did not end on one summary of one passed test"
    return WITNESSED


def main(argv: list[str]) -> int:
    trace, exe, name, summary = argv[1:5]
    with open(trace, encoding="utf-8", errors="replace") as handle:
        print(judge(handle.read().splitlines(), exe, name, summary))
    return 0


def source() -> str:
    """This file's text: what root writes into the clean room and runs there."""
    with open(__file__, encoding="utf-8") as handle:
        return handle.read()


if __name__ == "__main__":
    sys.exit(main(sys.argv))
