"""What a suite run says about its environment: counts with the units that never ran (a test
module that did not import, a package or crate that did not build) apart, each with why.

An era is judged by what its stages test: a unit that cannot build, or needs a service the
sandbox does not have, is *excluded* with its reason, and the era verifies on the rest at the same
pass share, provided the units that ran are that share of all units too (one package of ent's
hundred that does not build leaves the era usable; a suite most of whose modules do not import
does not). A failed test whose own lines show a service the sandbox does not have (diwic/alsa-rs's
`Error("snd_pcm_open", ENOENT)`: no sound card) is excluded the same way, by its id. A stage
whose tests lie in an excluded unit is unusable with that reason (`prchain.verdicts.verify`).
The run's root error is the ecosystem reader's (`TestReport.root_error`)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field

from prchain.environments.eras.reports import TestReport, is_passing
from prchain.verdicts.losses import service_needed, unit_exclusion

UNIT_LINES = 80  # of a unit's output read for why it never ran
TEST_LINES = 60  # of a failed test's output, from each line naming it, read for a missing service
_TOKEN = re.compile(r"[\w.:/\[\]-]+")


@dataclass
class Counts:
    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    collection_errors: int = 0
    first_error: str = ""
    units: int = 0  # units (packages, modules, crates) at least one test of which ran
    excluded: dict[str, str] = field(default_factory=dict)  # unit that never ran → why

    @property
    def ran(self) -> int:
        return self.passed + self.failed + self.errors

    @property
    def share(self) -> float:
        return self.passed / self.ran if self.ran else 0.0

    @property
    def units_share(self) -> float:
        """The share of units that ran their tests, of every unit the run reported."""
        every = self.units + self.collection_errors
        return self.units / every if every else 0.0

    def verified(self, pass_share: float) -> bool:
        return self.passed > 0 and self.share >= pass_share and self.units_share >= pass_share


def count(outcomes: dict[str, str]) -> Counts:
    """Counts of one suite run; a test id without `::` that errored is a unit that did not collect."""
    found = Counts()
    units = set()
    for test, outcome in outcomes.items():
        if "::" not in test and outcome == "error":
            found.collection_errors += 1
            continue
        units.add(test.split("::", 1)[0])
        if is_passing(outcome):
            found.passed += 1
        elif outcome == "failed":
            found.failed += 1
        elif outcome == "error":
            found.errors += 1
        else:
            found.skipped += 1
    found.units = len(units)
    return found


def never_ran(outcomes: dict[str, str]) -> list[str]:
    """The units of a run that never ran their tests."""
    return sorted(t for t, o in outcomes.items() if "::" not in t and o == "error")


def exclusions(outcomes: dict[str, str], output: str, reader: TestReport) -> dict[str, str]:
    """Each unit that never ran → why (`build failed: <its first error>`, `needs a service:
    database (…)`), read from the part of `output` about that unit."""
    units = never_ran(outcomes)
    lines = _lines(output) if units else []
    return {unit: _why(unit_lines(lines, unit), reader) for unit in units}


def service_failures(outcomes: dict[str, str], output: str) -> dict[str, str]:
    """Each failed test whose own lines in `output` show a service the sandbox does not have →
    `needs a service: <kind> (<the line>)`. A test's own lines run from a line naming it (cargo's
    `---- pcm::drop stdout ----`, pytest's `FAILED tests/t.py::test_x - …`, go's `=== RUN TestX`)
    to the next line naming another test of the run, at most TEST_LINES of them. The output is
    read once: each line's words are looked up among the tests' names."""
    failed = [t for t, o in outcomes.items() if "::" in t and o in ("failed", "error")]
    if not failed or not service_needed(output):
        return {}
    shown = [line.shown for line in _lines(output)]
    words = [_TOKEN.findall(line) for line in shown]
    names = {test: _spellings(test) for test in outcomes if "::" in test}
    every = {name: test for test, spelt in names.items() for name in spelt}
    # a failed test's name with spaces, no word of the output (a doc test's `src/pcm.rs - pcm`)
    spaced = {n: t for t in failed for n in names[t] if not _TOKEN.fullmatch(n)}
    naming: dict[str, list[int]] = {}  # test → the lines that name it
    for at, found in enumerate(words):
        for test in {every[w] for w in found if w in every}:
            naming.setdefault(test, []).append(at)
    found_why = {}
    for test in failed:
        starts = naming.get(test) or _spelt_at(shown, names[test])
        for start in reversed(starts):  # a failure's own section comes after the progress lines
            why = _service_line(_own_lines(shown, words, start, test, every, spaced))
            if why:
                found_why[test] = why
                break
    return found_why


def _spellings(test: str) -> set[str]:
    """How a run's output may name a test: its id, and its name within its unit as written with
    `::` or with dots (pytest's `Class.test_x` headers)."""
    name = test.partition("::")[2]
    return {test, name, name.replace("::", ".")}


def _own_lines(
    shown: list[str],
    words: list[list[str]],
    start: int,
    test: str,
    every: dict[str, str],
    spaced: dict[str, str],
) -> list[str]:
    own = [shown[start]]
    for at in range(start + 1, min(start + TEST_LINES, len(shown))):
        if any(every.get(word, test) != test for word in words[at]) or any(
            other != test and name in shown[at] for name, other in spaced.items()
        ):
            break  # another test's lines begin
        own.append(shown[at])
    return own


def _spelt_at(shown: list[str], names: set[str]) -> list[int]:
    """The lines naming a test no word of the output is (a doc test's `src/pcm.rs - pcm`)."""
    if all(_TOKEN.fullmatch(name) for name in names):
        return []
    named = re.compile("|".join(rf"(?<![\w:]){re.escape(n)}(?![\w:])" for n in names))
    return [at for at, line in enumerate(shown) if named.search(line)]


def _service_line(lines: list[str]) -> str:
    """`needs a service: <kind> (<the first line showing it>)`, or "" """
    for line in lines:
        kind = service_needed(line)
        if kind:
            return f"needs a service: {kind} ({line.strip()[:200]})"
    return ""


def _why(lines: list[_Line], reader: TestReport) -> str:
    text = "\n".join(line.raw for line in lines)
    shown = "\n".join(line.shown for line in lines)
    return unit_exclusion(shown, reader.root_error(text) if text else "")


def unit_output(output: str, unit: str) -> str:
    """The lines of `output` from the first that names `unit` (go's `# pkg`, pytest's `ERROR
    collecting tests/x.py`, cargo's `could not compile `crate``), UNIT_LINES of them, as printed;
    JSON events (`go test -json`'s) only of the unit's own package."""
    return "\n".join(line.raw for line in unit_lines(_lines(output), unit))


@dataclass(frozen=True)
class _Line:
    raw: str  # as printed
    shown: str  # a JSON event's text, else the line
    owner: str  # a JSON event's package ("" for other lines)


def unit_lines(lines: list[_Line], unit: str) -> list[_Line]:
    named = re.compile(rf"(?<![\w/.-]){re.escape(unit.removeprefix('./'))}(?![\w/-])")
    kept = [line for line in lines if not line.owner or named.match(line.owner)]
    start = next((i for i, line in enumerate(kept) if named.search(line.shown)), None)
    return [] if start is None else kept[start : start + UNIT_LINES]


def _lines(output: str) -> list[_Line]:
    return [_line(raw) for raw in output.splitlines()]


def _line(raw: str) -> _Line:
    if raw.startswith("{"):
        try:
            event = json.loads(raw)
        except json.JSONDecodeError:
            event = None
        if isinstance(event, dict):
            owner = str(event.get("ImportPath") or event.get("Package") or "")
            return _Line(raw, str(event.get("Output", "")).rstrip("\n"), owner)
    return _Line(raw, raw, "")
