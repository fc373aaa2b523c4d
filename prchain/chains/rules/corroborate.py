"""Corroboration: whether a link the rules kept has more than one sign that its newer PR works on
the older PR's code (rule `uncorroborated`).

Every rule before this one asks one question of a link: are there lines, names, files or words
enough. A newer PR with a task of its own that meets the older PR's code answers each of them
well enough (a `cargo fmt` pass over code just written, an argument threaded beside the older
one's, a feature rewriting a few of the older lines on its way) and was, in every hand check
since round 33, most of what a build without the link vetter got wrong. No one sign tells the two
apart on histories it was not chosen on; a link backed by several at once is what stays right.
The four signs, each a fact of the pair, not a guess at it:

- contact: points of contact with the older PR's code (`code_contact`) reach
  `corroboration_contact`;
- focus: those points are at least `corroboration_share` of the newer PR's lines of code;
- files: the two PRs' files overlap (Jaccard) at least `corroboration_overlap`;
- title: the newer PR's title names a word the older PR wrote, in its code or its title.

Links stated in dependency wording and reverts stand on their text. The rule guesses at what
the link vetter reads: `chains vet` asks about its drops, and the build lets a `dependent`
verdict lift it (prchain/chains/building/build.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING

from prchain.chains.evidence.lines import parse_patch
from prchain.chains.reading.leakage import is_common
from prchain.chains.record import LinkEvidence
from prchain.chains.rulebook import RuleName
from prchain.chains.rules.link_rules import code_contact, lineage_of

if TYPE_CHECKING:
    from prchain.chains.config import ChainsConfig
    from prchain.chains.evidence.nodes import PRNode

UNCORROBORATED: RuleName = "uncorroborated"
SIGNS = ("contact", "focus", "files", "title")
# Text a link stands on by itself: wording that calls it a dependency, or an undo.
STANDS_ON_TEXT = frozenset({"strong", "revert"})

_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9_]*")
_PART = re.compile(r"_+|(?<=[a-z0-9])(?=[A-Z])")
# Words of every title the common-word list (prchain/chains/reading/common_words.txt) leaves out.
_TITLE_WORDS = frozenset(
    {"the", "and", "for", "that", "not", "new", "add", "adds", "added", "fix", "fixes", "fixed"}
    | {"use", "uses", "used"}
)


def words(text: str) -> set[str]:
    """Lower-case words of three letters or more, identifiers split at `_` and camel humps,
    common words left out (`getBucketAndObject` → get, bucket)."""
    found: set[str] = set()
    for token in _TOKEN.findall(text):
        for part in _PART.split(token):
            word = part.lower()
            if len(word) >= 3 and word not in _TITLE_WORDS and not is_common(word):
                found.add(word)
    return found


def title_names_older_work(newer_title: str, older_title: str, older_diff: str) -> bool:
    """Whether the newer PR's title names a word of what the older PR wrote: its added lines
    (not those it only carries) or its title (dust #20 "Simplify dir names" over #19's
    `simplify_dir_names`)."""
    wanted = words(newer_title)
    if not wanted:
        return False
    if wanted & words(older_title):
        return True
    authored = parse_patch(older_diff).authored
    return any(wanted & words(text) for texts in authored.values() for text in texts)


def needs_corroboration(attrs: LinkEvidence, config: ChainsConfig) -> bool:
    """Whether the rule reads this link: on, and not stated in dependency wording or a revert."""
    return config.corroboration_signs > 0 and attrs.get("evidence_class") not in STANDS_ON_TEXT


def code_signs(attrs: LinkEvidence, newer_lines: int, config: ChainsConfig) -> list[str]:
    """The signs a link's stored evidence shows (all but `title`)."""
    contact = code_contact(lineage_of(attrs), attrs.get("symbols") or 0)
    shown = []
    if contact >= config.corroboration_contact:
        shown.append("contact")
    if newer_lines and contact >= config.corroboration_share * newer_lines:
        shown.append("focus")
    if (attrs.get("overlap") or 0.0) >= config.corroboration_overlap:
        shown.append("files")
    return shown


def uncorroborated(
    links: Iterable[tuple[int, int, LinkEvidence]],
    nodes: Mapping[int, PRNode],
    patch: Callable[[int], str],
    config: ChainsConfig,
) -> dict[tuple[int, int], str]:
    """(newer, older) → why, for each link of `links` the rule reads that shows fewer than
    `corroboration_signs` signs. `patch` gives a PR's diff by id: the title sign reads the older
    PR's, only where that sign decides."""
    need = config.corroboration_signs
    dropped: dict[tuple[int, int], str] = {}
    for newer, older, attrs in links:
        if not needs_corroboration(attrs, config):
            continue
        new, old = nodes[newer], nodes[older]
        shown = code_signs(attrs, new.code_lines, config)
        if len(shown) == need - 1 and title_names_older_work(new.title, old.title, patch(older)):
            shown.append("title")
        if len(shown) < need:
            dropped[newer, older] = (
                f"{len(shown)} of {len(SIGNS)} signs that #{new.number} works on #{old.number}'s "
                f"code ({', '.join(shown) or 'none'}), under {need}"
            )
    return dropped
