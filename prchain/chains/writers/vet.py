"""The link vetter: an LLM reads both PRs of a link and says whether the newer depends on the
older; a build then drops the kept links it rejects and adds back the drops it rescues.

The deterministic rules decide first (prchain/chains/rules/link_rules.py): the vetter is asked about the links
they kept, and about those dropped by the rules that only guess at shared code
(`chains.vet_rescue`).
What the model sees is what a hand check reads: both PRs' titles, descriptions and diffs, the
wording that made the link and the older PR's lines the newer one rewrites. Everything copied
from the repository is fenced between markers derived from the text itself, so a PR description
can neither close its fence nor pose as the answer; the verdict is the last JSON object of the
reply, never one quoted from a diff.

The same reply says which of the two PRs, if any, would be a thin stage: too slight to teach
as a task of its own. Verdicts live in `link_verdicts`, apart from the links a build rewrites: a
rerun asks only about links without one, and a build applies them (prchain/chains/building/vetted.py).
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from sqlalchemy import Engine, or_, select
from sqlalchemy.orm import aliased

from prchain.chains.building.vetted import (
    REJECTED_RULE,
    RESCUED_AT,
    THIN_RULE,
    VERDICTS,
    Verdict,
    keeps,
    load_verdicts,
)
from prchain.chains.config import ChainsConfig
from prchain.chains.reading.patches import SplitPatch, file_sections, section_path, split_patch
from prchain.chains.record import EvidenceRow
from prchain.chains.views.sample import pr_diffs, pr_text, rewritten_between
from prchain.chains.writers.textclean import clean_body, estimate_tokens, trim_patch
from prchain.core.errors import LLMOutputInvalid, NothingToDo
from prchain.llm.calls import Usage
from prchain.llm.config import LLMConfig
from prchain.llm.estimate import RoleEstimate, estimate_role
from prchain.llm.parsing import fence_token, json_objects
from prchain.llm.prompts import render
from prchain.llm.repairs import Repaired, RepairKind
from prchain.store.db import session_scope, upsert
from prchain.store.models import Chain, ChainLink, ChainStage, LinkVerdict, Repo

if TYPE_CHECKING:
    from prchain.llm.client import LLMClient

PROMPTS = Path(__file__).with_name("prompts")
TEMPLATE = "vet.j2"
VET_ROLE = "link_vetter"
MAX_ROUNDS = 5  # scope `chains`: vet, build, vet the new chains' links, ... at most this often
BODY_CHARS = 1500  # per PR: the description's gist; the diffs carry the evidence
REPLY_TOKENS = 220  # a few sentences and the JSON object: the dry run's guess without history

Progress = Callable[[str, int, int], None]


def prompt_version() -> str:
    """A digest of the template: a verdict records which wording asked for it."""
    return hashlib.sha256((PROMPTS / TEMPLATE).read_bytes()).hexdigest()[:16]


# -- the reply ---------------------------------------------------------------------------------


Side = Literal["earlier", "later"]


@dataclass(frozen=True)
class VetReply:
    verdict: Verdict
    reason: str
    thin: frozenset[Side] = frozenset()  # which of the two PRs would be a thin stage


_VERDICT_LINE = re.compile(
    r"^\W*verdict\W*[:=-]\W*(dependent|borderline|independent)\W*$", re.IGNORECASE
)


def parse_vet_reply(reply: str, numbers: tuple[int, int] | None = None) -> Repaired[VetReply]:
    """The vetter's own answer: the last JSON object of the reply (an earlier one may be quoted
    from a PR). Format-only slips are repaired and named: a verdict word in another case or with
    punctuation, or no JSON at all but a last line `Verdict: <word>`; a thin list naming the PRs
    otherwise than `earlier`/`later` (by their (older, newer) `numbers`, as `older`, as one word
    rather than a list), or left out. Anything else is re-asked."""
    objects = json_objects(reply)
    if not objects:
        lines = [line for line in reply.strip().splitlines() if line.strip()]
        found = _VERDICT_LINE.match(lines[-1]) if lines else None
        if found is None:
            raise LLMOutputInvalid(
                'expected a JSON object {"verdict": ..., "reason": ...} at the end of the reply'
            )
        return Repaired(VetReply(_word(found.group(1)), ""), ("verdict_from_text", "thin_missing"))
    answer = objects[-1]
    raw = answer.get("verdict")
    if not isinstance(raw, str):
        raise LLMOutputInvalid(f'"verdict" must be one of {", ".join(VERDICTS)}; got {raw!r}')
    word = raw.strip().strip(".!\"'`*").strip().lower()
    if word not in VERDICTS:
        raise LLMOutputInvalid(f'"verdict" must be one of {", ".join(VERDICTS)}; got {raw!r}')
    reason = answer.get("reason")
    if isinstance(reason, str) and restates_prompt(reason):
        raise LLMOutputInvalid(
            "the reason restates the prompt's definitions; name the code in these pull requests "
            "that decided the verdict"
        )
    repairs: list[RepairKind] = ["verdict_word_normalized"] if word != raw else []
    thin, thin_repairs = _thin(answer, numbers)
    repairs += thin_repairs
    reason = reason if isinstance(reason, str) else ""
    return Repaired(VetReply(_word(word), reason, thin), tuple(repairs))


_SIDE_WORDS: dict[str, Side] = {
    "earlier": "earlier",
    "older": "earlier",
    "first": "earlier",
    "later": "later",
    "newer": "later",
    "second": "later",
}


def _thin(
    answer: dict[str, Any], numbers: tuple[int, int] | None
) -> tuple[frozenset[Side], list[RepairKind]]:
    """The sides a reply calls thin, and the repairs it took to read them."""
    if "thin" not in answer:
        return frozenset(), ["thin_missing"]
    raw = answer["thin"]
    items = [] if raw is None else raw if isinstance(raw, list) else [raw]
    by_number = dict(zip(numbers, ("earlier", "later"), strict=True)) if numbers else {}
    sides: set[Side] = set()
    exact = isinstance(raw, list)
    for item in items:
        if isinstance(item, str) and item in ("earlier", "later"):
            sides.add(cast(Side, item))
            continue
        exact = False
        word = str(item).strip().strip(".!\"'`*#").strip().lower() if item is not None else ""
        word = re.sub(r"^(pr|pull request)\s*#?", "", word)
        side = _SIDE_WORDS.get(word.split(" ")[0]) if word else None
        if side is None and word.isdigit():
            side = cast(Side | None, by_number.get(int(word)))
        if side is None:
            raise LLMOutputInvalid(
                f'"thin" must list "earlier", "later", both or neither; got {raw!r}'
            )
        sides.add(side)
    return frozenset(sides), [] if exact else ["thin_normalized"]


_WORD = re.compile(r"[A-Za-z]{4,}")
# Something only these pull requests hold: a name in backticks, a PR number, a path, a
# snake_case or camelCase identifier, a call.
_PARTICULAR = re.compile(r"`|#\d|\w/\w|\w\.\w|[a-z]_[a-z]|[a-z][A-Z]|\w\(")
RESTATED_SHARE = 0.9  # of a reason's words found in the prompt's own wording
RESTATED_MIN_WORDS = 6


def _prompt_words() -> frozenset[str]:
    """The words of the template's own wording (its variables and tags left out)."""
    text = re.sub(
        r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}", " ", (PROMPTS / TEMPLATE).read_text(), flags=re.S
    )
    return frozenset(w.lower() for w in _WORD.findall(text))


