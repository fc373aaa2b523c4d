"""Loading the store into the reference graph's nodes (`PRNode`) and references (`RefRow`).

A handful of bulk queries (PRs, files, PR-to-PR references) so it scales to 100k PRs; `prchain.chains.building.graph`
builds the graph from what they load.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import replace
from datetime import datetime, timedelta

from sqlalchemy import Connection, Engine, select

from prchain.chains.evidence.carriers import carried_counts
from prchain.chains.evidence.nodes import EVIDENCE_CHARS, THROUGH_ISSUE, PRNode, RefRow
from prchain.chains.evidence.reverts import sha_reverts, title_reverts
from prchain.chains.reading.cues import analogy, landed_subject, prepares, reference_sentence
from prchain.chains.reading.patches import is_test_path
from prchain.chains.reading.paths import counts_as_substance
from prchain.miner.refs import retype
from prchain.miner.subjects import is_merge
from prchain.store.models import PRFile, PullRequest, Reference, Repo


def load_nodes(engine: Engine) -> dict[int, PRNode]:
    """Every merged PR with an `ok` patch, its files attached; two queries.

    `lines` counts the non-test files' changed lines when the files are known (snapshots and
    fixtures make many real PRs look huge; the size limit is about the code an agent must write);
    `code_lines` also leaves out config, docs and presentation (the substance a chain is measured
    by, `prchain.chains.reading.paths.counts_as_substance`).
    Where the source knows no opening before the merge, `created_at` is the first merge of a PR
    numbered after it (`opened_by`).
    """
    pr = PullRequest
    query = select(
        pr.id,
        pr.repo_id,
        pr.number,
        pr.title,
        pr.author,
        pr.created_at,
        pr.merged_at,
        pr.base_sha,
        pr.merge_commit_sha,
        pr.additions,
        pr.deletions,
    ).where(pr.merged_at.is_not(None), pr.patch_status == "ok")
    files: dict[int, set[str]] = defaultdict(set)
    code_lines: dict[int, int] = defaultdict(int)
    substance: dict[int, int] = defaultdict(int)
    with engine.connect() as conn:
        nodes = {
            # merged_at is filtered non-null
            row[0]: PRNode(*row[:9], lines=(row[9] or 0) + (row[10] or 0))  # type: ignore[arg-type]
            for row in conn.execute(query)
        }
        for pr_id, path, added, deleted in conn.execute(
            select(PRFile.pr_id, PRFile.path, PRFile.additions, PRFile.deletions)
        ):
            if pr_id in nodes:
                files[pr_id].add(path)
                changed = (added or 0) + (deleted or 0)
                code_lines[pr_id] += 0 if is_test_path(path) else changed
                substance[pr_id] += changed if counts_as_substance(path) else 0
        merged = {pr_id: (node.number, node.merged_at) for pr_id, node in nodes.items()}
        for pr_id, count in carried_counts(conn, merged).items():
            nodes[pr_id].carried = count
        merges = conn.execute(
            select(pr.repo_id, pr.number, pr.merged_at, pr.merge_commit_sha, pr.base_sha).where(
                pr.merged_at.is_not(None)
            )
        ).all()
        latest = opened_by((r, n, at) for r, n, at, _m, _b in merges if at is not None)
    for node in nodes.values():
        # Only where the source knows no opening before the merge: a squash merge's author date
        # is the merge's. A branch's first commit tells when its code was written, which the
        # gap measures (delta-rs #1434 was opened 3 days after #1430 merged, and written
        # anew 114 days on).
        bound = latest.get((node.repo_id, node.number))
        if bound is not None and (node.created_at or node.merged_at) >= node.merged_at:
            node.created_at = bound
    for pr_id, paths in files.items():
        nodes[pr_id].files = frozenset(paths)
        nodes[pr_id].lines = code_lines[pr_id]
        nodes[pr_id].code_lines = substance[pr_id]
    land_in_order(nodes, {(r, m): (at, b) for r, _n, at, m, b in merges if m and at})
    return nodes


def land_in_order(
    nodes: dict[int, PRNode], landed: dict[tuple[int, str], tuple[datetime, str | None]]
) -> None:
    """Order merges stamped with the same second the way they landed, a microsecond apart.

    A stack merged at once (Graphite, a merge queue, a script) lands its PRs within one second,
    and git keeps no finer time: which of two such PRs is the later one was a coin toss, so a
    PR stacked on another could be read as the one underneath (qdrant #9777, which uses the
    `FileNotFound` #9763 added, both stamped 09:17:00), and a revert as the reverted. The history
    tells: each PR of a stack is merged onto the one before, so a PR lands after every PR of the
    same second that its base reaches back through (merge → that merge's base → …). `landed`
    maps (repo id, merge sha) to (merged at, base sha) for every merged PR. PRs the history does
    not order stay as they were."""
    seconds: dict[tuple[int, datetime], int] = defaultdict(int)
    for node in nodes.values():
        seconds[(node.repo_id, node.merged_at)] += 1
    for node in nodes.values():
        at = node.merged_at
        below, sha = 0, node.base_sha
        # A stack is a line: it never holds more PRs than merged in that second.
        while sha and below < seconds[(node.repo_id, at)] - 1:
            merged_at, sha = landed.get((node.repo_id, sha), (None, None))
            if merged_at != at:
                break
            below += 1
        node.merged_at = at + timedelta(microseconds=below)


def opened_by(merges: Iterable[tuple[int, int, datetime]]) -> dict[tuple[int, int], datetime]:
    """(repo id, number) → the latest time that PR can have been opened, from (repo id, number,
    merged at) of every merged PR. GitHub numbers PRs and issues in the order they are opened, so
    a PR was open before any PR numbered after it merged. The git source does not know when a
    squash-merged PR was opened (it takes the merge's time), and without this bound two PRs worked
    on at once read as one opened after the other merged (iceberg-go #467, opened before #468 and
    merged after it).

    A PR numbered after another but merged more than `FOREIGN_NUMBERING` before it is taken to be
    of another numbering: histories carry the PRs of the repository they moved from or split off
    (rust-bindgen's crabtw-era #280 merged 251 days before the servo-era #276 was opened;
    datafusion-ballista's history holds arrow-datafusion's PRs)."""
    by_repo: dict[int, list[tuple[int, datetime]]] = defaultdict(list)
    for repo_id, number, merged in merges:
        by_repo[repo_id].append((number, merged))
    latest: dict[tuple[int, int], datetime] = {}
    for repo_id, rows in by_repo.items():
        later: list[datetime] = []  # merges of the PRs numbered at or after this one, in order
        for number, merged in sorted(rows, reverse=True):
            bisect.insort(later, merged)
            latest[(repo_id, number)] = later[bisect.bisect_left(later, merged - FOREIGN_NUMBERING)]
    return latest


def load_references(engine: Engine) -> list[RefRow]:
    """Every reference that resolved to a PR of the store (direct or through an issue). A mention
    is read again with today's rules (`prchain.miner.refs.retype`): a store mined before a wording was
    known ('fix: revert "… (#12)"', "revert #5 #12") needs no new mining. A reference in the
    subject of a merge among a PR's commits is left out: merging the main branch into a PR's
    branch names the PRs it brings along, not ones the PR builds on (pyo3 #160's "Merge #154
    and #155 changed with `syn13`")."""
    ref = Reference
    query = select(
        ref.src_pr_id,
        ref.target_pr_id,
        ref.type,
        ref.found_in,
        ref.via_issue,
        ref.evidence,
        ref.target_number,
        ref.repo_id,
    ).where(ref.target_pr_id.is_not(None), ref.src_pr_id != ref.target_pr_id)
    with engine.connect() as conn:
        rows = [
            RefRow(a, b or 0, _fresh_type(t, e, n), f, v or 0, (e or "")[:EVIDENCE_CHARS], n, r)
            for a, b, t, f, v, e, n, r in conn.execute(query)
            # A merge inside a PR's commits names the PR or branch it brings in: no reference.
            if not (f == "commit" and is_merge(e or ""))
        ]
        rows = _without_landed_subjects(conn, rows)
        said = _issue_mentions(conn) if any(r.type == "issue_mediated" for r in rows) else {}
    return [_issue_wording(r, said) for r in rows]


def _without_landed_subjects(conn: Connection, rows: list[RefRow]) -> list[RefRow]:
    """`rows` less the references that are the subject of the PR they name as it landed,
    "Title (#N)": a list of the commits a branch took in from the main branch, copied into a
    squash message or a sync commit (tauri #1331's feature branch lists `dev`'s "Fix extremely
    slow dev builds caused by … (#1395)"). A stacked branch lists its base's commits before the
    base lands, without the number."""

    def ends_with_number(r: RefRow) -> bool:  # the cheap test first: "… (#N)"
        return r.number is not None and r.evidence.endswith(f"(#{r.number})")

    landed = {r.dst for r in rows if ends_with_number(r)}
    if not landed:
        return rows
    query = select(PullRequest.id, PullRequest.title).where(PullRequest.id.in_(landed))
    titles = dict(conn.execute(query).all())
    return [
        r
        for r in rows
        if not (
            ends_with_number(r) and landed_subject(r.evidence, titles.get(r.dst) or "", r.number)
        )
    ]


def _issue_mentions(conn: Connection) -> dict[tuple[int, int], list[tuple[str, str]]]:
    """(PR id, issue number) → the type and evidence of each reference of the PR to the issue."""
    query = select(
        Reference.src_pr_id, Reference.target_number, Reference.type, Reference.evidence
    ).where(Reference.target_pr_id.is_(None), Reference.target_kind.in_(("issue", "unknown")))
    said: dict[tuple[int, int], list[tuple[str, str]]] = defaultdict(list)
    for src, number, kind, evidence in conn.execute(query):
        said[(src, number)].append((kind, evidence or ""))
    return said


def _issue_wording(ref: RefRow, said: dict[tuple[int, int], list[tuple[str, str]]]) -> RefRow:
    """An issue-mediated link read again with what each PR says of the shared issue:
    - one names it only by analogy ("Similar to #7609", an issue the other PR fixed): siblings;
      an `issue_analogy` reference, classed parallel;
    - one says it prepares it ("Groundwork for #6966", which the other fixes): the other builds
      on it; an `issue_prepares` reference from the preparing PR, classed strong, which may link
      two PRs open at once (`_stacked`).
    Either takes that PR's sentence as its evidence."""
    if ref.type != "issue_mediated":
        return ref
    number = ref.via_issue
    for end, other in ((ref.src, ref.dst), (ref.dst, ref.src)):
        refs = said.get((end, number), [])
        if refs and all(kind == "mention" and analogy(text, number) for kind, text in refs):
            sentence = reference_sentence(refs[0][1], number)[:EVIDENCE_CHARS]
            return replace(ref, type="issue_analogy", evidence=sentence, number=number)
        ready = [text for _kind, text in refs if prepares(text, number)]
        if ready:
            sentence = reference_sentence(ready[0], number)[:EVIDENCE_CHARS]
            return replace(
                ref, src=end, dst=other, type="issue_prepares", evidence=sentence, number=number
            )
    return ref


def _fresh_type(kind: str, evidence: str | None, number: int | None) -> str:
    return (retype(evidence or "", number) or kind) if kind == "mention" else kind


def with_unresolved_reverts(
    engine: Engine, nodes: dict[int, PRNode], refs: list[RefRow]
) -> list[RefRow]:
    """`refs` plus the reverts named by a commit of the reverted PR's branch, or only by the
    reverted PR's title (prchain/chains/evidence/reverts.py)."""
    known = [(r.src, r.dst) for r in refs if r.type == "reverts"]
    found = sha_reverts(engine, nodes, known)
    found += title_reverts(nodes, known + [(f.reverter, f.reverted) for f in found])
    return refs + [
        RefRow(
            f.reverter,
            f.reverted,
            "reverts",
            f.found_in,
            0,
            f.evidence[:EVIDENCE_CHARS],
            None,
            f.repo_id,
        )
        for f in found
    ]


def load_repos(engine: Engine) -> dict[int, tuple[str, str | None, str | None]]:
    """repo id → (full_name, clone_path, default_branch)."""
    with engine.connect() as conn:
        rows = conn.execute(select(Repo.id, Repo.full_name, Repo.clone_path, Repo.default_branch))
        return {rid: (name, path, branch) for rid, name, path, branch in rows}


def umbrella_issues(refs: Iterable[RefRow], max_fanout: int) -> set[int]:
    """Issues that mediate links among more than `max_fanout` PRs: tracking issues, not one piece of work."""
    members: dict[int, set[int]] = defaultdict(set)
    for ref in refs:
        if ref.type in THROUGH_ISSUE and ref.via_issue:
            members[ref.via_issue].update((ref.src, ref.dst))
    return {issue for issue, prs in members.items() if len(prs) > max_fanout}


# How much earlier than a PR a later-numbered one may merge and still be of the same numbering
# (`opened_by`). A PR open longer is rare: where no other numbering is mixed in, the bound moves
# 99 % of openings back by under 80 days (arrow-adbc 57, arrow-go 64, ruff 65, wasmtime 78).
FOREIGN_NUMBERING = timedelta(days=180)
