"""The git bookkeeping inside a sandbox, as shell scripts run through `docker exec`.

Kept apart from the Docker plumbing so the carry-forward rules (DESIGN.md, "Carry-forward,
precisely") read in one place. State lives outside the worktree, in STATE_DIR, so that no
bookkeeping file can ever show up in the agent's diff.

Refs kept in the sandbox's repo (all of them the agent's own past, never the future):
  refs/prchain/base/<t>    B_t, fetched from the root-only mirror when stage t is entered
  refs/prchain/stage-base  B_t − g_1 … − g_(t−1): the origin of the cumulative diff Δ_t
  refs/prchain/stage-start stage base + Δ_(t−1): the origin of the stage diff
"""

from __future__ import annotations

from dataclasses import dataclass, field

STATE_DIR = "/var/lib/prchain/state"
WORKDIR = "/work/repo"
ORIGIN_DIR = "/opt/prchain/origin.git"

# Bookkeeping commits get fixed identities and dates so equal states give equal shas.
BOOKKEEPING_ENV = {
    "GIT_AUTHOR_NAME": "prchain",
    "GIT_AUTHOR_EMAIL": "prchain@prchain.invalid",
    "GIT_COMMITTER_NAME": "prchain",
    "GIT_COMMITTER_EMAIL": "prchain@prchain.invalid",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z",
}

# Run as root: only root can read the mirror that also holds the chain's future.
FETCH_BASE = f"""
set -euo pipefail
cd {WORKDIR}
git fetch -q --no-tags --no-write-fetch-head {ORIGIN_DIR} "+$1:refs/prchain/base/$2"
find .git -user root -exec chown agent:agent {{}} +
"""

INIT_REPO = f"""
set -euo pipefail
cd {WORKDIR}
git init -q .
mkdir -p {STATE_DIR}
"""

# The whole worktree (tracked, modified and untracked-but-not-ignored files) diffed against $1.
# A private index keeps the agent's own index untouched; copying it first reuses stat data.
DIFF_AGAINST = f"""
set -euo pipefail
cd {WORKDIR}
export GIT_INDEX_FILE={STATE_DIR}/index.diff
cp .git/index "$GIT_INDEX_FILE" 2>/dev/null || rm -f "$GIT_INDEX_FILE"
git add -A
git diff --cached --binary --no-color --no-ext-diff "$1"
rm -f "$GIT_INDEX_FILE"
"""

SNAPSHOT = f"""
set -euo pipefail
cd {WORKDIR}
export GIT_INDEX_FILE={STATE_DIR}/index.snap
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
git cat-file -e "$2^{{commit}}"
git checkout -q -f -B main "$1"
git clean -fdq
git read-tree -u --reset "$2"
git reset -q
"""

SNAPSHOT_INFO = f"""
set -euo pipefail
cd {WORKDIR}
git log -1 --format=%B "$1"
"""

# Collect the *.rej files a `git apply --reject` left since the marker, into $1, and delete them.
_COLLECT_REJECTS = """
collect_rejects() {
  find . -path ./.git -prune -o -type f -name '*.rej' -newer "$S/mark" -print | sort | while read -r f; do
    printf '=== %s ===\\n' "${f#./}" >> "$1"; cat -- "$f" >> "$1"; rm -f -- "$f"
  done
}
"""

# Args: t, B_t, policy, previous stage base ('' when no stage is active), then the indices j of
# the gold patches to revert, newest first ($S/gold-j.patch). Prints KEY value lines, then the
# rejected hunks after a @@REJECTS line.
TRANSITION = f"""
set -uo pipefail
S={STATE_DIR}
cd {WORKDIR}
t=$1; base=$2; policy=$3; prev=$4; shift 4
: > "$S/delta.patch"; : > "$S/rejects"; : > "$S/revert-rejects"; : > "$S/err"
{_COLLECT_REJECTS}
if [ -n "$prev" ]; then
  export GIT_INDEX_FILE=$S/index.delta
  cp .git/index "$GIT_INDEX_FILE" 2>/dev/null || rm -f "$GIT_INDEX_FILE"
  git add -A && git diff --cached --binary --no-color --no-ext-diff "$prev" > "$S/delta.patch" || exit 90
  rm -f "$GIT_INDEX_FILE"; unset GIT_INDEX_FILE
fi
git checkout -q -f --detach "$base" || exit 91
git clean -fdq
for j in "$@"; do
  before=$(git write-tree)
  if git apply -R --3way --whitespace=nowarn "$S/gold-$j.patch" 2>>"$S/err"; then
    echo "REVERTED $j"
  else
    git read-tree --reset -u "$before"; git clean -fdq; touch "$S/mark"
    git apply -R --reject --whitespace=nowarn "$S/gold-$j.patch" 2>>"$S/err"
    echo "REVERT_FAILED $j"; collect_rejects "$S/revert-rejects"
  fi
  rm -f "$S/gold-$j.patch"
done
git add -A
git diff --cached --quiet HEAD || git commit -q --no-verify -m "Stage $t: starting point" || exit 92
stage_base=$(git rev-parse HEAD)
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
echo "BASE $stage_base"; echo "START $(git rev-parse HEAD)"; echo "OUTCOME $outcome"; echo "APPLIED $applied"
echo "DELTA_BYTES $(stat -c %s "$S/delta.patch")"
echo "@@REVERT_REJECTS"; cat "$S/revert-rejects"
echo "@@REJECTS"; cat "$S/rejects"
"""


@dataclass
class TransitionReport:
    """What the TRANSITION script printed, parsed."""

    stage_base: str = ""
    stage_start: str = ""
    outcome: str = ""
    applied: bool = False
    delta_bytes: int = 0
    reverted: list[int] = field(default_factory=list)
    revert_failed: list[int] = field(default_factory=list)
    revert_rejects: str = ""
    rejects: str = ""


def parse_transition(output: str) -> TransitionReport:
    report = TransitionReport()
    head, _, rest = output.partition("@@REVERT_REJECTS\n")
    report.revert_rejects, _, report.rejects = rest.partition("@@REJECTS\n")
    for line in head.splitlines():
        key, _, value = line.partition(" ")
        if key == "REVERTED":
            report.reverted.append(int(value))
        elif key == "REVERT_FAILED":
            report.revert_failed.append(int(value))
        elif key in ("BASE", "START", "OUTCOME"):
            setattr(
                report,
                {"BASE": "stage_base", "START": "stage_start", "OUTCOME": "outcome"}[key],
                value,
            )
        elif key == "APPLIED":
            report.applied = value == "1"
        elif key == "DELTA_BYTES":
            report.delta_bytes = int(value)
    return report


def parse_snapshot_info(message: str) -> dict[str, str]:
    """The stage context a snapshot commit's message carries (stage, stage-base, stage-start)."""
    info = {}
    for line in message.splitlines():
        key, sep, value = line.partition(": ")
        if sep and key in ("stage", "stage-base", "stage-start"):
            info[key] = value.strip()
    return info
