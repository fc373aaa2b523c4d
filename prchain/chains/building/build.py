"""`build_chains`: graph → strategy → chains and stages in the store, idempotently.

Chains are upserted on (strategy, signature) and stages on (chain, idx); queries, attempts, leaks
and overviews already written by the query constructor are never overwritten.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field, replace
from typing import Any, TypeVar

import networkx as nx
from sqlalchemy import Engine, delete, select

from prchain.chains.building.decontam import Decontaminator, StageKey, decontaminator
from prchain.chains.building.dedup import dedup_chains
from prchain.chains.building.graph import load_graph
from prchain.chains.building.inuse import in_use, mark_superseded, unmark
from prchain.chains.building.lengths import StopReason, as_record, stops
from prchain.chains.building.lent import TestLender
from prchain.chains.building.links import STAGE_RULES, write_links
from prchain.chains.building.report import GraphReport
from prchain.chains.building.strategies import STRATEGIES, ChainCandidate, candidate

# Importing threads registers the `thread` strategy beside the others.
from prchain.chains.building.threads import PATH, THREAD, Shape, shape_of, thread_extensions
from prchain.chains.building.vetted import RESCUED_AT
from prchain.chains.config import ChainsConfig
from prchain.chains.evidence.changes import measure_stages, no_stages, small_changes
from prchain.chains.evidence.hunks import HunkEntry
from prchain.chains.evidence.kept import (
    evidence_version,
    keep_substance,
    kept_substance,
    substance_kind,
)
from prchain.chains.evidence.loading import load_repos
from prchain.chains.evidence.nodes import PRNode
from prchain.chains.evidence.propagation import EarlierStage, Propagation
from prchain.chains.evidence.replay import Replay
from prchain.chains.evidence.revertible import StageBases, longest_run
from prchain.chains.reading.patches import SplitPatch, split_patch
from prchain.chains.rulebook import RuleName
from prchain.chains.rules.codelinks import (
    INCIDENTAL_CODE_LINK,
    THIN_CODE_LINK,
    incidental_code_link,
    thin_code_link,
)
from prchain.chains.rules.corroborate import UNCORROBORATED, uncorroborated
from prchain.chains.rules.decisions import LinkDecision
from prchain.chains.rules.filters import chain_code_lines
from prchain.core.errors import ConfigError
from prchain.environments.stage_entry import (
    ENTRY_HUNKS,
    ENTRY_PROPAGATE,
    ENTRY_REPLAY,
    ENTRY_REVERT,
)
from prchain.store.db import session_scope, upsert
from prchain.store.models import Chain, ChainBuild, ChainStage, PRPatch

Progress = Callable[[str, int, int], None]
T = TypeVar("T")
BATCH = 2000
# Columns the build owns; everything else on a row (query, overview, ...) belongs to later stages.
CHAIN_COLUMNS = ("repo_id", "length", "score", "edges", "label")
NO_PATCH = SplitPatch("", "", (), ())
STAGE_COLUMNS = (
    *("pr_id", "base_sha", "end_sha", "gold_patch", "gold_test_patch", "tests_from", "entry"),
)


@dataclass
class RuleCount:
    """What one rule dropped: PRs (PR filters), links (link rules) or chains (chain rules)."""

    rule: str
    level: str  # pr | link | chain
    prs: int = 0
    links: int = 0
    chains: int = 0


@dataclass
class BuildSummary:
    strategy: str
    by_length: Counter[int] = field(default_factory=Counter)
    new: int = 0
    stages: int = 0
    pruned: int = 0
    kept_in_use: int = 0  # selected again but worked on already: left exactly as they were
    superseded: int = 0  # no longer selected but worked on: kept, usable, marked superseded
    candidates: int = 0
    graph: GraphReport = field(default_factory=GraphReport)
    chains_dropped: Counter[str] = field(default_factory=Counter)
    links_in_dropped: Counter[str] = field(default_factory=Counter)
    contaminated: list[dict[str, Any]] = field(default_factory=list)
    max_len: int = 5
    stops: dict[int, Counter[StopReason]] = field(default_factory=dict)  # length → why no longer
    prs: int = 0  # merged PRs with a patch the build read: the denominator of its yield
    entered_by: Counter[str] = field(default_factory=Counter)  # stages by entry (revert, propagate)

    @property
    def total(self) -> int:
        return sum(self.by_length.values())

    @property
    def stage_count(self) -> int:
        """Stages of the chains selected (in use or not), as the paper counts its queries."""
        return sum(length * n for length, n in self.by_length.items())

    @property
    def per_thousand(self) -> float:
        """Stages per 1,000 PRs read (the paper: 1,762 of 61,810, 28.5)."""
        return round(1000 * self.stage_count / self.prs, 1) if self.prs else 0.0

    def rules(self) -> list[RuleCount]:
        """Every rule that dropped something, in pipeline order: PR filters, link rules, chain rules."""
        rows = [RuleCount(k, "pr", prs=v) for k, v in sorted(self.graph.filtered.removed.items())]
        rows += [RuleCount(k, "link", links=v) for k, v in sorted(self.graph.dropped.items())]
        rows += [
            RuleCount(k, "chain", links=self.links_in_dropped[k], chains=v)
            for k, v in self.chains_dropped.items()
        ]
        return rows


def batches(items: Sequence[T], size: int = BATCH) -> Iterator[Sequence[T]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _chain_row(chain: ChainCandidate, strategy: str) -> dict[str, Any]:
    return {
        "strategy": strategy,
        "signature": chain.signature,
        "repo_id": chain.repo_id,
        "length": len(chain.pr_ids),
        "score": chain.score,
        "edges": chain.edges,
        "label": chain.label,
    }


def _stage_rows(
    chain_id: int, chain: ChainCandidate, nodes: dict[int, PRNode], patches: dict[int, SplitPatch]
) -> list[dict[str, Any]]:
    rows = []
    for idx, pr_id in enumerate(chain.pr_ids, start=1):
        split = patches.get(pr_id, NO_PATCH)
        rows.append(
            {
                "chain_id": chain_id,
                "idx": idx,
                "pr_id": pr_id,
                "base_sha": nodes[pr_id].base_sha,
                "end_sha": nodes[pr_id].merge_sha,
                "gold_patch": split.code,
                "gold_test_patch": split.test,
                "tests_from": None,
                "entry": chain.entries[idx - 1] if chain.entries else ENTRY_REVERT,
            }
        )
    return rows


def _clones(engine: Engine) -> dict[int, str | None]:
    """repo id → its clone's path (None: mined without one)."""
    return {rid: path for rid, (_name, path, _branch) in load_repos(engine).items()}


