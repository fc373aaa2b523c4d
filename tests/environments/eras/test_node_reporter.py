"""prchain's mocha reporter writes its report into root's pipe on every Node release a room gives.

eslint/eslint's eras of 2016 to 2019 (held out) run Node 8 and 10: every stage verified usable
(the report was a file then), and in every clean room each hidden test read as failing, for the
report is root's pipe there and Node 8's `fs.writeFileSync` writes at position 0, which a pipe
refuses (ESPIPE); and root's mocha canary called `globalThis.it`, which Node 8 does not have, so
the canary file did not load. Here the real Node 8.17 of the toolchain layer: its reporter fed a
passing and a failing test, writing into a pipe as in a clean room, and root's mocha canary under
mocha's BDD global."""

from __future__ import annotations

import subprocess
from typing import Any

import pytest

pytestmark = [pytest.mark.docker, pytest.mark.slow]

FEED = """
const EventEmitter = require('events');
const Reporter = require('/usr/local/lib/prchain-node/mocha_reporter.js');
const runner = new EventEmitter();
new Reporter(runner, { reporterOptions: { output: '/tmp/report' } });
const suite = { title: 'shapes', file: 'test/a.js' };
runner.emit('pass', { title: 'squares', parent: suite, file: 'test/a.js' });
runner.emit('fail', { title: 'cubes', parent: suite, file: 'test/a.js' }, new Error('no'));
runner.emit('end');
"""


def _offline(image: str, script: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`script` run by bash in a container of `image`, offline, with `env`."""
    variables = [part for name, value in env.items() for part in ("-e", f"{name}={value}")]
    return subprocess.run(
        ["docker", "run", "--rm", "--network", "none", *variables, image, "bash", "-c", script],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip


def test_the_mocha_report_reaches_a_pipe_on_node_8(docker_client: Any, base_image: str) -> None:
    from prchain.environments.config import EnvironmentConfig
    from prchain.environments.eras.build import base_config, ensure_toolchain_image
    from prchain.environments.eras.config import ErasConfig
    from prchain.environments.eras.ecosystems import Plan
    from prchain.environments.eras.node import IMAGE_ENV, toolchain
    from prchain.environments.eras.node.report import JsReport
    from prchain.environments.images import ensure_base_image

    eras = ErasConfig(suites={"bookworm": "3.11"}, extra_base_packages=[])
    base = ensure_base_image(docker_client, base_config(EnvironmentConfig(), eras, "bookworm"))
    choice = toolchain.NodeChoice("8.17.0", "6.14.18", "Node 8, as eslint's eras of 2016-2018")
    plan = Plan(
        "node", "bookworm", choice.version, "2017-01-01T00:00:00Z", [], "", "", [choice.why],
        toolchain=toolchain.toolchain_commands(choice, eras.npm_registry), env=dict(IMAGE_ENV),
    )  # fmt: skip
    image, code, log = ensure_toolchain_image(
        docker_client, EnvironmentConfig(), eras, "node-reporter-test/x", base, plan, print
    )
    assert code == 0, log[-2000:]
    script = (
        'mkfifo /tmp/report && { cat /tmp/report > /tmp/read & } && node -e "$FEED" && wait'
        " && node --version && cat /tmp/read"
    )
    done = _offline(image, script, FEED=FEED)
    assert done.returncode == 0, done.stdout + done.stderr
    *printed, version, report = done.stdout.splitlines()
    assert version == "v8.17.0" and printed[-1] == "1 passing, 1 failing, 0 pending", done.stdout
    assert '"title":"squares","status":"passed"' in report, done.stdout
    assert '"title":"cubes","status":"failed"' in report, done.stdout

    canary = JsReport().canary("node_modules/.bin/mocha test/a.js", ["test/a.js"], "c0ffee")
    assert canary is not None
    (source,) = canary.files.values()
    script = (
        'printf %s "$CANARY" > /tmp/canary.js && node -e "global.it = (title, body) => '
        "{ try { body(); } catch (e) { console.log('failed: ' + e.message); } }; "
        "require('/tmp/canary.js')\""
    )
    ran = _offline(image, script, CANARY=source)
    assert ran.stdout == "failed: prchain canary c0ffee\n", ran.stdout + ran.stderr
