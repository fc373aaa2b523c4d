"""The Go room: toolchain by era, plans from real snapshots, and the `go test -json` reader on
reports the real go command wrote (go is installed on the host; these skip without it)."""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest

from prchain.dev.repos import git
from prchain.environments.eras import go as room
from prchain.environments.eras.config import ErasConfig
from prchain.environments.eras.ecosystems import NoPlan, detect, ecosystem
from prchain.environments.eras.era import era_of
from prchain.environments.eras.go import toolchain
from prchain.environments.eras.go.report import GoTest
from prchain.environments.eras.manifests import Snapshot, snapshot
from tests.support.go_proxy import make_go_greeter, tinylib_proxy

needs_go = pytest.mark.skipif(shutil.which("go") is None, reason="no go on this host")


def _snap(files: dict[str, str], when: str = "2024-05-01", paths: list[str] = ()) -> Snapshot:
    date = datetime.fromisoformat(when).replace(tzinfo=UTC)
    return Snapshot("abc", date, files, [*files, *paths])


# ---- which Go ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("gomod", "when", "version"),
    [
        ("module m\n\ngo 1.22.0\n\ntoolchain go1.22.3\n", "2024-05-01", "1.22.3"),
        ("module m\n\ngo 1.21.4\n", "2024-05-01", "1.21.4"),
        ("module m\n\ngo 1.16\n", "2022-05-01", "1.18.10"),  # a language version: 2022's Go
        ("module m\n\ngo 1.25\n", "2024-05-01", "1.25.14"),  # newer than the date: the line's
        ("module m\n", "2020-01-10", "1.13.15"),
        ("module m\n\ngo 1.11\n", "2017-01-01", "1.11.13"),  # before modules: the first of them
    ],
)
def test_the_era_gets_the_go_its_go_mod_and_date_ask_for(
    gomod: str, when: str, version: str
) -> None:
    chosen, why = toolchain.choose([gomod], datetime.fromisoformat(when).replace(tzinfo=UTC))
    assert chosen == version and why


def test_the_proxy_names_releases_as_go_named_them() -> None:
    assert toolchain.module_version("1.22.3") == "v0.0.1-go1.22.3.linux-amd64"
    assert toolchain.module_version("1.21.0") == "v0.0.1-go1.21.0.linux-amd64"
    assert toolchain.module_version("1.16.0") == "v0.0.1-go1.16.linux-amd64"


# ---- plans from a real history -----------------------------------------------------------------