def _pairs(rows: Any) -> dict[Any, Any]:
    # dict(result) would treat a Result as a mapping (it has .keys()); build it from the rows instead.
    return {key: value for key, value in rows}


def _write_batch(
    engine: Engine,
    strategy: str,
    chains: Sequence[ChainCandidate],
    nodes: dict[int, PRNode],
    patches: dict[int, SplitPatch],
    lender: TestLender | None = None,
) -> tuple[int, int, int]:
    """Upsert one batch of chains with their stages; returns (new chains, stages written, chains
    left unchanged because they are in use).

    `patches` caches split gold patches across batches, since a PR often sits in several chains.
    `lender`: a stage whose PR changes no test borrows a later stage's (`lent`).
    """
    signatures = [c.signature for c in chains]
    with session_scope(engine) as session:
        existing = _pairs(
            session.execute(
                select(Chain.signature, Chain.id).where(
                    Chain.strategy == strategy, Chain.signature.in_(signatures)
                )
            )
        )
        # A chain later steps worked on is never rewritten (its stages, gold patches, queries
        # and verdicts must stay consistent); selected again, it is current again.
        used = in_use(session, existing.values())
        unmark(session, used)
        kept = {signature for signature, chain_id in existing.items() if chain_id in used}
        chains = [c for c in chains if c.signature not in kept]
        pr_ids = sorted({pr for c in chains for pr in c.pr_ids} - patches.keys())
        upsert(
            session,
            Chain,
            [_chain_row(c, strategy) for c in chains],
            ["strategy", "signature"],
            update=CHAIN_COLUMNS,
        )
        ids = _pairs(
            session.execute(
                select(Chain.signature, Chain.id).where(
                    Chain.strategy == strategy, Chain.signature.in_(signatures)
                )
            )
        )
        query = select(PRPatch.pr_id, PRPatch.diff).where(PRPatch.pr_id.in_(pr_ids))
        patches.update((pr_id, split_patch(diff)) for pr_id, diff in session.execute(query))
        stages = []
        for chain in chains:
            rows = _stage_rows(ids[chain.signature], chain, nodes, patches)
            if lender is not None:
                lender.fill(rows, chain.repo_id, patches)
            stages += rows
        upsert(session, ChainStage, stages, ["chain_id", "idx"], update=STAGE_COLUMNS)
    return len(chains) - (len(existing) - len(kept)), len(stages), len(kept)


