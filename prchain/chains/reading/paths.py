"""What a changed file is, by its path alone: documentation, configuration, a lock file, a
benchmark, vendored code, or code a PR author wrote (read by the stage filters and by every
reading of changed lines).
"""

from __future__ import annotations

import re
from functools import lru_cache

from prchain.chains.reading.patches import is_test_path
from prchain.environments.languages import lock_files, module_file

# The rooms' lock files (`prchain.environments.languages`) and those of languages without a room.
LOCKFILES = lock_files() | frozenset(
    {"gemfile.lock", "composer.lock", "flake.lock", "mix.lock", "podfile.lock"}
)


# Configuration, CI and packaging: a chain of edits to these alone is not a coding task.
CONFIG_SUFFIXES = frozenset(
    {".toml", ".yaml", ".yml", ".json", ".cfg", ".ini", ".lock", ".conf", ".jsonc", ".editorconfig"}
)


CONFIG_DIRS = frozenset({".github", ".circleci", ".gitlab", ".devcontainer", ".cargo", ".config"})


# Any directory at the root whose name starts with a dot holds tooling too (`.husky/`, `.storybook/`,
# `.changeset/`, a CI's own: astro's `.flue/workflows/issue-triage.ts` triages issues, round 37).
# A JavaScript tool's configuration is often code in a dotfile or `<tool>.config.*`: TanStack query
# #5579 turns each `.eslintrc` into `.eslintrc.cjs`, and #5632 edits them (round 37: both thin).
TOOL_CONFIG_NAME = re.compile(
    r"^(?:\.[\w-]+rc(?:\.[\w]+)?|(?:eslint|prettier|babel|jest|vitest|commitlint|lint-staged|stylelint)"
    r"\.config\.[cm]?[jt]s)$"
)


CONFIG_NAMES = frozenset(
    {
        "dockerfile",
        "makefile",
        "justfile",
        ".gitignore",
        ".gitattributes",
        ".pre-commit-config.yaml",
        "rust-toolchain",
        "noxfile.py",
        "tox.ini",
        "setup.cfg",
        "codecov.yml",
        "mkdocs.yml",
        # Dependency manifests without a suffix to go by: a module's requirements and their
        # versions, not code (opentelemetry-collector #9091 adds a module and points 13 go.mod
        # files at it).
        *("go.mod", "go.work", "gemfile", "pipfile", "podfile"),
    }
)


# A manifest under another name (Go's `go_test.mod`, `go.work.sum`): `LanguageFacts.module_files`.
MODULE_FILE = module_file()


# Copies an editor, a merge tool or an author left beside a file: no code any build reads
# (opentelemetry-go #4358 deletes a `sum_test.go.bkup` that #4349 added by mistake).
LEFTOVER_SUFFIXES = (".bak", ".bkup", ".orig", ".rej", ".swp", ".swo", "~")


# Certificates, keys and signatures: data a tool generates, not code, whatever lines they change
# (webpack-dev-server #572 makes the development server's certificates again after #436 had: a
# link through `ssl/server.crt` and `ssl/ca.key`, round 39, both judges `not`).
KEY_MATERIAL_SUFFIXES = frozenset(
    {
        *(".crt", ".cer", ".csr", ".pem", ".der", ".key", ".p12", ".pfx", ".jks", ".keystore"),
        *(".gpg", ".asc", ".sig"),
    }
)


# Benchmarks measure the code; like tests, a change to them is no change of what the code does
# (immer's `perf-testing/`, netty's `microbench/`, Jest-style `__benchmarks__/`).
BENCH_DIRS = frozenset(
    {
        *("bench", "benches", "benchmark", "benchmarks", "benchmarking", "asv_bench"),
        *("microbench", "microbenchmark", "microbenchmarks", "__benchmarks__"),
        *("perf-testing", "perf_testing", "__performance_tests__"),
    }
)


