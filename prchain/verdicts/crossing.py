"""What of the agent's change crosses into the clean room: an allow-list, not a deny-list.

A hidden-test run must judge the agent's code, not be configured by it. So a path of Δ_t crosses
only when it is a source or data file of the project (by its suffix) that no test runner,
interpreter or packaging tool reads as configuration or as a plugin. Everything else stays out and
is named in the record:

| rule | left out | why |
| --- | --- | --- |
| test side | test files, conftest.py, pytest.ini, tox.ini, sitecustomize.py, *.pth | the stage base's (B_t's) version is used |
| suffix | anything not in `SOURCE_SUFFIXES` (*.toml, *.cfg, *.ini and *.conf only below the root): *.pyc, *.so, Makefile | manifests and tool configuration; code the judge cannot read |
| named config | setup.py, pytest.py, noxfile.py, pytest.ini, tox.ini, setup.cfg, pyproject.toml, Cargo.toml, package.json, tsconfig*.json, *.config.js, karma.conf.js, build.rs, pom.xml, go.mod, lock files; JavaScript test setup (setupTests.js, jest.setup.ts, vitest.setup.js, global-setup.js) | read by a runner or a build tool, wherever it is |
| hidden place | a component starting with `.`; `*.dist-info`, `*.egg-info`, `__pycache__` | tool configuration (`.pytest.toml`, `.gitattributes`) and metadata that declares plugins |
| shadowing module | a module at the import root named like the runner or the standard library | would replace them once pytest puts the root on `sys.path` |
| the room's sealed places | what the stage's room names in `Ecosystem.sealed`: Node's node_modules and `__mocks__` (any depth), Go's and Rust's vendor/, Java's org/junit, org/hamcrest, ... packages, test libraries copied under third_party/ | the hidden tests' own libraries come from the image, sealed like the tests (issue 77) |
| local overrides | the directory any `go.mod` or `go.work` of the stage base `replace`s a test library with (`github.com/stretchr/testify => ./forks/testify`, `=> ../forks/testify` in `geo/go.mod`), and a module of the tree declaring a test library's path (a go.work `use`s it); the path a root `Cargo.toml` or `.cargo/config*` gives a test library by `[patch.*]`, `[replace]` or a dev-dependency (`pretty_assertions = { path = "forks/pa" }`), and every `.cargo/config` `paths` entry and local `[source]` directory; the files a Node stage base's runner configuration loads (jest's `setupFilesAfterEnv`, mocha's `--require`, …) and the directory its node_modules link of a test library leads to (`file:`, workspaces); a Python stage base's own `pytest11` plugin modules | the compiler or the runner reads them from the tree before the hidden tests, wherever they are |
| imported helpers | the project's test-support modules (`mypkg/testing.py`) that the hidden tests import (Python) | an assertion helper the tests call judges as they do |
| shadowing classes | a main class in a hidden test's own package named like a test library's class (`org/acme/calc/Assert.java`) (Java) | the test's `import org.junit.*;` loses to its own package's types |

A file crosses by what it is *and where it sits*: the suffix says it is source, the room says
whether its runner or compiler resolves the hidden tests' dependencies from there. A run whose
room is not known (a whole-command run) keeps every room's places out.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable
from functools import cache

from prchain.environments.eras.ecosystems import ECOSYSTEMS, ecosystem
from prchain.environments.eras.go import overrides as go_overrides
from prchain.environments.eras.java.shadows import shadowing_paths
from prchain.environments.eras.node import configs as node_configs
from prchain.environments.eras.python.seal import PLUGIN_MANIFESTS, helper_paths, plugin_paths
from prchain.environments.eras.rust import overrides as rust_overrides
from prchain.environments.eras.sealed import SealedPlaces
from prchain.environments.languages import source_suffixes

# The rooms' source files (`prchain.environments.languages`), those of languages without a room,
# and data a package reads at run time.
SOURCE_SUFFIXES = source_suffixes() | frozenset(
    {
        ".rb", ".php", ".cs", ".swift",
        # data a package reads at run time
        ".txt", ".md", ".rst", ".json", ".yaml", ".yml", ".csv", ".tsv", ".xml", ".html", ".htm",
        ".jinja", ".jinja2", ".j2", ".css", ".scss", ".svg", ".png", ".jpg", ".jpeg", ".gif",
        ".ico", ".po", ".pot", ".sql", ".graphql", ".proto",
    }
)  # fmt: skip
# Data a package reads that shares a suffix with tool configuration: it crosses below the root
# (pytest and the packaging tools read theirs at the root, by the names in CONFIG_NAMES).
NESTED_DATA_SUFFIXES = frozenset({".ini", ".cfg", ".toml", ".conf"})
CONFIG_NAMES = frozenset(
    {
        "setup.py", "pytest.py", "noxfile.py", "conftest.py", "sitecustomize.py",
        "usercustomize.py", "package.json", "jsconfig.json", "build.rs",
        "requirements.txt", "CMakeLists.txt", "pytest.ini", "tox.ini", "setup.cfg",
        "pyproject.toml", "pytest.toml", "Cargo.toml", "Pipfile", "manage.py",
        # build files of the other rooms: they configure the compiler and the test runner
        "Cargo.lock", "go.mod", "go.sum", "go.work", "pom.xml", "build.gradle",
        "build.gradle.kts", "settings.gradle", "settings.gradle.kts", "package-lock.json",
        "yarn.lock", "pnpm-lock.yaml", "pnpm-workspace.yaml",
    }
)  # fmt: skip
_CONFIG_NAME = re.compile(
    r"^(tsconfig.*\.json|.*\.conf(ig)?\.[cm]?[jt]s|.*\.config\.json|.*requirements.*\.txt)$"
    # Test setup a JavaScript runner loads before every test file: create-react-app's
    # `src/setupTests.js` (no config names it), jest's and vitest's `setupFiles`, mocha's
    # `--require`; code there can replace `expect` for the hidden tests.
    r"|^(setup[-_]?tests?|(jest|vitest|mocha|karma|ava|test|tests|global)[-_.]?"
    r"(setup|teardown)(-after-env)?)\.[cm]?[jt]sx?$",
    re.IGNORECASE,
)
_METADATA_DIR = re.compile(r"\.(dist-info|egg-info|egg-link)$|^__pycache__$")
# Modules of the test runner itself: a top-level one of the agent's would shadow it.
RUNNER_MODULES = frozenset({"pytest", "_pytest", "py", "pluggy", "iniconfig"})
IMPORT_ROOTS = ("", "src/")
_PYTHON_SUFFIXES = (".py", ".pyi", ".pyx", ".pxd", ".pyc")


@cache
def _shadowed() -> frozenset[str]:
    return frozenset(sys.stdlib_module_names) | RUNNER_MODULES


def why_not(path: str, room: str | None = None) -> str | None:
    """Why `path` of the agent's change does not cross into the clean room of `room` (an
    ecosystem's name; None: every room's rules), or None if it does."""
    return _why_not_anywhere(path) or sealed_places(room).why(path)


@cache
def sealed_places(room: str | None) -> SealedPlaces:
    """Where room `room` resolves the hidden tests' libraries from (every room's when None)."""
    if room is not None:
        return ecosystem(room).sealed
    ecosystem("python")  # loads every room
    found = SealedPlaces()
    for name in ECOSYSTEMS:
        found = found | ecosystem(name).sealed
    return found


def _why_not_anywhere(path: str) -> str | None:
    """The rules of every room: suffix, configuration, hidden places, shadowing modules."""
    parts = path.split("/")
    name = parts[-1]
    if any(p.startswith(".") or _METADATA_DIR.search(p) for p in parts):
        return "tool configuration or package metadata"
    suffix = (name[name.rfind(".") :] if "." in name else "").lower()
    nested_data = len(parts) > 1 and suffix in NESTED_DATA_SUFFIXES
    if suffix not in SOURCE_SUFFIXES and not nested_data:
        return "not a source or data file"
    if is_build_file(name):
        return "read by a test runner or build tool"
    if _shadows(path):
        return "shadows the test runner or the standard library"
    return None


def is_build_file(name: str) -> bool:
    """Whether a file of this name configures a test runner, a build or the dependencies."""
    return name in CONFIG_NAMES or _CONFIG_NAME.match(name) is not None


def _shadows(path: str) -> bool:
    """A Python file that, at an import root, takes the name of a standard or test-runner module
    (`src/unittest/__init__.py`). Other files shadow nothing: uutils/coreutils's Rust sources
    under `src/uu/` (`uu` is a standard module of Python 3.12 and before) all cross."""
    if not path.endswith(_PYTHON_SUFFIXES):
        return False
    for root in IMPORT_ROOTS:
        rest = path.removeprefix(root) if path.startswith(root) else None
        if rest is None:
            continue
        top = rest.split("/", 1)[0]
        module = top.removesuffix(".py") if "/" not in rest else top
        if module in _shadowed() and ("/" in rest or top.endswith((".py", ".pyi", ".pyx"))):
            return True
    return False


# What each room reads of the stage base, in its clean room before the agent's change arrives, to
# find the places its test-time dependencies come from in the tree. Go: every module's go.mod (a
# nested module builds with its own `replace`s) and go.work (its `replace`s, and `use` of a
# directory whose go.mod declares a test library's path), at any depth; Rust: the root Cargo.toml
# and .cargo/config*.
OVERRIDE_MANIFESTS = {
    "go": ("go.mod", "go.work"),
    "node": (*node_configs.FILES, node_configs.LINKS),
    "python": PLUGIN_MANIFESTS,
    "rust": ("Cargo.toml", ".cargo/config.toml", ".cargo/config"),
}


def overridden_dirs(room: str, manifests: dict[str, str]) -> list[str]:
    """The paths (directories or files) of the tree that the stage base's manifests (path →
    text) make part of `room`'s test machinery; sealed as vendored copies are. Go: the directory
    a local `replace` puts in place of a test library, in the root go.mod, a nested module's
    go.mod or a go.work (its target read from that manifest's directory), and a module of the tree
    that declares a test library's path (a go.work `use`s it). Node: the files the runners'
    configuration loads into the test process, and a test library linked from the tree
    (configs.py). Python: the modules the project declares as its own pytest plugins (`pytest11`),
    which the room loads with `-p`. Rust: the path a Cargo `[patch]`, `[replace]` or
    dev-dependency gives a test library, `paths` overrides and local `[source]`s. Overrides of the project's own modules are the project's
    code: they cross."""
    libraries = sealed_places(room).libraries
    if room == "node":
        return node_configs.sealed(manifests, libraries)
    if room == "python":
        return plugin_paths(manifests)
    if room == "rust":
        return rust_overrides.overridden_dirs(manifests, libraries)
    return go_overrides.overridden_dirs(manifests, libraries)


def imported_helpers(room: str, tests: str) -> list[str]:
    """The project's own test-support modules the hidden tests' text `tests` imports, in rooms
    that read them (Python: `mypkg/testing.py`, python/seal.py's HELPER_MODULES); sealed like the
    tests."""
    return helper_paths(tests) if room == "python" else []


def shadowing_classes(room: str, test_paths: list[str]) -> list[str]:
    """The main classes that would shadow, in a hidden test's own package, a test library's
    class the test imports on demand (Java: `org/acme/calc/Assert.java` beside a test with
    `import org.junit.*;`, java/shadows.py); sealed like the tests."""
    return shadowing_paths(test_paths) if room == "java" else []


def crosses(path: str, test_side: Callable[[str], bool], room: str | None = None) -> bool:
    """Does `path` reach `room`'s clean room from the agent's tree? Test-side paths never do."""
    return not test_side(path) and why_not(path, room) is None
