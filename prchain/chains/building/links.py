"""Every candidate link of the latest build, kept or dropped, in `chain_links`; and reading them back.

A build replaces the whole table (links depend on the config, not on the strategy), so it always
answers "what did the rules make of this pair, and why" for the graph chains were last built from.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine, delete, insert, select
from sqlalchemy.orm import Session, aliased

from prchain.chains.config import DropKind
from prchain.chains.rulebook import STAGE_RULES
from prchain.store.db import session_scope
from prchain.store.models import ChainLink, ChainStage, PullRequest

if TYPE_CHECKING:
    from prchain.chains.rules.decisions import LinkDecision

BATCH = 2000

# Drops that say nothing about the pair: an end is no usable stage (filtered, not mined, under
# the substance minimum). Every other drop rule judged the pair itself not dependent.


def drop_kind(rule: str | None) -> DropKind | None:
    """'stage' or 'link' for a dropped link's rule; None for a kept link."""
    if rule is None:
        return None
    return "stage" if rule in STAGE_RULES else "link"


def link_row(link: LinkDecision, build_id: int | None) -> dict[str, Any]:
    attrs = link.attrs
    return {
        "build_id": build_id,
        "repo_id": link.repo_id,
        "newer_pr_id": link.newer,
        "older_pr_id": link.older,
        "kept": link.rule is None,
        "rule": link.rule,
        "evidence_class": attrs.get("evidence_class"),
        "cue": attrs.get("cue"),
        "strength": attrs.get("strength", 0),
        "overlap": attrs.get("overlap"),
        "gap_days": attrs.get("gap_days"),
        "lineage": attrs.get("lineage", 0),
        "lineage_via": attrs.get("lineage_via") or None,
        "lineage_moved": attrs.get("lineage_moved", 0),
        "symbols": attrs.get("symbols"),  # absent: not measured
        "drop_kind": drop_kind(link.rule),
        "rescued_from": attrs.get("rescued_from") if link.rule is None else None,
        "why": attrs.get("why", ""),
        "evidence": attrs.get("evidence", []),
    }


def write_links(engine: Engine, links: Sequence[LinkDecision], build_id: int | None) -> int:
    """Replace the stored links with this build's; returns how many were written.

    A pair appears once (the first decision about it wins: links are recorded in rule order)."""
    seen: set[tuple[int, int]] = set()
    rows = []
    for link in links:
        key = (min(link.newer, link.older), max(link.newer, link.older))
        if key not in seen:
            seen.add(key)
            rows.append(link_row(link, build_id))
    with session_scope(engine) as session:
        session.execute(delete(ChainLink))
        for start in range(0, len(rows), BATCH):
            session.execute(insert(ChainLink), rows[start : start + BATCH])
    return len(rows)


@dataclass
class LinkView:
    """A stored link with both PRs' numbers and titles, for listing and hand checks."""

    link: ChainLink
    newer_number: int
    newer_title: str
    older_number: int
    older_title: str


def chain_pairs(engine: Engine, chain_id: int) -> list[tuple[int, int]]:
    """(newer, older) PR ids of each consecutive pair of a chain's stages."""
    with engine.connect() as conn:
        prs = list(
            conn.scalars(
                select(ChainStage.pr_id)
                .where(ChainStage.chain_id == chain_id)
                .order_by(ChainStage.idx)
            )
        )
    return [(prs[i + 1], prs[i]) for i in range(len(prs) - 1)]


def list_links(
    engine: Engine,
    *,
    dropped: bool = False,
    rule: str | None = None,
    pairs: Iterable[tuple[int, int]] | None = None,
    limit: int | None = None,
    kind: DropKind | None = None,
    rescued: bool = False,
) -> list[LinkView]:
    """Stored links, newest PR first: only dropped ones, one rule's, one kind of drop's (`link`:
    a link rule judged the pair; `stage`: an end is no usable stage), those the link vetter
    rescued from a rule's drop, or those of given pairs."""
    newer, older = aliased(PullRequest), aliased(PullRequest)
    query = (
        select(ChainLink, newer.number, newer.title, older.number, older.title)
        .join(newer, newer.id == ChainLink.newer_pr_id)
        .join(older, older.id == ChainLink.older_pr_id)
        .order_by(newer.number.desc(), older.number.desc())
    )
    if dropped:
        query = query.where(ChainLink.kept.is_(False))
    if rule:
        query = query.where(ChainLink.rule == rule)
    if kind:
        query = query.where(ChainLink.drop_kind == kind)
    if rescued:
        query = query.where(ChainLink.rescued_from.is_not(None))
    if pairs is not None:
        wanted = list(pairs)
        if not wanted:
            return []
        ids = {pr for pair in wanted for pr in pair}
        query = query.where(ChainLink.newer_pr_id.in_(ids), ChainLink.older_pr_id.in_(ids))
    if limit is not None and pairs is None:
        query = query.limit(limit)
    with session_scope(engine) as session:
        rows = [LinkView(*row) for row in session.execute(query)]
        session.expunge_all()
    if pairs is not None:
        keys = set(wanted)
        rows = [r for r in rows if (r.link.newer_pr_id, r.link.older_pr_id) in keys]
    return rows


def sample(items: Sequence[Any], n: int, seed: int) -> list[Any]:
    """A reproducible sample: the same seed and items always give the same picks, in order."""
    if n >= len(items):
        return list(items)
    picks = random.Random(seed).sample(range(len(items)), n)
    return [items[i] for i in sorted(picks)]


def drop_examples(session: Session, per_rule: int = 3) -> dict[str, list[tuple[int, int]]]:
    """For each drop rule, a few (newer, older) PR numbers it dropped: the funnel's examples."""
    newer, older = aliased(PullRequest), aliased(PullRequest)
    query = (
        select(ChainLink.rule, newer.number, older.number)
        .join(newer, newer.id == ChainLink.newer_pr_id)
        .join(older, older.id == ChainLink.older_pr_id)
        .where(ChainLink.kept.is_(False))
        .order_by(ChainLink.rule, newer.number.desc())
    )
    found: dict[str, list[tuple[int, int]]] = {}
    for rule, new_number, old_number in session.execute(query):
        picks = found.setdefault(rule or "", [])
        if len(picks) < per_rule:
            picks.append((new_number, old_number))
    return found
