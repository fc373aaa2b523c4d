"""The forward phase: one stage curated window by window against its process graph.

Each window starts from the committed prefix h and established set U. K blinded seeds of n steps
run, each from the window's sandbox snapshot; for each seed the curator may rewrite one step (the
first that made no progress) toward a frontier node, and the rest of the window is re-rolled
blind. After every step an establishment verifier checks every node not yet established. A mutated
step must pass the groundedness gate (entities seen + claim judge) or its candidate is dropped.
The chosen candidate's first δ steps are committed by restoring the sandbox snapshot taken after
them, so what is committed is exactly what ran. The stage ends at `submit`; the trajectory is
admitted only if the tests pass on its patch.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from fractions import Fraction
from typing import Any

from prchain.agent.tools import ToolBox
from prchain.environments.protocol import Environment
from prchain.llm.protocol import ChatLLM, Message
from prchain.p2t.config import P2TConfig
from prchain.p2t.entities import check_entities, step_entities
from prchain.p2t.graph import ProcessGraph, frontier
from prchain.p2t.metrics import estimate_tokens
from prchain.p2t.oracle import TestOracle
from prchain.p2t.prefilter import Prefilter
from prchain.p2t.progress import Progress
from prchain.p2t.roles_forward import Blind, ClaimJudge, Curator, StepRec, Verifier
from prchain.p2t.select import Scored, floor, select


@dataclass
class Candidate:
    name: str
    seed: bool
    steps: list[StepRec] = field(default_factory=list)
    newly: list[frozenset[str]] = field(default_factory=list)
    grounded: bool = True
    gate: str = ""  # why the groundedness gate refused it
    eff: Fraction = Fraction(0)
    early: set[str] = field(default_factory=set)  # established before their parents
    sample: int = 0  # which draw of the blind agent (seed k and its mutation use k)

    @property
    def messages(self) -> list[Message]:
        return [m for s in self.steps for m in s.messages]


@dataclass
class WindowLog:
    start_step: int
    frontier: list[str]
    candidates: list[dict[str, Any]]
    chosen: str
    committed: int
    credited: list[str]
    submitted: bool = False  # its last committed step submitted
    verifier_calls: int = 0  # establishment questions asked in this window (after the prefilter)
    verifier_skipped: int = 0  # pending nodes the prefilter did not ask about


@dataclass(frozen=True)
class Checkpoint:
    """What a stage's committed windows left: the state the next window starts from. It is stored
    after every window (`prchain/app/p2t/stage.py`), so a killed curation continues from here."""

    messages: tuple[Message, ...] = ()  # committed assistant/tool messages of the stage
    step_tokens: tuple[int, ...] = ()  # response tokens of each committed assistant step
    windows: tuple[WindowLog, ...] = ()
    established: frozenset[str] = frozenset()
    submitted: bool = False  # the last committed step submitted: the stage's steps are done
    stopped: bool = False  # the last window committed nothing: the agent stopped acting

    @property
    def steps(self) -> int:
        return len(self.step_tokens)

    @classmethod
    def stored(
        cls, windows: Sequence[dict[str, Any]], established: Sequence[str], steps: Sequence[Any]
    ) -> Checkpoint:
        """Rebuilt from a stage's stored window records and its committed `steps` rows."""
        logs = tuple(WindowLog(**w) for w in windows)
        assistant = [s for s in steps if s.message.get("role") == "assistant"]
        return cls(
            messages=tuple(s.message for s in steps),
            step_tokens=tuple(s.completion_tokens for s in assistant),
            windows=logs,
            established=frozenset(established),
            submitted=bool(logs) and logs[-1].submitted,
            stopped=bool(logs) and logs[-1].committed == 0,
        )

    def after(self, log: WindowLog, steps: Sequence[StepRec], done: set[str]) -> Checkpoint:
        return replace(
            self,
            messages=self.messages + tuple(m for s in steps for m in s.messages),
            step_tokens=self.step_tokens + tuple(s.response_tokens for s in steps),
            windows=(*self.windows, log),
            established=frozenset(done),
            submitted=bool(steps) and steps[-1].submitted,
            stopped=not steps,
        )


OnCommit = Callable[[Checkpoint, Sequence[StepRec]], None]
"""Called after each window with the new checkpoint and the steps it committed."""


@dataclass
class StageCuration:
    messages: list[Message]  # the stage's committed assistant/tool messages
    established: set[str]
    windows: list[WindowLog]
    submitted: bool
    admitted: bool
    reason: str
    response_tokens: int
    step_tokens: list[int] = field(default_factory=list)  # response tokens of each assistant step

    @property
    def steps(self) -> int:
        return sum(1 for m in self.messages if m.get("role") == "assistant")


