"""What entry by replay can expose, per replayed stage of a built store (issue 75).

A replayed stage starts at B_t with the agent's difference from history applied three ways; where
history rewrote lines the agent wrote otherwise, B_t's lines stay: earlier gold code, as history
left it, that the agent did not write. How much depends on the agent. The bound read here is the
agent that wrote none of the earlier stages' lines as history did: then what stays is what no
revert of the earlier gold patches can take out at B_t, the lines entry by hunks would keep
(`HunkEntry.kept`, newest stage first), or, where a revert fails otherwise than by hunks (a file
the earlier stage created and history changed since), whole files. Printed per store: replayed
stages, how many keep nothing, the kept lines (median and largest), how many stages' own gold
lines meet kept lines, and how many stages have a whole-file failure.

    python bench/bench_replay_exposure.py STORE.db [STORE.db ...]
"""

from __future__ import annotations

import argparse
import statistics
from collections import defaultdict

from sqlalchemy import select
from sqlalchemy.orm import Session

from prchain.chains.evidence.hunks import HunkEntry, changed_lines
from prchain.chains.evidence.propagation import EarlierStage
from prchain.chains.reading.patches import split_patch
from prchain.store.models import ChainStage, PRPatch, PullRequest, Repo
from prchain.store.opener import make_engine


def measure(url: str) -> dict[str, object]:
    engine = make_engine(url, create=False, readonly=True)
    with Session(engine) as session:
        prs = {p.id: p for p in session.scalars(select(PullRequest))}
        clones = {r.id: r.clone_path for r in session.scalars(select(Repo))}
        entry = HunkEntry(clones)
        chains: defaultdict[int, list[ChainStage]] = defaultdict(list)
        for stage in session.scalars(select(ChainStage).order_by(ChainStage.idx)):
            chains[stage.chain_id].append(stage)

        def code(pr_id: int) -> str:
            patch = session.get(PRPatch, pr_id)
            return "" if patch is None else split_patch(patch.diff).code

        kept_lines: list[int] = []
        whole = meets = 0
        for stages in chains.values():
            for t, stage in enumerate(stages):
                if stage.entry != "replay":
                    continue
                pr = prs[stage.pr_id]
                earlier = [
                    EarlierStage(prs[s.pr_id].merge_commit_sha, code(s.pr_id)) for s in stages[:t]
                ]
                kept = entry.kept(pr.repo_id, stage.base_sha or "", earlier)
                if kept is None:
                    whole += 1
                    continue
                kept_lines.append(sum(len(lines) for lines in kept.lines.values()))
                own = changed_lines(code(pr.id))
                meets += any(own.get(path, set()) & lines for path, lines in kept.lines.items())
    engine.dispose()
    return {
        "replayed": len(kept_lines) + whole,
        "keeping nothing": sum(1 for n in kept_lines if n == 0),
        "kept lines, median": statistics.median(kept_lines) if kept_lines else 0,
        "kept lines, most": max(kept_lines, default=0),
        "own lines meet kept ones": meets,
        "a whole-file failure": whole,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("stores", nargs="+", help="SQLite stores a chains build ran on")
    args = parser.parse_args()
    for store in args.stores:
        print(store, measure(f"sqlite:///{store}"))


if __name__ == "__main__":
    main()
