"""A synthetic store of many PRs and references, shaped like a real one, for the chains benchmark.

PRs live in code areas (a core module plus a few files each). 35% of references name an earlier PR
(half of them one of the last ten PRs of the same area, half any of the last 1,500 merges), 7% are
shared-issue links, the rest point to issues or outside the repository. Evidence texts mix explicit
wording, cue phrases and bare numbers. The result is far denser in chains than a real repository
(astral-sh/ruff: ~650 chains from 15k PRs; here tens of thousands from 100k), a stress test. Written
with bulk inserts, so 100,000 PRs and 300,000 references take seconds.

Usage: python bench/synth_db.py OUT.db [--prs 100000] [--refs 300000]
"""

from __future__ import annotations

import argparse
import bisect
import random
import sys
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sqlalchemy import Engine, insert  # noqa: E402

from prchain.store.models import PRFile, PRPatch, PullRequest, Reference, Repo  # noqa: E402
from prchain.store.opener import make_engine  # noqa: E402

T0 = datetime(2020, 1, 1)
AREAS_PER_REPO = 400
FILES_PER_AREA = 6
PR_TYPES = (
    ["mention"] * 45
    + ["fixes"] * 15
    + ["follow_up"] * 15
    + ["cross_reference"] * 20
    + ["reverts"] * 1
)
EVIDENCE = {
    "mention": [
        "introduced in #{}",
        "see #{}",
        "Similar to #{}, but for sets",
        "While working on #{} I noticed",
    ],
    "fixes": ["Fixes #{}"],
    "follow_up": ["Follow-up to #{}"],
    "cross_reference": ["#{}"],
    "reverts": ["Reverts #{}"],
    "issue_mediated": ["fixes an issue #{} also refers to"],
    "closing_issue": ["Closes #{}"],
}
BOTS = ["dependabot[bot]", "renovate[bot]"]


def _diff(paths: list[str], number: int) -> str:
    return "".join(
        f"diff --git a/{p} b/{p}\nindex 1111111..2222222 100644\n--- a/{p}\n+++ b/{p}\n"
        f"@@ -1,2 +1,3 @@\n line one\n+change for #{number}\n line two\n"
        for p in paths
    )


def _prs(
    rng: random.Random, n: int, repos: int
) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]], list[int]]:
    prs, files, patches, areas = [], [], [], []
    for i in range(1, n + 1):
        repo_id, area = 1 + i % repos, rng.randrange(AREAS_PER_REPO)
        merged = T0 + timedelta(minutes=10 * i)
        # Every PR of an area touches its core module, so linked PRs share files as real follow-ups do.
        paths = sorted(
            {f"src/area{area}/core.py"}
            | {
                f"src/area{area}/mod{rng.randrange(FILES_PER_AREA)}.py"
                for _ in range(rng.randint(0, 2))
            }
        )
        if rng.random() < 0.3:
            paths.append(f"tests/area{area}/test_mod.py")
        prs.append(
            {
                "id": i,
                "repo_id": repo_id,
                "number": i,
                "title": f"Change {i}",
                "body": "",
                "state": "merged",
                "author": rng.choice(BOTS) if rng.random() < 0.02 else f"dev{rng.randrange(300)}",
                "created_at": merged - timedelta(hours=rng.randint(1, 72)),
                "merged_at": merged,
                "base_sha": f"{i:040x}",
                "merge_commit_sha": f"{i + 10**9:040x}",
                "additions": 3 * len(paths),
                "deletions": 0,
                "changed_files": len(paths),
                "patch_status": "ok" if rng.random() < 0.97 else "unavailable",
                "source": "git",
            }
        )
        files += [
            {
                "pr_id": i,
                "path": p,
                "status": "modified",
                "additions": 1,
                "deletions": 0,
                "is_binary": False,
            }
            for p in paths
        ]
        patches.append({"pr_id": i, "diff": _diff(paths, i), "size_bytes": 120 * len(paths)})
        areas.append(area)
    return prs, files, patches, areas