def prune_stale(engine: Engine, strategy: str, keep: set[str]) -> tuple[int, int]:
    """Delete the strategy's chains not in `keep` (stages go with them), except chains in use
    (`prchain.chains.building.inuse`): those are marked superseded and stay usable. Returns (deleted, newly
    superseded)."""
    with session_scope(engine) as session:
        rows = session.execute(
            select(Chain.id, Chain.signature).where(Chain.strategy == strategy)
        ).all()
        stale = [cid for cid, signature in rows if signature not in keep]
        used = in_use(session, stale)
        doomed = [cid for cid in stale if cid not in used]
        for chunk in batches(doomed):
            session.execute(delete(ChainStage).where(ChainStage.chain_id.in_(chunk)))
            session.execute(delete(Chain).where(Chain.id.in_(chunk)))
        return len(doomed), mark_superseded(session, used)


def build_chains(
    config: ChainsConfig,
    engine: Engine,
    *,
    strategy: str | None = None,
    min_len: int | None = None,
    max_len: int | None = None,
    decontaminate: Sequence[str] = (),
    progress: Progress | None = None,
) -> BuildSummary:
    """Select chains from the store's reference graph with `strategy` and write them with their stages.

    `decontaminate` adds instance sources to `config.decontam.sources` for this build.
    """
    cfg = config
    name = strategy or cfg.strategy
    select_chains = STRATEGIES.get(name)
    low, high = min_len or cfg.min_len, max_len or cfg.max_len
    if name == "single":
        low = high = 1
    if low > high:
        raise ConfigError(f"--min-len {low} is larger than --max-len {high}")
    decon = decontaminator(cfg.decontam, decontaminate)  # fail on a bad source before any work
    graph, nodes, report = load_graph(engine, cfg)  # with `chains vet`'s verdicts, if any
    if high > 1:  # a chain of one (the `single` ablation) is judged by the PR filters alone
        _drop_thin_stages(graph, nodes, engine, cfg, report)
    patches: dict[int, SplitPatch] = {}
    shape = shape_of(name)
    entry = (
        StageEntry(
            engine,
            nodes,
            patches,
            {older for _newer, older in graph.edges},
            graph,
            fallback=cfg.entry_fallback,
        )
        if cfg.check_stage_bases and high > 1
        else None
    )
    candidates = select_chains(graph, cfg, low, high, entry.enters if entry else None)
    summary = BuildSummary(name, candidates=len(candidates), graph=report, prs=len(nodes))
    chains = _chain_rules(
        candidates, graph, nodes, cfg, high, decon, engine, patches, summary, entry, shape
    )
    if entry is not None:
        _note_refused(entry, chains, report.links, summary)
    summary.by_length = Counter(len(c.pr_ids) for c in chains)
    summary.entered_by = Counter(
        e for c in chains for e in c.entries or (ENTRY_REVERT,) * len(c.pr_ids)
    )
    summary.max_len = high
    if high > 1:
        fits = entry.fits if entry else None
        grows = thread_extensions if shape is THREAD else None
        summary.stops = stops((c.pr_ids for c in chains), graph, high, fits, grows)
    done = 0
    lender = TestLender(_clones(engine)) if cfg.lend_tests else None
    for batch in batches(chains):
        new, stages, kept = _write_batch(engine, name, batch, nodes, patches, lender)
        summary.new += new
        summary.stages += stages
        summary.kept_in_use += kept
        done += len(batch)
        if progress:
            progress("writing chains", done, len(chains))
    if cfg.prune_stale:
        summary.pruned, summary.superseded = prune_stale(
            engine, name, {c.signature for c in chains}
        )
    build_id = record_build(engine, summary)
    write_links(engine, report.links, build_id)
    return summary


LEX_DROPPED_UNDER = 100  # file-level changed lines under which a dropped link's end is lexed


