"""The git bookkeeping inside a sandbox, as shell scripts run through `docker exec`.

Kept apart from the Docker plumbing so the carry-forward rules (DESIGN.md, "Carry-forward,
precisely") and the privilege split (docs/sandbox.md) read in one place.

Two domains, and no git command ever crosses from one into the other:

* root works only in root-owned places and never reads anything the agent can write: it fetches
  B_t from the root-only mirror (which also holds the chain's future) into PUBLIC_DIR, and computes
  the stage base B_t − g_1 … − g_(t−1) in a private worktree under ROOT_DIR (0700), where the gold
  patches wait for their revert. PUBLIC_DIR is world-readable and holds only what the agent may
  know: B_1 … B_t and the stage bases.
* the agent's own git (its repository, its hooks, its config) runs as the agent and only as the
  agent: the cumulative diff, the 3-way application of the carried patch, snapshots. Its repository
  borrows B_t's objects from PUBLIC_DIR through `objects/info/alternates`.

Refs kept in the agent's repository (all of them its own past, never the future):
  refs/prchain/base/<t>    B_t
  refs/prchain/stage-base  B_t − g_1 … − g_(t−1): the origin of the cumulative diff Δ_t
  refs/prchain/stage-start stage base + Δ_(t−1): the origin of the stage diff
"""

from __future__ import annotations

from dataclasses import dataclass, field

WORKDIR = "/work/repo"
ORIGIN_DIR = "/opt/prchain/origin.git"  # the full mirror: root-only, never touched by the agent
SEED_DIR = "/opt/prchain/seed"  # /work and the agent's home as built, for a tmpfs sandbox
STATE_ROOT = "/var/lib/prchain"
ROOT_DIR = f"{STATE_ROOT}/root"  # 0700 root: gold patches, the private worktree and index
PUBLIC_DIR = f"{STATE_ROOT}/public.git"  # root-owned, world-readable: only B_1..B_t
AGENT_STATE = ".git/prchain"  # the agent-side scratch files, outside the worktree's diff

# Bookkeeping commits get fixed identities and dates so equal states give equal shas; neither side
# reads a global or system git config, so nothing in the agent's home reaches root's git.
BOOKKEEPING_ENV = {
    "GIT_AUTHOR_NAME": "prchain",
    "GIT_AUTHOR_EMAIL": "prchain@prchain.invalid",
    "GIT_COMMITTER_NAME": "prchain",
    "GIT_COMMITTER_EMAIL": "prchain@prchain.invalid",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_TERMINAL_PROMPT": "0",
}
ROOT_ENV = {
    **BOOKKEEPING_ENV,
    "HOME": "/root",
    "USER": "root",
    "LOGNAME": "root",
    "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "LANG": "C.UTF-8",
}

# Hooks off and config that runs commands neutralised, on both sides: for root it is a second
# lock (root never opens the agent's repository), for the agent it keeps its own hooks and
# filters out of the bookkeeping's results.
_SAFE_GIT = """
git() {
  command git -c core.hooksPath=/dev/null -c core.fsmonitor=false -c commit.gpgSign=false \\
    -c protocol.allow=never -c protocol.file.allow=always -c core.sshCommand=false \\
    -c diff.external= -c gc.auto=0 -c maintenance.auto=false "$@"
}
"""

# Root, once per container, before any agent process exists. On a tmpfs sandbox /work and the
# agent's home start empty, so they are filled from the seed first.
INIT_ROOT = f"""
set -euo pipefail
umask 022
if [ "$1" = seed ]; then
  cp -a {SEED_DIR}/work/. /work/
  cp -a {SEED_DIR}/home/. /home/agent/
fi
mkdir -p {ROOT_DIR} {ROOT_DIR}/work
chmod 0700 {ROOT_DIR}
{_SAFE_GIT}
git init -q --bare {PUBLIC_DIR}
git --git-dir={PUBLIC_DIR} config core.logAllRefUpdates false
"""

# The agent, once per container: its repository borrows objects from the public store.
INIT_AGENT = f"""
set -euo pipefail
cd {WORKDIR}
{_SAFE_GIT}
git init -q .
echo {PUBLIC_DIR}/objects > .git/objects/info/alternates
"""

# Root, first thing at every stage entry: end every process of the agent's uid (a `setsid` reader
# included). Each round stops them all first, so none can fork while the round kills them. Fails
# with the survivors' pids if 50 rounds are not enough.
_KILL_AGENT = """
agent_uid=$(id -u agent)
agent_pids() {
  for p in /proc/[0-9]*; do
    uid=""; state=""
    while read -r key value _; do
      case "$key" in Uid:) uid=$value ;; State:) state=$value ;; esac
    done 2>/dev/null < "$p/status"
    [ "$uid" = "$agent_uid" ] && [ "$state" != Z ] && echo "${p#/proc/}"
  done
}
for ((round = 0; ; round++)); do
  pids=$(agent_pids)
  [ -z "$pids" ] && break
  [ "$round" -ge 50 ] && { echo "agent processes survive:" $pids; exit 89; }
  kill -STOP $pids 2>/dev/null; kill -KILL $pids 2>/dev/null
done
"""

