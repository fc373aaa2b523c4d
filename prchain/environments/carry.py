"""The git bookkeeping inside a sandbox, as shell scripts run through `docker exec`.

Kept apart from the Docker plumbing so the carry-forward rules (DESIGN.md, "Carry-forward,
precisely") and the privilege split (docs/sandbox.md) read in one place.

Two domains, and no git command ever crosses from one into the other:

* root works only in root-owned places and never reads anything the agent can write: it fetches
  B_t from the root-only mirror (which also holds the chain's future) into its private store
  (STORE_DIR), computes the stage base B_t − g_1 … − g_(t−1) in a private worktree under ROOT_DIR
  (0700), where the gold patches wait for their revert, and commits that tree as a commit with
  no parent, C_t. Only C_t is published to PUBLIC_DIR (world-readable): fetching it there copies
  the objects C_t reaches, which are the stage base's files and nothing of B_t's history, of the
  gold patches or of the future.
* the agent's own git (its repository, its hooks, its config) runs as the agent and only as the
  agent: the cumulative diff, the 3-way application of the carried patch, snapshots. Its repository
  borrows C_t's objects from PUBLIC_DIR through `objects/info/alternates`. At each stage entry its
  worktree is emptied and C_t checked out, so nothing ignored or untracked survives from another
  stage (or from the image).

Refs kept in the agent's repository (all of them its own past, never the future):
  refs/prchain/stage-base  C_t, B_t − g_1 … − g_(t−1) without parents: the origin of Δ_t
  refs/prchain/stage-start C_t + Δ_(t−1): the origin of the stage diff
"""

from __future__ import annotations

from dataclasses import dataclass, field

WORKDIR = "/work/repo"
ORIGIN_DIR = "/opt/prchain/origin.git"  # the full mirror: root-only, never touched by the agent
SEED_DIR = "/opt/prchain/seed"  # /work and the agent's home as built, for a tmpfs sandbox
STATE_ROOT = "/var/lib/prchain"
ROOT_DIR = f"{STATE_ROOT}/root"  # 0700 root: gold patches, the private store, worktree and index
STORE_DIR = f"{ROOT_DIR}/store.git"  # root-only: B_1..B_t and the stage bases
PUBLIC_DIR = f"{STATE_ROOT}/public.git"  # root-owned, world-readable: only C_1..C_t (no parents)
AGENT_STATE = ".git/prchain"  # the agent-side scratch files, outside the worktree's diff
# The agent's index, copied for a diff of the worktree (its stat data spare git re-reading files
# that did not change), with its mtime (`-p`). git reads a file whose stat data match its entry
# only when the file is no older than the index (racily clean); a copy dated now would hide a
# same-size change made in the second the stage was checked out (a reordered file: an empty diff).
COPY_INDEX = 'cp -p .git/index "$GIT_INDEX_FILE" 2>/dev/null || rm -f "$GIT_INDEX_FILE"'
# What a stage's setup command left in the worktree: excluded from every diff and snapshot.
SETUP_EXCLUDE = f"{WORKDIR}/{AGENT_STATE}/setup-exclude"
NO_PREVIOUS_BASE = 97  # STAGE_BASE's exit where a propagated stage finds no C_(t−1) in the store
NO_REPLAY = 95  # STAGE_BASE's exit where a replayed stage's inputs do not apply as made
TESTER = "tester"  # the user hidden tests run as, in a clean room; never the agent
TESTER_HOME = "/tmp/tester-home"

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
# filters out of the bookkeeping's results. The diff format is prchain's, not the repository's:
# the crossing check reads a section's paths as `a/…` and `b/…` while `git apply` strips one
# component, so an agent's `diff.noprefix` (or mnemonic prefixes, `c/` and `i/`) would make the
# check read `lib/setup.cfg` where the clean room writes `setup.cfg` (issue 77).
DIFF_FORMAT = (
    "-c diff.noprefix=false -c diff.mnemonicPrefix=false -c diff.relative=false "
    "-c diff.srcPrefix=a/ -c diff.dstPrefix=b/ -c core.quotePath=true -c diff.renames=true "
    "-c diff.suppressBlankEmpty=false -c diff.context=3"
)
# What every diff that is read or applied adds on its command line (options beat any config).
DIFF_OPTIONS = "--no-color --no-ext-diff --no-textconv --src-prefix=a/ --dst-prefix=b/"
_SAFE_GIT = f"""
git() {{
  command git -c core.hooksPath=/dev/null -c core.fsmonitor=false -c commit.gpgSign=false \\
    -c protocol.allow=never -c protocol.file.allow=always -c core.sshCommand=false \\
    -c diff.external= -c gc.auto=0 -c maintenance.auto=false {DIFF_FORMAT} "$@"
}}
"""
# The agent's side also leaves out what the stage's setup command produced.
_AGENT_GIT = _SAFE_GIT.replace("git -c ", f"git -c core.excludesFile={SETUP_EXCLUDE} -c ", 1)

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
git init -q --bare {STORE_DIR}
git init -q --bare {PUBLIC_DIR}
git --git-dir={PUBLIC_DIR} config core.logAllRefUpdates false
"""

# The agent, once per container: its repository borrows objects from the public store.
INIT_AGENT = f"""
set -euo pipefail
mkdir -p {WORKDIR}
cd {WORKDIR}
{_AGENT_GIT}
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