def _drop_thin_stages(
    graph: nx.DiGraph,
    nodes: dict[int, PRNode],
    engine: Engine,
    cfg: ChainsConfig,
    report: GraphReport,
) -> None:
    """Measure each linked PR's code by lexing its patch; those under the stage minimum leave the graph.

    The measured count replaces the file-level one, so the chain-total rule reads it too; the
    links of a removed PR are recorded as dropped by this rule."""
    minimum = cfg.stage_minimum
    clones = _clones(engine)
    # The ends of links the link rules dropped are lexed too where their file-level count is
    # small enough to hide a thin stage (a doc-comment-only PR: wgpu #3576), so that the drop is
    # put down to the stage; a larger PR of under `minimum` lines of code is rare.
    small = {
        pr
        for link in report.links
        if link.rule is not None and link.rule not in STAGE_RULES
        for pr in (link.newer, link.older)
        if nodes[pr].code_lines < LEX_DROPPED_UNDER
    }
    # Lexing a PR's patch is the same work on every build: what an earlier build measured is
    # kept (`prchain.chains.evidence.kept`), and only PRs new to the graph are lexed.
    kinds = {pr: substance_kind(clones.get(nodes[pr].repo_id)) for pr in graph} | {
        pr: substance_kind(clones.get(nodes[pr].repo_id)) for pr in small
    }
    versions = {pr: evidence_version(nodes[pr].files) for pr in kinds}
    known = kept_substance(engine, kinds, versions)
    measured = measure_stages(graph, engine, minimum, clones, also=small, known=known)
    lexed = {
        pr: c
        for pr, c in measured.items()
        if pr not in known and nodes[pr].code_lines >= minimum  # under it: not lexed
    }
    keep_substance(engine, lexed, kinds, versions)
    in_files = {pr: nodes[pr].code_lines for pr in measured}  # the miner's count, before lexing
    for pr, change in measured.items():
        nodes[pr].code_lines = change.lines
    reverting = reverters(report.links)
    barred = no_stages(measured, minimum, reverting)
    for pr, why in small_changes(in_files, cfg.source_minimum, reverting).items():
        barred.setdefault(pr, why)
    thin = [pr for pr in barred if pr in graph]
    graph.remove_nodes_from(thin)
    report.filtered.removed["stage_below_substance"] += len(thin)
    for link in report.links:
        if link.rule in STAGE_RULES:  # an end is no node at all
            continue
        # Measured where the PR had an edge; else its file-level count, which lexing only lowers.
        ends = [
            f"#{nodes[pr].number}: {barred.get(pr) or f'{nodes[pr].code_lines} lines of code'}"
            for pr in (link.newer, link.older)
            if pr in barred or nodes[pr].code_lines < minimum
        ]
        if not ends:
            continue
        # An end that can be no stage decides the link, as a filtered PR does: whether the pair
        # is a dependency no longer matters, and the link rules' drops keep only pairs that
        # could have been chained (the ones a hand check of them asks about).
        if link.rule is not None:
            report.dropped[link.rule] -= 1
            if not report.dropped[link.rule]:
                del report.dropped[link.rule]
            link.attrs["why"] += f"; the link rules dropped it too ({link.rule})"
        link.attrs["why"] += f"; no stage: {', '.join(ends)}"
        link.rule = "stage_below_substance"
        report.dropped["stage_below_substance"] += 1
    _drop_links_once_lexed(graph, nodes, engine, cfg, report)
    report.nodes, report.edges = graph.number_of_nodes(), graph.number_of_edges()


def _drop_links_once_lexed(
    graph: nx.DiGraph,
    nodes: dict[int, PRNode],
    engine: Engine,
    cfg: ChainsConfig,
    report: GraphReport,
) -> None:
    """The rules that weigh a link against its ends' lexed code, each drop recorded under its rule.

    Code links (`prchain.chains.rules.codelinks`) whose ends make a follow-up fix or a task of its own rather
    than two stages (`thin_code_link`) leave the graph: a vetter's rescue is a verdict on
    dependency, not on substance. Two rules guess at what the vetter reads, and its `dependent`
    lifts them: a code link whose change looks like its own passing through the older code
    (`incidental_code_link`), and a link with too few signs that the newer PR works on the older
    one's code (`uncorroborated`)."""
    dropped: dict[tuple[int, int], tuple[RuleName, str]] = {}
    guessed: dict[tuple[int, int], tuple[RuleName, str]] = {}  # dropped unless judged dependent
    for newer, older, attrs in graph.edges(data=True):
        if attrs.get("evidence_class") != "code":
            continue
        why = thin_code_link(attrs, nodes[newer].code_lines, nodes[older].code_lines, cfg)
        if why:
            dropped[newer, older] = THIN_CODE_LINK, f"no stages: {why}"
            continue
        why = incidental_code_link(attrs, nodes[newer], nodes[older], cfg)
        if why:
            guessed[newer, older] = INCIDENTAL_CODE_LINK, f"a change of its own: {why}"
    standing = [e for e in graph.edges(data=True) if e[:2] not in dropped and e[:2] not in guessed]
    with engine.connect() as conn:

        def patch(pr_id: int) -> str:
            return conn.scalar(select(PRPatch.diff).where(PRPatch.pr_id == pr_id)) or ""

        for pair, why in uncorroborated(standing, nodes, patch, cfg).items():
            guessed[pair] = UNCORROBORATED, why
    lifted = {
        pair: guess
        for pair, guess in guessed.items()
        if graph.edges[pair].get("vetted") == RESCUED_AT
    }
    dropped |= {pair: guess for pair, guess in guessed.items() if pair not in lifted}
    graph.remove_edges_from(dropped)
    for link in report.links:
        pair = link.newer, link.older
        if link.rule is not None:
            continue
        if pair in dropped:
            rule, why = dropped[pair]
            link.rule = rule
            link.attrs["why"] += f"; {why}"
            report.dropped[rule] += 1
        elif pair in lifted and "rescued_from" not in link.attrs:
            rule, why = lifted[pair]
            link.attrs["rescued_from"] = rule
            link.attrs["why"] += f"; the rules had dropped it as {rule} ({why})"
            report.rescued += 1


