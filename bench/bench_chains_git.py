"""`chains build` (cold, then rebuilt after a setting change) and `prchain report` on a real
history, beside git's own floor: `git log --first-parent -p` of the same history.

Targets (issue 53): cold build ≤ 6× the floor, rebuild ≤ 1.5×, report ≤ 3×. The repository is
a clone the `fetch` tool brought (by default astral-sh/ruff and cloudquery/cloudquery under
/work/.mirror); a repository not fetched is skipped with one line. Mining (`prchain mine --source git`) is timed too, not held to a target.
CPU seconds are printed beside wall time: on a shared machine the wall time measures the waiting.

After the cold build it prints a digest of what the build decided: its links (rule, kept, symbols,
lineage, why, evidence), chains, stages (base, end, gold patches) and pair evidence. A change
meant only to make the build faster must leave it as it was (run with PYTHONHASHSEED=0).

With --keep, the mined store is kept beside the clone (`mined.db`) and copied for the next run
instead of mining again: `rm DIR/OWNER+NAME/mined.db` to mine anew.

Usage: python bench/bench_chains_git.py [--repo OWNER/NAME=PATH ...] [--keep DIR]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from prchain.chains.building.build import build_chains  # noqa: E402
from prchain.chains.config import ChainsConfig  # noqa: E402
from prchain.miner.config import MinerConfig  # noqa: E402
from prchain.miner.mine import mine  # noqa: E402
from prchain.store.opener import make_engine  # noqa: E402

MIRROR = Path("/work/.mirror")
DEFAULTS = ("astral-sh/ruff", "cloudquery/cloudquery")
TARGETS = {"cold build": 6.0, "rebuild": 1.5, "report": 3.0}
PRCHAIN = Path(sys.executable).parent / "prchain"


def cpu() -> float:
    own, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def timed(label: str, func: Callable[[], Any]) -> tuple[tuple[float, float], Any]:
    """((wall, CPU seconds of this process and its git children), what `func` returned)."""
    start, used = time.perf_counter(), cpu()
    result = func()
    wall, spent = time.perf_counter() - start, cpu() - used
    print(f"  {label:<12} {wall:8.1f} s wall {spent:8.1f} s CPU", flush=True)
    return (wall, spent), result


def missing_paths(clone: Path) -> list[str]:
    """Paths whose blobs a fetched snapshot left out (its largest files): git log -p stops at the
    first one, so the floor leaves them out."""
    listed = subprocess.run(
        ["git", "-C", str(clone), "rev-list", "--objects", "--missing=print", "HEAD"],
        capture_output=True,
        text=True,
    ).stdout
    gone = {line[1:] for line in listed.splitlines() if line.startswith("?")}
    if not gone:
        return []
    raw = subprocess.run(
        ["git", "-C", str(clone), "log", "--first-parent", "--raw", "--no-abbrev", "--format="],
        capture_output=True,
        text=True,
    ).stdout
    paths = set()
    for row in raw.splitlines():
        fields = row.split("\t")[0].split(" ")
        if len(fields) > 3 and {fields[2], fields[3]} & gone:
            paths.add(row.split("\t")[-1])
    return sorted(paths)


def floor(clone: Path) -> None:
    """`git log --first-parent -p` of the history, blobs the snapshot lacks left out."""
    spec = [f":(exclude,literal){path}" for path in missing_paths(clone)]
    args = ["git", "-C", str(clone), "log", "--first-parent", "-p", "HEAD", "--", ".", *spec]
    with open("/dev/null", "wb") as sink:
        done = subprocess.run(args, stdout=sink, stderr=subprocess.DEVNULL)
    if done.returncode:
        # A tree the snapshot lacks stops git there: the floor is then of part of the history,
        # and the ratios below are harsher than they would be.
        print(
            "  (git stopped at an object the snapshot lacks: the floor is of part of the history)"
        )


# What a build decided, each row by PR numbers (ids differ between stores mined apart).
DIGESTED = {
    "links": """SELECT n.number, o.number, l.kept, l.rule, l.evidence_class, l.cue, l.strength,
        l.overlap, l.gap_days, l.lineage, l.lineage_via, l.lineage_moved, l.symbols, l.drop_kind,
        l.rescued_from, l.why, l.evidence FROM chain_links l
        JOIN pull_requests n ON n.id = l.newer_pr_id JOIN pull_requests o ON o.id = l.older_pr_id""",
    "chains": """SELECT strategy, signature, length, score, edges, superseded_at IS NULL
        FROM chains""",
    "stages": """SELECT c.signature, s.idx, p.number, s.base_sha, s.end_sha, s.gold_patch,
        s.gold_test_patch FROM chain_stages s JOIN chains c ON c.id = s.chain_id
        JOIN pull_requests p ON p.id = s.pr_id""",
    "evidence": """SELECT n.number, o.number, e.kind, e.version, e.value FROM pair_evidence e
        JOIN pull_requests n ON n.id = e.newer_pr_id JOIN pull_requests o ON o.id = e.older_pr_id""",
}


def digest(store: Path) -> str:
    """Per table of DIGESTED, its row count and the first 12 hex digits of its sorted rows' sha256."""
    parts = []
    with sqlite3.connect(store) as db:
        for name, query in DIGESTED.items():
            rows = sorted(json.dumps(row, default=str) for row in db.execute(query))
            text = hashlib.sha256("\n".join(rows).encode()).hexdigest()[:12]
            parts.append(f"{name} {len(rows)} {text}")
    return ", ".join(parts)


