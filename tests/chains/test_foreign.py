"""Names taken from other packages are no evidence that one PR builds on another (chains.foreign)."""

from __future__ import annotations

from pathlib import Path

from chains.config import ChainsConfig
from chains.foreign import imported, own_roots
from tests.support.history import History
from tests.support.links import links_by_number, mine_and_build

MONITOR = """\
import os
from weakref import WeakMethod

from acme.state import Registry


class Monitor:
    def __init__(self):
        self.registry = Registry()
        os.register_at_fork(after_in_child=WeakMethod(self.reset_after_fork))

    def reset_after_fork(self):
        self.registry = Registry()
        self.registry.mark_forked_child()
"""


def _history(path: Path) -> History:
    """sentry-python #6159 makes its monitor fork-safe with the standard library's `WeakMethod`
    and `os.register_at_fork`; #6163 does the same in another module and shares no more with it."""
    repo = History(path)
    state = "class Registry:\n    def mark(self):\n        return 1\n"
    repo.commit("Initial commit", {"acme/__init__.py": "", "acme/state.py": state})
    forked = state + "\n    def mark_forked_child(self):\n        self.forked = True\n"
    repo.pr(1, "Make the monitor fork-safe", {"acme/monitor.py": MONITOR, "acme/state.py": forked})
    batcher = (
        "import os\nfrom weakref import WeakMethod\n\n\nclass Batcher:\n"
        "    def __init__(self):\n        self.items = []\n"
        "        os.register_at_fork(after_in_child=WeakMethod(self.clear_after_fork))\n\n"
        "    def clear_after_fork(self):\n        self.items = []\n"
        "        self.pending_count = 0\n        self.flushed_count = 0\n"
    )
    repo.pr(2, "Make the batcher fork-safe too", {"acme/batcher.py": batcher}, body="See #1.")
    worker = (
        "from acme.state import Registry\n\n\ndef restart_worker(registry: Registry):\n"
        "    registry.mark_forked_child()\n    return registry\n"
    )
    repo.pr(3, "Restart the worker after a fork", {"acme/worker.py": worker}, body="Uses #1.")
    return repo


def test_names_from_other_packages_back_no_link_and_the_older_prs_own_do(tmp_path: Path) -> None:
    repo = _history(tmp_path / "fork")
    config = ChainsConfig(min_chain_code_lines=0, min_stage_code_lines=0)
    links = links_by_number(mine_and_build(repo.path, tmp_path / "store.db", "acme/fork", config))
    # `WeakMethod` and `register_at_fork` are new to the code, but the standard library's.
    assert (links[2, 1].kept, links[2, 1].symbols) == (False, 0)
    assert links[2, 1].rule == "plain_mention_without_shared_lines"
    # `mark_forked_child` is #1's own.
    assert (links[3, 1].kept, links[3, 1].symbols) == (True, 1)
    assert "mark_forked_child" in links[3, 1].why


def test_imports_from_the_repository_are_its_own() -> None:
    own = own_roots(["src/acme/__init__.py", "src/acme/state.py", "tools/release.py"])
    assert {"src", "acme", "state", "tools", "release"} <= own
    text = (
        "import os.path as osp\nimport acme.state\nimport numpy as np\n"
        "from weakref import WeakMethod, ref as weak_ref\nfrom acme.state import Registry\n"
        "from . import sibling\nfrom release import *\n"
        "np.zeros(shape=3)\nWeakMethod(callback=print)\nRegistry(capacity=2)\n"
    )
    names, modules = imported(text, own)
    # The keywords of calls to what other packages define are theirs too.
    assert names == {"WeakMethod", "weak_ref", "shape", "callback"}
    assert modules == {"osp", "np"}
    assert imported("def broken(:\n", own) == (set(), set())