# Root: before hidden tests run, nothing the agent left running (a `setsid` process that waits for
# the test patch to appear and then edits the tree) may still be alive.
END_AGENT = "set -uo pipefail\n" + _KILL_AGENT

_COLLECT_REJECTS = """
collect_rejects() {
  find . -path ./.git -prune -o -type f -name '*.rej' -newer "$S/mark" -print | sort | while read -r f; do
    printf '=== %s ===\\n' "${f#./}" >> "$1"; cat -- "$f" >> "$1"; rm -f -- "$f"
  done
}
"""

# Root. Args: t, B_t, then the indices j of the gold patches to revert, newest first
# ($ROOT_DIR/gold-j.patch). Fetches B_t (only B_t) from the mirror into the public store, reverts the
# gold patches in the private worktree and publishes the result as refs/prchain/stage-base/<t>.
# Prints KEY value lines, the revert rejects after @@REVERT_REJECTS, git's errors after @@ERRORS.
STAGE_BASE = f"""
set -uo pipefail
umask 022
S={ROOT_DIR}
export GIT_DIR={PUBLIC_DIR} GIT_WORK_TREE=$S/work GIT_INDEX_FILE=$S/index
cd "$S/work"
{_SAFE_GIT}
{_COLLECT_REJECTS}
t=$1; base=$2; shift 2
{_KILL_AGENT}
: > "$S/revert-rejects"; : > "$S/err"
if [ $# -gt 0 ]; then tar -x --no-same-owner -C "$S" -f - || exit 90; fi
if ! git cat-file -e "$base^{{commit}}" 2>/dev/null; then
  git fetch -q --no-tags --no-write-fetch-head {ORIGIN_DIR} "+$base:refs/prchain/base/$t" 2>>"$S/err" \\
    || {{ cat "$S/err"; exit 91; }}
fi
git update-ref "refs/prchain/base/$t" "$base"
git checkout -q -f --detach "$base" 2>>"$S/err" || {{ cat "$S/err"; exit 92; }}
git clean -ffdxq
for j in "$@"; do
  before=$(git write-tree)
  if git apply -R --3way --whitespace=nowarn "$S/gold-$j.patch" 2>>"$S/err"; then
    echo "REVERTED $j"
  else
    git read-tree --reset -u "$before"; git clean -ffdxq; touch "$S/mark"
    git apply -R --reject --whitespace=nowarn "$S/gold-$j.patch" 2>>"$S/err"
    echo "REVERT_FAILED $j"; collect_rejects "$S/revert-rejects"
  fi
  rm -f "$S/gold-$j.patch"
done
git add -A
git diff --cached --quiet HEAD || git commit -q --no-verify -m "Stage $t: starting point" || exit 93
git update-ref "refs/prchain/stage-base/$t" HEAD
echo "BASE $(git rev-parse HEAD)"
echo "@@REVERT_REJECTS"; cat "$S/revert-rejects"
echo "@@ERRORS"; cat "$S/err"
"""

# The agent, after STAGE_BASE. Args: t, B_t, the stage base, policy, previous stage
# base ('' when no stage is active). Carries the agent's Δ onto the new stage base in its own
# repository. Prints KEY value lines, then the rejected hunks after a @@REJECTS line.
TRANSITION = f"""
set -uo pipefail
cd {WORKDIR}
{_SAFE_GIT}
{_COLLECT_REJECTS}
t=$1; base=$2; stage_base=$3; policy=$4; prev=$5
S={AGENT_STATE}
mkdir -p "$S" && echo {PUBLIC_DIR}/objects > .git/objects/info/alternates || exit 94
: > "$S/delta.patch"; : > "$S/rejects"; : > "$S/err"
if [ -n "$prev" ]; then
  export GIT_INDEX_FILE=$S/index.delta
  cp .git/index "$GIT_INDEX_FILE" 2>/dev/null || rm -f "$GIT_INDEX_FILE"
  git add -A && git diff --cached --binary --no-color --no-ext-diff --no-textconv "$prev" \\
    > "$S/delta.patch" || exit 90
  rm -f "$GIT_INDEX_FILE"; unset GIT_INDEX_FILE
fi
git update-ref "refs/prchain/base/$t" "$base" || exit 95
git checkout -q -f --detach "$stage_base" || exit 91
git clean -fdq
applied=0; outcome=clean
if [ -s "$S/delta.patch" ]; then
  if git apply --3way --whitespace=nowarn "$S/delta.patch" 2>>"$S/err"; then
    applied=1
  else
    git read-tree --reset -u "$stage_base"; git clean -fdq
    case "$policy" in
      oracle) outcome=oracle_reset ;;
      partial)
        touch "$S/mark"; git apply --reject --whitespace=nowarn "$S/delta.patch" 2>>"$S/err"
        collect_rejects "$S/rejects"; applied=1; outcome=partial ;;
      *) outcome=conflict_stopped ;;
    esac
  fi
fi
if [ "$applied" = 1 ]; then
  git add -A
  git diff --cached --quiet HEAD || git commit -q --no-verify -m "Stage $t: your work so far" || exit 93
fi
git checkout -q -B main
git update-ref refs/prchain/stage-base "$stage_base"
git update-ref refs/prchain/stage-start HEAD
echo "START $(git rev-parse HEAD)"; echo "OUTCOME $outcome"; echo "APPLIED $applied"
echo "DELTA_BYTES $(stat -c %s "$S/delta.patch")"
rm -f "$S/delta.patch"
echo "@@REJECTS"; cat "$S/rejects"
"""

