"""Keep benchmark instances out of chains: no stage may be (or nearly be) a SWE-bench-style instance.

A source is a dataset of instances loaded with `datasets`: a local JSONL/JSON or parquet file
(offline), or a hub name (online). An instance names its repository (`repo`), its PR (the
`pull_number`/`pr_number` field, else the number ending `instance_id`, as in
"astral-sh__ruff-1234"), its `base_commit` and its gold `patch`. A stage matches when it is the same
PR, starts from the same base commit, or its gold code patch is a near-duplicate of an instance
patch: MinHash over the normalised changed lines (sign kept, whitespace squeezed), candidates from
an LSH index, then confirmed by the estimated Jaccard similarity reaching the threshold.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from prchain.chains.config import DecontamConfig
from prchain.core.errors import PrchainError

MatchRule = Literal["benchmark_pr", "benchmark_base_commit", "benchmark_near_duplicate"]
LSH_MAX = 0.9
MIN_LINE_CHARS = 3  # lines like "}" or ")" say nothing about which change this is
INSTANCE_NUMBER = re.compile(r"-(\d+)$")


class DecontamSourceError(PrchainError):
    hint = "pass a local .jsonl/.json/.parquet file of SWE-bench-style instances, or a hub name when online"


class DecontamUnavailable(PrchainError):
    hint = "install the extra: pip install 'prchain[decontam]'"


@dataclass(frozen=True)
class Instance:
    instance_id: str
    repo: str
    number: int | None
    base_commit: str
    patch: str


@dataclass(frozen=True)
class StageKey:
    """What decontamination needs to know about one PR that sits in a chain."""

    pr_id: int
    repo: str
    number: int
    base_sha: str | None
    code_patch: str


def normalised_lines(patch: str) -> set[str]:
    """Changed lines of a unified diff, sign kept, whitespace squeezed; headers and tiny lines dropped."""
    lines = set()
    for line in patch.splitlines():
        if line[:1] not in "+-" or line.startswith(("+++", "---")):
            continue
        text = " ".join(line[1:].split())
        if len(text) >= MIN_LINE_CHARS:
            lines.add(line[0] + text)
    return lines


def _number(row: Mapping[str, Any]) -> int | None:
    for key in ("pull_number", "pr_number", "number"):
        value = row.get(key)
        if value not in (None, ""):
            return int(value)
    m = INSTANCE_NUMBER.search(str(row.get("instance_id", "")))
    return int(m.group(1)) if m else None


def instance_from_row(row: Mapping[str, Any]) -> Instance:
    return Instance(
        str(row.get("instance_id", "")),
        str(row.get("repo", "")).lower(),
        _number(row),
        str(row.get("base_commit") or ""),
        str(row.get("patch") or ""),
    )


def load_instances(source: str, split: str) -> list[Instance]:
    """Every instance of one source (local file or hub dataset)."""
    try:
        from datasets import load_dataset
    except ImportError as exc:
        raise DecontamUnavailable("decontamination needs the `datasets` package") from exc
    path = Path(source).expanduser()
    try:
        if path.exists():
            builder = "parquet" if path.suffix == ".parquet" else "json"
            rows: Iterable[Any] = load_dataset(builder, data_files=str(path), split="train")
        elif source.startswith((".", "/", "~")) or source.endswith((".jsonl", ".json", ".parquet")):
            raise DecontamSourceError(f"decontamination source {source} does not exist")
        else:
            rows = load_dataset(source, split=split)
    except DecontamSourceError:
        raise
    except Exception as exc:  # datasets raises many types (network, format, missing split)
        raise DecontamSourceError(f"cannot load {source}: {str(exc).splitlines()[0]}") from exc
    return [instance_from_row(row) for row in rows]


class Decontaminator:
    """Instances of every source, indexed by PR, by base commit and by MinHash LSH."""

    def __init__(self, config: DecontamConfig, instances: list[Instance]) -> None:
        try:
            from datasketch import MinHash, MinHashLSH
        except ImportError as exc:
            raise DecontamUnavailable(
                "near-duplicate matching needs the `datasketch` package"
            ) from exc
        self.config = config
        self._minhash = MinHash
        self.by_pr = {(i.repo, i.number): i for i in instances if i.number is not None}
        self.by_base = {(i.repo, i.base_commit): i for i in instances if i.base_commit}
        # The index only proposes candidates (the threshold is checked after); datasketch cannot band
        # 128 permutations for thresholds near 1.
        self.lsh = MinHashLSH(threshold=min(config.threshold, LSH_MAX), num_perm=config.num_perm)
        self.hashes: dict[str, Any] = {}
        for n, inst in enumerate(instances):
            lines = normalised_lines(inst.patch)
            if lines:
                key = f"{n}:{inst.instance_id}"
                self.hashes[key] = self._hash(lines)
                self.lsh.insert(key, self.hashes[key])
        self.instances = len(instances)

    def _hash(self, lines: set[str]) -> Any:
        mh = self._minhash(num_perm=self.config.num_perm)
        mh.update_batch([line.encode() for line in sorted(lines)])
        return mh

    def match(self, stage: StageKey) -> tuple[MatchRule, str] | None:
        """The first rule this PR matches an instance by, with the instance id; None when clean."""
        repo = stage.repo.lower()
        if (hit := self.by_pr.get((repo, stage.number))) is not None:
            return "benchmark_pr", hit.instance_id
        if stage.base_sha and (hit := self.by_base.get((repo, stage.base_sha))) is not None:
            return "benchmark_base_commit", hit.instance_id
        lines = normalised_lines(stage.code_patch)
        if not lines or not self.hashes:
            return None
        mh = self._hash(lines)
        for key in sorted(self.lsh.query(mh)):
            if mh.jaccard(self.hashes[key]) >= self.config.threshold:
                return "benchmark_near_duplicate", key.split(":", 1)[1]
        return None

    def contaminated(self, stages: Iterable[StageKey]) -> Iterator[tuple[int, MatchRule, str]]:
        """(pr id, rule, instance id) for every PR that matches."""
        for stage in stages:
            found = self.match(stage)
            if found:
                yield stage.pr_id, found[0], found[1]


def decontaminator(
    config: DecontamConfig, extra_sources: Iterable[str] = ()
) -> Decontaminator | None:
    """A Decontaminator over the configured plus the given sources; None when there are none."""
    sources = list(dict.fromkeys([*config.sources, *extra_sources]))
    if not sources:
        return None
    instances = [inst for source in sources for inst in load_instances(source, config.split)]
    return Decontaminator(config, instances)