def _drop(summary: BuildSummary, chain: ChainCandidate, rule: str) -> None:
    summary.chains_dropped[rule] += 1
    summary.links_in_dropped[rule] += len(chain.pr_ids) - 1


def _chain_rules(
    chains: list[ChainCandidate],
    graph: nx.DiGraph,
    nodes: dict[int, PRNode],
    cfg: ChainsConfig,
    max_len: int,
    decon: Decontaminator | None,
    engine: Engine,
    patches: dict[int, SplitPatch],
    summary: BuildSummary,
    entry: StageEntry | None = None,
    shape: Shape = PATH,
) -> list[ChainCandidate]:
    """Stage bases, reverts, substance, then benchmark contamination, then near-duplicates; each
    drop counted by rule. A chain cut short keeps the part that is still of its `shape`."""
    enterable = None
    if entry is not None:
        chains = _cut_at_stage_bases(chains, graph, entry, summary, shape)
        enterable = entry.fits
    if not cfg.revert_pairs:
        undoing = reverters(summary.graph.links)
        if not cfg.revert_stages:
            chains = _cut_at_reverts(chains, graph, undoing, summary, shape)
        chains = _trim_reverts(chains, graph, undoing, summary, shape)
    kept = []
    for chain in chains:
        # A chain of one (the `single` ablation) is a PR task, judged by the PR filters alone.
        short = chain_code_lines(chain.pr_ids, nodes) < cfg.min_chain_code_lines
        if short and len(chain.pr_ids) > 1:
            _drop(summary, chain, "below_substance")
        else:
            kept.append(chain)
    if decon is not None:
        kept = _decontaminate(kept, nodes, decon, engine, patches, summary)
    if cfg.dedup_near_duplicates and max_len > 1:
        kept, counts = dedup_chains(kept, graph, max_len, shape.make, enterable, shape.holds)
        for rule in ("near_duplicate_merged", "near_duplicate_dropped"):
            if counts[rule]:
                summary.chains_dropped[rule] += counts[rule]
                summary.links_in_dropped[rule] += counts[f"{rule}:links"]
    for chain in kept:
        chain.label = revert_label(chain)
        if entry is not None:
            chain.entries = entry.mechanisms(chain.pr_ids)
    return kept


