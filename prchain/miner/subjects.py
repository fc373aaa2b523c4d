"""What a merge commit's subject says: the PR it lands, or that it only syncs a branch.

The miner reads these subjects on the first-parent line and off it to find PRs; chains read them
inside a PR's own commits, to tell the merges it carries (`prchain.chains.evidence.carriers`) and to skip a merge's
subject as a reference (`prchain.chains.evidence.loading`). One set of patterns serves all three.
"""

from __future__ import annotations

import re

# "from owner/branch" is missing when the merge was made by hand with GitHub's default subject.
# Any text may follow the number: merges whose subject was edited by hand ("Merge pull request
# #7232 - Release 19.3.1", "… #158, fixes issue 504") are PRs all the same.
MERGE = re.compile(
    r"^Merge pull request #(?P<num>\d{1,9})\b(?: from (?P<branch>\S+))?[\s,:;-]*(?P<said>.*)$"
)
# bors/homu merges: "Auto merge of #N - owner:branch, r=reviewer", the PR's title and body below.
BORS = re.compile(r"^Auto merge of #(?P<num>\d{1,9})\b")
# bors-ng merges: "Merge #N" (or a batch, "Merge #N #M", an octopus merge with one parent per PR),
# each PR below as "N: Title r=reviewer a=author" and its body (rust-analyzer until 2022).
BORS_NG = re.compile(r"^Merge (?P<nums>#\d{1,9}(?:\s+#\d{1,9})*)\s*$")
BORS_NG_ENTRY = re.compile(
    r"^(?P<num>\d{1,9}): (?P<title>.*?)(?:\s+r=\S*)?(?:\s+a=\S*)?\s*$", re.MULTILINE
)
# rust-lang's bors merges each PR of a rollup into the rollup's branch as "Rollup merge of #N".
ROLLUP = re.compile(r"^Rollup merge of #(?P<num>\d{1,9})\b")
# Read inside a PR's commits, any "Merge #N …" is a merge: bors-ng's, or one written by hand
# (pyo3 #160 merged master into its branch as "Merge #154 and #155 changed with `syn13`").
MERGE_OF_NUMBER = re.compile(r"^Merge #(?P<num>\d{1,9})\b")
# A branch brought up to date: "Merge branch 'main' into …", "Merge remote-tracking branch …".
BRANCH_SYNC = re.compile(r"^Merge (?:remote-tracking )?branch\b")


def bors_ng_numbers(subject: str) -> list[int]:
    """The PR numbers of a bors-ng merge subject ([] for any other subject)."""
    found = BORS_NG.match(subject)
    return [int(n) for n in found.group("nums").replace("#", " ").split()] if found else []


def merged_pr(subject: str) -> int | None:
    """The PR a merge subject names first (a bors-ng batch: its first PR), or None."""
    for pattern in (MERGE, BORS, ROLLUP, MERGE_OF_NUMBER):
        found = pattern.match(subject)
        if found:
            return int(found.group("num"))
    return None


def is_merge(subject: str) -> bool:
    """Whether a subject is a merge's: of a PR, or a branch sync."""
    return merged_pr(subject) is not None or BRANCH_SYNC.match(subject) is not None