# Root. Args: t, B_t, whether a tar comes on stdin (1 or 0), the entry (revert, propagate or hunks), then
# the indices j of the gold patches to revert, newest first ($ROOT_DIR/gold-j.patch, from that tar).
# `propagate` reverts nothing: the files named in the tar's paths-t (NUL-separated) are taken as the
# previous stage base C_(t−1) has them (absent there: removed); exit 97 when this store holds no
# C_(t−1) (a new container: the caller makes it first). A patch whose 3-way revert fails is
# reverted hunk by hunk, its other hunks kept as B_t has them and staged (the next revert starts
# from them): REVERT_FAILED, or under `hunks` (the entry made for it) KEPT_HUNKS. Fetches B_t (only B_t;
# at depth 1 where the whole fetch fails, as on a partial clone missing old blobs: the 3-way
# reverts want the gold patches' own blobs, which a whole fetch brings) from the mirror into the
# private store, or takes it from the tar's base.pack (a stand-in for a B_t the clone lacks blobs
# of, which the mirror does not hold: `prchain.environments.absent`), reverts the gold patches in the
# private worktree, commits the result without a parent (C_t) and publishes C_t, and only what it
# reaches, as refs/prchain/stage-base/<t> in the public store.
# `replay` reverts nothing (prchain/chains/evidence/replay.py): the tar's given-t.patch, where the
# host has it (a clean room, a new container), is C_t's difference from B_t as made before;
# else C_t is B_t with the agent's deviation from history applied three ways: its tree A_(t−1)
# (C_(t−1), exit 97 where this store has none, and the tar's delta.patch, Δ_(t−1)) against
# H_(t−1) (the 6th argument, B_(t−1), and the tar's gold-(t−1).patch, g_(t−1)). Where history
# rewrote lines the agent wrote otherwise, B_t's lines stay (REPLAY_KEPT, the text after
# @@REVERT_REJECTS). C_t's difference from B_t is left in $ROOT_DIR/replayed-t.patch for the host
# (REPLAYED_PATCH); nothing of H, which holds gold code, leaves root's directory.
# Prints KEY value lines, the revert rejects after @@REVERT_REJECTS, git's errors after @@ERRORS.
STAGE_BASE = f"""
set -uo pipefail
umask 022
S={ROOT_DIR}
export GIT_DIR={STORE_DIR} GIT_WORK_TREE=$S/work GIT_INDEX_FILE=$S/index
cd "$S/work"
{_SAFE_GIT}
{_COLLECT_REJECTS}
t=$1; base=$2; feed=$3; entry=$4; shift 4
if [ "$entry" = replay ]; then prev_base=${{1:-}}; shift; fi
{_KILL_AGENT}
: > "$S/revert-rejects"; : > "$S/err"
if [ "$feed" = 1 ]; then tar -x --no-same-owner -C "$S" -f - || exit 90; fi
if [ -f "$S/base.pack" ]; then
  git index-pack --stdin < "$S/base.pack" > /dev/null 2>>"$S/err" || {{ cat "$S/err"; exit 91; }}
  rm -f "$S/base.pack"
fi
fetch_base() {{
  git cat-file -e "$1^{{commit}}" 2>/dev/null \\
    || git fetch -q --no-tags --no-write-fetch-head {ORIGIN_DIR} "+$1:$2" 2>>"$S/err" \\
    || git fetch -q --depth 1 --no-tags --no-write-fetch-head {ORIGIN_DIR} "+$1:$2" 2>>"$S/err" \\
    || {{ cat "$S/err"; exit 91; }}
  git update-ref "$2" "$1"
}}
fetch_base "$base" "refs/prchain/base/$t"
git checkout -q -f --detach "$base" 2>>"$S/err" || {{ cat "$S/err"; exit 92; }}
git clean -ffdxq
if [ "$entry" = replay ]; then
  on() {{ git read-tree --reset -u "$1" 2>>"$S/err" && git clean -ffdxq; }}
  if [ -f "$S/given-$t.patch" ]; then
    [ ! -s "$S/given-$t.patch" ] || git apply --index --binary --whitespace=nowarn \\
      "$S/given-$t.patch" 2>>"$S/err" || {{ cat "$S/err"; exit {NO_REPLAY}; }}
    rm -f "$S/given-$t.patch"
  else
    prev=$(git rev-parse -q --verify "refs/prchain/stage-base/$((t - 1))") || {{ echo NO_PREVIOUS_BASE; exit {NO_PREVIOUS_BASE}; }}
    fetch_base "$prev_base" "refs/prchain/base/$((t - 1))"
    on "$prev" || exit 92
    [ ! -s "$S/delta.patch" ] || git apply --index --binary --whitespace=nowarn "$S/delta.patch" \\
      2>>"$S/err" || {{ cat "$S/err"; exit {NO_REPLAY}; }}
    agent_tree=$(git write-tree) || exit 93
    on "$prev_base" || exit 92
    g="$S/gold-$((t - 1)).patch"
    ! grep -q '^diff ' "$g" || git apply --index --binary --whitespace=nowarn "$g" 2>>"$S/err" \\
      || {{ cat "$S/err"; exit {NO_REPLAY}; }}
    history_tree=$(git write-tree) || exit 93
    git diff --binary --no-renames {DIFF_OPTIONS} "$history_tree" "$agent_tree" > "$S/deviation.patch"
    on "$base" || exit 92
    if [ -s "$S/deviation.patch" ] \\
        && ! git apply --index --3way --whitespace=nowarn "$S/deviation.patch" 2>>"$S/err"; then
      if [ -n "$(git ls-files -u)" ]; then
        git ls-files -u -z | cut -z -f 2 | sort -zu > "$S/unmerged"
        # Root reads the agent's side from the index, never through the worktree (a symlink the
        # agent made would be followed), and removes the path before writing it.
        while IFS= read -r -d '' f; do
          printf '=== %s (kept as B_t has it; yours below) ===\\n' "$f" >> "$S/revert-rejects"
          git show ":3:$f" >> "$S/revert-rejects" 2>/dev/null
          links=$(git ls-files -u -z -- "$f" | tr '\\0' '\\n' | grep -c '^120000')
          rm -f -- "$f"
          if [ "$links" = 0 ] && git show ":1:$f" > "$S/m1" 2>/dev/null \\
              && git show ":2:$f" > "$S/m2" 2>/dev/null && git show ":3:$f" > "$S/m3" 2>/dev/null; then
            git merge-file --ours -p "$S/m2" "$S/m1" "$S/m3" > "$f"
          else
            git checkout-index -f --stage=2 -- "$f" 2>/dev/null
          fi
          git add -A -- "$f" 2>>"$S/err"
        done < "$S/unmerged"
        rm -f "$S/unmerged" "$S/m1" "$S/m2" "$S/m3"
      else
        on "$base" || exit 92
        touch "$S/mark"; git apply --index --reject --whitespace=nowarn "$S/deviation.patch" 2>>"$S/err"
        collect_rejects "$S/revert-rejects"
      fi
      echo "REPLAY_KEPT $t"
    fi
  fi
  rm -f "$S/delta.patch" "$S/gold-$((t - 1)).patch" "$S/deviation.patch"
  git add -A
  git diff --cached --binary --no-renames {DIFF_OPTIONS} "$base" > "$S/replayed-$t.patch" || exit 93
  echo "REPLAYED $t"
fi
if [ "$entry" = propagate ]; then
  prev=$(git rev-parse -q --verify "refs/prchain/stage-base/$((t - 1))") || {{ echo NO_PREVIOUS_BASE; exit {NO_PREVIOUS_BASE}; }}
  while IFS= read -r -d '' f; do
    if GIT_LITERAL_PATHSPECS=1 git cat-file -e "$prev:$f" 2>/dev/null; then
      GIT_LITERAL_PATHSPECS=1 git checkout -q "$prev" -- "$f" 2>>"$S/err" || {{ cat "$S/err"; exit 98; }}
    else
      GIT_LITERAL_PATHSPECS=1 git rm -q -f --cached --ignore-unmatch -- "$f" > /dev/null 2>>"$S/err"
      rm -f -- "$f"
    fi
  done < "$S/paths-$t"
  rm -f "$S/paths-$t"
  echo "PROPAGATED $t"
fi
for j in "$@"; do
  before=$(git write-tree)
  if git apply -R --3way --whitespace=nowarn "$S/gold-$j.patch" 2>>"$S/err"; then
    echo "REVERTED $j"
  else
    git read-tree --reset -u "$before"; git clean -ffdxq; touch "$S/mark"
    git apply -R --reject --whitespace=nowarn "$S/gold-$j.patch" 2>>"$S/err"
    if [ "$entry" = hunks ]; then echo "KEPT_HUNKS $j"; else echo "REVERT_FAILED $j"; fi
    collect_rejects "$S/revert-rejects"; git add -A
  fi
  rm -f "$S/gold-$j.patch"
done
git add -A
tree=$(git write-tree) || exit 93
c=$(echo "Stage $t: starting point" | git commit-tree "$tree") || exit 93
git update-ref "refs/prchain/stage-base/$t" "$c"
( unset GIT_WORK_TREE GIT_INDEX_FILE; export GIT_DIR={PUBLIC_DIR}
  git fetch -q --no-tags --no-write-fetch-head {STORE_DIR} \
    "+refs/prchain/stage-base/$t:refs/prchain/stage-base/$t" ) 2>>"$S/err" || {{ cat "$S/err"; exit 96; }}
echo "BASE $c"
echo "@@REVERT_REJECTS"; cat "$S/revert-rejects"
echo "@@ERRORS"; cat "$S/err"
"""

