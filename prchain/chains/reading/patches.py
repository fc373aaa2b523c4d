"""Split a PR's gold diff into its code part and its test part (SWE-bench's patch / test_patch).

Each file section of the diff is kept byte for byte (hunk headers untouched, so `git apply` sees
exactly what git wrote); unidiff only tells us which path a section changes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, lru_cache

from unidiff import PatchSet
from unidiff.errors import UnidiffParseError

from prchain.environments.languages import test_dir_paths, test_file_names

_SECTION = re.compile(r"^diff --git ", re.MULTILINE)
_INDEX = re.compile(r"^index ([0-9a-f]+)\.\.([0-9a-f]+)", re.MULTILINE)
_PLAIN = re.compile(r"diff --git a/([^\s\"]+) b/([^\s\"]+)\n")
_HEADER = re.compile(r"^diff --git (?:\"?a/)?(.+?)\"? (?:\"?b/)?(.+?)\"?$", re.MULTILINE)

# Directory names whose contents are tests or test data (fixtures, snapshots).
TEST_DIRS = frozenset(
    {
        *("test", "tests", "testing", "__tests__", "spec", "specs", "fixtures", "snapshots"),
        *("testdata", "test-data", "test_data"),  # mypy's test-data/unit/*.test cases
        *("playground", "playgrounds"),  # vite's end-to-end tests: small apps the suite drives
        # Go's helper packages that only tests import: the hidden tests assert through them, so the
        # stage base's copy runs in the clean room, never the agent's
        *("testutil", "testutils", "testhelper", "testhelpers"),
    }
)
# Other test directories: "tests" or "testsuite" as a word of the name ("cli_tests",
# "misc_testsuite"), a name that starts with "test-" ("test-programs"), or a kind of test run
# together with "tests" ("filetests", "runtests": cranelift's test files). A crate that ends in
# "_test" (ruff's `ty_test`, the mdtest runner) is the code of a test framework, not a test.
_TEST_DIR = re.compile(
    r"(?:\w+[-_])?(?:tests|testsuite)(?:[-_]\w+)?|test[-_]\w+"
    r"|(?:file|run|unit|func|integration|system|smoke|ui|e2e|doc|fuzz|regress|compile)tests",
    re.I,
)
# Test files by name that belong to no room's language: Ruby's and C#'s, insta's snapshots, and a
# TAP test script (apisix's t/plugin/key-auth.t, a Perl module's t/basic.t). Each language's own
# are its facts' `test_file_names` (`prchain.environments.languages`).
_OTHER_TEST_NAMES = r"_tests?\.rb$|Tests?\.cs$|\.snap(\.new)?$|\.t$"


@cache
def test_name_pattern() -> re.Pattern[str]:
    """A test file's name, in any language (searched in the file's name)."""
    return re.compile(f"{test_file_names()}|(?:{_OTHER_TEST_NAMES})")


@cache
def test_path_pattern() -> re.Pattern[str]:
    """A source file in one language's own test directories (searched in the file's path;
    `LanguageFacts.test_dirs`: Go's `internal/assert/`), never matching when none has any."""
    return re.compile(test_dir_paths() or r"(?!)")


# Files that configure or steer a test run wherever they are: pytest reads conftest.py and its ini
# files, tox and nox run the suite, and Python itself imports sitecustomize/usercustomize and .pth
# files. A change to one of them can make tests pass without touching the code under test.
TEST_CONFIG_FILES = frozenset(
    {
        "conftest.py",
        "pytest.ini",
        ".pytest.ini",
        "tox.ini",
        "noxfile.py",
        ".coveragerc",
        "sitecustomize.py",
        "usercustomize.py",
    }
)
# Files that hold test configuration beside other things: only their test sections count.
MIXED_CONFIG_FILES = frozenset({"setup.cfg", "pyproject.toml"})
_CFG_TEST_SECTIONS = ("tool:pytest", "pytest", "coverage:", "tox:", "options.entry_points")
_TOML_TEST_TABLES = (("tool", "pytest"), ("tool", "coverage"), ("tool", "tox"))


@dataclass(frozen=True)
class SplitPatch:
    code: str
    test: str
    code_paths: tuple[str, ...]
    test_paths: tuple[str, ...]


@lru_cache(maxsize=1 << 16)
def is_test_path(path: str) -> bool:
    """True for test sources and test data, by directory name or file-name convention.

    Cached: loading the graph asks once per file of every PR, and a repository's PRs keep
    touching the same few thousand paths (ruff: 144k file rows, 25k distinct paths)."""
    parts = path.split("/")  # str.split, not pathlib: this runs once per file of every stage
    if any(part.lower() in TEST_DIRS or _TEST_DIR.fullmatch(part) for part in parts[:-1]):
        return True
    if len(parts) > 1 and parts[0] == "t":  # the TAP suite at the root (Perl, OpenResty, git)
        return True
    return bool(test_name_pattern().search(parts[-1]) or test_path_pattern().search(path))


