"""prchain's mocha reporter writes its report into root's pipe on every Node release a room gives.

eslint/eslint's eras of 2016 to 2019 (held out) run Node 8 and 10: every stage verified usable
(the report was a file then), and in every clean room each hidden test read as failing, for the
report is root's pipe there and Node 8's `fs.writeFileSync` writes at position 0, which a pipe
refuses (ESPIPE); and root's mocha canary called `globalThis.it`, which Node 8 does not have, so
the canary file did not load. Here the real Node 8.17 of the toolchain layer: its reporter fed a
passing and a failing test, writing into a pipe as in a clean room, and root's mocha canary under
mocha's BDD global."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
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


def _offline(
    image: str, script: str, options: tuple[str, ...] = ("--network", "none"), **env: str
) -> subprocess.CompletedProcess[str]:
    """`script` run by bash in a container of `image`, offline (or with other `options`), with
    `env`."""
    variables = [part for name, value in env.items() for part in ("-e", f"{name}={value}")]
    return subprocess.run(
        ["docker", "run", "--rm", *options, *variables, image, "bash", "-c", script],
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip


@pytest.fixture(scope="module")
def node8(docker_client: Any, base_image: str) -> str:
    """The toolchain layer of Node 8.17 (npm 6)."""
    from prchain.environments.config import EnvironmentConfig
    from prchain.environments.eras.build import base_config, ensure_toolchain_image
    from prchain.environments.eras.config import ErasConfig
    from prchain.environments.eras.ecosystems import Plan
    from prchain.environments.eras.node import IMAGE_ENV, toolchain
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
    return str(image)


def test_the_mocha_report_reaches_a_pipe_on_node_8(node8: str) -> None:
    from prchain.environments.eras.node.report import JsReport

    image = node8
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


JEST_TESTS = "test('squares', () => {}); test('cubes', () => { throw new Error('no'); });\n"


def test_the_jest_report_reaches_a_pipe_on_node_8(node8: str) -> None:
    """postcss/autoprefixer's eras of 2018 (held out): jest 22 on Node 8 wrote its report with
    writeFileSync at position 0 into root's pipe (`ESPIPE: invalid seek`), so every hidden test
    read as failing. A real jest 23 from the registry, run by prchain's launcher into a pipe."""
    from prchain.environments.config import EnvironmentConfig
    from prchain.environments.eras.config import ErasConfig
    from prchain.environments.eras.node.report import JEST_LAUNCHER

    script = (
        "mkdir -p /tmp/t && cd /tmp/t && echo '{}' > package.json && "
        'printf %s "$TESTS" > a.test.js && npm install --no-audit --silent jest-cli@23.6.0 '
        "> /tmp/npm.log 2>&1 || { cat /tmp/npm.log; exit 3; }; "
        "mkfifo /tmp/report && { cat /tmp/report > /tmp/read & } && "
        f"node {JEST_LAUNCHER} /tmp/report node_modules/.bin/jest a.test.js > /tmp/jest.log 2>&1; "
        "wait; cat /tmp/read; grep -h ESPIPE /tmp/jest.log || true"
    )
    # the install reaches the registry as an era build does: the host's network and CA bundle
    online = {"npm_config_registry": ErasConfig().npm_registry, "npm_config_offline": "false"}
    options: tuple[str, ...] = ("--network", "host")
    ca = EnvironmentConfig().build_ca_bundle
    if ca and Path(ca).is_file():
        options += ("-v", f"{Path(ca).resolve()}:/tmp/ca.pem:ro")
        online["NODE_EXTRA_CA_CERTS"] = "/tmp/ca.pem"
    done = _offline(node8, script, options, TESTS=JEST_TESTS, **online)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ESPIPE" not in done.stdout, done.stdout
    report = json.loads(done.stdout)
    assert (report["numPassedTests"], report["numFailedTests"]) == (1, 1), done.stdout[:2000]