# Fuzz harnesses drive the code with generated input, as a test does: simdjson #1272 reworks the
# `fuzz/fuzz_ondemand.cpp` harness of #1220 (round 35: a thin stage); cargo-fuzz keeps its targets
# in `fuzz/fuzz_targets/`, OSS-Fuzz's build scripts sit in `oss-fuzz/`.
FUZZ_DIRS = frozenset({"fuzz", "fuzzing", "fuzzer", "fuzzers", "fuzz_targets", "oss-fuzz"})


# Other projects' code kept in the tree: a change to it is a sync of their work, not this one's
# (Go's `vendor/`, pip's `_vendor/`, C and C++ projects' `third_party/`).
VENDOR_DIRS = frozenset(
    {"vendor", "vendored", "_vendor", "third_party", "third-party", "thirdparty", "3rdparty"}
)


# Build definitions: what to compile and link, not what the code does (scipy #18426 moves include
# paths between meson targets; arrow-adbc #1042 adds a Maven test profile).
BUILD_NAMES = frozenset(
    {
        *("pom.xml", "build.gradle", "build.gradle.kts", "settings.gradle", "settings.gradle.kts"),
        *("cmakelists.txt", "meson.build", "meson.options", "meson_options.txt", "build.sbt"),
        *("build", "build.bazel", "workspace", "workspace.bazel", "module.bazel"),
        *("configure.ac", "makefile.am", "makefile.in", "sconstruct", "sconscript"),
    }
)


BUILD_SUFFIXES = frozenset(
    {".cmake", ".bzl", ".gradle", ".mk", ".csproj", ".vcxproj", ".fsproj", ".props", ".targets"}
)


# Code that styles, lays out or glues the product rather than says what it does: stylesheets, HTML
# markup and shell scripts. Its lines count as code for line lineage (a PR that rewrites another's
# stylesheet builds on it), but a stage made of them teaches no coding task, and no unit test reads
# them: hertzbeat #2140 unifies `border-radius` over .less and .html files, zeppelin #975 moves a
# button between two templates, iggy #3124 and #3125 harden release scripts. Of the 911 stages the
# hand checks judged (rounds 12 to 19) that reach the stage minimum, leaving these out takes 9
# judged thin under it and no stage judged worth its place. PowerShell and batch files stay
# counted: that would take 3 stages judged worth their place (arrow-adbc #4624 and #4671 verify
# release builds on Windows). Pictures drawn in text (SVG) and HTML templates of the template
# languages count likewise: crates.io #4154 redesigns a 404 page with a 21-line SVG and a
# Handlebars template.
PRESENTATION_SUFFIXES = frozenset(
    {
        *(".css", ".less", ".scss", ".sass", ".styl"),
        *(".html", ".htm", ".hbs", ".handlebars", ".mustache"),
        ".svg",
        *(".sh", ".bash", ".zsh"),
    }
)


# A repository's own tooling at its root: release, coverage and CI helper scripts (Kubernetes
# projects keep theirs in `hack/`). Like presentation, it counts for line lineage but teaches no
# task of the product: hatch #552 splits the coverage report script `scripts/report_coverage.py`
# that #545 wrote (round 36: both judged thin by both judges).
TOOLING_DIRS = frozenset({"scripts", "script", "hack"})


DOC_SUFFIXES = frozenset({".md", ".mdx", ".rst", ".adoc", ".txt"})


# Changelog fragments are prose whatever their names (restic's `changelog/unreleased/issue-4004`
# has no suffix; towncrier's `newsfragments/123.feature`): restic #5102 rewords four entries
# #5098 wrote (round 38: a code link, and both stages judged thin). `news` and `changes` are
# such a folder only at the root (pip's `news/`), where no package of code takes the name.
DOC_DIRS = frozenset(
    {
        "docs",
        "doc",
        "documentation",
        "changelog",
        "changelogs",
        "changelog.d",
        "changes.d",
        "news.d",
        "newsfragments",
        "release-notes",
        "releasenotes",
    }
)


ROOT_DOC_DIRS = frozenset({"news", "changes"})


DOC_NAMES = (
    "readme",
    "changelog",
    "changes",
    "license",
    "contributing",
    "authors",
    "code_of_conduct",
)