# The agent, after STAGE_BASE. Args: t, the stage base C_t, policy, the previous stage base
# ('' when no stage is active; '-' when Δ comes on stdin, from a container of another image), and
# the stage's entry. Computes the agent's Δ, empties the worktree (ignored files and the image's
# contents included), checks out C_t, 3-way-applies Δ by the policy and commits. At a stage entered
# by hunks, a three-way carry that only conflicts keeps C_t's lines where both sides changed them
# (the hunks history rewrote: `git merge-file --ours` on the stages git left), whatever the policy,
# and records the conflicted text (outcome partial). Prints KEY value lines, then the rejected
# hunks after a @@REJECTS line.
TRANSITION = f"""
set -uo pipefail
mkdir -p {WORKDIR} && cd {WORKDIR} || exit 94
{_AGENT_GIT}
{_COLLECT_REJECTS}
t=$1; stage_base=$2; policy=$3; prev=$4; entry=${{5:-revert}}
S={AGENT_STATE}
[ -d .git ] || git init -q . || exit 94
mkdir -p "$S" && echo {PUBLIC_DIR}/objects > .git/objects/info/alternates || exit 94
: > "$S/delta.patch"; : > "$S/rejects"; : > "$S/err"
if [ "$prev" = - ]; then
  cat > "$S/delta.patch" || exit 90
elif [ -n "$prev" ]; then
  export GIT_INDEX_FILE=$S/index.delta
  {COPY_INDEX}
  git add -A --ignore-errors 2>>"$S/err"
  git diff --cached --binary {DIFF_OPTIONS} "$prev" \
    > "$S/delta.patch" 2>>"$S/err" || exit 90
  rm -f "$GIT_INDEX_FILE"; unset GIT_INDEX_FILE
fi
: > "$S/setup-exclude"
chmod -R u+rwX . 2>/dev/null
find . -mindepth 1 -maxdepth 1 ! -name .git -exec rm -rf -- {{}} + || exit 91
rm -f .git/index
git checkout -q -f --detach "$stage_base" || exit 91
git clean -ffdxq
applied=0; outcome=clean
if [ -s "$S/delta.patch" ]; then
  if git apply --3way --whitespace=nowarn "$S/delta.patch" 2>>"$S/err"; then
    applied=1
  elif [ "$entry" = hunks ] && [ -n "$(git ls-files -u)" ]; then
    git ls-files -u -z | cut -z -f 2 | sort -zu > "$S/unmerged"
    while IFS= read -r -d '' f; do
      printf '=== %s (kept as the stage base has it) ===\n' "$f" >> "$S/rejects"
      cat -- "$f" >> "$S/rejects" 2>/dev/null
      if git show ":1:$f" > "$S/m1" 2>/dev/null && git show ":2:$f" > "$S/m2" 2>/dev/null \
          && git show ":3:$f" > "$S/m3" 2>/dev/null; then
        git merge-file --ours -p "$S/m2" "$S/m1" "$S/m3" > "$f"
      elif git show ":2:$f" > "$S/m2" 2>/dev/null; then
        cp -- "$S/m2" "$f"
      else
        rm -f -- "$f"
      fi
      git add -A -- "$f" 2>>"$S/err"
    done < "$S/unmerged"
    rm -f "$S/unmerged" "$S/m1" "$S/m2" "$S/m3"
    applied=1; outcome=partial
  else
    git read-tree --reset -u "$stage_base"; git clean -ffdxq
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

# The agent, after its stage's setup command ran: everything the command left untracked is
# excluded from the diffs and snapshots from now on; tracked files it changed are listed.
SETUP_DONE = f"""
set -uo pipefail
cd {WORKDIR}
{_AGENT_GIT}
export GIT_INDEX_FILE={AGENT_STATE}/index.setup
{COPY_INDEX}
git ls-files --others --exclude-standard --directory 2>/dev/null \
  | sed -e 's/[][*?!#\\]/\\&/g' -e 's|^|/|' >> {SETUP_EXCLUDE}
