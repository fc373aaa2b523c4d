"""Whether an era image grows on the image of an earlier era, or is built from the toolchain layer.

A thin layer pays only when little of what the earlier era compiled must compile again. What must
is every locked package that changed (a new version, source or checksum) and every package built
on one that did, however far up: cargo rebuilds a crate whose dependency's build changed. On
rust-lang/mdBook, the eras three months apart rebuild 64–77% of the graph: the grown build takes
as long as a cold one (68–84 s against 63 s) and its own layer is as large (468–725 MB against
589 MB), on top of the earlier image, which it keeps whole. Eras days apart rebuild 0–5%: 29 s,
58 MB. So a plan grows only while the share it rebuilds stays at or under MAX_REBUILT (how many
layers an image may stack is build.py's MAX_LAYERS).
"""

from __future__ import annotations

from collections.abc import Sequence

# One locked package an era's build compiles: its name (with version and source), what identifies
# its build (the lock's checksum), and the names of the locked packages it is built on.
Unit = tuple[str, str, tuple[str, ...]]

MAX_REBUILT = 0.5


def rebuilt(earlier: Sequence[Unit], later: Sequence[Unit]) -> int:
    """How many of `later`'s units do not build as they did in `earlier`: the changed ones and
    every unit built on one of them."""
    before = {name: fingerprint for name, fingerprint, _ in earlier}
    stale = {name for name, fingerprint, _ in later if before.get(name) != fingerprint}
    users: dict[str, list[str]] = {}
    for name, _, built_on in later:
        for dependency in built_on:
            users.setdefault(dependency, []).append(name)
    todo = list(stale)
    while todo:
        for user in users.get(todo.pop(), []):
            if user not in stale:
                stale.add(user)
                todo.append(user)
    return len(stale)


def refusal(earlier: Sequence[Unit], later: Sequence[Unit]) -> str:
    """Why an era of `later`'s units does not grow on an image of `earlier`'s ("" : it grows).
    Units unknown on either side (a plan that lists none) leave the share unjudged."""
    if not earlier or not later:
        return ""
    again = rebuilt(earlier, later)
    if again > MAX_REBUILT * len(later):
        return (
            f"{again} of its {len(later)} locked packages would build again "
            f"({again / len(later):.0%}; a thin layer pays up to {MAX_REBUILT:.0%})"
        )
    return ""
