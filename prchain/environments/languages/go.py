"""Go's facts (`prchain.environments.languages`)."""

from prchain.environments.languages import LanguageFacts

FACTS = LanguageFacts(
    name="go",
    source_suffixes=frozenset({".go"}),
    lock_files=frozenset({"go.sum"}),
    # A module's requirements under another name: `go build -modfile=go_test.mod` reads any such
    # file, its sums beside it (nats.go keeps its test dependencies in `go_test.mod` and
    # `go_test.sum`; a workspace has `go.work.sum`). Round 45: nats.go #1773 → #1821, two Go
    # version bumps, were a code link through 9 lines of `go_test.mod`.
    module_files=r"^go(?:[._-][\w.-]*)?\.(?:mod|sum)$",
    # `x_test.go`, and a package's helpers that only its tests call (linkerd2's
    # `controller/k8s/test_helper.go`)
    test_file_names=r"_tests?\.go$|^test_?(utils?|helpers?)\.go$",
    # A module's own assertion packages: `internal/` keeps them inside the module, so its tests
    # are what imports them (mongo-go-driver's `internal/assert` and `internal/require`, copies
    # of testify's); a bare `assert/` or `require/` is an assertion library's product (testify's)
    test_dirs=r"(?:^|/)internal/(?:assert|require)/",
    setup_agent=("Go", "the Go module proxy"),
    # 1: testhelper/testhelpers directories are test side; 2: internal/assert, internal/require
    evidence_version=2,
)
