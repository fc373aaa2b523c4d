"""The held-out stages of a repository, by a rule fixed before anything runs: the PRs merged on the
first-parent history in the last four years (to the clone's newest commit, or to `--until`) whose commit changes a
file matching the test pattern, then `--want` of them spread evenly over that list, oldest first.

Prints the `owner/name#N` arguments of bench_heldout_eras.py on stdout and the picked PRs (date and
subject) on stderr. The rule the held-out runs of stops 61–64 used (`every k-th, first --want`)
never reached the newest candidates when the list was not a multiple of --want: gin's last 20 of
147 could not be picked. This one spreads over the whole list.

    python bench/pick_heldout_stages.py /work/.mirror/gin-gonic+gin/repo gin-gonic/gin \\
        '_test\\.go$' 22
"""

from __future__ import annotations

import argparse
import re
import sys
from datetime import datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from prchain.core import git  # noqa: E402

SQUASHED = re.compile(r"\(#(\d+)\)\s*$")
MERGED = re.compile(r"^(?:Merge pull request #|Auto merge of #|Merge #)(\d+)")
YEARS = 4


def candidates(
    clone: Path, tests: re.Pattern[str], until: str | None = None
) -> list[tuple[int, str]]:
    """(PR number, "date subject") of the first-parent commits of the four years up to `until`
    (the clone's newest commit when None) that name a PR and change a test file, oldest first."""
    newest = until or git.output(clone, "log", "-1", "--format=%cI").strip()
    since = (datetime.fromisoformat(newest) - timedelta(days=365 * YEARS)).date().isoformat()
    log = git.output(
        clone,
        "log",
        "--first-parent",
        f"--since={since}",
        f"--until={newest}",
        "--reverse",
        "--format=@@%ad %s",
        "--date=short",
        "--name-only",
    )
    found = []
    for block in log.split("@@")[1:]:
        head, *files = block.strip().split("\n")
        subject = head.split(" ", 1)[-1]
        number = SQUASHED.search(subject) or MERGED.search(subject)
        if number and any(tests.search(f) for f in files if f):
            found.append((int(number.group(1)), head))
    return found


def spread(rows: list[tuple[int, str]], want: int) -> list[tuple[int, str]]:
    """`want` rows at even steps over the whole list, the middle of each step (all when fewer)."""
    if len(rows) <= want:
        return rows
    return [rows[int((i + 0.5) * len(rows) / want)] for i in range(want)]


def main_() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("clone", type=Path)
    parser.add_argument("name", help="owner/name")
    parser.add_argument("tests", help="a regular expression of the repository's test files")
    parser.add_argument("want", type=int)
    parser.add_argument("--until", help="end the four years at this date (YYYY-MM-DD), not today")
    args = parser.parse_args()
    rows = candidates(args.clone, re.compile(args.tests), args.until)
    picked = spread(rows, args.want)
    print(f"{len(rows)} candidates, {len(picked)} picked", file=sys.stderr)
    for number, head in picked:
        print(f"{args.name}#{number:<8} {head}", file=sys.stderr)
    print(" ".join(f"{args.name}#{number}" for number, _ in picked))
    return 0


if __name__ == "__main__":
    sys.exit(main_())
