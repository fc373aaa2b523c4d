"""`env setup` on a backend sets eras up in rounds (`ladder.waves`) whose result is the one a run
era by era stores: an era waits for exactly the earlier eras recipe memory could offer it."""

from __future__ import annotations

from datetime import datetime, timedelta

from prchain.environments.eras.ecosystems import ecosystem
from prchain.environments.eras.era import Era
from prchain.environments.eras.manifests import Snapshot
from prchain.environments.eras.memory import NEAREST_DAYS
from prchain.setup.ladder import EraItem, waves
from prchain.verdicts.verify import StageJob

START = datetime(2023, 1, 10, 12)


def _item(repo_id: int, key: str, days: int, room: str | None = "python") -> EraItem:
    """An era of repository `repo_id` whose base is `days` after START."""
    snap = Snapshot(sha=key, date=START + timedelta(days=days), files={})
    job = StageJob(1, 1, 1, 1, f"acme/r{repo_id}", "/nowhere", key, "", "")
    return (repo_id, job, Era(key, ecosystem(room) if room else None, snap), 1)


def _keys(rounds: list[list[EraItem]]) -> list[list[str]]:
    return [[item[2].key for item in wave] for wave in rounds]


def test_eras_memory_links_wait_and_the_others_share_a_round() -> None:
    far = NEAREST_DAYS + 30
    eras = [
        _item(1, "a", 0),
        _item(1, "b", NEAREST_DAYS),  # a year after a, to the day: a's image is its candidate
        _item(1, "c", NEAREST_DAYS + far),  # further than that from b: no memory link
        _item(1, "d", NEAREST_DAYS + far + 10, room="go"),  # another ecosystem: never offers c
        _item(2, "e", 5),  # another repository
        _item(1, "f", NEAREST_DAYS + far + 20),  # c is its candidate
        _item(1, "g", NEAREST_DAYS + far + 30, room=None),  # no ecosystem: no memory at all
    ]
    assert _keys(waves(eras)) == [["a", "c", "d", "e", "g"], ["b", "f"]]


def test_a_run_of_near_eras_goes_one_by_one_and_nothing_is_left_out() -> None:
    eras = [_item(1, key, 60 * i) for i, key in enumerate("xyz")]
    assert _keys(waves(eras)) == [["x"], ["y"], ["z"]]
    assert waves([]) == []
