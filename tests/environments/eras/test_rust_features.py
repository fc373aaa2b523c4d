"""A Rust stage's tests that only a feature compiles: which features its command names.

uutils/coreutils declares each utility's tests in tests/tests.rs behind the utility's feature;
`kill` is not a default one, so #12326's new kill tests ran in no run of `tests verify` and the
stage was "no test fails before the gold code patch and passes after it". Read from the files as
a checkout holds them (features.py), then run by verify_stage on a real crate with the host's
cargo."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from prchain.environments.eras.rust.features import Listing, Read, needed, with_features
from prchain.environments.eras.rust.report import SUITE, Cargo, on_cargo
from prchain.verdicts.config import RepoTests, VerdictsConfig
from prchain.verdicts.verify import verify_stage
from tests.support.host_checkout import HostCheckout, one_pr_stage

CARGO = shutil.which("cargo") or str(Path.home() / ".cargo/bin/cargo")
needs_cargo = pytest.mark.skipif(not Path(CARGO).exists(), reason="no cargo on this host")

# coreutils at #12326's base, cut down: its features and the declarations of two utilities' tests
COREUTILS = {
    "Cargo.toml": (
        '[package]\nname = "coreutils"\nversion = "0.1.0"\n\n[features]\n'
        'default = ["feat_common_core"]\nunix = ["feat_os_unix"]\n'
        'feat_common_core = ["fold", "uu_fold/x"]\nfeat_os_unix = ["feat_common_core", "kill"]\n'
        "fold = []\nexpensive_tests = []\n\n"
        # as coreutils has it: the utility is an optional dependency, its feature implicit
        "[target.'cfg(unix)'.dependencies]\n"
        'kill = { optional = true, version = "0.1", package = "uu_kill" }\n\n'
        '[[test]]\nname = "slow"\npath = "tests/slow.rs"\nrequired-features = ["expensive_tests"]\n'
    ),
    "tests/tests.rs": (
        'use std::env;\n\n#[cfg(feature = "fold")]\n#[path = "by-util/test_fold.rs"]\nmod test_fold;\n\n'
        '#[cfg(feature = "kill")]\n#[path = "by-util/test_kill.rs"]\nmod test_kill;\n'
    ),
    "tests/by-util/test_kill.rs": "#[test]\nfn kills() {}\n",
    "tests/by-util/test_fold.rs": "#[test]\nfn folds() {}\n",
    "tests/slow.rs": "#[test]\nfn slowly() {}\n",
    "tests/serde.rs": '#![cfg(feature = "kill")]\n#[test]\nfn kills_too() {}\n',
}


def _checkout(files: dict[str, str]) -> tuple[Read, Listing]:
    def read(path: str) -> str | None:
        return files.get(path)

    def listing(directory: str) -> list[str]:
        prefix = "" if directory in ("", ".") else directory + "/"
        return [p for p in files if p.startswith(prefix) and "/" not in p[len(prefix) :]
                and p.endswith(".rs")]  # fmt: skip

    return read, listing


def test_a_test_module_behind_a_feature_the_default_leaves_off_names_it() -> None:
    read, listing = _checkout(COREUTILS)
    assert needed(["tests/by-util/test_kill.rs"], read, listing) == ["coreutils/kill"]
    assert needed(["tests/by-util/test_fold.rs"], read, listing) == []  # default, through a set
    assert needed(["tests/slow.rs"], read, listing) == ["coreutils/expensive_tests"]
    assert needed(["tests/serde.rs"], read, listing) == ["coreutils/kill"]  # an inner gate
    assert needed(["tests/tests.rs", "README.md"], read, listing) == []
    assert with_features("cargo test -p a -- --nocapture", ["a/kill"]) == (
        f"cargo test -p a {on_cargo('', '--features a/kill')} -- --nocapture"
    )


CRATE = '[package]\nname = "shapes"\nversion = "0.1.0"\nedition = "2021"\n\n[features]\ndefault = []\nextra = []\n'
LIB = "pub fn area(w: u64, h: u64) -> u64 {\n    w * h\n}\n"
PERIMETER = "\npub fn perimeter(w: u64, h: u64) -> u64 {\n    2 * (w + h)\n}\n"
ALL = '#[cfg(feature = "extra")]\n#[path = "by/extra.rs"]\nmod extra;\n'
EXTRA = "#[test]\nfn areas() {\n    assert_eq!(shapes::area(2, 3), 6);\n}\n"
EXTRA_NEW = "\n#[test]\nfn perimeters() {\n    assert_eq!(shapes::perimeter(2, 3), 10);\n}\n"


@needs_cargo
def test_verify_finds_the_tests_a_feature_compiles(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", f"{Path(CARGO).parent}:{os.environ['PATH']}")
    monkeypatch.setenv("CARGO_TARGET_DIR", str(tmp_path / "target"))
    monkeypatch.setenv("CARGO_NET_OFFLINE", "true")
    start = {
        "Cargo.toml": CRATE,
        "src/lib.rs": LIB,
        "tests/all.rs": ALL,
        "tests/by/extra.rs": EXTRA,
    }
    pr = {"src/lib.rs": LIB + PERIMETER, "tests/by/extra.rs": EXTRA + EXTRA_NEW}
    repo = tmp_path / "shapes"
    job = one_pr_stage(repo, start, pr, "src", "acme/shapes")

    done = verify_stage(
        HostCheckout(repo),  # type: ignore[arg-type]
        job,
        RepoTests(test=Cargo().narrowed(SUITE), ecosystem="rust"),
        VerdictsConfig(gold_runs=1, report_path=str(tmp_path / "report")),
    )
    assert done.found.status == "usable", (done.found.reason, done.runs.get("counts"))
    assert done.runs["features"] == ["shapes/extra"]
    assert done.test_command.endswith(on_cargo("", "--features shapes/extra"))
    assert done.found.fail_to_pass == ["shapes/all::extra::perimeters"]
    assert done.found.pass_to_pass == ["shapes/all::extra::areas"]