def _suffix(name: str) -> str:
    """A file name's last suffix with its dot ('.md'), or '' when it has none."""
    return name[name.rfind(".") :] if "." in name else ""


def is_doc_path(path: str) -> bool:
    parts = path.lower().split("/")  # str.split, not pathlib: this runs for every file of every PR
    name = parts[-1]
    if name.startswith("requirements"):
        return False
    if any(part in DOC_DIRS for part in parts[:-1]):
        return True
    if len(parts) > 1 and parts[0] in ROOT_DOC_DIRS:
        return True
    return _suffix(name) in DOC_SUFFIXES or name.startswith(DOC_NAMES)


def is_config_path(path: str) -> bool:
    """CI, packaging, build and tool configuration files (and lock files)."""
    parts = path.lower().split("/")
    name = parts[-1]
    if (
        any(part in CONFIG_DIRS for part in parts[:-1])
        or (len(parts) > 1 and parts[0].startswith("."))
        or name in CONFIG_NAMES
        or name in BUILD_NAMES
        or TOOL_CONFIG_NAME.match(name)
        or MODULE_FILE.match(name)
    ):
        return True
    if name.startswith("requirements") or is_lockfile(path):
        return True
    suffix = _suffix(name)
    return suffix in CONFIG_SUFFIXES or suffix in BUILD_SUFFIXES


def is_bench_path(path: str) -> bool:
    """Benchmark sources: scipy's `benchmarks/`, a crate's `benches/`; and fuzz harnesses
    (`FUZZ_DIRS`), which exercise the code as benchmarks and tests do."""
    return any(part in BENCH_DIRS or part in FUZZ_DIRS for part in path.lower().split("/")[:-1])


def is_vendored_path(path: str) -> bool:
    """Another project's code copied into this one (`VENDOR_DIRS`, and `deps/` at the root:
    redis keeps hdr_histogram, jemalloc and Lua there, and round 37's judges called redis #10606
    and #10755, two syncs of `deps/hdr_histogram`, thin and not dependent)."""
    parts = path.lower().split("/")[:-1]
    return any(part in VENDOR_DIRS for part in parts) or parts[:1] == ["deps"]


def is_leftover_path(path: str) -> bool:
    """A backup, swap or merge leftover (`LEFTOVER_SUFFIXES`)."""
    return path.lower().endswith(LEFTOVER_SUFFIXES)


def is_key_material(path: str) -> bool:
    """A certificate, key or signature (`KEY_MATERIAL_SUFFIXES`)."""
    return _suffix(path.rsplit("/", 1)[-1].lower()) in KEY_MATERIAL_SUFFIXES


# Asked of every line's path where lineage and undo checks read a patch's lines (ruff: a few
# thousand distinct paths, millions of lines).
@lru_cache(maxsize=1 << 16)
def counts_as_code(path: str) -> bool:
    """Is this file the code under work (not test, benchmark, config, docs, a vendored or a
    leftover copy, key material)? Its lines can carry line lineage and names from one PR to
    another."""
    return not (
        is_test_path(path)
        or is_bench_path(path)
        or is_vendored_path(path)
        or is_config_path(path)
        or is_doc_path(path)
        or is_leftover_path(path)
        or is_key_material(path)
    )


@lru_cache(maxsize=1 << 16)
def counts_as_substance(path: str) -> bool:
    """Does a change to this file count toward a stage's substance: code, and neither
    presentation (stylesheets, markup, shell scripts; `PRESENTATION_SUFFIXES`) nor the
    repository's tooling (`TOOLING_DIRS`)?"""
    top, _, rest = path.lower().partition("/")
    if rest and top in TOOLING_DIRS:
        return False
    suffix = _suffix(path.rsplit("/", 1)[-1].lower())
    return suffix not in PRESENTATION_SUFFIXES and counts_as_code(path)


def is_lockfile(path: str) -> bool:
    name = path.rsplit("/", 1)[-1].lower()
    return name in LOCKFILES or (name.endswith(".sum") and MODULE_FILE.match(name) is not None)