@pytest.fixture(scope="module")
def greeter(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("go")
    return make_go_greeter(root / "greeter", tinylib_proxy(root / "proxy"))


def _shas(clone: Path) -> list[str]:
    return git(clone, "rev-list", "--reverse", "main").split()


def test_two_eras_of_a_go_history_and_their_plans(greeter: Path) -> None:
    shas = _shas(greeter)
    eras = [era_of(greeter, sha, ["farewell_test.go"]) for sha in shas]
    assert {e.ecosystem.name for e in eras if e.ecosystem} == {"go"}
    assert eras[0].key == eras[1].key != eras[2].key == eras[3].key
    config = ErasConfig(go_proxy="http://127.0.0.1:9,https://proxy.golang.org")
    plan = ecosystem("go").plans(eras[2].snap, config)[0]
    assert plan.interpreter == "go1.22.0" and plan.suite == "bookworm"
    assert plan.test_command == "go test ./..."
    # offline: the image's modules, zipped, then nothing; go unpacks them per stage
    assert plan.env["GOPROXY"] == "file:///opt/go/proxy,off"
    # lean: no debug information, in the image's compiled packages and the agent's alike
    assert plan.env["GOFLAGS"] == "-mod=mod -gcflags=all=-dwarf=false"
    assert plan.env["CGO_CFLAGS"] == "-O2" and plan.grows
    assert plan.env["GOTOOLCHAIN"] == "local" and plan.env["GOMODCACHE"] == "/opt/go/mod"
    assert any("go mod download" in c for c in plan.commands)
    # What earlier builds of the repository fetched first (its cache volume), then the config's.
    proxy = f"GOPROXY=file://{room.VOLUME_DOWNLOADS},http://127.0.0.1:9,https://proxy.golang.org"
    assert any(proxy in c for c in plan.commands)
    assert any("v0.0.1-go1.22.0.linux-amd64" in c for c in plan.toolchain)
    assert "toolchain module v0.0.1-go1.22.0.linux-amd64" in " ".join(plan.notes)


def test_the_toolchain_layer_is_one_whatever_the_proxies_it_comes_from(greeter: Path) -> None:
    """A test's proxy on a port of its run made a Go toolchain layer of its own every run (two a
    CI run): the proxies reach the build as a variable, outside the layer's identity."""
    from prchain.environments.config import EnvironmentConfig
    from prchain.environments.eras.build import GO_PROXY_VARIABLE, build_environment

    snap = era_of(greeter, _shas(greeter)[2], ["farewell_test.go"]).snap
    mine, real = (ErasConfig(go_proxy=f"{p},https://proxy.golang.org") for p in ("http://127.0.0.1:41234", "https://goproxy.example"))  # fmt: skip
    ours, theirs = (ecosystem("go").plans(snap, c)[0] for c in (mine, real))
    assert ours.toolchain == theirs.toolchain and ours.env == theirs.env
    assert not any("127.0.0.1" in c for c in ours.toolchain)
    _binds, variables = build_environment(EnvironmentConfig(), mine, None)
    assert variables[GO_PROXY_VARIABLE] == mine.go_proxy
    assert any(f'"${GO_PROXY_VARIABLE}"' in c for c in ours.toolchain)


def test_go_before_1_14_gets_no_mod_flag_it_would_refuse() -> None:
    snap = _snap({"go.mod": "module m\n\ngo 1.12\n"}, when="2019-12-01")
    plan = ecosystem("go").plans(snap, ErasConfig())[0]
    assert plan.interpreter == "go1.13.15" and plan.env["GOFLAGS"] == "-gcflags=all=-dwarf=false"
    assert plan.suite == "bullseye"  # no suite was out yet: the oldest configured
    old = ecosystem("go").plans(_snap({"go.mod": "module m\n"}, when="2019-03-01"), ErasConfig())[0]
    assert old.interpreter == "go1.12.17"  # locks its module cache: a writable copy per stage
    assert old.env["GOPATH"].startswith("/work/") and "/opt/go/path" in old.setup_command
    assert plan.env["GOPATH"] == "/opt/go/path" and "/opt/go/path" not in plan.setup_command
    # before go 1.15 (no GOMODCACHE), the image keeps the modules unpacked, in GOPATH
    assert plan.env["GOPROXY"] == "off" and plan.env["GOMODCACHE"] == "/opt/go/path/pkg/mod"
    vendoring = _snap({"go.mod": "module m\n\ngo 1.12\n"}, paths=["vendor/modules.txt"])
    assert (
        ecosystem("go").plans(vendoring, ErasConfig())[0].env["GOFLAGS"].startswith("-mod=vendor ")
    )


def test_the_stage_s_tests_choose_go_in_a_tree_with_python_too() -> None:
    snap = _snap({"go.mod": "module m\n\ngo 1.22\n", "setup.py": ""}, paths=["tool/x.py"])
    found = detect(snap, ["pkg/x_test.go"])
    assert found is not None and found.name == "go"
    found = detect(snap, ["tests/test_x.py"])
    assert found is not None and found.name == "python"


def test_a_workspace_and_a_tree_of_modules_are_tested_module_by_module() -> None:
    work = 'go 1.22\n\nuse (\n\t./cli\n\t"./sdk" // the sdk\n)\n'
    snap = _snap({"go.work": work, "cli/go.mod": "module c\n", "sdk/go.mod": "module s\n"})
    assert room.module_dirs(snap) == ["cli", "sdk"]
    assert room.test_command(snap) == "go test ./cli/... ./sdk/..."
    assert "-mod" not in room.go_flags(snap, "1.22.0")  # a workspace refuses -mod=mod
    loose = _snap({"a/go.mod": "module a\n", "b/go.mod": "module b\n", "examples/go.mod": ""})
    assert room.module_dirs(loose) == ["a", "b"]
    assert room.test_command(loose) == "prchain-in-modules go test ./a/... ./b/..."
    assert GoTest().narrowed(room.test_command(loose)) == "prchain-in-modules go test {files}"


def test_in_a_tree_of_nested_modules_the_stage_s_test_files_choose_the_module() -> None:
    files = {
        "go.mod": "module r\n\ngo 1.21\n",  # cloudquery's root module: a main, no tests
        "plugins/a/go.mod": "module r/plugins/a\n\ngo 1.21\n",
        "plugins/a/sub/go.mod": "module r/plugins/a/sub\n\ngo 1.21\n",
        "cli/go.mod": "module r/cli\n\ngo 1.19\n",
    }
    stage = _snap(files, "2024-03-01", paths=["plugins/a/x/x_test.go"])
    snap = replace(stage, tests=("plugins/a/x/x_test.go", "plugins/a/sub/y_test.go", "a.py"))
    assert room.module_dirs(snap) == ["plugins/a", "plugins/a/sub"]
    plan = ecosystem("go").plans(snap, ErasConfig())[0]
    # each module from its own directory, in module mode: no workspace merges their graphs
    assert plan.test_command == "prchain-in-modules go test ./plugins/a/... ./plugins/a/sub/..."
    assert "GOWORK" not in plan.env and plan.env["GOFLAGS"].startswith("-mod=mod ")
    assert any(f"/usr/local/bin/{room.IN_MODULES}" in c for c in plan.commands)
    assert ecosystem("go").era_facts(snap) != ecosystem("go").era_facts(
        replace(stage, tests=("cli/z_test.go",))
    )
    root = replace(stage, tests=("main_test.go",))  # the root module's own tests: as before
    assert room.module_dirs(root) == ["."] and room.test_command(root) == "go test ./..."
    assert not any(
        room.IN_MODULES in c for c in ecosystem("go").plans(root, ErasConfig())[0].commands
    )


def test_a_stage_whose_pr_adds_its_module_gets_no_plan_and_says_why() -> None:
    """cloudquery 2022-12: the PR adds plugins/destination/file, a module of its own; B_t has 30
    other modules and no root one. The era built all 30 (1,127 s, a 3.2 GB build cache that no
    sandbox could copy) for a suite that cannot run at B_t."""
    files = {f"plugins/source/{n}/go.mod": f"module r/{n}\n\ngo 1.19\n" for n in ("a", "b")}
    stage = _snap(files, "2022-12-28", paths=["plugins/destination/file/client/client_test.go"])
    snap = replace(stage, tests=("plugins/destination/file/client/client_test.go",))
    assert room.module_dirs(snap) == [] and room.stranded(snap) == list(snap.tests)
    with pytest.raises(NoPlan, match=r"in no Go module of B_t: the PR adds their module"):
        ecosystem("go").plans(snap, ErasConfig())
    assert ecosystem("go").era_facts(snap)["modules"] == {}  # its era key is still made
    # a stage in an existing module is planned as before
    inside = replace(stage, tests=("plugins/source/a/x_test.go",))
    assert (
        ecosystem("go")
        .plans(inside, ErasConfig())[0]
        .test_command.endswith("./plugins/source/a/...")
    )


def test_the_module_runner_runs_each_pattern_inside_its_module(tmp_path: Path) -> None:
    """`prchain-in-modules` as the image holds it: patterns grouped by the nearest go.mod above
    them and made relative to it, flags kept, the worst exit status."""
    script = tmp_path / "in-modules"
    script.write_text(room.IN_MODULES_SCRIPT)
    tree = tmp_path / "tree"
    for d in ("plugins/a/x", "plugins/b", "cli/z"):
        (tree / d).mkdir(parents=True)
    for d in ("", "plugins/a", "plugins/b"):
        (tree / d / "go.mod").write_text("module m\n")
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "go").write_text('#!/bin/sh\necho "$(pwd) $*"\n[ "$(basename $(pwd))" != b ]\n')
    (fake / "go").chmod(0o755)
    patterns = ["./plugins/a/...", "./plugins/a/x", "./plugins/b", "./...", "./cli/z", "."]
    ran = subprocess.run(
        ["bash", str(script), "go", "test", "-json", "-run", "T X", *patterns],
        cwd=tree,
        env={**os.environ, "PATH": f"{fake}:{os.environ['PATH']}"},
        capture_output=True,
        text=True,
        check=False,
    )
    assert ran.stdout.splitlines() == [
        f"{tree}/plugins/a test -json -run T X ./... ./x",
        f"{tree}/plugins/b test -json -run T X .",
        f"{tree} test -json -run T X ./... ./cli/z .",
    ]
    assert ran.returncode == 1  # plugins/b's run failed