def restates_prompt(reason: str) -> bool:
    """Whether a verdict's reason only says the prompt's definitions back ("the later pull
    request works on what the earlier one introduced"): at least `RESTATED_MIN_WORDS` words,
    `RESTATED_SHARE` of them the prompt's own, and nothing that only these pull requests hold.
    Such a verdict is no verdict: a small model gave one so for a link two judges had called
    dependent, and removed it (issue 53)."""
    if _PARTICULAR.search(reason):
        return False
    words = [w.lower() for w in _WORD.findall(reason)]
    if len(words) < RESTATED_MIN_WORDS:
        return False
    known = _prompt_words()
    return sum(w in known for w in words) >= RESTATED_SHARE * len(words)


def _word(text: str) -> Verdict:
    """A verdict word already matched against VERDICTS, in any case."""
    return cast(Verdict, text.lower())


# -- what is asked -----------------------------------------------------------------------------


@dataclass(frozen=True)
class PRSide:
    number: int
    title: str
    body: str
    files: list[str]
    patch: str
    trimmed: bool


@dataclass(frozen=True)
class LinkToVet:
    repo_id: int
    repo: str
    newer_id: int
    older_id: int
    evidence: list[EvidenceRow]  # as `chain_links.evidence` stores them
    evidence_class: str | None
    kept: bool  # by the latest build; False: a `vet_rescue` rule dropped it


