"""The ecosystem seam: what turns a commit's manifests into an era key and build plans.

Python is registered here (`python.py`); another ecosystem (Node: package.json and a lock file,
npm's registry is reachable) registers a class that fits `Ecosystem` under its name and is found by
`detect` when its manifests are present.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, Protocol, get_args

from environments.eras.config import ErasConfig
from environments.eras.manifests import Snapshot
from prchain.core.registry import Registry

Method = Literal["memory", "planner", "agent"]
"""How a recipe was found: reused from a verified era, the deterministic planner, the LLM agent."""
METHODS: tuple[str, ...] = get_args(Method)


@dataclass(frozen=True)
class Plan:
    """One way to build an era's image and run its tests."""

    ecosystem: str
    suite: str  # Debian suite of the base image
    interpreter: str  # the suite's python3 (or node) version, for the record
    cutoff: str  # ISO date: no package uploaded after it is installed
    commands: list[str]  # root shell commands of the build; /opt/prchain/src holds B_t's tree
    test_command: str  # runs the suite as the agent in /work/repo; `{files}` is filled by verdicts
    setup_command: str = ""  # per stage, as the agent, offline, after entering the stage
    notes: list[str] = field(default_factory=list)  # why each choice was made
    variant: str = "dated"
    caveat: str = ""  # what the era needs that no plan here can give (said with its failure)


class Ecosystem(Protocol):
    name: str

    def detects(self, snap: Snapshot) -> bool:
        """Whether the commit is a project of this ecosystem."""
        ...

    def era_facts(self, snap: Snapshot) -> dict[str, object]:
        """What the era key hashes: the manifests as far as the environment depends on them."""
        ...

    def plans(self, snap: Snapshot, config: ErasConfig) -> list[Plan]:
        """Build plans in the order to try them (the first that verifies wins)."""
        ...

    def revise(
        self, snap: Snapshot, config: ErasConfig, plan: Plan, log: str, ran: bool
    ) -> Plan | None:
        """`plan` changed to get past the failure its `log` shows (`ran`: the image was built and
        the suite ran), or None. Tried next, before the remaining plans; the same image when only
        the test command changed; every deviation from the era is said in its notes."""
        ...


ECOSYSTEMS: Registry[type[Ecosystem]] = Registry("ecosystem")


def detect(snap: Snapshot) -> Ecosystem | None:
    """The first registered ecosystem whose manifests the commit has."""
    from environments.eras import python  # noqa: F401  (registers the Python ecosystem)

    for name in ECOSYSTEMS:
        found = ECOSYSTEMS.get(name)()
        if found.detects(snap):
            return found
    return None