def mined(name: str, clone: Path, work: Path) -> None:
    """Mine the clone into work/bench.db, or copy the store a kept run mined (work/mined.db)."""
    kept = work / "mined.db"
    if kept.exists():
        shutil.copyfile(kept, work / "bench.db")
        print("  mine: the kept store (mined.db) copied")
        return
    engine = make_engine(f"sqlite:///{work / 'bench.db'}")
    timed("mine", lambda: mine(MinerConfig(), engine, [str(clone)], source="git", name=name))
    engine.dispose()
    shutil.copyfile(work / "bench.db", kept)


def report(url: str, out: Path) -> None:
    done = subprocess.run([str(PRCHAIN), "report", str(out), "--db", url], capture_output=True)
    if done.returncode != 0:
        raise SystemExit(done.stderr.decode()[-2000:])


def bench(name: str, repo: Path, work: Path, keep: bool) -> None:
    """Floor, mining, cold build, rebuild and report of one repository, in `work`."""
    work.mkdir(parents=True, exist_ok=True)
    clone = work / "repo.git"
    if not clone.exists():
        subprocess.run(["git", "clone", "-q", "--bare", str(repo), str(clone)], check=True)
    (work / "bench.db").unlink(missing_ok=True)
    if not keep:
        (work / "mined.db").unlink(missing_ok=True)
    url = f"sqlite:///{work / 'bench.db'}"
    print(f"  {name} (load average {os.getloadavg()[0]:.1f})")
    base, _ = timed("git floor", lambda: floor(clone))
    mined(name, clone, work)
    engine = make_engine(url)
    # The cold build writes the clone's commit-graph for blame (chains.commit_graphs) anew.
    shutil.rmtree(work / "commit-graphs", ignore_errors=True)
    config = ChainsConfig(commit_graph_dir=str(work / "commit-graphs"))
    seconds = {}
    seconds["cold build"], summary = timed("cold build", lambda: build_chains(config, engine))
    lengths = dict(sorted(summary.by_length.items()))
    print(f"  {summary.total} chains, by length {lengths}; {summary.graph.edges} links kept")
    print(f"  digest: {digest(work / 'bench.db')}")
    changed = config.model_copy(update={"max_gap_days": config.max_gap_days + 30})
    seconds["rebuild"], again = timed("rebuild", lambda: build_chains(changed, engine))
    kept, new = again.graph.evidence_kept, again.graph.evidence_new
    print(f"  rebuild after a setting change: {kept} answers from the store, {new} asked of git")
    seconds["report"], _ = timed("report", lambda: report(url, work / "site"))
    # The targets are of wall time in one run; on a shared machine the CPU ratio is the fairer
    # figure, and both are printed.
    for label, target in TARGETS.items():
        ratio, cpu_ratio = seconds[label][0] / base[0], seconds[label][1] / max(base[1], 0.01)
        verdict = "ok" if ratio <= target else "OVER"
        print(
            f"  {label:<12} {ratio:6.2f}× the floor's wall, {cpu_ratio:6.2f}× its CPU"
            f" (target ≤ {target}×) {verdict}"
        )
    print(f"  load average at the end {os.getloadavg()[0]:.1f}")


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--repo", action="append", metavar="OWNER/NAME=PATH")
    parser.add_argument("--keep", type=Path, help="Keep the clones and stores here.")
    args = parser.parse_args()
    wanted = (
        [r.split("=", 1) for r in args.repo]
        if args.repo
        else [(name, str(MIRROR / name.replace("/", "+") / "repo")) for name in DEFAULTS]
    )
    with tempfile.TemporaryDirectory() as tmp:
        for name, path in wanted:
            if not (Path(path) / "HEAD").exists() and not (Path(path) / ".git").exists():
                print(f"  skipped {name}: no clone at {path} (fetch it first)")
                continue
            work = (args.keep or Path(tmp)) / name.replace("/", "+")
            bench(name, Path(path), work, keep=args.keep is not None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