def test_a_module_that_needs_a_newer_go_gets_the_go_it_names(greeter: Path) -> None:
    snap = snapshot(greeter, _shas(greeter)[-1])
    go, config = ecosystem("go"), ErasConfig()
    plan = go.plans(snap, config)[0]
    log = "go: example.com/x@v1.0.0 requires go >= 1.23.4 (running go 1.22.0; GOTOOLCHAIN=local)"
    revised = go.revise(snap, config, plan, log, ran=False)
    assert revised is not None and revised.interpreter == "go1.23.4"
    assert any("v0.0.1-go1.23.4.linux-amd64" in c for c in revised.toolchain)
    assert "requires go >= 1.23.4" in revised.notes[0]
    assert go.revise(snap, config, revised, log, ran=False) is None  # no loop
    assert go.revise(snap, config, plan, "FAIL\tx [build failed]", ran=True) is None


# ---- the reader on real `go test -json` runs ---------------------------------------------------

SUITE = {
    "go.mod": "module example.com/suite\n\ngo 1.21\n",
    "ok/ok.go": "package ok\n\nfunc One() int { return 1 }\n",
    "ok/ok_test.go": (
        'package ok\n\nimport "testing"\n\n'
        "func TestOne(t *testing.T) {\n"
        '\tt.Run("sub case", func(t *testing.T) {})\n'
        '\tt.Run("bad", func(t *testing.T) { t.Fatal("no") })\n}\n\n'
        'func TestSkip(t *testing.T) { t.Skip("later") }\n\n'
        "func TestPass(t *testing.T) {}\n"
    ),
    "broken/broken.go": "package broken\n\nfunc Two() int { return missing }\n",
    "broken/broken_test.go": 'package broken\n\nimport "testing"\n\nfunc TestTwo(t *testing.T) {}\n',
    "exits/exits_test.go": (
        'package exits\n\nimport (\n\t"os"\n\t"testing"\n)\n\n'
        "func TestMain(m *testing.M) { m.Run(); os.Exit(3) }\n\n"
        "func TestFine(t *testing.T) {}\n"
    ),
}


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, str]:
    """(report, console) of the reader's script around `go test ./...` on SUITE."""
    if shutil.which("go") is None:
        pytest.skip("no go on this host")
    root = tmp_path_factory.mktemp("suite")
    for rel, text in SUITE.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    report = root / "report.json"
    script = GoTest().script("go test ./...", str(report))
    # The host's own build cache: the standard library is compiled once, not per test session.
    env = {**os.environ, "GOFLAGS": "-mod=mod", "GOPROXY": "off", "GOTOOLCHAIN": "local"}
    done = subprocess.run(
        ["bash", "-c", script], cwd=root, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode != 0  # failing tests and a broken package: go test says so
    return report.read_text(), done.stdout + done.stderr


@needs_go
def test_per_test_outcomes_and_packages_that_never_built(run: tuple[str, str]) -> None:
    report, console = run
    outcomes = GoTest().parse(report, console)
    assert outcomes == {
        "example.com/suite/ok::TestOne": "failed",
        "example.com/suite/ok::TestOne/sub_case": "passed",
        "example.com/suite/ok::TestOne/bad": "failed",
        "example.com/suite/ok::TestSkip": "skipped",
        "example.com/suite/ok::TestPass": "passed",
        "example.com/suite/broken": "error",
        "example.com/suite/exits::TestFine": "passed",
        "example.com/suite/exits::(package)": "failed",
    }
    assert GoTest().parse(None, console) == outcomes  # the console holds the same events


@needs_go
def test_the_root_error_is_the_compiler_s_first(run: tuple[str, str]) -> None:
    _, console = run
    assert GoTest().root_error(console) == "broken/broken.go:3:25: undefined: missing"


def test_root_errors_of_the_go_command_and_of_older_compilers() -> None:
    offline = "go: example.com/x@v1.2.0: module lookup disabled by GOPROXY=off\n"
    assert GoTest().root_error(offline) == offline.strip()
    old = "# example.com/p\np/p.go:3: undefined: x\nFAIL\texample.com/p [build failed]\n"
    assert GoTest().root_error(old) == "p/p.go:3: undefined: x"
    # go before 1.24 prints the package's failure as a plain line among the JSON events
    assert GoTest().parse(old, old) == {"example.com/p": "error"}
    assert GoTest().root_error("panic: boom\n\ngoroutine 1 [running]:\n") == "panic: boom"
    assert GoTest().root_error("ok  \tx\t0.1s\n") == ""


def test_a_stage_runs_the_packages_of_its_test_files() -> None:
    reader = GoTest()
    assert reader.narrowed("go test ./...") == "go test {files}"
    assert reader.narrowed("go test -tags integration ./...") == "go test -tags integration {files}"
    assert reader.narrowed("for d in a b; do (cd $d && go test ./...); done").startswith("for")
    paths = ["pkg/a/x_test.go", "pkg/a/y_test.go", "root_test.go", "pkg/b/testdata/z_test.go"]
    assert reader.targets([*paths, "pkg/c/c.go"]) == [".", "./pkg/a"]
    assert "-json" in reader.script("go test ./pkg/a", "/tmp/r.json")


@needs_go
def test_a_build_whose_module_the_proxy_does_not_have_names_the_module(tmp_path: Path) -> None:
    """cloudquery's aws plugin of 2023-11: the Go proxy answered 403 "This module version is not
    available" for one of its requirements. The build script's exit trap (the egress cleanup) runs
    after go's error and is traced last; the root error is go's line, not the trap's."""
    from prchain.environments.eras.build import build_failure
    from tests.support.go_proxy import GoProxy

    module = tmp_path / "m"
    module.mkdir()
    (module / "go.mod").write_text("module m\n\ngo 1.21\n\nrequire example.com/tinylib v0.9.0\n")
    with GoProxy(tmp_path / "empty") as proxy:
        script = (
            "set -euo pipefail\n"  # as the era build's script: its egress trap, then the plan
            + f"trap 'rm -f {tmp_path}/m2/settings.xml; rmdir {tmp_path}/m2 2>/dev/null || true' EXIT\n"
            + f"export GOPROXY={proxy.url} GOSUMDB=off GOFLAGS=-mod=mod GOTOOLCHAIN=local "
            + f"GOMODCACHE={tmp_path / 'cache'} GOPATH={tmp_path / 'gopath'}\n"
            + f"set -x\ncd {module} && go mod download\n"
        )
        done = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=False)
    log = done.stdout + done.stderr
    assert done.returncode != 0 and log.rstrip().splitlines()[-1].startswith("+ "), log
    said = build_failure(log, done.returncode)
    assert said.startswith("go: example.com/tinylib@v0.9.0: reading http://127.0.0.1:"), said
    assert said.endswith(": 404 File not found"), said