git diff --name-only HEAD 2>/dev/null
rm -f "$GIT_INDEX_FILE"
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
{_AGENT_GIT}
S={AGENT_STATE}
mkdir -p "$S"
export GIT_INDEX_FILE=$S/index.diff
exec 2>"$S/diff.err"
trap 'rc=$?; [ $rc -eq 0 ] || cat "$S/diff.err"; rm -f "$GIT_INDEX_FILE" "$S/diff.sum"; exit $rc' EXIT
{COPY_INDEX}
git add -A --ignore-errors || true
opts=(--cached {DIFF_OPTIONS})
size=$(git diff "${{opts[@]}}" --binary "$1" | wc -c)
echo "SIZE $size"
if [ "$2" -ge 0 ] && [ "$size" -gt "$2" ]; then
  git diff "${{opts[@]}}" --stat=200 --summary "$1" > "$S/diff.sum"
  head -c "$2" "$S/diff.sum"
else
  git diff "${{opts[@]}}" --binary "$1"
fi
"""

# Root, in a clean room after STAGE_BASE: the private worktree (C_t) with the given paths taken
# from B_t ($1; absent there = removed) becomes /work/repo, owned by the tester.
ROOM_TREE = f"""
set -euo pipefail
umask 022
S={ROOT_DIR}
export GIT_DIR={STORE_DIR} GIT_WORK_TREE=$S/work GIT_INDEX_FILE=$S/index
cd "$S/work"
{_SAFE_GIT}
base=$1; shift
for f in "$@"; do
  if git cat-file -e "$base:$f" 2>/dev/null; then git checkout -q "$base" -- "$f"; else rm -f -- "$f"; fi
