"""Where a room's runner or compiler resolves the hidden tests' own dependencies from.

The hidden tests' libraries (chai, testify, JUnit, ...) must come from the image, sealed like the
tests: a copy of one in the agent's change would judge the agent's code by the agent's rules. Each
room states its places as data (`Ecosystem.sealed`); `prchain/verdicts/crossing.py` asks the room,
and no path of Δ_t in one of them crosses into the clean room (docs/sandbox.md, the per-room
allow-list). Before issue 77 a file crossed by its suffix wherever it sat, so a
`src/node_modules/chai/index.js` whose `expect` never throws passed a wrong patch.
"""

from __future__ import annotations

from dataclasses import dataclass

# Directories that hold copies of other projects. Only test libraries in them are sealed: the
# project's own forks there (kubernetes' third_party/forked) are code a PR may change.
COPY_DIRS = frozenset(
    {"third_party", "third-party", "thirdparty", "3rdparty", "external", "extern"}
)


@dataclass(frozen=True)
class SealedPlaces:
    """A room's places of test-time dependencies; none of them crosses."""

    dirs: frozenset[str] = frozenset()  # a directory of this name at any depth (node_modules)
    top_dirs: frozenset[str] = frozenset()  # a directory of this name at the root only
    namespaces: tuple[str, ...] = ()  # a test framework's package path at any depth (org/junit)
    libraries: frozenset[str] = frozenset()  # test libraries, sealed below a COPY_DIRS directory

    def why(self, path: str) -> str | None:
        """Why `path` stays out of this room's clean room, or None when the room has no say."""
        parts = path.split("/")[:-1]  # directories only: a file named `vendor` is no place
        at_root = bool(parts) and parts[0] in self.top_dirs
        if at_root or any(part in self.dirs for part in parts):
            return "a place the room resolves test dependencies from"
        if any(_has_run(parts, space.split("/")) for space in self.namespaces):
            return "in a test framework's namespace"
        if self._copied_library(parts):
            return "a copy of a test library"
        return None

    def _copied_library(self, parts: list[str]) -> bool:
        below = [i for i, part in enumerate(parts) if part.lower() in COPY_DIRS]
        return bool(below) and any(p.lower() in self.libraries for p in parts[below[0] + 1 :])

    def __or__(self, other: SealedPlaces) -> SealedPlaces:
        """Every place of both rooms (a run whose room is not known keeps all rooms' out)."""
        spaces = tuple(dict.fromkeys((*self.namespaces, *other.namespaces)))
        return SealedPlaces(
            self.dirs | other.dirs,
            self.top_dirs | other.top_dirs,
            spaces,
            self.libraries | other.libraries,
        )


def _has_run(parts: list[str], run: list[str]) -> bool:
    """Whether the components `run` appear one after another in `parts`."""
    width = len(run)
    return any(parts[i : i + width] == run for i in range(len(parts) - width + 1))