def test_a_replaced_module_the_proxy_refuses_is_named_with_its_stand_in() -> None:
    """cloudquery's cli of 2026 replaced invopop/jsonschema by cloudquery's fork, which the Go proxy
    here refuses: go names the module with its stand-in, and its server's answer follows on a line
    of its own. The root error was that answer alone ("server response: This module version is
    not available."), which says nothing of the module (the lines as that era's build printed
    them)."""
    from prchain.environments.eras.build import build_failure

    log = (
        "go: github.com/invopop/jsonschema@v0.14.0 (replaced by github.com/cloudquery/jsonschema"
        "@v0.0.0-20260327151118-8dfb902740f6): reading https://proxy.golang.org/github.com/"
        "cloudquery/jsonschema/@v/v0.0.0-20260327151118-8dfb902740f6.mod: 403 Forbidden\n"
        "\tserver response: This module version is not available.\n"
        "+ rm -f /opt/prchain/egress.sh\n"
    )
    said = build_failure(log, 1)
    assert said.startswith(
        "go: github.com/invopop/jsonschema@v0.14.0 (replaced by github.com/cloudquery/jsonschema"
    ), said
    assert said.endswith("403 Forbidden server response: This module version is not available."), (
        said
    )


# ---- a tree from before modules (GOPATH) ---------------------------------------------------------


