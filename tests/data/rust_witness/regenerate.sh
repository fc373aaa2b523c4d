#!/usr/bin/env bash
# Regenerates the traces tests/environments/eras/test_rust_witness.py reads: forgeries.rs compiled
# as a libtest binary in a Rust toolchain image (rustc 1.78, bullseye's strace 5.10), each test
# run as the clean room's RUN_EACH runs it where root lacks CAP_SYS_PTRACE (a harness without the task's compose file;
# prchain/environments/clean_room.py; our own rooms' `strace -u -b execve` is run for real by
# tests/attacks/test_rust_report.py). Needs network for apt. Usage: tests/data/rust_witness/regenerate.sh [IMAGE]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
image=${1:-$(docker images prchain/toolchain --format '{{.Repository}}:{{.Tag}}' | while read -r i; do
  docker run --rm --network none "$i" sh -c 'rustc --version' 2>/dev/null | grep -q ' 1\.78' && echo "$i" && break; done)}
filter=$(cd "$here/../../.." && python3 -c 'from prchain.environments.clean_room import TRACE_FILTER; print(TRACE_FILTER)')
traced=$(cd "$here/../../.." && python3 -c 'from prchain.environments.clean_room import TRACED; print(TRACED)')
docker run --rm -v "$here:/x" -e FILTER="$filter" -e TRACED="$traced" "$image" bash -c '
set -e
apt-get update -q >/dev/null && apt-get install -y -q strace >/dev/null
rustc --test -o /tmp/f /x/forgeries.rs
printf %s "$FILTER" > /tmp/trace.awk
for n in by_hook by_exec by_signal by_atexit with_child plain fails panics; do
  strace -f -q -s 256 -xx -e trace="$TRACED" -o "|awk -f /tmp/trace.awk > /x/$n.trace" -- \
    setpriv --reuid=65534 --regid=65534 --clear-groups --no-new-privs \
    bash -c "cd /tmp && exec \"\$@\"" - /tmp/f --exact "$n" --test-threads=2 >/dev/null 2>&1 || true
done'
