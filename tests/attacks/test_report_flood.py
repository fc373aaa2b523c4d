"""Issue 77, class 4: the host read a clean room's test report whole.

The agent implements nothing; its package, imported by the hidden tests, writes about 1 GiB into
the report pipe (its path is in PYTEST_ADDOPTS) before pytest writes its own report. On the code
before, root copied it all and the host read it whole (3.0 GB at its peak, then the 600 s
timeout). Now root keeps at most `environment.max_report_bytes` of it, discards the rest as it
streams by, and the verdict is an error that says so: never a pass, never held whole."""

from __future__ import annotations

import resource
from typing import Any

import pytest

from prchain.dev.repos import ChainRepo
from prchain.verdicts.oracle import run_tests
from tests.attacks.test_sandbox_clean_room import F2P, hidden_tests

pytestmark = pytest.mark.docker

FLOOD_BYTES = 1 << 30
# Package code that fills the report pipe at import, before pytest opens it for its own report.
FLOOD = f"""import os, re

_found = re.search(r"--junitxml[= ](\\S+)", os.environ.get("PYTEST_ADDOPTS", ""))
if _found:
    try:
        _fd = os.open(_found.group(1), os.O_WRONLY)
        _chunk = b"<testsuite>" + b"x" * (1 << 20)
        for _ in range({FLOOD_BYTES} // len(_chunk) + 1):
            os.write(_fd, _chunk)
        os.close(_fd)
    except OSError:
        pass
"""


def _peak_rss_bytes() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux counts KiB


def test_a_flood_into_the_report_pipe_is_an_error_with_a_reason(
    stage_one: Any, geo: ChainRepo
) -> None:
    before = _peak_rss_bytes()
    stage_one.write_file("geo/__init__.py", FLOOD)
    verdict = run_tests(stage_one, hidden_tests(geo), timeout=300)
    assert not verdict.passed and set(F2P) <= set(verdict.failing)
    assert verdict.error is not None and "max_report_bytes" in verdict.error, verdict.error
    # The host never held the flood: its peak grew by far less than what was written.
    assert _peak_rss_bytes() - before < FLOOD_BYTES // 4