def test_a_tree_without_go_mod_is_go_and_gets_a_go_mod_made_at_its_build() -> None:
    """kelseyhightower/envconfig of 2016 (held out): Go files and no go.mod; every stage read "no
    ecosystem recognises the stage base". Now its era is Go's: go1.16 at least (module mode by
    default), a go.mod made by the build as of the date, and each stage's setup putting it in
    the tree unless the tree has one."""
    snap = _snap({".travis.yml": "language: go\n"}, "2016-03-04", ["envconfig.go", "doc.go"])
    assert room.gopath(snap) and detect(snap, ["envconfig_test.go"]) is not None
    assert detect(snap, ["envconfig_test.go"]).name == "go"  # type: ignore[union-attr]
    assert room.module_dirs(snap) == ["."] and room.stranded(snap) == []
    plan = ecosystem("go").plans(snap, ErasConfig())[0]
    assert plan.interpreter == "go1.16.15" and "a GOPATH tree" in plan.notes[0]
    made = [c for c in plan.commands if "gopath_mod" in c or "module path" in c]
    assert made and "2016-03-04T00:00:00Z 'go 1.16'" in made[0]
    assert plan.setup_command.endswith(f"{{ [ -e go.mod ] || cp {room.MADE_MOD}/go.* . ; }}")
    # its Go is newer than its code: vet's later checks are not its tests (go-github 2017)
    assert plan.test_command == "go test -vet=off ./..."
    assert GoTest().narrowed(plan.test_command) == "go test -vet=off {files}"
    assert ecosystem("go").era_facts(snap)["gopath"] is True
    # a tree with a go.mod anywhere is not one; nor one without Go files
    assert not room.gopath(_snap({"go.mod": "module m\n"}, paths=["m.go"]))
    assert not room.gopath(_snap({"setup.py": ""}, paths=["m.py"]))


