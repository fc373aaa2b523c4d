"""Links found in code: pairs no text names, where the newer PR rewrites lines the older one wrote.

A project whose commit messages name no PRs (prefect's squash commits carry the title only) still
has PRs that rewrite and extend each other's code. For each PR, the lines of code it removes are
looked up among the lines earlier PRs wrote in the same file (the latest writer of each text,
merged before the PR was opened); a pair with `code_link_min_lines` such lines becomes a
candidate link: a reference of type `code`, evidence class `code`, read from the patches alone.
It then meets the same link rules, git blame, symbol use, gates and vetter as a reference does:
the rules keep it only with enough points of contact with the older PR's code
(`code_link_unbacked`) and, once both ends are lexed, only between two ends that are stages, not a
follow-up fix or a task of its own passing through the older code (`thin_code_link`), and, unless
the link vetter judged the pair dependent, only where the newer PR's change is about that code
(`incidental_code_link`). Its stored
decision says `code`, so a user who wants only the paper's ref-linked chains sets
`chains.code_links: false`. By default (`auto`) only a repository whose PRs seldom name other PRs
is read this way (`code_link_repos`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Collection, Iterable, Iterator, Mapping
from typing import TYPE_CHECKING

from sqlalchemy import Engine, select

from prchain.chains.evidence.lines import MIN_LINE_CHARS, squeeze, substantive
from prchain.chains.evidence.nodes import PRNode, RefRow
from prchain.chains.reading.generated import MAX_CODE_LINE_CHARS
from prchain.chains.reading.patches import file_sections, section_path
from prchain.chains.reading.paths import counts_as_code
from prchain.chains.record import LinkEvidence
from prchain.chains.rulebook import RuleName
from prchain.chains.rules.link_rules import code_contact, lineage_of
from prchain.store.models import PRPatch

if TYPE_CHECKING:
    from prchain.chains.config import ChainsConfig

CODE_REF = "code"
THIN_CODE_LINK: RuleName = "code_link_thin_stage"  # the rule `thin_code_link` applies
INCIDENTAL_CODE_LINK: RuleName = "code_link_incidental"  # the rule `incidental_code_link` applies
# Code files whose lines are data: a notebook's cells are JSON strings, its outputs included.
NOT_CODE_TEXT = (".ipynb",)
BATCH = 500


def code_texts(diff: str) -> Iterator[tuple[str, str, str]]:
    """(path, '+' or '-', squeezed text) of each changed line of code a later PR could rewrite:
    in code files, long enough not to match by chance, no import or comment."""
    for section in file_sections(diff):
        path = section_path(section)
        if not path or not counts_as_code(path) or path.endswith(NOT_CODE_TEXT):
            continue
        for line in section.split("\n"):
            if line[:1] not in ("+", "-") or line.startswith(("+++", "---")):
                continue
            text = squeeze(line[1:])
            if MIN_LINE_CHARS <= len(text) <= MAX_CODE_LINE_CHARS and substantive(text):
                yield path, line[0], text


def _changes(engine: Engine, pr_ids: list[int]) -> Iterator[tuple[int, str]]:
    with engine.connect() as conn:
        for start in range(0, len(pr_ids), BATCH):
            chunk = pr_ids[start : start + BATCH]
            yield from conn.execute(
                select(PRPatch.pr_id, PRPatch.diff).where(PRPatch.pr_id.in_(chunk))
            ).all()


def code_pairs(
    nodes: Mapping[int, PRNode], diffs: Iterable[tuple[int, str]], min_lines: int
) -> dict[tuple[int, int], int]:
    """(newer, older) → how many lines of code the older PR wrote that the newer one removes
    (it may write them anew: a rewrite), where the older PR was the latest to write each and
    merged before the newer one was opened; pairs under `min_lines` are left out."""
    by_pr = {pr: diff for pr, diff in diffs}
    writer: dict[tuple[int, str, str], int] = {}  # (repo, path, text) → the latest PR that wrote it
    counts: Counter[tuple[int, int]] = Counter()
    for pr in sorted(by_pr, key=lambda p: (nodes[p].merged_at, p)):
        node = nodes[pr]
        written = []
        for path, sign, text in code_texts(by_pr[pr]):
            if sign == "+":
                written.append((node.repo_id, path, text))
                continue
            older = writer.get((node.repo_id, path, text))
            if older is not None and nodes[older].merged_at < node.opened:
                counts[pr, older] += 1
        for key in written:
            writer[key] = pr
    return {pair: n for pair, n in counts.items() if n >= min_lines}


def code_link_repos(
    nodes: Mapping[int, PRNode],
    refs: Iterable[RefRow],
    config: ChainsConfig,
    stageable: Collection[int] | None = None,
) -> set[int]:
    """The repositories whose pairs are looked for in code: every one with `code_links` true;
    with `auto`, those whose PRs that can be stages (`stageable`: past the PR filters) name
    each other (directly, not through an issue) fewer than `code_links_auto_below` times a PR.
    Counted over all PRs, release bots' references made cloudquery look rich in references
    (24,646, about 23,000 of them from release PRs) while its 3,409 PRs that can be stages
    shared 16 kept links (issue 75)."""
    if config.code_links is False:
        return set()
    if config.code_links is True:
        return {node.repo_id for node in nodes.values()}
    among = set(nodes) if stageable is None else set(stageable)
    prs = Counter(nodes[pr].repo_id for pr in among)
    named = Counter(
        r.repo_id for r in refs if r.dst in among and r.src in among and not r.via_issue
    )
    return {
        repo for repo, count in prs.items() if named[repo] < config.code_links_auto_below * count
    }


def code_references(
    engine: Engine,
    nodes: Mapping[int, PRNode],
    kept: Iterable[int],
    refs: list[RefRow],
    min_lines: int,
) -> list[RefRow]:
    """A `code` reference for each pair of stage-worthy PRs (`kept`, past the PR filters) that
    shares `min_lines` rewritten lines of code and that no reference links already."""
    linked = {frozenset((r.src, r.dst)) for r in refs}
    found = code_pairs(nodes, _changes(engine, sorted(kept)), min_lines)
    rows = []
    for (newer, older), lines in sorted(found.items()):
        if frozenset((newer, older)) in linked:
            continue
        number = nodes[older].number
        rows.append(
            RefRow(
                newer,
                older,
                CODE_REF,
                "patch",
                0,
                f"#{nodes[newer].number} removes {lines} line(s) of code #{number} wrote",
                number,
                nodes[newer].repo_id,
            )
        )
    return rows


def thin_code_link(
    attrs: LinkEvidence, newer_lines: int, older_lines: int, config: ChainsConfig
) -> str:
    """Why a kept code link makes no link between two stages once both ends' code is lexed
    ('' when it does). A stage that enters a chain only through a code link is most often a
    short follow-up fix of the older PR (round 31: chi #966 adds a mutex to #908's code, raft
    #194 a flag, spark-connect-swift #128 renames a case), or a task of its own that passes
    through the older PR's code (bat #2755 rewrites the syntax mapping #2647 had extended)."""
    least = min(newer_lines, older_lines)
    if least < config.code_link_min_stage_lines:
        return f"an end changes {least} line(s) of code (a code link needs {config.code_link_min_stage_lines})"
    followup = config.code_link_followup_lines
    if (
        followup
        and newer_lines < followup
        and newer_lines * config.code_link_followup_ratio < older_lines
    ):
        return f"the newer PR is a follow-up fix: {newer_lines} line(s) of code to the older one's {older_lines}"
    contact = code_contact(lineage_of(attrs), attrs.get("symbols") or 0)
    if contact < config.code_link_min_share * newer_lines:
        return f"{contact} point(s) of contact in {newer_lines} line(s) of the newer PR's code"
    return ""


def incidental_code_link(
    attrs: LinkEvidence, newer: PRNode, older: PRNode, config: ChainsConfig
) -> str:
    """Why a code link looks like a change of its own that passes through the older PR's code
    ('' when its change is about that code). Blind round 33 read the code links judged not
    strictly dependent one by one: a sweep (mockito #476 puts a singleton in place of
    `new ThreadSafeMockingProgress()` in 16 files), a migration (mockito #2804 moves to Java 11,
    zustand #12 to TypeScript), a feature or refactor that rewrites a few of the older lines on
    its way (fiber #3754, starship #4550). Their contact with the older code is a small share of
    their own code, or most of their files are ones the older PR never touched. Only the link
    vetter reads what a change is for; its `dependent` lifts this rule."""
    lines = max(1, newer.code_lines)
    contact = code_contact(lineage_of(attrs), attrs.get("symbols") or 0)
    if contact < config.code_link_focus_share * lines:
        return (
            f"{contact} point(s) of contact in {lines} line(s) of the newer PR's code, under "
            f"{config.code_link_focus_share:.0%}"
        )
    files = len(newer.files)
    shared = len(newer.files & older.files)
    if shared < config.code_link_focus_files * files:
        return (
            f"the older PR touched {shared} of the newer PR's {files} file(s), under "
            f"{config.code_link_focus_files:.0%}"
        )
    return ""