def pending_links(
    engine: Engine, config: ChainsConfig, *, redo: bool = False
) -> tuple[list[LinkToVet], int]:
    """The links of the latest build the vetter has not judged: the kept ones within `vet_scope`
    and those dropped by a `vet_rescue` rule; and how many of them already have a verdict. With
    `redo`, every such link and every link the vetter had rejected or cut as thin is asked about
    again."""
    kept = ChainLink.kept.is_(True)
    asked = or_(kept, ChainLink.rule.in_(config.vet_rescue))
    asked = or_(asked, ChainLink.rule.in_((REJECTED_RULE, THIN_RULE))) if redo else asked
    query = (
        select(ChainLink, Repo.full_name)
        .join(Repo, Repo.id == ChainLink.repo_id)
        .where(asked)
        .order_by(ChainLink.repo_id, ChainLink.newer_pr_id, ChainLink.older_pr_id)
    )
    judged = load_verdicts(engine)
    chained = chain_links(engine) if config.vet_scope == "chains" else set()
    out, done = [], 0
    with session_scope(engine) as session:
        for link, repo in session.execute(query):
            pair = (link.newer_pr_id, link.older_pr_id)
            if link.kept and not _in_scope(link, pair in chained, config):
                continue
            if not redo and pair in judged:
                done += 1
                continue
            evidence = cast(list[EvidenceRow], list(link.evidence or []))
            out.append(
                LinkToVet(link.repo_id, repo, *pair, evidence, link.evidence_class, link.kept)
            )
    return out, done


def _in_scope(link: ChainLink, chained: bool, config: ChainsConfig) -> bool:
    """Whether `vet_scope` asks about this kept link."""
    if config.vet_scope == "chains":
        return chained
    if config.vet_scope == "weak":
        return link.evidence_class not in ("strong", "revert")
    return True


def chain_links(engine: Engine) -> set[tuple[int, int]]:
    """(newer, older) of every two consecutive stages of the chains the latest builds selected."""
    newer, older = aliased(ChainStage), aliased(ChainStage)
    query = (
        select(newer.pr_id, older.pr_id)
        .join(older, (older.chain_id == newer.chain_id) & (older.idx == newer.idx - 1))
        .join(Chain, Chain.id == newer.chain_id)
        .where(Chain.superseded_at.is_(None))
        .distinct()
    )
    with engine.connect() as conn:
        return {(a, b) for a, b in conn.execute(query)}


def _side(engine: Engine, pr_id: int, split: SplitPatch, budget: int, shared: set[str]) -> PRSide:
    text = pr_text(engine, pr_id)
    # Code first, then its tests: a later PR that only tests the earlier one's feature still
    # shows what it exercises. Within each, the files both PRs change lead, so a trimmed diff
    # still shows where the two meet.
    patch = shared_first(split.code, shared) + shared_first(split.test, shared)
    patch, trimmed = trim_patch(patch, budget)
    files = list(dict.fromkeys([*split.code_paths, *split.test_paths]))
    return PRSide(text.number, text.title, clean_body(text.body, BODY_CHARS), files, patch, trimmed)


def shared_first(diff: str, shared: set[str]) -> str:
    """The diff's file sections with those of `shared` paths first, each group in its order:
    yazi #3108 changed 65 files, and the one #3114 rewrote came after the budget (round 39)."""
    sections = file_sections(diff)
    return "".join(sorted(sections, key=lambda section: section_path(section) not in shared))


def _paths(split: SplitPatch) -> set[str]:
    return {*split.code_paths, *split.test_paths}


def reference_text(evidence: Sequence[EvidenceRow]) -> str:
    """The wording behind a link, one line per piece of evidence: where it was found and what it
    says."""
    lines = []
    for item in evidence:
        text = " ".join(str(item.get("text") or "").split())
        if text:
            where = item.get("found_in") or item.get("type") or "text"
            lines.append(f"[{where}] {text}")
    return "\n".join(dict.fromkeys(lines))


def vet_prompt(engine: Engine, link: LinkToVet, config: ChainsConfig) -> str:
    return vet_question(engine, link, config)[0]


def vet_question(
    engine: Engine, link: LinkToVet, config: ChainsConfig
) -> tuple[str, tuple[int, int]]:
    """The prompt about a link, and the (older, newer) PR numbers its reply may name."""
    diffs = pr_diffs(engine, link.newer_id, link.older_id)
    splits = {pr: split_patch(diff) for pr, diff in diffs.items()}
    shared = _paths(splits[link.older_id]) & _paths(splits[link.newer_id])
    older = _side(engine, link.older_id, splits[link.older_id], config.vet_patch_tokens, shared)
    newer = _side(engine, link.newer_id, splits[link.newer_id], config.vet_patch_tokens, shared)
    reference = reference_text(link.evidence)
    rewritten = rewritten_between(diffs[link.newer_id], diffs[link.older_id])
    texts = [reference, *rewritten]
    for side in (older, newer):
        texts += [side.title, *side.files, side.body, side.patch]
    prompt = render(
        PROMPTS,
        TEMPLATE,
        repo=link.repo,
        token=fence_token(*texts),
        reference=reference,
        rewritten=rewritten,
        older=older,
        newer=newer,
    )
    return prompt, (older.number, newer.number)


# -- asking ------------------------------------------------------------------------------------


