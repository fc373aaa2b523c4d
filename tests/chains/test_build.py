"""build_chains writes chains and stages idempotently, keeps queries, splits gold patches, prunes stale chains."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine, func, select, update
from sqlalchemy.orm import Session

from prchain.chains.building.build import build_chains
from prchain.chains.config import ChainsConfig
from prchain.chains.reading.patches import is_test_path, split_patch
from prchain.core.errors import ConfigError
from prchain.store.models import Chain, ChainStage
from tests.support.chain_store import StoreBuilder


def _store(engine: Engine) -> StoreBuilder:
    store = StoreBuilder(engine)
    store.pr(1, ["calc/ops.py", "tests/test_ops.py"])
    store.pr(2, ["calc/ops.py"])
    store.pr(3, ["calc/ops.py", "calc/util.py"])
    store.pr(4, ["calc/other.py"])
    store.ref(2, 1, "follow_up", evidence="Follow-up to #1")
    store.ref(3, 2, "fixes", evidence="Fixes #2")
    store.write()
    return store


def _counts(engine: Engine) -> tuple[int, int]:
    with Session(engine) as session:
        return session.scalar(select(func.count()).select_from(Chain)), session.scalar(
            select(func.count()).select_from(ChainStage)
        )


def test_build_writes_ordered_stages_and_is_idempotent(engine: Engine) -> None:
    store = _store(engine)
    summary = build_chains(ChainsConfig(), engine)
    assert dict(summary.by_length) == {3: 1} and summary.new == 1 and summary.stages == 3
    with Session(engine) as session:
        chain = session.scalars(select(Chain)).one()
        stages = session.scalars(select(ChainStage).order_by(ChainStage.idx)).all()
    assert (
        chain.signature == f"{store.pr_id(1)}-{store.pr_id(2)}-{store.pr_id(3)}"
        and chain.length == 3
    )
    assert [e["types"] for e in chain.edges] == [["follow_up"], ["fixes"]]
    assert [s.pr_id for s in stages] == [store.pr_id(n) for n in (1, 2, 3)]
    assert stages[0].base_sha == f"{1:040x}" and stages[0].end_sha == f"{9001:040x}"
    assert "calc/ops.py" in stages[0].gold_patch and "tests/test_ops.py" not in stages[0].gold_patch
    assert "tests/test_ops.py" in stages[0].gold_test_patch and stages[1].gold_test_patch == ""

    with Session(engine) as session, session.begin():
        session.execute(
            update(ChainStage)
            .where(ChainStage.idx == 1)
            .values(query="Let users subtract.", query_attempts=2)
        )
        session.execute(update(Chain).values(overview="A calculator grows."))
    again = build_chains(ChainsConfig(), engine)
    assert again.new == 0 and _counts(engine) == (1, 3)
    with Session(engine) as session:
        first = session.scalars(select(ChainStage).where(ChainStage.idx == 1)).one()
        assert (first.query, first.query_attempts) == ("Let users subtract.", 2)
        assert session.scalars(select(Chain.overview)).one() == "A calculator grows."


def test_strategies_live_side_by_side_and_stale_chains_are_pruned(engine: Engine) -> None:
    _store(engine)
    build_chains(ChainsConfig(), engine)
    single = build_chains(ChainsConfig(), engine, strategy="single")
    assert dict(single.by_length) == {1: 1}  # #4 alone
    assert _counts(engine) == (2, 4)
    shorter = build_chains(ChainsConfig(), engine, max_len=2)
    # #1 ← #2 and #2 ← #3 share all but one PR: only the first (equal score, smaller signature) stays.
    assert dict(shorter.by_length) == {2: 1} and shorter.pruned == 1
    assert shorter.chains_dropped["near_duplicate_dropped"] == 1
    assert _counts(engine) == (2, 3)


def test_bad_lengths_are_a_config_error(engine: Engine) -> None:
    with pytest.raises(ConfigError, match="larger than"):
        build_chains(ChainsConfig(), engine, min_len=4, max_len=2)


def test_patch_split_keeps_sections_byte_for_byte() -> None:
    diff = (
        "diff --git a/src/a.py b/src/a.py\n--- a/src/a.py\n+++ b/src/a.py\n@@ -1 +1,2 @@\n x\n+y\n"
        "diff --git a/crates/x/resources/test/fixtures/b.py b/crates/x/resources/test/fixtures/b.py\n"
        "new file mode 100644\n--- /dev/null\n+++ b/crates/x/resources/test/fixtures/b.py\n@@ -0,0 +1 @@\n+z\n"
        'diff --git "a/src/sp ace.py" "b/src/sp ace.py"\n--- "a/src/sp ace.py"\n+++ "b/src/sp ace.py"\n@@ -1 +1 @@\n-a\n+b\n'
    )
    split = split_patch(diff)
    assert split.code_paths == ("src/a.py", "src/sp ace.py")
    assert split.test_paths == ("crates/x/resources/test/fixtures/b.py",)
    assert sorted(split.code.split("diff --git") + split.test.split("diff --git")) == sorted(
        diff.split("diff --git") + [""]
    )
    assert split_patch("").code == ""
    assert (
        is_test_path("pkg/foo_test.go")
        and is_test_path("src/snapshots/x.snap")
        and not is_test_path("src/testing_utils_x.py")
    )
    # vite's end-to-end tests live in apps under playground/.
    assert is_test_path("playground/nested-deps/index.js")
    assert is_test_path("packages/playground/css/main.js")
    # Test directories named otherwise: cranelift's filetests, wasmtime's test-programs and
    # misc_testsuite; words that merely end in "test" are no tests.
    for path in (
        "cranelift/filetests/filetests/egraph/licm.clif",
        "crates/test-programs/src/bin/p1.rs",
        "tests/misc_testsuite/simd.wast",
        "crates/cli_tests/src/main.rs",
        # A TAP suite at the root: apisix's t/plugin/key-auth.t and the helpers it loads.
        "t/plugin/key-auth.t",
        "t/lib/server.lua",
        "lib/Foo/t/basic.t",
        # Test helpers by convention: a Rust crate's test_util module, a Go testutil package.
        "parquet/src/arrow/array_reader/test_util.rs",
        "src/test_utils.rs",
        "internal/testutils/xds.go",
        # Deno's tests beside their code (fresh's `src/dev/builder_test.ts`), and a Go package's
        # helpers only its tests call (linkerd2's `controller/k8s/test_helper.go`).
        "src/dev/builder_test.ts",
        "ext/node/polyfills_test.mjs",
        "controller/k8s/test_helper.go",
        "controller/api/destination/test_util.go",
        # A Go module's own assertion packages (mongo-go-driver's internal/assert and require).
        "internal/assert/assertions.go",
        "x/mongo/internal/require/require.go",
        # A JavaScript module's tests beside it (date-fns's `src/intlFormat/test.ts`, round 36).
        "src/intlFormat/test.ts",
        "src/locale/hi/test.js",
        "lib/tests.mjs",
    ):
        assert is_test_path(path), path
    for path in (
        "src/latest/a.py",
        "src/attest/x.rs",
        "src/protests/x.py",
        "crates/ty_test/src/lib.rs",  # the mdtest runner: a test framework's code
        "src/t/types.lua",  # a directory named t below the root is no TAP suite
        "apisix/plugins/limit-count.lua",
        "src/testutil.rs",  # only the snake-case module name is the convention
        "src/latest.ts",
        "src/testing.ts",
        "lib/contest.go",
        "assert/assertions.go",  # testify's product
        "internal/assert/README.md",  # only Go files of the directory
        "src/internal/assert/check.py",
    ):
        assert not is_test_path(path), path