@dataclass
class ForwardPhase:
    llm: ChatLLM
    env: Environment
    config: P2TConfig
    graph: ProcessGraph
    query: str
    oracle: TestOracle
    command_timeout: float = 120.0
    max_observation_chars: int = 10_000
    rollout_id: int | None = None  # the curated rollout its LLM calls are billed to

    def __post_init__(self) -> None:
        c = self.config
        toolbox = ToolBox(
            self.env, command_timeout=self.command_timeout, max_chars=self.max_observation_chars
        )
        rid = self.rollout_id
        self.blind = Blind(self.llm, toolbox, rollout_id=rid)
        self.verifier = Verifier(self.llm, self.query, c.schema_retries, rid)
        self.curator = Curator(self.llm, self.query, c.schema_retries, rid)
        self.judge = ClaimJudge(self.llm, self.query, c.schema_retries, rid)
        self.rng = random.Random(c.seed_random)
        self.prefilter = Prefilter(enabled=c.prefilter == "entities")
        # Nodes asked about at a candidate's first step whatever the step did (see prefilter.py):
        # in the stage's first window those an earlier action matches, later the ones blocked before.
        self._recheck: frozenset[str] = frozenset()

    # -- the stage ----------------------------------------------------------------------------------

    def run(
        self,
        history: list[Message],
        established: set[str] | None = None,
        *,
        resume: Checkpoint | None = None,
        on_commit: OnCommit | None = None,
    ) -> StageCuration:
        """Curate from `history` (the conversation so far, ending with this stage's task), or from
        `resume`, the checkpoint of the windows an earlier attempt committed (the sandbox already
        holds what they did)."""
        state = resume or Checkpoint(established=frozenset(established or ()))
        while not (state.submitted or state.stopped) and state.steps < self.config.max_steps:
            self._recheck = (
                _blocked_before(state.windows)
                if state.windows
                else self.prefilter.seen_before(self.graph.nodes, history)
            )
            log, steps, done = self._window(
                history + list(state.messages), set(state.established), state.steps
            )
            state = state.after(log, steps, done)
            if on_commit is not None:
                on_commit(state, steps)
        reason = f"step budget spent ({self.config.max_steps} steps)"
        if state.stopped:
            reason = "the agent stopped acting"
        elif state.submitted:
            reason = "submitted"
        admitted = state.submitted and self.oracle.passes(self.env)
        if state.submitted and not admitted:
            tail = getattr(self.oracle, "last_output", "")
            reason = "the tests do not pass on the curated patch" + (f":\n{tail}" if tail else "")
        return StageCuration(
            list(state.messages),
            set(state.established),
            list(state.windows),
            state.submitted,
            admitted,
            reason,
            sum(state.step_tokens),
            list(state.step_tokens),
        )

    # -- one window ---------------------------------------------------------------------------------

    def _window(
        self, history: list[Message], done: set[str], at: int
    ) -> tuple[WindowLog, list[StepRec], set[str]]:
        c = self.config
        start = self.env.snapshot()
        eligible = frontier(self.graph, done)
        asked, skipped = self.prefilter.asked, self.prefilter.skipped
        pool: list[Candidate] = []
        for k in range(c.seeds):
            seed = self._extend(
                history, Candidate(f"seed{k}", True, sample=k), done, start, c.window
            )
            pool.append(seed)
            if c.mutate:
                mutated = self._mutate(history, seed, done, start, k)
                if mutated is not None:
                    pool.append(mutated)
        scored = [
            Scored(cand.name, cand.eff, self._length(cand), cand.seed, cand.grounded)
            for cand in pool
            if cand.steps
        ]
        calls = (self.prefilter.asked - asked, self.prefilter.skipped - skipped)
        if not any(s.grounded for s in scored):
            self.env.restore(start)
            log = WindowLog(at, sorted(eligible), [], "", 0, [], False, *calls)
            return log, [], done
        chosen_score = select(
            scored,
            floor(c.eta, c.eta_mode, len(eligible)),
            fallback=c.fallback,
            pick=c.pick,
            pareto=c.pareto_filter,
            rng=self.rng,
        )
        by_name = {cand.name: cand for cand in pool}
        chosen = by_name[chosen_score.name]
        steps = chosen.steps[: c.commit]
        cut = next((i + 1 for i, s in enumerate(steps) if s.submitted), len(steps))
        steps = steps[:cut]
        self.env.restore(steps[-1].after)  # exactly the state those steps left
        progress = Progress(self.graph, set(done), c.ooo_mode)
        for newly in chosen.newly[: len(steps)]:
            progress.step(newly)
        log = WindowLog(
            at,
            sorted(eligible),
            [
                {
                    "name": s.name,
                    "eff": float(s.eff),
                    "length": s.length,
                    "seed": s.seed,
                    "grounded": s.grounded,
                    "gate": by_name[s.name].gate,
                    "early": sorted(by_name[s.name].early),
                }
                for s in scored
            ],
            chosen.name,
            len(steps),
            sorted(progress.established - done),
            steps[-1].submitted,
            *calls,
        )
        return log, steps, progress.established

    def _length(self, cand: Candidate) -> int:
        mode = self.config.len_mode
        if mode == "steps":
            return len(cand.steps)
        tokens = sum(s.response_tokens for s in cand.steps)
        if mode == "response_plus_observation_tokens":
            tokens += sum(
                estimate_tokens(m.get("content") or "") for s in cand.steps for m in s.tools
            )
        return tokens

    # -- candidates ---------------------------------------------------------------------------------

    def _extend(
        self,
        history: list[Message],
        cand: Candidate,
        done: set[str],
        start: str,
        count: int,
        forced: Message | None = None,
    ) -> Candidate:
        """Run `count` more steps of the candidate (the first one `forced` when given), scoring each."""
        self.env.restore(cand.steps[-1].after if cand.steps else start)
        progress = Progress(self.graph, set(done), self.config.ooo_mode)
        for newly in cand.newly:
            progress.step(newly)
        for n in range(count):
            if cand.steps and cand.steps[-1].submitted:
                break
            step = self._step(history + cand.messages, forced if n == 0 else None, cand.sample)
            if step is None:
                break
            cand.steps.append(step)
            newly = self._newly(history + cand.messages, progress, step, len(cand.steps) == 1)
            cand.newly.append(newly)
            cand.early |= progress.step(newly).out_of_order
        cand.eff = progress.total if cand.grounded else Fraction(0)
        return cand

    def _step(self, prefix: list[Message], forced: Message | None, sample: int) -> StepRec | None:
        if forced is not None:
            assistant, tokens = (
                forced,
                estimate_tokens(str(forced.get("content") or "") + str(forced["tool_calls"])),
            )
        else:
            acted = self.blind.act(prefix, sample)
            if acted is None:
                return None
            assistant, tokens = acted
        tools, submitted = self.blind.execute(assistant)
        return StepRec(
            assistant, tools, tokens, submitted, self.env.snapshot(), mutated=forced is not None
        )

    def _newly(
        self, history: Sequence[Message], progress: Progress, step: StepRec, first: bool
    ) -> frozenset[str]:
        """Every node outside U (and not blocked) that the transcript now establishes. The verifier
        is asked only about the nodes the prefilter lets through (prchain/p2t/prefilter.py)."""
        pending = [
            n for n in self.graph.nodes if n.id not in progress.established | progress.blocked
        ]
        asked = self.prefilter.select(pending, step, self._recheck if first else frozenset())
        return frozenset(n.id for n in asked if self.verifier.established(history, n))

    def _mutate(
        self, history: list[Message], seed: Candidate, done: set[str], start: str, k: int
    ) -> Candidate | None:
        """At most one curator rewrite: the seed's first step without progress, toward a frontier node."""
        progress = Progress(self.graph, set(done), self.config.ooo_mode)
        for j, newly in enumerate(seed.newly):
            eligible = frontier(self.graph, progress.established)
            credit = progress.step(newly)
            if credit.prog == 0 and eligible:
                return self._mutate_at(
                    history, seed, done, start, k, j, min(eligible, key=self._order)
                )
        return None

    def _order(self, node_id: str) -> int:
        return [n.id for n in self.graph.nodes].index(node_id)

    def _mutate_at(
        self,
        history: list[Message],
        seed: Candidate,
        done: set[str],
        start: str,
        k: int,
        j: int,
        target: str,
    ) -> Candidate | None:
        prefix = Candidate(f"mut{k}", False, list(seed.steps[:j]), list(seed.newly[:j]), sample=k)
        before = history + prefix.messages
        self.env.restore(prefix.steps[-1].after if prefix.steps else start)
        rewritten = self.curator.rewrite(
            before, seed.steps[j], self.graph.node(target), f"p2t_mut{k}_{j}"
        )
        if rewritten is None:
            return None
        if self.config.groundedness_gate:
            prefix.gate = self._gate(before, rewritten)
            if prefix.gate:
                prefix.grounded = False
                prefix.steps.append(StepRec(rewritten, [], 0, False, "", mutated=True))
                return prefix  # logged, never selected, never executed
        return self._extend(history, prefix, done, start, self.config.window - j, forced=rewritten)

    def _gate(self, before: list[Message], step: Message) -> str:
        """'' when the mutated step is grounded, else why not."""
        seen = [self.query] + [str(m.get("content") or "") for m in before]
        seen += [c["function"]["arguments"] for m in before for c in m.get("tool_calls") or []]
        check = check_entities(step_entities(step.get("content") or "", step["tool_calls"]), seen)
        if not check.passed:
            return "unseen entities: " + ", ".join(sorted(check.missing))
        if not self.judge.valid(before, step):
            return "the claim judge found an unsupported claim"
        return ""


def _blocked_before(windows: Sequence[WindowLog]) -> frozenset[str]:
    """Nodes the committed candidates of earlier windows surfaced before their parents."""
    found: set[str] = set()
    for log in windows:
        for cand in log.candidates:
            if cand["name"] == log.chosen:
                found |= set(cand.get("early", ()))
    return frozenset(found)
