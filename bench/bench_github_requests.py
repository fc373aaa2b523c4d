"""API requests spent mining 1,000 PRs (with files, commits, comments, reviews) from the fake GitHub.

Acceptance: at most 50 requests for 1,000 PRs — GraphQL pages of PRs plus patches from the bare
clone. Prints total requests, requests per PR, the split by endpoint, and a rerun with nothing new.
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

from miner.config import GithubConfig  # noqa: E402
from miner.github import GithubSource  # noqa: E402
from prchain.testing.fake_github import FakeGithub  # noqa: E402
from prchain.testing.fake_github_data import generate_repo  # noqa: E402

BUDGET = 50


def run(fake: FakeGithub, config: GithubConfig, clones: Path, cursor: str | None) -> tuple[int, int, int, str | None, float]:
    fake.reset_counts()
    start = time.perf_counter()
    source = GithubSource(config, "acme/widgets", str(clones))
    prs = list(source.pull_requests(cursor))
    issues = list(source.issues(cursor))
    last = source.cursor_after(prs[-1]) if prs else cursor
    return len(prs), len(issues), source.requests_made(), last, time.perf_counter() - start


def main(n_prs: int) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        started = time.perf_counter()
        repo = generate_repo(root / "origins" / "acme" / "widgets", n_prs)
        built = time.perf_counter() - started
        fake = FakeGithub(tokens=("ghp_bench",)).start()
        fake.add_repo(repo)
        os.environ["GITHUB_TOKEN"] = "ghp_bench"
        config = GithubConfig.model_validate(
            {"api_url": fake.url, "clone_url_template": f"file://{root / 'origins'}/{{full_name}}"})
        n, issues, requests, cursor, seconds = run(fake, config, root / "clones", None)
        by_endpoint = Counter(fake.counts)
        again = run(fake, config, root / "clones", cursor)
        fake.stop()
    files = sum(len(p.files) for p in repo.prs.values())
    commits = sum(len(p.commits) for p in repo.prs.values())
    comments = sum(len(p.comments) + sum(len(r.comments) + 1 for r in p.reviews) for p in repo.prs.values())
    print(f"dataset: {n_prs} PRs, {len(repo.issues)} issues, {files} files, {commits} commits, {comments} comments "
          f"(git history built in {built:.1f} s); page size {config.page_size}; source only (miner.mine not used)")
    print(f"full run: {n} PRs + {issues} issues in {seconds:.1f} s, {requests} API requests, "
          f"{requests / max(n, 1):.3f} requests/PR")
    for endpoint, count in sorted(by_endpoint.items()):
        print(f"  {endpoint}: {count}")
    print(f"rerun with nothing new: {again[0]} PR(s) re-read at the cursor, {again[2]} API requests, {again[4]:.2f} s")
    ok = requests <= BUDGET * n_prs / 1000
    print(f"acceptance (<= {BUDGET} requests per 1,000 PRs): {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000))