def _earlier_in_area(rng: random.Random, i: int, areas: list[int], repos: int) -> int | None:
    """Half the time one of the last few PRs of the same repo and area, else any recent PR of the repo."""
    if rng.random() < 0.5:
        j = i - repos * rng.randint(1, 300)
        return j if j >= 1 else None
    same = _AREA_INDEX.get((i % repos, areas[i - 1]), [])
    pos = bisect.bisect_left(same, i)
    return same[pos - rng.randint(1, min(pos, 10))] if pos else None


_AREA_INDEX: dict[tuple[int, int], list[int]] = {}


def _index_areas(areas: list[int], repos: int) -> None:
    _AREA_INDEX.clear()
    for i, area in enumerate(areas, start=1):
        _AREA_INDEX.setdefault((i % repos, area), []).append(i)


def _references(
    rng: random.Random, n: int, total: int, areas: list[int], repos: int
) -> list[dict[str, Any]]:
    refs: dict[tuple[Any, ...], dict[str, Any]] = {}
    while len(refs) < total:
        i = rng.randint(1, n)
        roll = rng.random()
        target, kind, rtype, via = rng.randint(1, n), "issue", "mention", 0
        if roll < 0.35 and (j := _earlier_in_area(rng, i, areas, repos)):
            target, kind, rtype = j, "pr", rng.choice(PR_TYPES)
        elif roll < 0.42 and (j := _earlier_in_area(rng, i, areas, repos)):
            target, kind, rtype, via = j, "pr", "issue_mediated", 10**6 + rng.randrange(20000)
        elif roll < 0.80:
            kind, rtype = "issue", rng.choice(["mention", "closing_issue"])
        else:
            kind, target = "external", rng.randint(1, 10**5)
        key = (i, target, kind, rtype, via)
        refs[key] = {
            "repo_id": 1 + i % repos,
            "src_pr_id": i,
            "target_repo": f"acme/repo{1 + i % repos}" if kind != "external" else "other/lib",
            "target_number": target,
            "target_kind": kind,
            "target_pr_id": target if kind == "pr" else None,
            "type": rtype,
            "found_in": rng.choice(["body", "commit", "comment", "title"]),
            "via_issue": via,
            "evidence": rng.choice(EVIDENCE[rtype]).format(target),
        }
    # Shared-issue links need their (found_in) uniqueness by construction: one row per key above.
    return list(refs.values())


def _bulk(engine: Engine, model: Any, rows: list[dict[str, Any]], chunk: int = 20000) -> None:
    with engine.begin() as conn:
        for start in range(0, len(rows), chunk):
            conn.execute(insert(model), rows[start : start + chunk])


def make_synthetic_db(
    path: Path, prs: int = 100_000, refs: int = 300_000, repos: int = 5, seed: int = 7
) -> dict[str, int]:
    """Write a fresh SQLite store at `path`; returns the row counts."""
    path.unlink(missing_ok=True)
    engine = make_engine(f"sqlite:///{path}")
    rng = random.Random(seed)
    pr_rows, file_rows, patch_rows, areas = _prs(rng, prs, repos)
    _index_areas(areas, repos)
    ref_rows = _references(rng, prs, refs, areas, repos)
    _bulk(
        engine,
        Repo,
        [{"id": r, "full_name": f"acme/repo{r}", "source": "git"} for r in range(1, repos + 1)],
    )
    for model, rows in (
        (PullRequest, pr_rows),
        (PRFile, file_rows),
        (PRPatch, patch_rows),
        (Reference, ref_rows),
    ):
        _bulk(engine, model, rows)
    engine.dispose()
    return {"prs": len(pr_rows), "files": len(file_rows), "references": len(ref_rows)}


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("out", type=Path)
    parser.add_argument("--prs", type=int, default=100_000)
    parser.add_argument("--refs", type=int, default=300_000)
    args = parser.parse_args()
    print(make_synthetic_db(args.out, args.prs, args.refs))


if __name__ == "__main__":
    main()
