"""API requests and GraphQL points spent mining 1,000 PRs (with files, commits, comments, reviews,
review comments, closing issues) from the fake GitHub, end to end through `prchain.miner.mine` into SQLite.

The fake charges each GraphQL query the points GitHub's documented rule gives (`prchain/miner/points.py`)
and reports them in `rateLimit { cost }`; the miner adds up what the server says.
Acceptance: at most 50 requests and at most 0.15 points per PR for 1,000 PRs. Prints requests and
points per PR, the split by endpoint, and a rerun with nothing new.
Run: .venv/bin/python bench/bench_github_requests.py [N_PRS]
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sqlalchemy import Engine  # noqa: E402

from prchain.app.config import Config  # noqa: E402
from prchain.miner.mine import RepoSummary, mine  # noqa: E402
from prchain.store.opener import make_engine  # noqa: E402
from tests.support.fake_github import FakeGithub  # noqa: E402
from tests.support.fake_github_data import generate_repo  # noqa: E402

BUDGET = 50
POINTS_PER_PR = 0.15


def run(
    fake: FakeGithub, config: Config, engine: Engine
) -> tuple[RepoSummary, Counter[str], float]:
    fake.reset_counts()
    start = time.perf_counter()
    summary = mine(config.miner, engine, ["acme/widgets"]).repos[0]
    return summary, Counter(fake.counts), time.perf_counter() - start


def main(n_prs: int) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        started = time.perf_counter()
        repo = generate_repo(root / "origins" / "acme" / "widgets", n_prs)
        built = time.perf_counter() - started
        fake = FakeGithub(tokens=("ghp_bench",)).start()
        fake.add_repo(repo)
        os.environ["GITHUB_TOKEN"] = "ghp_bench"
        config = Config.model_validate(
            {
                "store": {"url": f"sqlite:///{root / 'bench.db'}"},
                "miner": {
                    "source": "github",
                    "clone_dir": str(root / "clones"),
                    "github": {
                        "api_url": fake.url,
                        "clone_url_template": f"file://{root / 'origins'}/{{full_name}}",
                    },
                },
            }
        )
        engine = make_engine(config.store.url)
        first, by_endpoint, seconds = run(fake, config, engine)
        charged = fake.points_charged
        again, _, again_seconds = run(fake, config, engine)
        engine.dispose()
        fake.stop()
    files = sum(len(p.files) for p in repo.prs.values())
    commits = sum(len(p.commits) for p in repo.prs.values())
    comments = sum(
        len(p.comments) + sum(len(r.comments) + 1 for r in p.reviews) for p in repo.prs.values()
    )
    print(
        f"dataset: {n_prs} PRs, {len(repo.issues)} issues, {files} files, {commits} commits, {comments} comments "
        f"(git history built in {built:.1f} s); GraphQL page size {config.miner.github.page_size}"
    )
    print(
        f"full run (prchain.miner.mine into SQLite): {first.prs_new} PRs + {first.issues} issues, {first.references} references "
        f"({first.pr_pr_references} PR->PR) in {seconds:.1f} s"
    )
    print(f"  API requests: {first.requests} ({first.requests_per_pr:.3f} requests/PR)")
    print(
        f"  GraphQL points: {first.points} ({first.points_per_pr:.3f} points/PR; "
        f"the fake charged {charged})"
    )
    for endpoint, count in sorted(by_endpoint.items()):
        print(f"    {endpoint}: {count}")
    print(
        f"rerun with nothing new: {again.prs_new} new PRs, {again.prs_updated} re-read at the cursor, "
        f"{again.requests} API requests, {again_seconds:.2f} s"
    )
    ok = first.requests <= BUDGET * n_prs / 1000 and first.points_per_pr <= POINTS_PER_PR
    print(
        f"acceptance (<= {BUDGET} requests per 1,000 PRs, <= {POINTS_PER_PR} points per PR): "
        f"{'PASS' if ok else 'FAIL'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000))