done
rm -rf {WORKDIR}; mkdir -p {WORKDIR} {TESTER_HOME}
cp -a "$S/work/." {WORKDIR}/
# All of /work: a stage's setup command writes beside the tree too (Go's per-stage build cache).
chown -R {TESTER}:{TESTER} "$(dirname {WORKDIR})" {TESTER_HOME}
"""

# The tester, in a clean room: apply the change on stdin (plain `git apply`: no repository, so
# no repository config, filter or hook exists to run).
ROOM_APPLY = f"""
set -uo pipefail
cd {WORKDIR}
cat > {TESTER_HOME}/change.patch
[ -s {TESTER_HOME}/change.patch ] || exit 0
git apply --whitespace=nowarn {TESTER_HOME}/change.patch; rc=$?
rm -f {TESTER_HOME}/change.patch
exit $rc
"""

# Root: C_t's difference from B_t as STAGE_BASE made it for a replayed stage t ($1), byte for byte.
REPLAYED_PATCH = f"""
cat {ROOT_DIR}/replayed-"$1".patch
"""

# Root reads a file of a published stage base ($1 = C_t, $2 = path); exit 3 when it has none.
BASE_FILE = f"""
git --git-dir={PUBLIC_DIR} cat-file -e "$1:$2" 2>/dev/null || exit 3
exec git --git-dir={PUBLIC_DIR} cat-file blob "$1:$2"
"""

SNAPSHOT = f"""
set -euo pipefail
cd {WORKDIR}
{_AGENT_GIT}
mkdir -p {AGENT_STATE}
export GIT_INDEX_FILE={AGENT_STATE}/index.snap
{COPY_INDEX}
git add -A --ignore-errors 2>/dev/null || true
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
{_AGENT_GIT}
git cat-file -e "$2^{{commit}}"
git checkout -q -f -B main "$1"
git clean -fdq
git read-tree -u --reset "$2"
git reset -q
"""

SNAPSHOT_INFO = f"""
set -euo pipefail
cd {WORKDIR}
{_AGENT_GIT}
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
    kept_hunks: list[int] = field(default_factory=list)  # stages reverted by hunks (entry hunks)
    replay_kept: bool = False  # entry replay: B_t's lines stayed against the agent's (the rejects)
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
        elif key == "KEPT_HUNKS":
            report.kept_hunks.append(int(value))
        elif key == "REPLAY_KEPT":
            report.replay_kept = True
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