def is_test_config_path(path: str) -> bool:
    """True for a file that configures the test run as a whole (conftest.py, pytest.ini, tox.ini,
    noxfile.py, .coveragerc, sitecustomize.py, *.pth …). setup.cfg and pyproject.toml are not:
    `test_sections_changed` decides for them, from their contents."""
    name = path.rsplit("/", 1)[-1]
    return name in TEST_CONFIG_FILES or name.endswith(".pth")


def changes_test_config(path: str, before: str | None, after: str | None) -> bool:
    """Whether changing `path` from `before` to `after` (None = absent) changes test configuration."""
    if is_test_config_path(path):
        return True
    if path.rsplit("/", 1)[-1] not in MIXED_CONFIG_FILES:
        return False
    return test_sections(path, before) != test_sections(path, after)


def test_sections(path: str, text: str | None) -> object:
    """The test sections of a setup.cfg or pyproject.toml ([tool:pytest], [tool.pytest.*],
    coverage, tox, entry points); a file that does not parse is its own text (any change counts)."""
    if text is None:
        return {}  # an absent file configures nothing
    try:
        if path.endswith(".toml"):
            return _toml_test_tables(text)
        return _cfg_test_sections(text)
    except ValueError:  # configparser.Error and tomllib.TOMLDecodeError are ValueErrors
        return text


def _cfg_test_sections(text: str) -> dict[str, dict[str, str]]:
    import configparser

    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error as exc:
        raise ValueError(str(exc)) from None
    return {
        name: dict(parser[name])
        for name in parser.sections()
        if name.lower().startswith(_CFG_TEST_SECTIONS)
    }


def _toml_test_tables(text: str) -> dict[str, object]:
    import tomllib

    data = tomllib.loads(text)
    found: dict[str, object] = {}
    for top, name in _TOML_TEST_TABLES:
        table = data.get(top, {})
        if isinstance(table, dict) and name in table:
            found[f"{top}.{name}"] = table[name]
    plugins = data.get("project", {}).get("entry-points", {}).get("pytest11")
    if plugins is not None:
        found["project.entry-points.pytest11"] = plugins
    return found


def file_sections(diff: str) -> list[str]:
    """The diff cut at each `diff --git` header; text before the first header is dropped."""
    starts = [m.start() for m in _SECTION.finditer(diff)]
    ends = [*starts[1:], len(diff)]
    return [diff[a:b] for a, b in zip(starts, ends, strict=False)]


def section_blobs(section: str) -> tuple[str, str] | None:
    """(old blob, new blob) as a section's `index` line abbreviates them (None without one)."""
    found = _INDEX.search(section.split("\n@@", 1)[0])
    return (found.group(1), found.group(2)) if found else None


def section_path(section: str) -> str:
    """The path a section changes (the new path of a rename, the old path of a deletion)."""
    plain = _PLAIN.match(section)
    if plain and plain.group(1) == plain.group(2):
        return plain.group(
            1
        )  # the common "a/x b/x" header; unidiff reads the rest (renames, quoting)
    # Only the header lines name the path; parsing the hunks too would cost most of the time.
    header = section.split("\n@@", 1)[0] + "\n"
    try:
        files = PatchSet(header)
        if files:
            return str(files[0].path).strip('"')  # unidiff keeps git's quotes around odd names
    except (UnidiffParseError, UnicodeError):
        pass  # git diffs unidiff cannot read still carry their paths in the header line
    match = _HEADER.search(section)
    return match.group(2) if match else ""


def kept_paths(diff: str) -> list[str]:
    """The paths a diff leaves in the tree: every section's but those it deletes."""
    return [
        path
        for section in file_sections(diff)
        if "\ndeleted file mode " not in section.split("\n@@", 1)[0]
        and (path := section_path(section))
    ]


def split_patch(diff: str) -> SplitPatch:
    """Partition a unified git diff into (code, test) parts, each a valid diff on its own."""
    code: list[str] = []
    test: list[str] = []
    code_paths: list[str] = []
    test_paths: list[str] = []
    for section in file_sections(diff):
        path = section_path(section)
        if is_test_path(path):
            test.append(section)
            test_paths.append(path)
        else:
            code.append(section)
            code_paths.append(path)
    return SplitPatch("".join(code), "".join(test), tuple(code_paths), tuple(test_paths))
