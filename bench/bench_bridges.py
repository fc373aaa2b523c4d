"""Could the PRs in between make a refused stage enterable? A measurement for issue 75.

A kept link (newer t → older s) is refused by the stage-base check (rule 0) when s's gold code
does not revert at t's base: PRs merged in between rewrote some of s's lines. Those PRs edit
lines s wrote, which is what a link found in code is; if they were stages of the chain between s
and t, the revert would undo them too, newest first, and the chain would be three stages or
more instead of none. For each link refused as a pair this reads:

- the first-parent commits between s's merge and t's base that touched the files whose revert
  fails (as `bench_chain_ceiling.py --why` finds them), and whether each is a mined PR;
- where there are at most `--most` such commits and all are PRs: whether reverting s's gold and
  theirs (newest first) at t's base succeeds, as the sandbox does it (`StageBases.reverts`);
- for each bridging PR, the store's decision on a link to s (kept, dropped and by which rule, or
  none judged) and whether its own stage can be entered after s;
- why the `hunks` fallback refused the pair: s's merge is no ancestor of t's base, a revert
  failed otherwise than by hunks, or t's own lines meet kept hunks (and how many of them).

    python bench/bench_bridges.py STORE.db [STORE.db ...] [--most 3]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import tempfile
from collections import Counter
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from bench.bench_chain_ceiling import REFUSED, refused_files
from prchain.chains.evidence.hunks import HunkEntry, changed_lines
from prchain.chains.evidence.propagation import EarlierStage
from prchain.chains.evidence.revertible import StageBases
from prchain.chains.reading.patches import split_patch
from prchain.store.models import ChainLink, PRPatch, PullRequest, Repo
from prchain.store.opener import make_engine


def _between(clone: str, older_merge: str, base: str, paths: list[str]) -> list[str]:
    """First-parent commits after `older_merge` up to `base` touching `paths`, oldest first."""
    done = subprocess.run(
        ["git", "-C", clone, "rev-list", "--first-parent", "--reverse",
         f"{older_merge}..{base}", "--", *paths],
        capture_output=True, text=True,
    )  # fmt: skip
    return done.stdout.split()


def _hunks_refusal(
    hunks: HunkEntry, repo: int, older: PullRequest, newer: PullRequest, gold: str, code: object
) -> str:
    """Why entry by hunks refused `newer` after `older` (one line, for counting)."""
    earlier = [EarlierStage(older.merge_commit_sha, gold)]
    if not hunks._is_ancestor(repo, older.merge_commit_sha or "", newer.base_sha or ""):
        return "hunks: s's merge is no ancestor of t's base"
    kept = hunks.kept(repo, newer.base_sha or "", earlier)
    if kept is None:
        return "hunks: a revert failed otherwise than by hunks"
    own = changed_lines(code(newer.id) or "")  # type: ignore[operator]
    met = sum(len(own.get(path, set()) & lines) for path, lines in kept.lines.items())
    if not met:
        return "hunks: enterable (refused only in a longer path)"
    size = "1-5" if met <= 5 else "6-20" if met <= 20 else "21+"
    return f"hunks: t's own lines meet kept hunks ({size} lines)"


def measure(url: str, most: int, verbose: bool) -> Counter[str]:
    engine = make_engine(url, create=False, readonly=True)
    kinds: Counter[str] = Counter()
    with Session(engine) as session:
        prs = {p.id: p for p in session.scalars(select(PullRequest))}
        by_merge = {p.merge_commit_sha: p for p in prs.values() if p.merge_commit_sha}
        clones = {r.id: r.clone_path for r in session.scalars(select(Repo))}
        links = list(session.scalars(select(ChainLink)))
        decided = {(link.newer_pr_id, link.older_pr_id): link for link in links}
        bases = StageBases(clones)
        hunks = HunkEntry(clones)

        def code(pr_id: int) -> str | None:
            patch = session.get(PRPatch, pr_id)
            return None if patch is None else split_patch(patch.diff).code

        refused = [link for link in links if link.kept and REFUSED in link.why]
        with tempfile.TemporaryDirectory(prefix="bench-bridges-") as scratch:
            for link in refused:
                older, newer = prs[link.older_pr_id], prs[link.newer_pr_id]
                said = re.search(r"cannot be entered after ([#\d ←]+),", link.why)
                if not said or said.group(1).strip() != f"#{older.number}":
                    kinds["refused after a longer path"] += 1
                    continue
                clone = clones.get(link.repo_id)
                gold = code(older.id)
                if not clone or not Path(clone).exists() or not newer.base_sha or gold is None:
                    kinds["no clone, base or patch"] += 1
                    continue
                kinds[_hunks_refusal(hunks, link.repo_id, older, newer, gold, code)] += 1
                bad = refused_files(clone, newer.base_sha, gold, scratch) or []
                shas = _between(clone, older.merge_commit_sha or "", newer.base_sha, bad)
                kinds["refused pairs"] += 1
                if not shas:
                    kinds["no commit in between on the failing files"] += 1
                    continue
                if len(shas) > most:
                    kinds[f"more than {most} commits in between"] += 1
                    continue
                bridges = [by_merge.get(sha) for sha in shas]
                if any(b is None for b in bridges):
                    kinds["a commit in between is no mined PR"] += 1
                    continue
                golds = [gold] + [code(b.id) or "" for b in bridges if b]
                if not bases.reverts(link.repo_id, newer.base_sha, golds):
                    kinds["still refused with the PRs in between reverted"] += 1
                    continue
                kinds[f"enterable through {len(shas)} PR(s) in between"] += 1
                for b in bridges:
                    assert b is not None
                    to_s = decided.get((b.id, older.id))
                    state = (
                        "no link judged"
                        if to_s is None
                        else "kept"
                        if to_s.kept
                        else f"dropped: {to_s.rule or to_s.drop_kind}"
                    )
                    kinds[f"  bridge → s: {state}"] += 1
                    to_t = decided.get((newer.id, b.id))
                    kinds[
                        "  t → bridge: "
                        + ("no link judged" if to_t is None else "kept" if to_t.kept else "dropped")
                    ] += 1
                    enters = bases.reverts(link.repo_id, b.base_sha or "", [gold])
                    kinds[f"  bridge enterable after s: {enters}"] += 1
                    if verbose:
                        print(f"    #{older.number} → #{b.number} ({state}) → #{newer.number}")
    engine.dispose()
    return kinds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stores", nargs="+", help="SQLite stores a chains build ran on")
    parser.add_argument("--most", type=int, default=3, help="most commits in between to try")
    parser.add_argument("-v", action="store_true", help="print each bridge")
    args = parser.parse_args()
    for store in args.stores:
        print(store)
        for kind, count in sorted(measure(f"sqlite:///{store}", args.most, args.v).items()):
            print(f"  {kind}: {count}")


if __name__ == "__main__":
    main()