@dataclass
class VetSummary:
    asked: int = 0
    already: int = 0  # links judged by an earlier run
    verdicts: Counter[str] = field(default_factory=Counter)
    rejected: int = (
        0  # of the kept links asked, those under chains.vet_keep: the next build drops them
    )
    rescued: int = 0  # of the dropped links asked, those judged dependent: the next build adds them
    thin: int = 0  # PRs called thin stages (once per verdict): the next build cuts chains there
    failed: int = 0
    failures: list[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    rounds: int = 0  # vet-then-build rounds (scope `chains`: new chains bring new links)

    @property
    def llm_calls(self) -> int:
        return self.usage.paid_calls

    def merge(self, later: VetSummary) -> None:
        """Add a round's counts (not `already`: that is what the first round found judged)."""
        self.asked += later.asked
        self.verdicts.update(later.verdicts)
        self.rejected += later.rejected
        self.rescued += later.rescued
        self.thin += later.thin
        self.failed += later.failed
        self.failures.extend(later.failures)
        self.usage = later.usage  # the client's running total


def vet_links(
    config: ChainsConfig,
    engine: Engine,
    client: LLMClient,
    *,
    workers: int = 1,
    redo: bool = False,
    limit: int | None = None,
    progress: Progress | None = None,
) -> VetSummary:
    """Ask the link_vetter about every pending link (`pending_links`), `workers` at a time; each
    verdict is saved as it arrives, so an interrupted run resumes where it stopped."""
    links, done = pending_links(engine, config, redo=redo)
    if not links and not done:
        raise NothingToDo("no links to vet: run `prchain chains build` first")
    links = links[:limit] if limit is not None else links
    summary = VetSummary(already=done)
    version = prompt_version()
    model = client.config.model_for(VET_ROLE)
    if progress:
        progress("vetting links", 0, len(links))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        futures = {pool.submit(_ask, engine, link, config, client): link for link in links}
        pending = set(futures)
        while pending:
            finished, pending = wait(pending, return_when=FIRST_EXCEPTION)
            for future in finished:
                link = futures[future]
                try:
                    reply = future.result()
                except LLMOutputInvalid as exc:  # this link stays unjudged; the next run asks again
                    summary.failed += 1
                    summary.failures.append(f"#{link.newer_id} → #{link.older_id}: {exc}")
                    continue
                except BaseException:
                    pool.shutdown(cancel_futures=True)  # the server is gone: what is saved stays
                    raise
                save_verdict(engine, link, reply, model, version)
                summary.asked += 1
                summary.verdicts[reply.verdict] += 1
                summary.thin += len(reply.thin)
                if link.kept:
                    summary.rejected += not keeps(reply.verdict, config.vet_keep)
                else:
                    summary.rescued += reply.verdict == RESCUED_AT
                if progress:
                    progress("vetting links", summary.asked + summary.failed, len(links))
    summary.usage = client.usage
    return summary


def plan_vet(
    config: ChainsConfig,
    llm: LLMConfig,
    engine: Engine,
    *,
    redo: bool = False,
    limit: int | None = None,
) -> list[RoleEstimate]:
    """`chains vet --dry-run`: the calls, tokens and cost of asking about the pending links, their
    prompts measured."""
    links, _done = pending_links(engine, config, redo=redo)
    links = links[:limit] if limit is not None else links
    tokens = sum(estimate_tokens(vet_prompt(engine, link, config)) for link in links)
    return [
        estimate_role(
            llm,
            engine,
            VET_ROLE,
            len(links),
            prompt_tokens=tokens,
            completion_per_call=REPLY_TOKENS,
        )
    ]


def _ask(engine: Engine, link: LinkToVet, config: ChainsConfig, client: LLMClient) -> VetReply:
    prompt, numbers = vet_question(engine, link, config)
    messages = [{"role": "user", "content": prompt}]
    parse = functools.partial(parse_vet_reply, numbers=numbers)
    reply, _completion = client.complete_repaired(VET_ROLE, messages, parse)
    return reply


def save_verdict(
    engine: Engine, link: LinkToVet, reply: VetReply, model: str, version: str
) -> None:
    row = {
        "repo_id": link.repo_id,
        "newer_pr_id": link.newer_id,
        "older_pr_id": link.older_id,
        "verdict": reply.verdict,
        "reason": reply.reason[:2000],
        "older_thin": "earlier" in reply.thin,
        "newer_thin": "later" in reply.thin,
        "model": model,
        "prompt_version": version,
    }
    with session_scope(engine) as session:
        upsert(
            session,
            LinkVerdict,
            [row],
            ["newer_pr_id", "older_pr_id"],
            update=("verdict", "reason", "older_thin", "newer_thin", "model", "prompt_version"),
        )