class StageEntry:
    """The stage-base check (prchain/chains/evidence/revertible.py) on the build's PRs and their gold code patches:
    whether one more stage can be entered after a path (`enters`, for the strategy's search), the
    longest run of a path whose stages all can (`run`), and whether they all can (`fits`). A
    repository without a clone can be asked nothing: its stages all count as enterable."""

    def __init__(
        self,
        engine: Engine,
        nodes: dict[int, PRNode],
        patches: dict[int, SplitPatch],
        reverted: Iterable[int] = (),
        graph: nx.DiGraph | None = None,
        *,
        fallback: str = "none",
    ) -> None:
        """`reverted`: the PRs whose gold patches the search may revert (the older ends of the
        graph's links), whose paths are asked of git at once (`StageBases.learn_paths`).
        `graph`: which stage of a path a refused PR links to (a thread's need not be the last).
        `fallback`: a stage the revert refuses may be entered by propagation (`propagate`,
        `Propagation`), by hunks (`hunks`, `HunkEntry`) or by replay (`replay`, `Replay`: every
        stage after a replayed one is replayed too); `none`: never."""
        self.engine, self.nodes, self.patches = engine, nodes, patches
        self.graph = graph
        clones = _clones(engine)
        self.bases = StageBases(clones)
        self.fallback = fallback
        self.propagation: Propagation | HunkEntry | Replay | None = (
            Propagation(clones)
            if fallback == ENTRY_PROPAGATE
            else HunkEntry(clones)
            if fallback == ENTRY_HUNKS
            else Replay(clones)
            if fallback == ENTRY_REPLAY
            else None
        )
        # (newer, older) link → the shortest path after which the newer PR's stage was refused
        self.refused: dict[tuple[int, int], tuple[int, ...]] = {}
        ids = sorted(pr for pr in reverted if self.bases.can_check(nodes[pr].repo_id))
        _load_patches(engine, ids, patches)
        by_repo: dict[int, list[str]] = {}
        for pr in ids:
            by_repo.setdefault(nodes[pr].repo_id, []).append(patches.get(pr, NO_PATCH).code)
        for repo, golds in by_repo.items():
            self.bases.learn_paths(repo, golds)

    def _golds(self, path: Sequence[int]) -> list[str]:
        _load_patches(self.engine, list(path), self.patches)
        return [self.patches.get(pr, NO_PATCH).code for pr in path]

    def enters(self, path: tuple[int, ...], newer: int) -> bool:
        repo = self.nodes[newer].repo_id
        if not self.bases.can_check(repo):
            return True
        if self._reverts(path, newer):
            return True
        if self._propagates(path, newer):
            return True
        link = (newer, self._linked(path, newer))
        self.refused[link] = min(self.refused.get(link, path), path, key=lambda p: (len(p), p))
        return False

    def _reverts(self, path: Sequence[int], newer: int) -> bool:
        """Whether `newer`'s stage is entered by reverting `path`'s gold patches at its base: they
        revert, and no stage of `path` was replayed (whose later stages are replayed too)."""
        node = self.nodes[newer]
        if not self.bases.reverts(node.repo_id, node.base_sha or "", self._golds(path)):
            return False
        return self.fallback != ENTRY_REPLAY or ENTRY_REPLAY not in self.mechanisms(tuple(path))

    def _linked(self, path: tuple[int, ...], newer: int) -> int:
        """The latest stage of `path` that `newer` has a kept link to (a path's: its last)."""
        graph = self.graph
        if graph is None:
            return path[-1]
        return next((pr for pr in reversed(path) if graph.has_edge(newer, pr)), path[-1])

    def _propagates(self, path: Sequence[int], newer: int) -> bool:
        """Whether `newer`'s stage can be entered after `path` by the fallback (off: never)."""
        if self.propagation is None or not path:
            return False
        node = self.nodes[newer]
        return self.propagation.enters(
            node.repo_id, node.base_sha or "", self.earlier(path), self._golds((newer,))[0]
        )

    def earlier(self, path: Sequence[int]) -> list[EarlierStage]:
        golds = self._golds(tuple(path))
        return [
            EarlierStage(self.nodes[pr].merge_sha, g) for pr, g in zip(path, golds, strict=True)
        ]

    def run(self, path: tuple[int, ...]) -> tuple[int, int]:
        repo = self.nodes[path[0]].repo_id
        if not self.bases.can_check(repo):
            return 0, len(path)
        return longest_run(
            len(path),
            lambda start, end: (
                self._reverts(path[start:end], path[end])
                or self._propagates(path[start:end], path[end])
            ),
        )

    def mechanisms(self, path: tuple[int, ...]) -> tuple[str, ...]:
        """How each stage of a kept chain is entered: by reverting the earlier gold patches at its
        base (`revert`, the first stage's too), or by the fallback (`propagate`, `hunks` or
        `replay`; after a replayed stage, `replay`)."""
        repo = self.nodes[path[0]].repo_id
        found: list[str] = [ENTRY_REVERT]
        for t in range(1, len(path)):
            node = self.nodes[path[t]]
            reverts = not self.bases.can_check(repo) or self.bases.reverts(
                repo, node.base_sha or "", self._golds(path[:t])
            )
            replayed = self.fallback == ENTRY_REPLAY and ENTRY_REPLAY in found
            found.append(ENTRY_REVERT if reverts and not replayed else self.fallback)
        return tuple(found)

    def fits(self, path: tuple[int, ...]) -> bool:
        return self.run(path) == (0, len(path))


def _note_refused(
    entry: StageEntry,
    chains: list[ChainCandidate],
    links: list[LinkDecision],
    summary: BuildSummary,
) -> None:
    """Kept links in no chain because the search never could enter the newer PR's stage after
    them (`stage_base_refused`): counted, and said in the link's own record (`chains links`)."""
    # A chain's edges are its links: a path's consecutive pairs, every dependency of a thread.
    used = {(e["src"], e["dst"]) for c in chains for e in c.edges}
    refused = {pair: path for pair, path in entry.refused.items() if pair not in used}
    if not refused:
        return
    summary.chains_dropped["stage_base_refused"] += 0
    summary.links_in_dropped["stage_base_refused"] += len(refused)
    numbers = entry.nodes
    for link in links:
        path = refused.get((link.newer, link.older)) if link.rule is None else None
        if path is not None:
            after = " ← ".join(f"#{numbers[pr].number}" for pr in path)
            link.attrs["why"] = (
                f"{link.attrs.get('why', '')}; in no chain (stage_base_refused): the stage of "
                f"#{numbers[link.newer].number} cannot be entered after {after}, an earlier "
                "gold patch does not revert at its base"
            ).lstrip("; ")