# The agent: the whole worktree (tracked, modified and untracked-but-not-ignored files) diffed
# against $1. A private index keeps the agent's own index untouched. The first line is
# `SIZE <bytes of the whole diff>`; then the diff itself, or, when $2 >= 0 and the diff is larger,
# a summary (a diffstat) cut at $2 bytes. Only stdout carries results: git's warnings (an embedded
# repository, CRLF conversion) go to a file, shown only when the script fails. Nothing is piped
# into a reader that stops early, so no size or file count can end it with SIGPIPE.
DIFF_AGAINST = f"""
set -euo pipefail
cd {WORKDIR}
{_SAFE_GIT}
S={AGENT_STATE}
mkdir -p "$S"
export GIT_INDEX_FILE=$S/index.diff
exec 2>"$S/diff.err"
trap 'rc=$?; [ $rc -eq 0 ] || cat "$S/diff.err"; rm -f "$GIT_INDEX_FILE" "$S/diff.sum"; exit $rc' EXIT
cp .git/index "$GIT_INDEX_FILE" 2>/dev/null || rm -f "$GIT_INDEX_FILE"
git add -A --ignore-errors || true
opts=(--cached --no-color --no-ext-diff --no-textconv)
size=$(git diff "${{opts[@]}}" --binary "$1" | wc -c)
echo "SIZE $size"
if [ "$2" -ge 0 ] && [ "$size" -gt "$2" ]; then
  git diff "${{opts[@]}}" --stat=200 --summary "$1" > "$S/diff.sum"
  head -c "$2" "$S/diff.sum"
else
  git diff "${{opts[@]}}" --binary "$1"
fi
"""

SNAPSHOT = f"""
set -euo pipefail
cd {WORKDIR}
{_SAFE_GIT}
mkdir -p {AGENT_STATE}
export GIT_INDEX_FILE={AGENT_STATE}/index.snap
cp .git/index "$GIT_INDEX_FILE" 2>/dev/null || rm -f "$GIT_INDEX_FILE"
git add -A
tree=$(git write-tree)
rm -f "$GIT_INDEX_FILE"
snap=$(printf 'prchain snapshot\\n\\nstage: %s\\nstage-base: %s\\nstage-start: %s\\n' "$1" "$2" "$3" \\
  | git commit-tree "$tree" -p "$3")
git update-ref "refs/prchain/snapshots/$snap" "$snap"
echo "$snap"
"""

# $1 stage start, $2 snapshot: HEAD back on the stage start, the snapshot's files as uncommitted work.
RESTORE = f"""
set -euo pipefail
cd {WORKDIR}
{_SAFE_GIT}
git cat-file -e "$2^{{commit}}"
git checkout -q -f -B main "$1"
git clean -fdq
git read-tree -u --reset "$2"
git reset -q
"""

SNAPSHOT_INFO = f"""
set -euo pipefail
cd {WORKDIR}
{_SAFE_GIT}
git log -1 --format=%B "$1"
"""


@dataclass
class TransitionReport:
    """What the STAGE_BASE (root) and TRANSITION (agent) scripts printed, parsed."""

    stage_base: str = ""
    stage_start: str = ""
    outcome: str = ""
    applied: bool = False
    delta_bytes: int = 0
    reverted: list[int] = field(default_factory=list)
    revert_failed: list[int] = field(default_factory=list)
    revert_rejects: str = ""
    revert_errors: str = ""
    rejects: str = ""


def parse_stage_base(output: str, report: TransitionReport) -> None:
    head, _, rest = output.partition("@@REVERT_REJECTS\n")
    report.revert_rejects, _, report.revert_errors = rest.partition("@@ERRORS\n")
    for line in head.splitlines():
        key, _, value = line.partition(" ")
        if key == "REVERTED":
            report.reverted.append(int(value))
        elif key == "REVERT_FAILED":
            report.revert_failed.append(int(value))
        elif key == "BASE":
            report.stage_base = value


def parse_transition(output: str, report: TransitionReport) -> None:
    head, _, report.rejects = output.partition("@@REJECTS\n")
    for line in head.splitlines():
        key, _, value = line.partition(" ")
        if key == "START":
            report.stage_start = value
        elif key == "OUTCOME":
            report.outcome = value
        elif key == "APPLIED":
            report.applied = value == "1"
        elif key == "DELTA_BYTES":
            report.delta_bytes = int(value)


def parse_snapshot_info(message: str) -> dict[str, str]:
    """The stage context a snapshot commit's message carries (stage, stage-base, stage-start)."""
    info = {}
    for line in message.splitlines():
        key, sep, value = line.partition(": ")
        if sep and key in ("stage", "stage-base", "stage-start"):
            info[key] = value.strip()
    return info
