"""`prchain tasks eval`: run a runnable task file's patches in each stage's image, as T(p̂) does.

Per chain, one sandbox walks the stages in order exactly as a rollout does: stage t starts on
B_t with the earlier gold patches reverted and the patches applied so far carried forward
(prchain/environments/carry.py), the stage's patch (the gold one, or a model's from a SWE-bench-shaped
predictions file) is applied on top, and the hidden tests run in a clean room under its rules
(oracle.run_tests: no test file of the patch's own, the gold test patch, the tester's user). A
stage is resolved when every FAIL_TO_PASS test now passes and every PASS_TO_PASS test still does.

The task file alone is enough: each stage is read back as the runnable stage record the export
wrote (prchain/verdicts/stage.py: `from_row`, which always sets its placement); stage images come
from the engine by name and are checked against the digests the file names; no store, clone or
mined history is read. Results go to a JSON Lines file one chain at a time, so a rerun skips the
chains already evaluated with the same inputs.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from prchain.core.errors import PrchainError
from prchain.environments.images import recipe_hash
from prchain.environments.protocol import Environment, StageSpec
from prchain.environments.stage_entry import ENTRY_REVERT
from prchain.verdicts.oracle import StageTests, TestVerdict, run_tests
from prchain.verdicts.sandbox import apply_patch, build_part
from prchain.verdicts.stage import RunnableStage, from_row
from prchain.verdicts.taskfile import Patches

EVAL_VERSION = "1"  # bump when what a result means changes: every stored key changes with it
Status = Literal["resolved", "unresolved", "error", "not runnable", "no prediction", "skipped"]
STATUSES: tuple[str, ...] = get_args(Status)


@dataclass
class StageResult:
    """What evaluating one stage found (one line of the results file)."""

    chain_id: int
    idx: int
    instance_id: str
    model: str  # "gold", or the predictions' model_name_or_path
    status: Status
    fail_to_pass: list[int] = field(default_factory=lambda: [0, 0])  # passing, required
    pass_to_pass: list[int] = field(default_factory=lambda: [0, 0])
    failing: list[str] = field(default_factory=list)
    reason: str = ""
    output: str = ""  # not resolved: the tail of what the run printed, its failing tests' last
    key: str = ""  # the inputs' hash: a rerun with the same key reuses this result
    seconds: float = 0.0
    reused: bool = False


# (repo, stage specs, labels) → an unstarted sandbox of the chain on those stages' images
EnvOpener = Callable[
    [str, list[StageSpec], dict[str, str]], contextlib.AbstractContextManager[Environment]
]
ImageDigest = Callable[[str], str | None]  # image name → the engine's digest of it, None if absent


@dataclass(frozen=True)
class EvalSettings:
    timeout: float
    report_path: str
    tail_chars: int = 4000


# ---- one chain ---------------------------------------------------------------------------------


def _image(stage: RunnableStage) -> tuple[str, str]:
    """(the stage image's name, its digest); ("", "") when it has none."""
    found = stage.placement.image if stage.placement is not None else None
    return (found.image, found.image_id) if found is not None else ("", "")


def _room(stage: RunnableStage) -> tuple[str, str]:
    """(its hidden tests' room image, its digest); ("", "") when the stage image is the room."""
    found = stage.placement.room if stage.placement is not None else None
    return (found.image, found.image_id) if found is not None else ("", "")


def _runnable(stage: RunnableStage) -> bool:
    return stage.placement is not None and stage.placement.runnable


def _setup_command(stage: RunnableStage) -> str:
    return stage.era.setup_command if stage.era is not None else ""


def stage_key(chain: dict[str, Any], upto: int, patches: Patches) -> str:
    """What decides stage `upto`'s result: its image, tests and every patch applied until then."""
    stages = [s for s in chain["stages"] if s["idx"] <= upto]
    applied = [patches.of(s) for s in stages]
    last = from_row(chain, stages[-1])
    tests = last.tests
    room = [_room(last)[1]] if _room(last)[0] else []  # a stage without one hashes as it did
    return recipe_hash(
        "eval", EVAL_VERSION, chain["chain_id"], [_entered(from_row(chain, s)) for s in stages],
        applied, _image(last)[1], *room, last.test_command, _setup_command(last),
        last.gold_test_patch,
        list(tests.fail_to_pass) if tests else [], list(tests.pass_to_pass) if tests else [],
    )  # fmt: skip


def _entered(stage: RunnableStage) -> tuple[str, ...]:
    """What of a stage decides how it is entered (a propagated one: its entry too)."""
    entry = stage.entry
    return (stage.base_sha, stage.gold_patch, *(() if entry == ENTRY_REVERT else (entry,)))


def _specs(chain: dict[str, Any]) -> list[StageSpec]:
    return [
        StageSpec(
            s.idx,
            s.base_sha,
            s.gold_patch,
            image=_image(s)[0],
            test_command=s.test_command,
            setup_command=_setup_command(s),
            entry=s.entry,
            room_image=_room(s)[0],
        )
        for s in (from_row(chain, stage) for stage in chain["stages"])
    ]


def _last_wanted(chain: dict[str, Any], patches: Patches) -> int:
    """The last stage to evaluate: the last runnable one that has a patch (0 when none)."""
    wanted = [
        s["idx"]
        for s in chain["stages"]
        if _runnable(from_row(chain, s)) and patches.of(s) is not None
    ]
    return max(wanted, default=0)


def _result(
    chain: dict[str, Any], stage: dict[str, Any], patches: Patches, **kw: Any
) -> StageResult:
    return StageResult(chain["chain_id"], stage["idx"], stage["instance_id"], patches.model, **kw)


def _image_problem(chain: dict[str, Any], upto: int, digest: ImageDigest) -> str:
    """Why the chain cannot run up to stage `upto` on this engine ("" when it can)."""
    for stage in (from_row(chain, s) for s in chain["stages"]):
        if stage.idx > upto:
            break
        image, image_id = _image(stage)
        placed = stage.placement
        if not image:
            why = (placed.reason or placed.not_runnable) if placed is not None else ""
            return f"stage {stage.idx} has no image ({why})"
        found = digest(image)
        if found is None:
            return f"image {image} is not in the Docker engine (`prchain tasks images load`)"
        if image_id and found != image_id:
            return f"image {image} is {found[:19]}, not the {image_id[:19]} the task names"
    return ""


def evaluate_chain(
    chain: dict[str, Any],
    patches: Patches,
    open_env: EnvOpener,
    digest: ImageDigest,
    settings: EvalSettings,
) -> list[StageResult]:
    """Walk the chain's stages up to the last one to evaluate, in one sandbox, carrying forward."""
    upto = _last_wanted(chain, patches)
    stages = [s for s in chain["stages"] if s["idx"] <= upto]
    problem = _image_problem(chain, upto, digest) if upto else ""
    if problem:
        return [_result(chain, s, patches, status="error", reason=problem) for s in stages]
    results: list[StageResult] = []
    labels = {"prchain.eval": str(chain["chain_id"])}
    with open_env(chain["repo"], _specs(chain), labels) as env:
        for stage in stages:
            results.append(_stage(env, chain, stage, patches, settings))
            if results[-1].status == "error":
                break
    done = {r.idx for r in results}
    why = "an earlier stage of the chain could not be entered"
    results += [
        _result(chain, s, patches, status="skipped", reason=why)
        for s in stages
        if s["idx"] not in done
    ]
    for result in results:
        result.key = stage_key(chain, result.idx, patches)
    return results


def _stage(
    env: Environment,
    chain: dict[str, Any],
    stage: dict[str, Any],
    patches: Patches,
    settings: EvalSettings,
) -> StageResult:
    """Enter the stage (carrying the patches so far), apply its patch, run its hidden tests."""
    started = time.monotonic()
    transition = env.enter_stage(stage["idx"])
    if transition.stopped:
        return _result(chain, stage, patches, status="error", reason=transition.stop_reason())
    patch = patches.of(stage)
    error = apply_patch(env, patch, reset=False) if patch else None
    found = _verdict(env, chain, stage, patches, settings, patch, error)
    found.seconds = round(time.monotonic() - started, 1)
    return found


def _verdict(
    env: Environment,
    chain: dict[str, Any],
    stage: dict[str, Any],
    patches: Patches,
    settings: EvalSettings,
    patch: str | None,
    error: str | None,
) -> StageResult:
    record = from_row(chain, stage)
    placed, tests = record.placement, record.tests
    if placed is None or not placed.runnable:
        why = placed.reason if placed is not None else ""
        return _result(chain, stage, patches, status="not runnable", reason=why)
    if patch is None:
        return _result(chain, stage, patches, status="no prediction")
    if error is not None:
        why = f"the patch does not apply on the stage's carried state: {error[-300:]}"
        return _result(chain, stage, patches, status="unresolved", reason=why)
    hidden = StageTests(
        list(tests.fail_to_pass) if tests else [],
        list(tests.pass_to_pass) if tests else [],
        record.test_command,
        list(tests.test_files) if tests else [],
        record.gold_test_patch,
        build_part(record.gold_patch or "", record.ecosystem),
        report_path=settings.report_path,
        tail_chars=settings.tail_chars,
        ecosystem=record.ecosystem,
    )
    return _scored(chain, stage, patches, hidden, run_tests(env, hidden, settings.timeout))


def _scored(
    chain: dict[str, Any],
    stage: dict[str, Any],
    patches: Patches,
    tests: StageTests,
    verdict: TestVerdict,
) -> StageResult:
    failing = set(verdict.failing)
    f2p = sum(t not in failing for t in tests.fail_to_pass)
    p2p = sum(t not in failing for t in tests.pass_to_pass)
    return _result(
        chain,
        stage,
        patches,
        status="resolved" if verdict.passed else "unresolved",
        fail_to_pass=[f2p, len(tests.fail_to_pass)],
        pass_to_pass=[p2p, len(tests.pass_to_pass)],
        failing=list(verdict.failing),
        reason=verdict.error or "",
        output="" if verdict.passed else verdict.output_tail,
    )


# ---- many chains, resumable ----------------------------------------------------------------------


def read_results(path: Path) -> dict[str, dict[str, Any]]:
    """The results stored so far, by key (a line cut short by a crash is ignored)."""
    found: dict[str, dict[str, Any]] = {}
    if not path.is_file():
        return found
    for line in path.read_text(encoding="utf-8").splitlines():
        with contextlib.suppress(json.JSONDecodeError):
            row = json.loads(line)
            if isinstance(row, dict) and row.get("key"):
                found[row["key"]] = row
    return found


def _stored(
    chain: dict[str, Any], patches: Patches, stored: dict[str, dict[str, Any]]
) -> list[StageResult] | None:
    """The chain's results from an earlier run with the same inputs, or None."""
    upto = _last_wanted(chain, patches)
    keys = [stage_key(chain, s["idx"], patches) for s in chain["stages"] if s["idx"] <= upto]
    if not keys or not all(k in stored for k in keys):
        return None
    rows = [stored[k] for k in keys]
    return [StageResult(**{**row, "reused": True}) for row in rows]


def evaluate(
    chains: Iterable[dict[str, Any]],
    patches: Patches,
    open_env: EnvOpener,
    digest: ImageDigest,
    settings: EvalSettings,
    results_path: str | Path,
    on_stage: Callable[[StageResult], None] | None = None,
) -> list[StageResult]:
    """Evaluate every chain with something to evaluate; a chain's results are appended to the
    results file once all its stages ran, so an interrupted run loses at most one chain."""
    target = Path(results_path)
    stored = read_results(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    everything: list[StageResult] = []
    for chain in chains:
        if not _last_wanted(chain, patches):
            continue
        found = _stored(chain, patches, stored)
        if found is None:
            found = _run_chain(chain, patches, open_env, digest, settings)
            with target.open("a", encoding="utf-8") as out:
                for result in found:
                    if result.key:
                        out.write(json.dumps({**asdict(result), "reused": False}) + "\n")
        for result in found:
            if on_stage is not None:
                on_stage(result)
        everything += found
    return everything


def _run_chain(
    chain: dict[str, Any],
    patches: Patches,
    open_env: EnvOpener,
    digest: ImageDigest,
    settings: EvalSettings,
) -> list[StageResult]:
    """evaluate_chain, with a sandbox that failed reported (not stored: the next run retries)."""
    try:
        return evaluate_chain(chain, patches, open_env, digest, settings)
    except PrchainError as exc:
        upto = _last_wanted(chain, patches)
        why = f"{type(exc).__name__}: {exc}"
        stages = [s for s in chain["stages"] if s["idx"] <= upto]
        return [_result(chain, s, patches, status="error", reason=why) for s in stages]


@dataclass(frozen=True)
class ChainVerdict:
    chain_id: int
    evaluated: int  # stages with a verdict (resolved or not)
    resolved: int

    @property
    def passed(self) -> bool:
        return self.evaluated > 0 and self.resolved == self.evaluated


def by_chain(results: list[StageResult]) -> list[ChainVerdict]:
    """Per chain: a chain is resolved when every stage with a verdict is."""
    chains: dict[int, list[StageResult]] = {}
    for r in results:
        chains.setdefault(r.chain_id, []).append(r)
    return [
        ChainVerdict(
            cid,
            sum(r.status in ("resolved", "unresolved", "error") for r in rows),
            sum(r.status == "resolved" for r in rows),
        )
        for cid, rows in chains.items()
    ]


def planned(chains: Iterable[dict[str, Any]], patches: Patches) -> int:
    """How many stage results evaluating the chains gives (for a progress bar)."""
    total = 0
    for chain in chains:
        upto = _last_wanted(chain, patches)  # 0 when nothing is evaluated: no stage counts
        total += sum(s["idx"] <= upto for s in chain["stages"])
    return total
