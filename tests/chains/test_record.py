"""A link's record is typed: every key a build writes is a field of `LinkEvidence`, every
reference row has exactly `EvidenceRow`'s keys, and the stored JSON reads back as the same rows."""

from __future__ import annotations

from pathlib import Path
from typing import get_type_hints

from prchain.chains.building.build import build_chains
from prchain.chains.config import ChainsConfig
from prchain.chains.record import EVIDENCE_FIELDS, EvidenceRow, LinkEvidence
from prchain.miner.config import MinerConfig
from prchain.miner.mine import mine
from prchain.store.opener import make_engine
from tests.chains.test_kept import _history
from tests.support.links import links_by_number


def test_a_build_writes_only_the_records_fields_and_stores_its_rows_as_they_are(
    tmp_path: Path,
) -> None:
    repo = _history(tmp_path / "jobs")
    engine = make_engine(f"sqlite:///{tmp_path / 'store.db'}")
    mine(MinerConfig(), engine, [str(repo.path)], source="git", name="acme/jobs")
    config = ChainsConfig(
        corroboration_signs=0, min_chain_code_lines=0, min_stage_code_lines=0, lineage_workers=1
    )
    built = build_chains(config, engine)
    fields = set(get_type_hints(LinkEvidence))
    row_keys = list(get_type_hints(EvidenceRow))
    assert built.graph.links
    for link in built.graph.links:
        assert set(link.attrs) <= fields, set(link.attrs) - fields
        assert link.attrs["evidence"] and all(list(r) == row_keys for r in link.attrs["evidence"])
    stored = links_by_number(engine)
    by_pair = {(link.newer, link.older): link for link in built.graph.links}
    for row in stored.values():
        decided = by_pair[(row.newer_pr_id, row.older_pr_id)]
        assert row.evidence == decided.attrs["evidence"]
        assert (row.why, row.lineage) == (decided.attrs["why"], decided.attrs.get("lineage", 0))


def test_the_field_set_is_the_records_fields() -> None:
    assert list(EVIDENCE_FIELDS) == list(get_type_hints(LinkEvidence))
