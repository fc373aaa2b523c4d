"""How long can a built store's chains be? The ceiling the links set, before selection.

Reads the links the latest `chains build` stored (`chain_links`) and prints, for the graph of kept
links (older → newer):

- nodes, edges, and how many nodes have both a link in and a link out (only those can be a
  middle stage: a graph where nearly none do is a matching, and every chain of it has two stages);
- the longest path from each source, as a distribution (2, 3, 4, 5 or more PRs) and the share of
  sources with three or more: with every kept link, with only the links the stage-base check
  (rule 0, `stage_base_refused`) let into a chain, and with each dropping rule's links added back
  (what lifting that rule alone would allow, rule 0 aside);
- with `--why`, for each link refused by rule 0 as a pair: which files of the older PR's gold code
  do not revert at the newer PR's base (git, in a scratch index borrowing the clone's objects, as
  `prchain/chains/evidence/revertible.py` asks), whether the newer PR edits those files itself,
  and how many first-parent commits touched them in between.

A path is not a chain (the chain rules, near-duplicates and the search's bounds still apply): the
figures are ceilings, for telling apart "the links are too few" from "selection cuts them".

    python bench/bench_chain_ceiling.py STORE.db [STORE.db ...] [--why]
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import tempfile
from collections import Counter, defaultdict
from collections.abc import Iterable
from functools import cache
from pathlib import Path

from sqlalchemy import select
from sqlalchemy.orm import Session

from prchain.chains.reading.patches import file_sections, section_path, split_patch
from prchain.environments.stage_entry import reverted_part
from prchain.store.models import ChainLink, PRPatch, PullRequest, Repo
from prchain.store.opener import make_engine

REFUSED = "stage_base_refused"
LONGEST = 5  # the paper's and prchain's max_len


def ceiling(edges: Iterable[tuple[int, int]]) -> dict[str, object]:
    """Nodes, edges, middle nodes and the longest-path distribution of a DAG given as (newer,
    older) pairs."""
    out: defaultdict[int, set[int]] = defaultdict(set)
    into: defaultdict[int, set[int]] = defaultdict(set)
    pairs = set(edges)
    for newer, older in pairs:
        out[older].add(newer)
        into[newer].add(older)
    nodes = set(out) | set(into)

    @cache
    def longest(node: int) -> int:
        return 1 + max((longest(n) for n in out[node]), default=0)

    sources = [n for n in nodes if not into[n]]
    lengths = Counter(min(longest(n), LONGEST) for n in sources)
    three = sum(v for k, v in lengths.items() if k >= 3)
    return {
        "edges": len(pairs),
        "nodes": len(nodes),
        "middle": sum(1 for n in nodes if out[n] and into[n]),
        "lengths": dict(sorted(lengths.items())),
        "share_3": round(three / len(sources), 3) if sources else 0.0,
    }


def _git(env: dict[str, str], cwd: str, *args: str, data: bytes | None = None) -> int:
    done = subprocess.run(["git", *args], input=data, capture_output=True, env=env, cwd=cwd)
    return done.returncode


def refused_files(clone: str, base: str, gold: str, scratch: str) -> list[str] | None:
    """Files of `gold` (a gold code patch) that do not revert, each on its own, at `base`; None
    for a base the clone lacks."""
    git_dir = subprocess.run(
        ["git", "-C", clone, "rev-parse", "--absolute-git-dir"], capture_output=True, text=True
    ).stdout.strip()
    tree = Path(scratch, "tree")
    tree.mkdir(exist_ok=True)
    Path(scratch, "objects").mkdir(exist_ok=True)
    env = dict(
        os.environ,
        GIT_DIR=git_dir,
        GIT_WORK_TREE=str(tree),
        GIT_INDEX_FILE=str(Path(scratch, "index")),
        GIT_OBJECT_DIRECTORY=str(Path(scratch, "objects")),
        GIT_ALTERNATE_OBJECT_DIRECTORIES=str(Path(git_dir, "objects")),
    )
    bad = []
    for section in file_sections(reverted_part(gold)):
        if _git(env, str(tree), "read-tree", base):
            return None
        data = (section if section.endswith("\n") else section + "\n").encode()
        if _git(env, str(tree), "apply", "-R", "--cached", "--3way", data=data):
            bad.append(section_path(section))
    return bad


def why_refused(session: Session, links: list[ChainLink]) -> Counter[str]:
    """Per link refused by rule 0 as a pair, where its revert fails (see the module's doc)."""
    prs = {p.id: p for p in session.scalars(select(PullRequest))}
    clones = {r.id: r.clone_path for r in session.scalars(select(Repo))}
    kinds: Counter[str] = Counter()
    with tempfile.TemporaryDirectory(prefix="bench-ceiling-") as scratch:
        for link in links:
            older, newer = prs[link.older_pr_id], prs[link.newer_pr_id]
            clone = clones.get(link.repo_id)
            said = re.search(r"cannot be entered after ([#\d ←]+),", link.why)
            if not said or said.group(1).strip() != f"#{older.number}":
                kinds["refused after a longer path"] += 1
                continue
            if not clone or not newer.base_sha or not Path(clone).exists():
                kinds["no clone or base"] += 1
                continue
            older_diff = session.get(PRPatch, older.id)
            newer_diff = session.get(PRPatch, newer.id)
            if older_diff is None or newer_diff is None:
                kinds["no patch"] += 1
                continue
            gold = split_patch(older_diff.diff).code
            bad = refused_files(clone, newer.base_sha, gold, scratch)
            if bad is None:
                kinds["base missing"] += 1
                continue
            own = set(split_patch(newer_diff.diff).code_paths)
            if not bad:
                kinds["no file fails alone"] += 1
            elif set(bad) <= own:
                kinds["failing files all edited by the newer PR"] += 1
            elif own & set(bad):
                kinds["failing files partly edited by the newer PR"] += 1
            else:
                kinds["failing files outside the newer PR"] += 1
            between = subprocess.run(
                ["git", "-C", clone, "rev-list", "--first-parent", "--count",
                 f"{older.merge_commit_sha}..{newer.base_sha}", "--", *bad],
                capture_output=True, text=True,
            ).stdout.strip()  # fmt: skip
            if bad and between.isdigit():
                count = int(between)
                kinds[
                    f"commits in between: {'1' if count == 1 else '2-9' if count < 10 else '10+'}"
                ] += 1
    return kinds


def measure(url: str, why: bool) -> None:
    engine = make_engine(url, create=False, readonly=True)
    with Session(engine) as session:
        links = list(session.scalars(select(ChainLink)))
        kept = [(link.newer_pr_id, link.older_pr_id) for link in links if link.kept]
        refused = [link for link in links if link.kept and REFUSED in link.why]
        refused_pairs = {(link.newer_pr_id, link.older_pr_id) for link in refused}
        print(url)
        print(f"  kept links                     {ceiling(kept)}")
        print(
            f"  kept, into a chain past rule 0 {ceiling(p for p in kept if p not in refused_pairs)}"
        )
        rules = Counter(link.rule for link in links if not link.kept and link.rule)
        for rule, count in rules.most_common():
            lifted = kept + [
                (link.newer_pr_id, link.older_pr_id) for link in links if link.rule == rule
            ]
            print(f"  + {rule} ({count}) {ceiling(lifted)}")
        if why:
            for kind, count in sorted(why_refused(session, refused).items()):
                print(f"  rule 0 refusals: {kind}: {count}")
    engine.dispose()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stores", nargs="+", help="SQLite stores a chains build ran on")
    parser.add_argument("--why", action="store_true", help="ask git why rule 0 refused each pair")
    args = parser.parse_args()
    for store in args.stores:
        measure(f"sqlite:///{store}", args.why)


if __name__ == "__main__":
    main()