def _cut_at_stage_bases(
    chains: list[ChainCandidate],
    graph: nx.DiGraph,
    entry: StageEntry,
    summary: BuildSummary,
    shape: Shape = PATH,
) -> list[ChainCandidate]:
    """Each chain keeps its longest run of stages that can all be entered (prchain/chains/evidence/revertible.py):
    a chain left with under two stages is dropped (`stage_base_conflict`), a shorter one is
    made again from the run (`stage_base_cut` counts the links cut off). The semantic strategy
    only grows paths through enterable stages, so this cuts what other strategies pick."""
    kept = []
    for chain in chains:
        start, end = entry.run(chain.pr_ids)
        run = shape.keep(graph, chain.pr_ids[start:end])
        if len(run) == len(chain.pr_ids):
            kept.append(chain)
        elif len(run) < 2:
            _drop(summary, chain, "stage_base_conflict")
        else:
            summary.chains_dropped["stage_base_cut"] += 0
            summary.links_in_dropped["stage_base_cut"] += len(chain.pr_ids) - len(run)
            kept.append(_cut(graph, chain, run, shape))
    return _unique(kept)


def _cut(
    graph: nx.DiGraph, chain: ChainCandidate, ids: tuple[int, ...], shape: Shape = PATH
) -> ChainCandidate:
    """The chain shortened to its run `ids`, with its own edges when they are no references of
    the graph (a temporal chain's), else made again from the graph (a thread with all its links)."""
    if shape is THREAD:
        return shape.make(graph, ids)
    if not all(graph.has_edge(ids[i + 1], ids[i]) for i in range(len(ids) - 1)):
        edges = [e for e in chain.edges if e["src"] in ids and e["dst"] in ids]
        return replace(chain, pr_ids=ids, edges=edges)
    return candidate(graph, ids)


def _is_revert(edge: dict[str, Any]) -> bool:
    return edge.get("evidence_class") == "revert"


def revert_label(chain: ChainCandidate) -> str | None:
    """'revert_reland' when a stage reverts the one before and a later stage builds on the revert."""
    return "revert_reland" if any(_is_revert(e) for e in chain.edges[:-1]) else None


def reverters(links: list[LinkDecision]) -> set[int]:
    """The PRs that revert another, by a candidate link of theirs judged a revert (kept or not:
    the reverted PR may be no stage)."""
    return {link.newer for link in links if link.attrs.get("evidence_class") == "revert"}


def _trim_reverts(
    chains: list[ChainCandidate],
    graph: nx.DiGraph,
    undoing: set[int],
    summary: BuildSummary,
    shape: Shape = PATH,
) -> list[ChainCandidate]:
    """A revert is a stage only right after the PR it undoes. A last stage that only reverts the
    one before teaches nothing: it is cut off, and a chain left shorter than two stages ("A,
    revert A") is dropped. A first stage that reverts (`undoing`) asks the agent to undo a change
    the chain never showed it, and restores old code: it is cut off too (grpc-go's "Rollback
    #8232 and #8204" before its roll-forward #8271; fastify's revert #3191 before #3427 rewrote
    the code it restored). Chains are made again from the shortened path, so scores and edges
    stay consistent."""
    kept = []
    for chain in chains:
        path = chain.pr_ids
        # A temporal chain's neighbours need no edge of the graph (get_edge_data: None then).
        while len(path) > 1 and _is_revert(graph.get_edge_data(path[-1], path[-2]) or {}):
            path = path[:-1]
        trailing = len(chain.pr_ids) - len(path)
        path = _without_leading_reverts(path, undoing)
        leading = len(chain.pr_ids) - trailing - len(path)
        path = shape.keep(graph, path)  # a thread's stage may have built only on a cut one
        trailing = len(chain.pr_ids) - leading - len(path)
        if path == chain.pr_ids:
            kept.append(chain)
        elif len(path) < 2:
            _drop(summary, chain, "leading_revert" if leading else "revert_pair")
        else:
            for rule, links in (("trailing_revert_cut", trailing), ("leading_revert_cut", leading)):
                if links:
                    summary.chains_dropped[rule] += 0
                    summary.links_in_dropped[rule] += links
            kept.append(_cut(graph, chain, path, shape))
    return _unique(kept)


