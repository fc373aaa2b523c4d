"""The ecosystem seam: what turns a commit's manifests into an era key, build plans and a reader of
its test reports.

A language is a room: one package under `prchain/environments/eras/` (`python/`, `rust/`, ...) holds its
era facts, toolchain choice, plans, revisions and test-report reader, and registers one class that
fits `Ecosystem`. Adding a language adds its room, its facts (`prchain.environments.languages`) and one
word in `LANGUAGES`; nothing else changes.

The seam every room fills:
- a `Plan`'s `toolchain` commands build a layer shared by every era (of every repository) that
  asks for the same toolchain on the same suite; its `commands` build the era's dependency layer on
  top (B_t's tree in /opt/prchain/src, the registries reachable, a per-repository cache mounted);
- `env` becomes the image's environment (offline switches, cache and home directories). PATH is
  not one of them: sandboxes and clean rooms set their own, so a toolchain's binaries are linked
  into /usr/local/bin; whatever the agent (uid of `agent`) or the clean room's tester must write
  (a build's target directory) is made writable by all, since each stage's container is fresh;
- `setup_command` is the per-stage build step: run as the agent, offline, in /work/repo after the
  stage is entered (and again in the clean room), e.g. compiling a C extension in place;
- `test_command` is what the agent runs; `report` reads what it printed or wrote;
- `sealed` names where the room's runner or compiler resolves the hidden tests' own libraries from
  (node_modules, vendor/, org/junit, ...): no path of the agent's change there reaches a clean room.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol, get_args

from prchain.core.registry import Registry
from prchain.environments.eras.config import ErasConfig
from prchain.environments.eras.growth import Unit
from prchain.environments.eras.manifests import Snapshot
from prchain.environments.eras.reports import TestReport
from prchain.environments.eras.sealed import SealedPlaces
from prchain.environments.languages import LANGUAGES

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
    toolchain: list[str] = field(
        default_factory=list
    )  # root commands of the shared toolchain layer
    env: dict[str, str] = field(
        default_factory=dict
    )  # variables of the image (PATH, offline flags)
    # Read-only binds of the era build, container path → host path (local git mirrors); not in
    # the image.
    mounts: dict[str, str] = field(default_factory=dict)
    # Debian packages of the era's native dependencies, installed by its first command (known
    # ones, and what failed builds asked for: prchain/environments/eras/native/), and how many
    # failed builds added some.
    native: tuple[str, ...] = ()
    native_rounds: int = 0
    # Whether an earlier era's image of the repository is a sound base for these commands (they
    # replace what differs and keep what is the same, so the result holds what a build from the
    # toolchain layer holds, plus unused leftovers of an earlier date): `eras.incremental`.
    grows: bool = False
    # What the era's build compiles, from its lock file (growth.Unit): the ladder grows the image
    # only while few of them build again (prchain/environments/eras/growth.py). () : not known.
    units: tuple[Unit, ...] = ()
    # The image of the earlier verified era this build grows from ("" : from the toolchain layer).
    # Set by the ladder, never by a room.
    on: str = ""


class NoPlan(Exception):  # noqa: N818  (a verdict, not an error of the program)
    """`plans` finds nothing to build for this stage base; the message is the era's one-line
    reason (a Go stage whose test files lie in no module of B_t: the PR adds the module)."""


class Ecosystem(Protocol):
    name: str
    report: TestReport  # reads the per-test outcomes of `Plan.test_command`
    sealed: SealedPlaces  # where the hidden tests' libraries resolve from: never crosses

    def owns(self, path: str) -> bool:
        """Whether `path` is a test file of this language (the stage's test files choose the
        ecosystem of a repository that has several)."""
        ...

    def detects(self, snap: Snapshot) -> bool:
        """Whether the commit is a project of this ecosystem."""
        ...

    def era_facts(self, snap: Snapshot) -> dict[str, object]:
        """What the era key hashes: the manifests as far as the environment depends on them."""
        ...

    def plans(self, snap: Snapshot, config: ErasConfig) -> list[Plan]:
        """Build plans in the order to try them (the first that verifies wins); NoPlan when
        nothing can be built for this base, and why."""
        ...

    def revise(
        self, snap: Snapshot, config: ErasConfig, plan: Plan, log: str, ran: bool
    ) -> Plan | None:
        """`plan` changed to get past the failure its `log` shows (`ran`: the image was built and
        the suite ran), or None. Tried next, before the remaining plans; the same image when only
        the test command changed; every deviation from the era is said in its notes."""
        ...


ECOSYSTEMS: Registry[type[Ecosystem]] = Registry("ecosystem")
# The rooms, in the order `detect` prefers them when the stage's test files do not decide: a
# language whose manifest sits at the root before Python, which claims any tree with a .py file.
_PREFERENCE = ("rust", "go", "java", "node", "python")


def _load() -> None:
    import importlib

    for name in LANGUAGES:
        importlib.import_module(f"prchain.environments.eras.{name}")  # registers its ecosystem


def ecosystem(name: str) -> Ecosystem:
    """The registered ecosystem `name` (an unknown name lists the valid ones)."""
    _load()
    return ECOSYSTEMS.get(name)()


def report_for(name: str) -> TestReport:
    """The test-report reader of ecosystem `name`; pytest's for recipes older than the field."""
    return ecosystem(name or "python").report


def detect(snap: Snapshot, test_paths: Sequence[str] = ()) -> Ecosystem | None:
    """The ecosystem of the commit: of those whose manifests it has, the one owning most of the
    stage's test files (a Python package with a Rust core whose stage changes Python tests is
    Python's; one whose stage changes Rust tests is Rust's); where none owns any, the one owning
    most files of the tree (sphinx's stylesheet change is Python's, not its package.json's);
    ties go to the first in `_PREFERENCE`."""
    _load()
    found = [ECOSYSTEMS.get(name)() for name in ECOSYSTEMS]
    found = [e for e in found if e.detects(snap)]
    if not found:
        return None
    order = {name: i for i, name in enumerate(_PREFERENCE)}
    found.sort(key=lambda e: order.get(e.name, len(order)))
    owned = [sum(e.owns(p) for p in test_paths) for e in found]
    if len(found) > 1 and not any(owned):  # no room owns what the stage touches (a stylesheet):
        owned = [sum(e.owns(p) for p in snap.paths) for e in found]  # the tree's most files
    return found[owned.index(max(owned))]
