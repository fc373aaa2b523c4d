"""Issue 77, class 4: the host read a clean room's test report whole.

The agent implements nothing; its package, imported by the hidden tests, writes about 1 GiB into
the report pipe (its path is in PYTEST_ADDOPTS) before pytest writes its own report. On the code
before, root copied it all and the host read it whole (3.0 GB at its peak, then the 600 s
timeout); later root kept only the cap but the run went on to its own timeout (300 s here).
Root keeps at most `environment.max_report_bytes` of it (1 MiB here), the run ends as soon as
the report passes the cap, and the verdict is an error that says so: never a pass, never held
whole, never waited out."""

from __future__ import annotations

import tracemalloc
from collections.abc import Iterator
from typing import Any

import pytest

from prchain.dev.repos import ChainRepo
from prchain.verdicts.oracle import run_tests
from tests.attacks.conftest import GEO
from tests.attacks.test_sandbox_clean_room import F2P, hidden_tests

pytestmark = pytest.mark.docker

FLOOD_BYTES = 1 << 30
CAP = 1 << 20
# Longer than the test's own pytest timeout: a run that waits for it, not for the cap, fails the
# test by pytest-timeout (no timed assertion here).
TIMEOUT = 3600
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


@pytest.fixture
def capped_stage(docker_client: Any, base_image: str, geo: ChainRepo) -> Iterator[Any]:
    """The geo chain's stage 1, in a sandbox whose clean rooms keep at most CAP of a report."""
    from prchain.chains.reading.patches import split_patch
    from prchain.environments.config import EnvironmentConfig
    from prchain.environments.docker_env import DockerEnvironment
    from prchain.environments.protocol import StageSpec

    stages = [StageSpec(1, geo.prs[1].base_sha, split_patch(geo.prs[1].gold_patch).code)]
    with DockerEnvironment(
        EnvironmentConfig(max_report_bytes=CAP),
        repo=GEO,
        clone_path=str(geo.path),
        stages=stages,
        labels={"prchain.test": "sandbox-attacks"},
        client=docker_client,
    ) as env:
        env.enter_stage(1)
        yield env


def test_a_flood_into_the_report_pipe_ends_the_run_with_a_reason(
    capped_stage: Any, geo: ChainRepo
) -> None:
    capped_stage.write_file("geo/__init__.py", FLOOD)
    tracemalloc.start()
    try:
        verdict = run_tests(capped_stage, hidden_tests(geo), timeout=TIMEOUT)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert not verdict.passed and set(F2P) <= set(verdict.failing)
    assert verdict.error is not None and "max_report_bytes" in verdict.error, verdict.error
    # The host never held more than a few caps.
    assert peak < 8 * CAP, peak