@pytest.mark.parametrize(
    ("files", "path"),
    [
        # the external test package imports the package under test by its path
        (
            [
                ("", "package envconfig\n"),
                (
                    "",
                    'package envconfig_test\n\nimport (\n\t"testing"\n\n\t"github.com/kelseyhightower/envconfig"\n)\n',
                ),
            ],
            "github.com/kelseyhightower/envconfig",
        ),
        # a package clause's import comment, in a subdirectory
        ([("sub", 'package sub // import "gopkg.in/acme/tool.v2/sub"\n')], "gopkg.in/acme/tool.v2"),
        # a package imports its sibling by its full path
        (
            [
                ("", "package tool\n"),
                ("cmd/tool", 'package main\n\nimport "github.com/acme/tool/internal/x"\n'),
                ("internal/x", "package x\n"),
            ],
            "github.com/acme/tool",
        ),
        ([("", 'package calc\n\nimport "fmt"\n')], "example.com/calc"),  # nothing says: made up
    ],
)
def test_the_module_path_of_a_gopath_tree(files: list[tuple[str, str]], path: str) -> None:
    from prchain.environments.eras.go.gopath_mod import module_path

    assert module_path(files) == path


def test_each_requirement_is_taken_back_to_its_newest_release_by_the_date(tmp_path: Path) -> None:
    """tinylib v0.1.0 (2022-06), v0.2.0 (2023-05), a prerelease and v0.3.0 (2024-06), served over
    HTTP by a Go proxy on 127.0.0.1: a tree of 2024-03 gets v0.2.0; one of 2021, before any
    release, the first (msgpack's of 2015 got ugorji's codec of 2025, which asks for go1.21)."""
    from prchain.environments.eras.go.gopath_mod import dated_version, escaped, module_of
    from tests.support.go_proxy import TINYLIB, GoProxy, publish

    tinylib_proxy(tmp_path)
    publish(tmp_path, TINYLIB, "v0.3.0-rc.1", "2024-01-01T00:00:00Z", {"t.go": "package t\n"})
    publish(tmp_path, TINYLIB, "v0.3.0", "2024-06-01T00:00:00Z", {"t.go": "package t\n"})
    with GoProxy(tmp_path) as proxy:
        proxies = ["http://127.0.0.1:9/unreachable", proxy.url]
        assert dated_version(TINYLIB, "2024-03-01T00:00:00Z", proxies) == "v0.2.0"
        assert dated_version(TINYLIB, "2026-01-01T00:00:00Z", proxies) == "v0.3.0"
        assert dated_version(TINYLIB, "2021-01-01T00:00:00Z", proxies) == "v0.1.0"  # the first
        assert dated_version("example.com/absent", "2024-03-01T00:00:00Z", proxies) is None
        assert module_of(f"{TINYLIB}/sub/pkg", proxies) == TINYLIB
        assert module_of("example.com/absent/pkg", proxies) is None
    assert escaped("github.com/BurntSushi/toml") == "github.com/!burnt!sushi/toml"