def _cut_at_reverts(
    chains: list[ChainCandidate],
    graph: nx.DiGraph,
    undoing: set[int],
    summary: BuildSummary,
    shape: Shape = PATH,
) -> list[ChainCandidate]:
    """A chain cut where a stage inside it reverts the one before: the longer side, the older one
    on a tie, without a revert at its front. "A, revert A, A again" leaves nothing; a chain too
    short after the cut is dropped (`revert_stage`). A revert at either end is `_trim_reverts`'s."""
    kept = []
    for chain in chains:
        path = chain.pr_ids
        runs, start = [], 0
        for i in range(1, len(path) - 1):
            if _is_revert(graph.get_edge_data(path[i], path[i - 1]) or {}):
                runs.append(path[start:i])
                start = i
        if not runs:
            kept.append(chain)
            continue
        runs.append(path[start:])
        trimmed = [shape.keep(graph, _without_leading_reverts(run, undoing)) for run in runs]
        best = max(trimmed, key=len)  # max keeps the first, the older side, on a tie
        if len(best) < 2:
            _drop(summary, chain, "revert_stage")
        else:
            summary.chains_dropped["revert_stage_cut"] += 0
            summary.links_in_dropped["revert_stage_cut"] += len(path) - len(best)
            kept.append(_cut(graph, chain, best, shape))
    return _unique(kept)


def _without_leading_reverts(path: tuple[int, ...], undoing: set[int]) -> tuple[int, ...]:
    """`path` without the reverts at its front (`undoing`), down to one stage at least."""
    while len(path) > 1 and path[0] in undoing:
        path = path[1:]
    return path


def _unique(chains: list[ChainCandidate]) -> list[ChainCandidate]:
    """Chains with distinct PR sequences, first seen first (cutting can make two chains equal)."""
    seen: set[tuple[int, ...]] = set()
    out = []
    for chain in chains:
        if chain.pr_ids not in seen:
            seen.add(chain.pr_ids)
            out.append(chain)
    return out


def _decontaminate(
    chains: list[ChainCandidate],
    nodes: dict[int, PRNode],
    decon: Decontaminator,
    engine: Engine,
    patches: dict[int, SplitPatch],
    summary: BuildSummary,
) -> list[ChainCandidate]:
    pr_ids = sorted({pr for c in chains for pr in c.pr_ids})
    _load_patches(engine, pr_ids, patches)
    repos = {rid: name for rid, (name, _path, _branch) in load_repos(engine).items()}
    keys = (
        StageKey(
            pr,
            repos[nodes[pr].repo_id],
            nodes[pr].number,
            nodes[pr].base_sha,
            patches.get(pr, NO_PATCH).code,
        )
        for pr in pr_ids
    )
    hits = {pr: (rule, instance) for pr, rule, instance in decon.contaminated(keys)}
    kept = []
    for chain in chains:
        found = [hits[pr] for pr in chain.pr_ids if pr in hits]
        if found:
            _drop(summary, chain, found[0][0])
        else:
            kept.append(chain)
    summary.contaminated = [
        {"pr": nodes[pr].number, "rule": rule, "instance": instance}
        for pr, (rule, instance) in sorted(hits.items())
    ]
    return kept


def _load_patches(engine: Engine, pr_ids: list[int], patches: dict[int, SplitPatch]) -> None:
    missing = [pr for pr in pr_ids if pr not in patches]
    if not missing:
        return
    with engine.connect() as conn:
        for chunk in batches(missing):
            query = select(PRPatch.pr_id, PRPatch.diff).where(PRPatch.pr_id.in_(chunk))
            patches.update((pr_id, split_patch(diff)) for pr_id, diff in conn.execute(query))


def record_build(engine: Engine, summary: BuildSummary) -> int:
    """Keep what each rule dropped, for `prchain stats`; returns the build's id."""
    rules = [asdict(rule) for rule in summary.rules()]
    graph = {
        "nodes": summary.graph.nodes,
        "edges": summary.graph.edges,
        "references": summary.graph.references,
        "lengths": {str(k): v for k, v in sorted(summary.by_length.items())},
        "stops": as_record(summary.stops),
        "max_len": summary.max_len,
        "prs": summary.prs,
        "stages": summary.stage_count,
        "per_thousand": summary.per_thousand,
        "entered_by": dict(summary.entered_by),
    }
    with session_scope(engine) as session:
        row = ChainBuild(strategy=summary.strategy, chains=summary.total, rules=rules, graph=graph)
        session.add(row)
        session.flush()
        return row.id
