"""Entering a stage, around the carry-forward scripts: the earlier stages' gold patches as the
archive root reverts them from, the paths a patch touches, and carry's report read into the
stage's Transition record."""

from __future__ import annotations

import io
import re
import tarfile
from typing import Literal

from prchain.environments import carry
from prchain.environments.protocol import StageSpec, Transition

# Go's module files of an earlier stage stay as B_t has them when that stage's gold code is reverted.
# Its tests stay too and may import what they require (cloudquery #6759 requires testify for its
# tests, which stage #6763's tree keeps): reverted, the module files lack it, and the agent's first
# `go test` (-mod=mod) writes it back into go.mod and go.sum, which then shows in the agent's own
# diff. A requirement names no file of the tree, so keeping one breaks no build.
KEPT_ON_REVERT = frozenset({"go.mod", "go.sum", "go.work", "go.work.sum"})
# How a stage is entered (docs/architecture.md, "Carry-forward"): the earlier stages' gold patches
# reverted at B_t, or, where they do not revert, B_t with the files they touch as the previous stage
# base has them (the fallback, prchain/chains/evidence/propagation.py), or with only the hunks of
# them reverted that revert, the others kept as B_t has them (prchain/chains/evidence/hunks.py),
# or B_t itself with the agent's earlier work carried as its difference from history
# (prchain/chains/evidence/replay.py). The first stage: `revert`.
EntryName = Literal["revert", "propagate", "hunks", "replay"]
ENTRY_REVERT: EntryName = "revert"
ENTRY_PROPAGATE: EntryName = "propagate"
ENTRY_HUNKS: EntryName = "hunks"
ENTRY_REPLAY: EntryName = "replay"
ENTRIES: tuple[EntryName, ...] = (ENTRY_REVERT, ENTRY_PROPAGATE, ENTRY_HUNKS, ENTRY_REPLAY)
_SECTION = re.compile(r"(?m)^(?=diff --git )")


def reverted_part(patch: str) -> str:
    """What entering a later stage reverts of an earlier stage's gold patch: all of it but the
    files of `KEPT_ON_REVERT` (the patch itself where it has none of them)."""
    sections = _SECTION.split(patch)
    kept = [
        section
        for section in sections
        if not any(path.rsplit("/", 1)[-1] in KEPT_ON_REVERT for path in patch_paths(section))
    ]
    return patch if len(kept) == len(sections) else "".join(kept)


def carried_paths(golds: list[str]) -> list[str]:
    """F_t of a stage entered by propagation: the paths the earlier stages' gold patches touch, as
    entering by revert would revert them (`reverted_part`), sorted."""
    return sorted({p for gold in golds for p in patch_paths(reverted_part(gold))})


def gold_archive(
    patches: dict[int, str],
    base_pack: bytes = b"",
    propagated: tuple[int, list[str]] | None = None,
    extra: dict[str, bytes] | None = None,
) -> bytes:
    """The gold patches (stage → patch), the pack of a stand-in for B_t where one is needed
    (`prchain.environments.absent`), for a stage t entered by propagation the paths it takes
    from C_(t−1) (`propagated`: t and F_t), and the `extra` files of a replayed stage
    (carry.STAGE_BASE), as a tar for root's private directory (read by nobody else)."""
    files = {
        f"gold-{j}.patch": (patch if patch.endswith("\n") else patch + "\n").encode()
        for j, patch in patches.items()
    }
    if base_pack:
        files["base.pack"] = base_pack
    if propagated is not None:
        t, paths = propagated
        files[f"paths-{t}"] = b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in paths)
    files.update(extra or {})
    blob = io.BytesIO()
    with tarfile.open(fileobj=blob, mode="w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mode = len(data), 0o600
            tar.addfile(info, io.BytesIO(data))
    return blob.getvalue()


def transition_from(
    spec: StageSpec, report: carry.TransitionReport, policy: str, image: str, seconds: float
) -> Transition:
    """The Transition record of entering `spec`'s stage under `policy`, from carry's report."""
    outcome = report.outcome
    # A gold patch that does not revert cleanly means the stage cannot start as specified.
    if report.revert_failed and policy == "strict":
        outcome = "conflict_stopped"
    elif (report.revert_failed or report.replay_kept) and outcome == "clean":
        outcome = "partial"
    return Transition(
        stage_idx=spec.idx,
        base_sha=spec.base_sha,
        policy=policy,
        outcome=outcome,
        reverted=report.reverted,
        applied=report.applied,
        rejected_hunks=report.rejects,
        seconds=seconds,
        revert_failed=report.revert_failed,
        revert_rejected_hunks=report.revert_rejects,
        revert_errors=report.revert_errors if report.revert_failed or report.replay_kept else "",
        carried_bytes=report.delta_bytes,
        stage_base=report.stage_base,
        stage_start=report.stage_start,
        image=image,
        entry=spec.entry,
    )


_DIFF_HEADER = re.compile(r"^diff --git a/(\S+) b/(\S+)$", re.MULTILINE)


def patch_paths(patch: str) -> set[str]:
    """The paths a patch's plain `diff --git a/X b/Y` headers name (both sides)."""
    return {p for pair in _DIFF_HEADER.findall(patch) for p in pair}
