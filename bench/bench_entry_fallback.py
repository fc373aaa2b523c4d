"""What the carry-forward fallback gives and costs on built stores: chains by length, stages, the
share with three or more stages, stages per 1,000 PRs, stages entered by each mechanism, what
those entered by propagation withhold of B_t (files and lines outside PRs changed in the carried
files), and what those entered by hunks keep of the earlier gold (hunks and lines kept as B_t has
them).

    python bench/bench_entry_fallback.py STORE.db [STORE.db ...] [--strategy thread]
"""

from __future__ import annotations

import argparse
from collections import Counter

from sqlalchemy import select
from sqlalchemy.orm import Session

from prchain.chains.evidence.hunks import HunkEntry
from prchain.chains.evidence.propagation import EarlierStage, Propagation
from prchain.store.models import Chain, ChainBuild, ChainStage, Repo
from prchain.store.opener import make_engine


def measure(url: str, strategy: str) -> dict[str, object]:
    engine = make_engine(url)
    with Session(engine) as session:
        clones = {r.id: r.clone_path for r in session.scalars(select(Repo))}
        build = session.scalars(
            select(ChainBuild).where(ChainBuild.strategy == strategy).order_by(ChainBuild.id.desc())
        ).first()
        chains = session.scalars(
            select(Chain).where(Chain.strategy == strategy, Chain.superseded_at.is_(None))
        ).all()
        propagation = Propagation(clones)
        by_hunks = HunkEntry(clones)
        kept_hunks = kept_lines = 0
        lengths: Counter[int] = Counter()
        entries: Counter[str] = Counter()
        files = lines = 0
        for chain in chains:
            stages = session.scalars(
                select(ChainStage).where(ChainStage.chain_id == chain.id).order_by(ChainStage.idx)
            ).all()
            lengths[len(stages)] += 1
            for t, stage in enumerate(stages):
                entries[stage.entry] += 1
                earlier = [EarlierStage(s.end_sha, s.gold_patch) for s in stages[:t]]
                base = stage.base_sha or ""
                if stage.entry == "hunks":
                    kept = by_hunks.kept(chain.repo_id, base, earlier)
                    kept_hunks += kept.hunks if kept else 0
                    kept_lines += sum(map(len, kept.lines.values())) if kept else 0
                if stage.entry != "propagate":
                    continue
                files += len(propagation.withheld(chain.repo_id, base, earlier))
                lines += propagation.withheld_lines(chain.repo_id, base, earlier)
    prs = int((build.graph or {}).get("prs", 0)) if build else 0
    stages_total = sum(k * v for k, v in lengths.items())
    total = sum(lengths.values())
    return {
        "store": url,
        "chains 2/3/4/5": "/".join(str(lengths[k]) for k in (2, 3, 4, 5)),
        "chains": total,
        "stages": stages_total,
        "share >=3": round(sum(v for k, v in lengths.items() if k >= 3) / total, 3) if total else 0,
        "per 1000 PRs": round(1000 * stages_total / prs, 1) if prs else 0,
        "propagated stages": entries["propagate"],
        "stages by hunks": entries["hunks"],
        "kept hunks": kept_hunks,
        "kept lines": kept_lines,
        "withheld files": files,
        "withheld lines": lines,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("stores", nargs="+")
    parser.add_argument("--strategy", default="thread")
    args = parser.parse_args()
    for store in args.stores:
        url = store if "://" in store else f"sqlite:///{store}"
        print(measure(url, args.strategy))


if __name__ == "__main__":
    main()
