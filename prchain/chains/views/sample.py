"""Reproducible samples of chains or dropped links, with what a hand check needs to judge each link.

For every link: both PRs' numbers, titles and bodies, the link's stored decision (class, cue words,
lineage, why) and the lines the newer PR removes or rewrites that the older one added.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from sqlalchemy import Engine, func, select

from prchain.chains.building.links import LinkView, chain_pairs, list_links, sample
from prchain.chains.config import DropKind
from prchain.chains.evidence.lines import parse_patch
from prchain.store.models import Chain, ChainLink, PRPatch, PullRequest

MAX_REWRITTEN = 8


@dataclass
class PRText:
    number: int
    title: str
    body: str


@dataclass
class SampledLink:
    newer: PRText
    older: PRText
    link: ChainLink | None  # None when the build stored no decision for the pair (older build)
    rewritten: list[str] = field(default_factory=list)  # lines of the older PR the newer rewrites


@dataclass
class SampledChain:
    id: int
    label: str | None
    stages: list[PRText]
    links: list[SampledLink]


def pr_text(engine: Engine, pr_id: int) -> PRText:
    with engine.connect() as conn:
        row = conn.execute(
            select(PullRequest.number, PullRequest.title, PullRequest.body).where(
                PullRequest.id == pr_id
            )
        ).one()
    return PRText(row[0], row[1] or "", row[2] or "")


def pr_diffs(engine: Engine, *pr_ids: int) -> dict[int, str]:
    """The stored diff of each PR ("" where none is stored)."""
    with engine.connect() as conn:
        query = select(PRPatch.pr_id, PRPatch.diff).where(PRPatch.pr_id.in_(pr_ids))
        found = {pr_id: diff or "" for pr_id, diff in conn.execute(query)}
    return {pr_id: found.get(pr_id, "") for pr_id in pr_ids}


def rewritten_lines(
    engine: Engine, newer: int, older: int, limit: int = MAX_REWRITTEN
) -> list[str]:
    """`rewritten_between` the two PRs' stored patches."""
    diffs = pr_diffs(engine, newer, older)
    return rewritten_between(diffs[newer], diffs[older], limit)


def rewritten_between(newer_diff: str, older_diff: str, limit: int = MAX_REWRITTEN) -> list[str]:
    """Lines the older PR wrote (not only carried) that the newer PR removes or rewrites: those
    in the file the older PR wrote them in first, then those whose text the older PR wrote in
    another file (a move git blame may confirm, or a coincidence)."""
    theirs = parse_patch(older_diff)
    anywhere = theirs.authored_anywhere()
    same: list[str] = []
    elsewhere: list[str] = []
    for removed in parse_patch(newer_diff).removed:
        shown = f"{removed.path}: {removed.text}"
        if removed.text in theirs.authored.get(removed.path, ()):
            same.append(shown)
        elif removed.text in anywhere:
            elsewhere.append(f"{shown}  (written by the older PR in another file)")
    return list(dict.fromkeys(same + elsewhere))[:limit]


def _link(engine: Engine, newer: int, older: int, view: LinkView | None) -> SampledLink:
    return SampledLink(
        pr_text(engine, newer),
        pr_text(engine, older),
        view.link if view else None,
        rewritten_lines(engine, newer, older),
    )


def sample_chains(
    engine: Engine, n: int, seed: int, strategy: str | None = None
) -> list[SampledChain]:
    """`n` chains drawn with `seed` (the same store, seed and n give the same chains)."""
    # Superseded chains (kept because rollouts use them) are not what the latest build selects.
    query = select(Chain.id, Chain.label).where(Chain.superseded_at.is_(None)).order_by(Chain.id)
    if strategy:
        query = query.where(Chain.strategy == strategy)
    with engine.connect() as conn:
        rows = [tuple(r) for r in conn.execute(query)]
    out = []
    for chain_id, label in sample(rows, n, seed):
        pairs = chain_pairs(engine, chain_id)
        views = {
            (v.link.newer_pr_id, v.link.older_pr_id): v for v in list_links(engine, pairs=pairs)
        }
        links = [_link(engine, a, b, views.get((a, b))) for a, b in pairs]
        stages = [links[0].older, *(link.newer for link in links)] if links else []
        out.append(SampledChain(chain_id, label, stages, links))
    return out


def sample_dropped(
    engine: Engine, n: int, seed: int, rule: str | None = None, kind: DropKind | None = None
) -> list[SampledLink]:
    """`n` dropped links drawn with `seed`, optionally of one rule or one kind of drop (`link`:
    judged not dependent by a link rule; `stage`: an end is no usable stage)."""
    views = list_links(engine, dropped=True, rule=rule, kind=kind)
    views.sort(key=lambda v: (v.link.newer_pr_id, v.link.older_pr_id))
    return [
        _link(engine, v.link.newer_pr_id, v.link.older_pr_id, v) for v in sample(views, n, seed)
    ]


def drop_shares(engine: Engine, rule: str | None = None) -> dict[str, int]:
    """Dropped links per kind of drop (`link`, `stage`), to say which population a sample of
    dropped links is drawn from and how big each is (only `rule`'s drops when given)."""
    query = (
        select(ChainLink.drop_kind, func.count())
        .where(ChainLink.kept.is_(False))
        .group_by(ChainLink.drop_kind)
    )
    if rule:
        query = query.where(ChainLink.rule == rule)
    with engine.connect() as conn:
        return {str(kind or "unknown"): int(n) for kind, n in conn.execute(query)}


def shares_line(shares: dict[str, int], kind: str | None) -> str:
    """'dropped links: 412 (link rules 300, 73%; stages 112, 27%); drawing from link'."""
    total = sum(shares.values())
    parts = [
        f"{name} {shares[key]}, {100 * shares[key] / total:.0f}%"
        for key, name in (("link", "link rules"), ("stage", "stages"), ("unknown", "unknown"))
        if shares.get(key)
    ]
    frm = f"; drawing from {kind} drops" if kind else "; drawing from both"
    return f"dropped links: {total} ({'; '.join(parts)}){frm}"
