"""Entering a stage, around the carry-forward scripts: the earlier stages' gold patches as the
archive root reverts them from, the paths a patch touches, and carry's report read into the
stage's Transition record."""

from __future__ import annotations

import io
import re
import tarfile

from prchain.environments import carry
from prchain.environments.protocol import StageSpec, Transition

# Go's module files of an earlier stage stay as B_t has them when that stage's gold code is reverted.
# Its tests stay too and may import what they require (cloudquery #6759 requires testify for its
# tests, which stage #6763's tree keeps): reverted, the module files lack it, and the agent's first
# `go test` (-mod=mod) writes it back into go.mod and go.sum, which then shows in the agent's own
# diff. A requirement names no file of the tree, so keeping one breaks no build.
KEPT_ON_REVERT = frozenset({"go.mod", "go.sum", "go.work", "go.work.sum"})
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


def gold_archive(patches: dict[int, str], base_pack: bytes = b"") -> bytes:
    """The gold patches (stage → patch), and the pack of a stand-in for B_t where one is needed
    (`prchain.environments.absent`), as a tar for root's private directory (read by nobody else)."""
    files = {
        f"gold-{j}.patch": (patch if patch.endswith("\n") else patch + "\n").encode()
        for j, patch in patches.items()
    }
    if base_pack:
        files["base.pack"] = base_pack
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
    elif report.revert_failed and outcome == "clean":
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
        revert_errors=report.revert_errors if report.revert_failed else "",
        carried_bytes=report.delta_bytes,
        stage_base=report.stage_base,
        stage_start=report.stage_start,
        image=image,
    )


_DIFF_HEADER = re.compile(r"^diff --git a/(\S+) b/(\S+)$", re.MULTILINE)


def patch_paths(patch: str) -> set[str]:
    """The paths a patch's plain `diff --git a/X b/Y` headers name (both sides)."""
    return {p for pair in _DIFF_HEADER.findall(patch) for p in pair}