@needs_go
def test_the_made_go_mod_builds_the_gopath_tree_with_its_dated_requirement(tmp_path: Path) -> None:
    """gopath_mod.py as the build runs it (the host's go, the Go proxy on 127.0.0.1): a greeter of
    2024-03 without go.mod calls tinylib's `Hello`; its go.mod names its path as its external test
    imports it, and tinylib v0.2.0. v0.3.0 (2024-06, what tidy alone takes) asks for a Go no
    toolchain is (go-github's tree of 2017 met golang.org/x/oauth2's go.mod of 2026), so the
    requirement is dated before tidy runs."""
    from tests.support.go_proxy import TINYLIB, GoProxy, publish

    tinylib_proxy(tmp_path / "proxy")
    later = {"t.go": "package tinylib\n"}
    publish(tmp_path / "proxy", TINYLIB, "v0.3.0", "2024-06-01T00:00:00Z", later, "go 1.99.0")
    tree = tmp_path / "greeter"
    tree.mkdir()
    (tree / "greeter.go").write_text(
        f'package greeter\n\nimport "{TINYLIB}"\n\nfunc Welcome(n string) string {{ return tinylib.Hello(n) }}\n'
    )
    (tree / "greeter_test.go").write_text(
        'package greeter_test\n\nimport (\n\t"testing"\n\n\t"github.com/acme/greeter"\n)\n\n'
        'func TestWelcome(t *testing.T) {\n\tif greeter.Welcome("a") != "hello a" {\n\t\tt.Fatal("no")\n\t}\n}\n'
    )
    script = Path(room.__file__).parent / "gopath_mod.py"
    with GoProxy(tmp_path / "proxy") as proxy:
        env = {
            **os.environ,
            "GOPROXY": proxy.url,
            "GOSUMDB": "off",
            "GOFLAGS": "-mod=mod",
            "GOTOOLCHAIN": "local",
            "GOPATH": str(tmp_path / "gopath"),  # the module cache; the build cache is shared
        }
        made = subprocess.run(
            ["python3", "-", "2024-03-01T00:00:00Z", "go 1.16"],
            input=script.read_text(),
            cwd=tree,
            env=env,
            capture_output=True,
            text=True,
        )
        assert made.returncode == 0, made.stderr
        tested = subprocess.run(
            ["go", "test", "./..."], cwd=tree, env=env, capture_output=True, text=True
        )
    gomod = (tree / "go.mod").read_text()
    assert gomod.startswith("module github.com/acme/greeter\n")  # tidy may raise the go line
    assert f"{TINYLIB} v0.2.0" in gomod and "release nearest 2024-03-01" in made.stdout
    assert tested.returncode == 0, tested.stdout + tested.stderr
