"""Evidence kept in the store: what git and the lexers said of a pair of PRs is computed once.

The link rules ask the same questions of a pair on every build (does the newer PR rewrite the
older one's lines, use the names it brought in, does its branch hold it), and the answers depend
only on the two patches and the clone, never on the rules or their settings. `KeptEvidence`
answers them from the `pair_evidence` table where it can and from git where it must, and keeps
the new answers: a rebuild after a rule or setting change runs no git for pairs already seen.
`EVIDENCE_VERSION` names the code that computes the answers; bump it when that code changes what
it answers, and every pair is asked again.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine, select

from chains.lines import BlameJob, Lineage, Lines
from chains.substance import CodeChange
from chains.symbols import Symbols
from sql.db import session_scope, upsert
from sql.models import PairEvidence

if TYPE_CHECKING:
    from chains.loading import PRNode

EVIDENCE_VERSION = "1"
Key = tuple[int, int, str]
CHUNK = 900  # ids per IN (...) query: under SQLite's bound-parameter limit


class KeptEvidence:
    """A line and symbol oracle (`chains.lines.LineOracle`, `chains.symbols.SymbolOracle`) that
    reads the store first. `lines` and `symbols` answer what the store does not hold; `save`
    writes what they answered. A kind is suffixed `@git` where the clone was at hand: without
    it the same question has another answer (patches only)."""

    def __init__(
        self,
        engine: Engine,
        lines: Lines,
        symbols: Symbols,
        known: dict[Key, Any] | None = None,
        *,
        dry: bool = False,
    ) -> None:
        self.engine = engine
        self.lines = lines
        self.symbols = symbols
        self.known = load(engine) if known is None else known
        self.fresh: dict[Key, Any] = {}
        self.hits = 0
        self._dry = dry  # a planning twin: its line answers are placeholders, never kept

    # -- LineOracle --------------------------------------------------------------------------

    def lineage(self, newer: PRNode, older: PRNode, *, blame: bool = True) -> Lineage:
        kind = "lineage" if blame else "lineage_patch"
        value = self._ask(
            newer,
            older,
            kind,
            lambda: asdict(self.lines.lineage(newer, older, blame=blame)),
            keep=not self._dry,
        )
        return Lineage(**value)

    def undoes(self, newer: PRNode, older: PRNode) -> bool:
        return bool(self._ask(newer, older, "undoes", lambda: self.lines.undoes(newer, older)))

    def repeats(self, newer: PRNode, older: PRNode) -> bool:
        return bool(self._ask(newer, older, "repeats", lambda: self.lines.repeats(newer, older)))

    def branch_holds(self, later: PRNode, earlier: PRNode) -> bool:
        return bool(
            self._ask(later, earlier, "holds", lambda: self.lines.branch_holds(later, earlier))
        )

    # -- SymbolOracle ------------------------------------------------------------------------

    def used(self, newer: PRNode, older: PRNode) -> int:
        count = self._ask(
            newer, older, "symbols", lambda: self.symbols.used(newer, older), keep=not self._dry
        )
        return int(count)

    def shared(self, newer: PRNode, older: PRNode) -> list[str]:
        names = self._ask(
            newer,
            older,
            "symbol_names",
            lambda: self.symbols.shared(newer, older),
            keep=not self._dry,
        )
        return list(names)

    # -- planning (see `Lines.planner`) ------------------------------------------------------

    def planner(self) -> KeptEvidence:
        """A twin over `Lines.planner()` that plans blames only for pairs the store lacks."""
        planner = self.symbols.planner()
        twin = KeptEvidence(self.engine, self.lines.planner(), planner, self.known, dry=True)
        twin.fresh = self.fresh  # real answers of the dry pass are kept (not its placeholders)
        return twin

    @property
    def planned(self) -> list[BlameJob]:
        return self.lines.planned

    @property
    def planned_names(self) -> list[PRNode]:
        """The older PRs whose new names the dry pass asked about (`Symbols.planner`)."""
        return self.symbols.planned

    def prefetch(self, jobs: Sequence[BlameJob], workers: int = 0) -> None:
        self.lines.prefetch(jobs, workers)

    def prefetch_names(self, olders: Sequence[PRNode]) -> None:
        self.symbols.prefetch(olders)

    @property
    def blame_calls(self) -> int:
        return self.lines.blame_calls

    # -- the store ---------------------------------------------------------------------------

    def _ask(self, newer: PRNode, older: PRNode, kind: str, compute: Any, keep: bool = True) -> Any:
        if self.lines.clones.get(newer.repo_id):
            kind += "@git"
        key = (newer.id, older.id, kind)
        if key in self.known:
            self.hits += 1
            return self.known[key]
        if key in self.fresh:
            return self.fresh[key]
        value = compute()
        if keep:
            self.fresh[key] = value
        return value

    def save(self) -> int:
        """Write the answers computed since loading; returns how many."""
        rows = [
            {"newer_pr_id": a, "older_pr_id": b, "kind": kind, "version": EVIDENCE_VERSION}
            | {"value": {"v": value}}
            for (a, b, kind), value in self.fresh.items()
        ]
        store(self.engine, rows)
        self.known.update(self.fresh)
        self.fresh = {}
        return len(rows)


def load(engine: Engine, kinds: Iterable[str] | None = None) -> dict[Key, Any]:
    """Every kept answer of this `EVIDENCE_VERSION` (of `kinds` only, when given)."""
    query = select(
        PairEvidence.newer_pr_id, PairEvidence.older_pr_id, PairEvidence.kind, PairEvidence.value
    ).where(PairEvidence.version == EVIDENCE_VERSION)
    if kinds is not None:
        query = query.where(PairEvidence.kind.in_(list(kinds)))
    with engine.connect() as conn:
        return {(a, b, kind): value["v"] for a, b, kind, value in conn.execute(query)}


def store(engine: Engine, rows: Sequence[dict[str, Any]]) -> None:
    with session_scope(engine) as session:
        for start in range(0, len(rows), 2000):
            upsert(
                session,
                PairEvidence,
                rows[start : start + 2000],
                ["newer_pr_id", "older_pr_id", "kind"],
                update=("version", "value"),
            )


SUBSTANCE = "substance"


def substance_kind(clone: str | None) -> str:
    """The kind a PR's lexed code change is kept under (`@git`: read with its clone's
    attributes, which mark generated files)."""
    return SUBSTANCE + ("@git" if clone else "")


def kept_substance(engine: Engine, kinds: Mapping[int, str]) -> dict[int, CodeChange]:
    """The lexed code change of each PR of `kinds` (PR id → its kind) the store holds, kept
    under the pair (pr, pr)."""
    found = load(engine, set(kinds.values()))
    return {a: CodeChange(*value) for (a, _b, kind), value in found.items() if kinds.get(a) == kind}


def keep_substance(
    engine: Engine, measured: Mapping[int, CodeChange], kinds: Mapping[int, str]
) -> None:
    rows = [
        {"newer_pr_id": pr, "older_pr_id": pr, "kind": kinds[pr], "version": EVIDENCE_VERSION}
        | {"value": {"v": [change.added, change.removed]}}
        for pr, change in measured.items()
    ]
    store(engine, rows)
