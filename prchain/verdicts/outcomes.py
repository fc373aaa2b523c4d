"""What a suite run says about its environment: counts with collection errors (units that never
ran) apart. Its root error is the ecosystem reader's (`TestReport.root_error`)."""

from __future__ import annotations

from dataclasses import dataclass

from prchain.environments.eras.reports import is_passing


@dataclass
class Counts:
    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    collection_errors: int = 0
    first_error: str = ""

    @property
    def ran(self) -> int:
        return self.passed + self.failed + self.errors

    @property
    def share(self) -> float:
        return self.passed / self.ran if self.ran else 0.0

    def verified(self, pass_share: float) -> bool:
        return not self.collection_errors and self.passed > 0 and self.share >= pass_share


def count(outcomes: dict[str, str]) -> Counts:
    """Counts of one suite run; a test id without `::` that errored is a module that did not collect."""
    found = Counts()
    for test, outcome in outcomes.items():
        if "::" not in test and outcome == "error":
            found.collection_errors += 1
        elif is_passing(outcome):
            found.passed += 1
        elif outcome == "failed":
            found.failed += 1
        elif outcome == "error":
            found.errors += 1
        else:
            found.skipped += 1
    return found
