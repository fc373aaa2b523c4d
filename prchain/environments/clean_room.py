"""A clean room: where hidden tests run, out of the agent's reach.

A fresh container of the stage's image in which no agent process ever ran. Root builds its tree
(the stage base C_t, with the files the hidden tests need taken from B_t) and hands it to the
tester, a user that is not the agent. The agent's change arrives as bytes and is applied with a
plain `git apply` outside any repository, so no git config, filter or hook of the agent's exists
there to run. The container is removed afterwards: nothing the tests read or write goes back.

The run itself is sealed (issue 52): every command runs under root's watch, dropped to the tester
with `setpriv`; `python -m pytest` goes through a root-owned launcher and pytest loads only the
plugins the image installed and those the stage base declares (prchain/environments/eras/python/seal.py); a test report is written into a
pipe that root reads into a file the tester cannot open, so nothing the tested code does after
pytest wrote it (an `atexit` hook) changes what is read. Root keeps at most
`environment.max_report_bytes` of a report and the host reads no more (issue 77). A runner that
reports only on the console the tested code shares (libtest) is not read at all: root runs each
hidden test on its own under its tracer and reads its exit status, which counts only when the
kernel's account shows libtest's main thread reporting the pass (RUN_EACH).
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable

from prchain.core.errors import EnvironmentFailure, ReportTooLarge
from prchain.environments import carry, sandbox_spec
from prchain.environments.config import EnvironmentConfig
from prchain.environments.docker_client import DockerClient, RawExec
from prchain.environments.eras.node.report import REPORTERS, reporter_files
from prchain.environments.eras.python import seal
from prchain.environments.eras.reports import OneTest, each_arguments
from prchain.environments.eras.rust import qualify, witness
from prchain.environments.protocol import ExecResult
from prchain.environments.run import GRACE, INTERNAL_LIMIT, run_command

TESTER_ENV = {
    "HOME": carry.TESTER_HOME,
    "USER": carry.TESTER,
    "LOGNAME": carry.TESTER,
    "PATH": sandbox_spec.AGENT_ENV["PATH"],
    "LANG": "C.UTF-8",
    "TERM": "dumb",
    "PYTHONDONTWRITEBYTECODE": "1",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    # Compiled caches are read from (and never written to) an empty root-owned place: a forged
    # `__pycache__/test_x.…pyc` beside a hidden test cannot be what pytest loads.
    "PYTHONPYCACHEPREFIX": f"{carry.STATE_ROOT}/room/pycache",
}
ROOM = f"{carry.STATE_ROOT}/room"  # root's, 0711: the launcher, the report pipe and its copy
LAUNCHER = f"{ROOM}/pytest_main.py"
REPORT = f"{ROOM}/report"  # a pipe: the tester may write it, never remove or read it
# Root, once per room, before the agent's change is there: the launcher ($1); the node room's
# reporters as this prchain has them (the pairs of name and text after $1), which the room's runs
# use instead of the image's (`room_script`: an image built by an older prchain keeps the
# reporters of its day, and its root filesystem may be read-only); the names the stage base's
# tree uses (the launcher takes no module of those names from the image first: the project's
# `test/` package is not the standard library's; SEAL_TESTS adds the hidden tests'); then the
# image's plugins.
OWN_NAMES = f"{ROOM}/own-names"
ROOM_REPORTERS = f"{ROOM}/node"
PREPARE = f"""
set -euo pipefail
umask 022
mkdir -p {ROOM} {ROOM}/pycache; chmod 0711 {ROOM}; chmod 0755 {ROOM}/pycache
printf %s "$1" > {LAUNCHER}; chmod 0644 {LAUNCHER}; shift
mkdir -p {ROOM_REPORTERS}
while [ $# -ge 2 ]; do printf %s "$2" > "{ROOM_REPORTERS}/$1"; chmod 0644 "{ROOM_REPORTERS}/$1"; shift 2; done
( cd {carry.WORKDIR} 2>/dev/null && find . -path ./.git -prune -o -print 2>/dev/null |
  sed -e 's|.*/||' -e 's/[.].*//' | sort -u > {OWN_NAMES} ) || true
{seal.PROBE}
"""
# Root, after the gold test patch: the hidden tests and every test configuration become root's
# (0644, 0755 for one git made executable: a test script ctest runs, as json-c's `*.test`), and
# each directory above them root's with the sticky bit (1777): the tester may still create files
# there, but no code of the agent's can rewrite, replace or rename a hidden test. $1 is a rewrite
# of the hidden tests' text ("" for none), then the paths: in a Rust room
# prchain/environments/eras/rust/qualify.py, which points the tests' standard macros at names of
# the standard library no crate of the agent's can shadow (run by the image's python3 on the
# `*.rs` paths once they are root's; no python3 there, and the room fails rather than run them).
SEAL_TESTS = f"""
set -u
rewrite=$1; shift
cd {carry.WORKDIR} || exit 95
[ ! -f {OWN_NAMES} ] || printf '%s\\n' "$@" | tr / '\\n' | sed 's/[.].*//' >> {OWN_NAMES}
{{ printf '%s\\n' "$@"; find . -path ./.git -prune -o -type f \\( -name conftest.py -o \\
  -name pytest.ini -o -name tox.ini -o -name setup.cfg -o -name pyproject.toml \\) -print; }} |
while IFS= read -r f; do
  f=${{f#./}}
  [ -f "$f" ] && [ ! -L "$f" ] || continue
  case "$(readlink -f -- "$f")" in {carry.WORKDIR}/*) ;; *) continue ;; esac
  mode=0644; [ -x "$f" ] && mode=0755
  chown -h root:root -- "$f" && chmod "$mode" -- "$f"
  d=$(dirname -- "$f")
  while :; do
    [ -L "$d" ] || {{ chown -h root:root -- "$d"; chmod 1777 -- "$d"; }}
    [ "$d" = . ] && break
    d=$(dirname -- "$d")
  done
done
[ -n "$rewrite" ] || exit 0
rs=()
for f in "$@"; do
  f=${{f#./}}
  case "$f" in *.rs) ;; *) continue ;; esac
  [ -f "$f" ] && [ ! -L "$f" ] || continue
  case "$(readlink -f -- "$f")" in {carry.WORKDIR}/*) rs+=("$f") ;; esac
done
[ "${{#rs[@]}}" -gt 0 ] || exit 0
py=$(command -v python3) || {{ echo "no python3 in the image to rewrite the hidden tests"; exit 94; }}
"$py" -I -S -c "$rewrite" "${{rs[@]}}" || exit 94
exit 0
"""
_KILL_TESTER = carry.END_AGENT.replace("$(id -u agent)", f"$(id -u {carry.TESTER})")
# Root: $1 the timeout, $2 the command, run as the tester in its own process group. The report
# pipe is read by root until pytest closes it; then every tester process ends (one that held the
# pipe open included) and the reader is released if nothing ever opened the pipe. Root keeps
# CAP + 1 bytes of what comes through: one byte past the cap is enough to call the report too
# large, and then the run is over (every tester process ends at once), so a flood written into
# the pipe (issue 77: 1 GB by the agent's code) neither fills root's disk nor holds the room until
# the run's timeout. What still comes through is drained unread.
SEALED_RUN = f"""
R={ROOM}
rm -f "$R/report" "$R/report.xml"
mkfifo -m 0620 "$R/report" && chgrp {carry.TESTER} "$R/report" || exit 97
( umask 077; {{ head -c "$((CAP + 1))" > "$R/report.xml"
  [ "$(stat -c %s "$R/report.xml")" -gt "$CAP" ] && ( {_KILL_TESTER} ) >/dev/null 2>&1
  exec cat > /dev/null; }} < "$R/report" ) 2>/dev/null & reader=$!
timeout -s KILL "$1" setpriv --reuid={carry.TESTER} --regid={carry.TESTER} --init-groups \
  --no-new-privs bash -c "$2" </dev/null & pid=$!
wait "$pid" 2>/dev/null; rc=$?
kill -KILL -- "-$pid" 2>/dev/null
( {_KILL_TESTER} ) >/dev/null 2>&1
kill -0 "$reader" 2>/dev/null && timeout 2 sh -c ': > "$0"' "$R/report" 2>/dev/null
wait "$reader" 2>/dev/null
exit "$rc"
"""

# Root, after a run: the report's size on a line of its own, then the report if it is within the
# cap ($1). The host reads no more than that.
READ_REPORT = f"""
f={REPORT}.xml
[ -f "$f" ] || exit 0
size=$(stat -c %s "$f") || exit 96
echo "$size"
[ "$size" -le "$1" ] && exec cat -- "$f"
exit 0
"""

# Root: $1 the seconds left for all of them, $2 the witness's source (prchain/environments/eras/
# rust/witness.py), then (directory, executable, test name, package `name@version`) fields. Each
# test runs on its own as the tester (`exe --exact name --test-threads=2`, from its package's
# directory with its CARGO_MANIFEST_DIR and CARGO_PKG_* variables, as cargo runs it) after
# `exe --list` showed it exists (an absent name would run nothing and exit 0), under root's
# `strace -f`: the tester can neither stop the tracer nor write its record. Status 0 counts
# only when the witness reads, in the kernel's account of the run, libtest's main thread
# reporting this test's pass and ending the process itself (the rules are witness.py's table):
# an `exit(0)` inside the test or from a panic hook comes from the test's own thread, a
# re-execution runs another program, a signal handler set by the tested code shows as such.
# An image without strace witnesses no pass. What the tested code writes goes to a file of
# root's and comes back only after EACH_LOG, so no line of its own can pose as a status; that
# tail ends with what the tests that did not pass printed, as RUN_CASES's does. Every
# tester process ends after each test. The tracer runs as the test's grandchild (`strace -D`), so
# the test's end is seen when it comes; the trace is read once its writer has closed it, at once
# when every traced process ended. A process the test started and never waited for (coreutils'
# `more` tests leave `more` on a pseudo-terminal) would hold the tracer, and with it every later
# test, until the time ran out: unless the trace closed within 2 s, it ends then. Where root may
# trace the tester's processes (CAP_SYS_PTRACE: our rooms, a Harbor task's compose file),
# strace starts the test executable itself as the tester (`-u`) and lets go of every process the
# moment it runs another program (`-b execve`): the witness reads the test process alone, and a
# program a test runs runs untraced, as fast as outside the room (coreutils' tsort loop test
# writes 500,000 lines; traced, it passed its own 30 s limit). The test process running another
# program is then let go too, before it could report: no pass is witnessed, as before.
# A test that failed runs once more (at most EACH_AGAIN in a run), the tracer following every
# process as where root lacks the capability, and that run counts: letting go of the programs a
# test runs slows the test process and not them, so a test racing one of them can lose a race it
# wins when both or neither are traced (coreutils' `tail -F` truncation tests, 5 runs in 12 at
# load 2). The first run's output stays in the tail. Code that fails a test both ways fails it.
EACH_LOG = "prchain-each-log"
EACH_SUMMARY = r"^test result: ok\. 1 passed; 0 failed; 0 ignored;"
TRACE_CLOSE = 60  # seconds the trace may take to close once the tested processes ended
EACH_AGAIN = 10  # failed tests a run gives a second try
# The syscalls the witness reads; the filter keeps the traced process's own lines, thread and
# handler set-up from every process, and stops at 16 MB (a cut trace witnesses nothing).
TRACED = "execve,execveat,exit_group,write,writev,rt_sigaction,clone,clone3,fork,vfork"
TRACE_FILTER = (
    "NR == 1 { p = $1 } $1 == p || / (clone3?|rt_sigaction)[(]/ || "
    "/<[.][.][.] clone3? resumed>/ || /[+][+][+] superseded/"
)
RUN_EACH = f"""
R={ROOM}
end=$((SECONDS + $1)); shift
( umask 077; printf %s "$1" > "$R/witness.py"; printf %s '{TRACE_FILTER}' > "$R/trace.awk" )
shift
# as cargo runs a test: from its package's directory, with the package's variables ($1, its
# `name@version`, "" when the listing did not say)
AS_CARGO='cd -- "$0" || exit 1
export CARGO_MANIFEST_DIR="$0"
if [ -n "$1" ]; then
  v=${{1##*@}}; core=${{v%%[-+]*}}
  export CARGO_PKG_NAME="${{1%@*}}" CARGO_PKG_VERSION="$v" CARGO_PKG_VERSION_MAJOR="${{core%%.*}}"
  export CARGO_PKG_VERSION_PATCH="${{core##*.}}"; core=${{core#*.}}
  export CARGO_PKG_VERSION_MINOR="${{core%%.*}}"
  case $v in *-*) pre=${{v#*-}}; export CARGO_PKG_VERSION_PRE="${{pre%%+*}}" ;;
    *) export CARGO_PKG_VERSION_PRE= ;; esac
fi
shift; exec "$@"'
log="$R/each.log" bad="$R/each.bad" one="$R/each.one" trace="$R/each.trace" closed="$R/each.closed"
( umask 077; : > "$log"; : > "$bad"; : > "$one"; : > "$trace"; rm -f "$closed"; mkfifo "$closed" )
exec {{traced}}<> "$closed"  # read and write: opening it never waits for the other end
tracer=$(command -v strace) direct=""
capabilities=$(awk '/^CapEff:/ {{print $2}}' /proc/self/status)
[ -n "$tracer" ] && (( (0x${{capabilities:-0}} >> 19) & 1 )) && direct=1  # CAP_SYS_PTRACE
i=0 again={EACH_AGAIN}
while [ $# -ge 4 ]; do
  dir=$1 exe=$2 name=$3 package=$4; shift 4
  left=$((end - SECONDS))
  if [ "$left" -le 0 ]; then echo "prchain-each $i 124"; i=$((i + 1)); continue; fi
  as_tester=(setpriv --reuid={carry.TESTER} --regid={carry.TESTER} --init-groups --no-new-privs \
    bash -c "$AS_CARGO" "$dir" "$package")
  if timeout -s KILL "$left" "${{as_tester[@]}}" "$exe" --list </dev/null 2>/dev/null |
    grep -qxF -- "$name: test"; then
    for attempt in 1 2; do
      left=$((end - SECONDS)); [ "$left" -gt 0 ] || left=1
      if [ -n "$tracer" ]; then
        if [ -n "$direct" ] && [ "$attempt" = 1 ]; then
          tracing=(bash -c "$AS_CARGO" "$dir" "$package" "$tracer" -u {carry.TESTER} -b execve)
          tested=()
        else
          tracing=("$tracer") tested=("${{as_tester[@]}}")
        fi
        timeout -s KILL "$left" "${{tracing[@]}}" -D -f -q -s 256 -xx -e trace={TRACED} \
          -o "|awk -f $R/trace.awk | head -c 16000000 > $trace; echo > $closed" -- \
          "${{tested[@]}}" "$exe" --exact "$name" --test-threads=2 </dev/null > "$one" 2>&1
        rc=$?
        read -r -t 2 -u "$traced" _ ||
          {{ ( {_KILL_TESTER} ) >/dev/null 2>&1; read -r -t {TRACE_CLOSE} -u "$traced" _; }} || true
        seen=$(python3 -I -S "$R/witness.py" "$trace" "$exe" "$name" '{EACH_SUMMARY}' 2>&1)
      else
        rc=0 seen="no strace in the image: no pass can be witnessed"
      fi
      if [ "$rc" = 0 ] && [ "$seen" != witnessed ]; then
        rc=witness
        printf '\\nprchain: %s exited 0, not witnessed: %s\\n' "$name" "$seen" >> "$one"
      fi
      {{ [ "$rc" = 0 ] || [ -z "$tracer" ] || [ "$attempt" = 2 ] || [ "$again" -le 0 ] ||
        [ $((end - SECONDS)) -le 0 ]; }} && break
      again=$((again - 1))
      {{ cat -- "$one"; printf '\\nprchain: %s failed (%s): it runs once more\\n' "$name" "$rc"; }} >> "$bad"
      ( {_KILL_TESTER} ) >/dev/null 2>&1
    done
    if [ "$rc" = 0 ]; then cat -- "$one" >> "$log"; else cat -- "$one" >> "$bad"; fi
    echo "prchain-each $i $rc"
  else  # (a test of a unit two executables share is listed by one of them only)
    echo "prchain-each $i missing"
  fi
  ( {_KILL_TESTER} ) >/dev/null 2>&1
  i=$((i + 1))
done
echo {EACH_LOG}
tail -c 4000 "$log"; tail -c 4000 "$bad"
"""

# Root, as RUN_EACH, for a harness other than libtest (reports.CaseCheck): $1 the seconds left,
# then nine fields a test: its directory, the command that shows it exists, the command that runs
# it alone, the harness's line of its pass, its summary of one passed test, the marks of a
# failure, then root's canary: the command that runs tests no build holds (names drawn per run,
# which a GoogleTest case's listing and run name beside it: c/report.py gtest_check), the line
# that says nothing ran and the marks of a claimed pass. Status 0 counts only with
# the first two lines and without the marks (GoogleTest's `[       OK ] Suite.Case (`, `[  PASSED
# ] 1 test.`, no `[  FAILED  ]`; ctest's `100% tests passed, 0 tests failed out of 1`), and then
# only if the canary ran with status 0, its line and none of its marks (GoogleTest's `[  PASSED  ]
# 0 tests.`, no `[       OK ]`): no file the tested program writes is read, a program that ends
# itself with status 0 inside the test never reaches those lines, and one that prints them for
# whatever its arguments name claims the canary too. A canary command runs once: what it showed
# holds for every later test that names the same one (ctest's, one per run: ctest is root's
# program, and no file that configures it crosses). The tail printed after EACH_LOG ends with
# what the tests that did not pass printed (a passing test's output before it), so a failure's
# cause is not cut by the passes that ran after it.
RUN_CASES = f"""
R={ROOM}
end=$((SECONDS + $1)); shift
log="$R/each.log" bad="$R/each.bad" one="$R/each.one" seen="$R/each.canary"
( umask 077; : > "$log"; : > "$bad"; : > "$one"; : > "$seen" )
i=0 held="" broke=""
while [ $# -ge 9 ]; do
  dir=$1 listed=$2 run=$3 ok=$4 summary=$5 failed=$6 canary=$7 nothing=$8 claimed=$9; shift 9
  left=$((end - SECONDS))
  if [ "$left" -le 0 ]; then echo "prchain-each $i 124"; i=$((i + 1)); continue; fi
  as_tester=(timeout -s KILL "$left" setpriv --reuid={carry.TESTER} --regid={carry.TESTER} \
    --init-groups --no-new-privs bash -c 'cd -- "$0" && eval "$1"' "$dir")
  if "${{as_tester[@]}}" "$listed" </dev/null >/dev/null 2>&1; then
    "${{as_tester[@]}}" "$run" </dev/null > "$one" 2>&1
    rc=$?
    if [ "$rc" = 0 ] && ! {{ grep -qF -- "$ok" "$one" && grep -qxF -- "$summary" "$one" &&
      ! grep -qF -- "$failed" "$one"; }}; then
      rc=witness
      printf '\\nprchain: test %s exited 0 without its harness summary of its pass\\n' "$i" >> "$one"
    fi
    if [ "$rc" = 0 ] && [ -n "$canary" ] && [ "$canary" != "$held" ]; then
      if [ "$canary" != "$broke" ]; then
        ( {_KILL_TESTER} ) >/dev/null 2>&1
        "${{as_tester[@]}}" "$canary" </dev/null > "$seen" 2>&1
        if [ $? != 0 ] || ! grep -qxF -- "$nothing" "$seen" || grep -qF -- "$claimed" "$seen"; then
          broke=$canary
        else
          held=$canary
        fi
      fi
      if [ "$canary" = "$broke" ]; then
        rc=canary
        printf '\\nprchain: test %s: the canary (a test no build holds) did not show %s\\n' \\
          "$i" "that nothing ran: what the harness prints is forged" >> "$one"
      fi
    fi
    if [ "$rc" = 0 ]; then cat -- "$one" >> "$log"; else cat -- "$one" >> "$bad"; fi
    echo "prchain-each $i $rc"
  else
    printf '\\nprchain: test %s is not listed alone (absent, or a canary listed)\\n' "$i" >> "$bad"
    echo "prchain-each $i missing"
  fi
  ( {_KILL_TESTER} ) >/dev/null 2>&1
  i=$((i + 1))
done
echo {EACH_LOG}
tail -c 4000 "$log"; tail -c 4000 "$bad"
"""


def sealing_rewrite(ecosystem: str | None) -> str:
    """SEAL_TESTS' rewrite of the hidden tests in `ecosystem`'s room: Rust's standard macros
    through names no crate of the agent's shadows (qualify.py; issue 77, round 5), else none."""
    return qualify.source() if qualify.applies(ecosystem) else ""


def room_reporters() -> list[str]:
    """PREPARE's arguments after the launcher: each reporter's name, then its text."""
    return [part for name, text in reporter_files().items() for part in (name, text)]


def room_script(script: str) -> str:
    """A test script as the room runs it: with the reporters PREPARE wrote, not the image's."""
    return script.replace(f"{REPORTERS}/", f"{ROOM_REPORTERS}/")


class DockerCleanRoom:
    """The clean room's Workspace: commands, reads and writes as the tester in /work/repo."""

    def __init__(
        self,
        client: DockerClient,
        container: str,
        config: EnvironmentConfig,
        setup: str = "",
        plugins: tuple[str, ...] = (),
    ) -> None:
        self.client, self.container, self.config = client, container, config
        self.setup = setup  # the stage's setup command, run as the tester after the change
        self.probe = ""  # what `prepare` read from the image: its pytest and its plugins
        self.plugins = plugins  # the project's own pytest plugins as B_t declares them

    def prepare(self) -> None:
        """Root's part, once, before the agent's change arrives: the launcher and the image's
        own test-runner plugins."""
        raw = self.client.exec(
            self.container,
            ["bash", "-c", PREPARE, "prchain", seal.LAUNCHER_SOURCE, *room_reporters()],
            user="root",
            workdir="/",
            env=carry.ROOT_ENV,
            limit=INTERNAL_LIMIT,
            deadline=300,
            idempotent=True,
        )
        if raw.exit_code != 0:
            raise EnvironmentFailure(f"preparing the clean room failed: {raw.output[-500:]!r}")
        self.probe = raw.output.decode("utf-8", "replace")

    def apply(self, patch: bytes) -> str | None:
        """Apply the agent's change (bytes, `git diff --binary`), then the stage's setup command;
        None when both succeeded."""
        raw = self._raw(carry.ROOM_APPLY, stdin=patch)
        if raw.exit_code != 0:
            return raw.output.decode("utf-8", "replace").strip()[-1500:] or "git apply failed"
        if self.setup:
            done = self.execute(self.setup, timeout=self.config.test_timeout)
            if done.exit_code != 0:
                return f"the setup command failed (exit {done.exit_code}): {done.output[-1000:]}"
        return None

    def execute(self, command: str, timeout: float | None = None) -> ExecResult:
        """`command` as the tester, sealed: the launcher for `python -m pytest`, the image's
        plugins only."""
        return run_command(
            self.client,
            self.container,
            seal.launched(command, LAUNCHER),
            user="root",
            workdir=carry.WORKDIR,
            env={**TESTER_ENV, **seal.runner_env(self.probe, command, self.plugins)},
            timeout=timeout or self.config.command_timeout,
            max_output=self.config.max_output_bytes,
            wrapper=f"CAP={self.config.max_report_bytes}\n{SEALED_RUN}",
        )

    def seal_tests(self, paths: list[str], ecosystem: str | None = None) -> None:
        """Root's, after the gold test patch: `paths` (the hidden tests) and every test
        configuration can no longer be changed by the tester, so not by the agent's code either;
        in `ecosystem`'s room the tests' text is rewritten as it needs (`sealing_rewrite`)."""
        raw = self.client.exec(
            self.container,
            ["bash", "-c", SEAL_TESTS, "prchain", sealing_rewrite(ecosystem), *paths],
            user="root",
            workdir="/",
            env=carry.ROOT_ENV,
            limit=INTERNAL_LIMIT,
            deadline=300,
        )
        if raw.exit_code != 0:
            raise EnvironmentFailure(f"sealing the hidden tests failed: {raw.output[-500:]!r}")

    def run_reported(
        self, script_for: Callable[[str], str], timeout: float
    ) -> tuple[ExecResult, str | None]:
        """Run the script `script_for(path)` whose runner writes its report to `path`: the room's
        pipe. The report is what root read from it, None when nothing was written."""
        result = self.execute(room_script(script_for(REPORT)), timeout=timeout)
        return result, self.read_report()

    def run_each(self, runs: list[OneTest], timeout: float) -> tuple[dict[str, str], str]:
        """Each test of `runs` on its own, judged by its exit status and root's witness of it
        (RUN_EACH): test id → passed or failed (absent when its executable does not list it); and the tail of what
        the tests printed."""
        args, kind = each_arguments(runs)
        script, witnessed = RUN_EACH, [witness.source()]  # libtest's: root's strace witnesses it
        if kind == "cases":  # another harness than libtest's
            script, witnessed = RUN_CASES, []
        raw = self.client.exec(
            self.container,
            ["bash", "-c", script, "prchain", str(int(timeout)), *witnessed, *args],
            user="root",
            workdir="/",
            env=TESTER_ENV,  # as in SEALED_RUN: the tester's environment, root's uid
            limit=1 << 20,
            deadline=timeout + GRACE + 30,
        )
        statuses, _, log = raw.output.decode("utf-8", "replace").partition(f"\n{EACH_LOG}\n")
        outcomes: dict[str, str] = {}
        for line in statuses.splitlines():
            _, index, status = (line.split() + ["", "", ""])[:3]
            if line.startswith("prchain-each ") and index.isdigit() and status != "missing":
                test = runs[int(index)].test_id  # a test two executables hold: the worse
                if outcomes.get(test) != "failed":
                    outcomes[test] = "passed" if status == "0" else "failed"
        return outcomes, log

    def read_report(self) -> str | None:
        """What root read from the report pipe, None when nothing was written; ReportTooLarge
        past `max_report_bytes`, whose bytes never leave the room."""
        cap = self.config.max_report_bytes
        raw = self.client.exec(
            self.container,
            ["bash", "-c", READ_REPORT, "prchain", str(cap)],
            user="root",
            workdir="/",
            env=carry.ROOT_ENV,
            limit=cap + 64,
            idempotent=True,
        )
        size, _, report = raw.output.partition(b"\n")
        if raw.exit_code != 0 or not size.strip():
            return None
        if int(size) > cap:
            raise ReportTooLarge(
                f"the test report is over {cap:,} bytes (environment.max_report_bytes): not read"
            )
        return report.decode("utf-8", "replace") or None

    def read_file(self, path: str) -> str:
        raw = self._raw('test -f "$1" || exit 3; cat -- "$1"', self._abs(path), idempotent=True)
        if raw.exit_code == 3:
            raise FileNotFoundError(f"no such file in the clean room: {path}")
        if raw.exit_code != 0:
            raise PermissionError(f"cannot read {path}: {raw.output[-300:]!r}")
        return raw.output.decode("utf-8", "replace")

    def write_file(self, path: str, content: str) -> None:
        script = 'mkdir -p -- "$(dirname -- "$1")" && cat > "$1"'
        raw = self._raw(script, self._abs(path), stdin=content.encode(), idempotent=True)
        if raw.exit_code != 0:
            raise PermissionError(f"cannot write {path} in the clean room")

    def _abs(self, path: str) -> str:
        return posixpath.normpath(posixpath.join(carry.WORKDIR, path))

    def _raw(
        self, script: str, *args: str, stdin: bytes | None = None, idempotent: bool = False
    ) -> RawExec:
        argv = ["bash", "-c", script, "prchain", *args]
        return self.client.exec(
            self.container,
            argv,
            user=carry.TESTER,
            workdir=carry.WORKDIR,
            env=TESTER_ENV,
            limit=INTERNAL_LIMIT,
            deadline=600,
            stdin=stdin,
            idempotent=idempotent,
        )
