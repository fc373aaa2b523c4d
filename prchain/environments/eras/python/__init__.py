"""The Python ecosystem: interpreter, dated dependencies, import path and test command of an era.

Everything is read from the stage base's manifests; nothing here runs code of the repository.
The plan's commands run as root in a build container where /opt/prchain/src is B_t's tree; they
leave a virtualenv in /opt/venv holding the project's dependencies (never the project itself: the
agent's /work/repo is put on sys.path by a .pth file, so every stage imports its own code).
"""

from __future__ import annotations

import configparser
import contextlib
import posixpath
import re
import shlex
import tomllib
from dataclasses import dataclass, field, replace
from datetime import UTC
from pathlib import Path
from typing import Any

import yaml
from packaging.requirements import InvalidRequirement, Requirement
from poetry.core.factory import Factory

from prchain.environments.eras.config import ErasConfig
from prchain.environments.eras.ecosystems import ECOSYSTEMS, Plan
from prchain.environments.eras.manifests import Snapshot
from prchain.environments.eras.python import own_points
from prchain.environments.eras.python.compiled import BUILD_STEP, compiled, toolchain_commands
from prchain.environments.eras.python.compiled import era_commands as compiled_commands
from prchain.environments.eras.python.compiled import notes as compiled_notes
from prchain.environments.eras.python.constraints import (
    LISTED,
    OTHER,
    OWN,
    OWN_TREE,
    ConstraintSet,
    Line,
    marker_env,
    read_file,
    reconcile,
)
from prchain.environments.eras.python.nox_sessions import nox_installs
from prchain.environments.eras.python.report import PYTEST, Pytest
from prchain.environments.eras.reports import TestReport
from prchain.environments.eras.sealed import SealedPlaces
from prchain.environments.eras.submodules import declared, plan_notes

# When each suite's interpreter came out, and from when its test tooling is sure to support it: a
# commit older than that still gets pytest from that date (pytest of 2015 does not run on 3.9).
RELEASED = {"3.9": "2020-10-05", "3.11": "2022-10-24", "3.13": "2024-10-07"}
TOOLS_FLOOR = {"3.9": "2021-01-01", "3.11": "2023-01-01", "3.13": "2024-12-01"}
TEST_EXTRAS = ("test", "tests", "testing")
DEV_EXTRAS = ("dev", "develop", "development")
TEST_DIRS = ("tests", "test", "testing")
PROJECT_SRC = "/opt/prchain/src"
VENV = "/opt/venv"
_VERSION = re.compile(r"(?<![\d.])3\.(\d{1,2})(?![\d])")
_CLASSIFIER = re.compile(r"Programming Language :: Python :: (\d)\.(\d+)")
_TOX_ENV = re.compile(r"\bpy(\d)(\d{1,2})\b")
_VERSION_FILE = re.compile(
    r"""(?:write_to|version_file|version-file)["']?\s*[=:]\s*["']([^"']+)["']"""
)
_FACTOR = re.compile(r"^[A-Za-z0-9_.,!-]+:(?!//)\s*")
# The manifests a Python era depends on (the snapshot holds every ecosystem's).
_ERA_FILE = re.compile(
    r"^(setup\.py|setup\.cfg|tox\.ini|noxfile\.py|pytest\.ini|Pipfile(\.lock)?|poetry\.lock"
    r"|uv\.lock|pdm\.lock|\.python-version|package\.json|package-lock\.json|\.nvmrc"
    # below the root, one is in a snapshot only when a manifest names it (manifests.py)
    r"|(?:[^/]+/)*[^/]*requirements[^/]*\.(txt|in)|requirements/[^/]+\.(txt|in))$"
)
_ROOT_FILE = re.compile(r"^(?:[^/]+|requirements/[^/]+)$")


def _toml(snap: Snapshot) -> dict[str, Any]:
    try:
        return tomllib.loads(snap.text("pyproject.toml"))
    except tomllib.TOMLDecodeError:
        return {}


def _ini(text: str) -> configparser.RawConfigParser:
    parser = configparser.RawConfigParser(strict=False, interpolation=None)
    with contextlib.suppress(configparser.Error):
        parser.read_string(text)
    return parser


def _get(tree: dict[str, Any], *keys: str) -> Any:
    for key in keys:
        tree = tree.get(key, {}) if isinstance(tree, dict) else {}
    return tree


# ---- which interpreter ----------------------------------------------------------------------------


def python_requires(snap: Snapshot) -> str:
    pyproject = _toml(snap)
    found = _get(pyproject, "project").get("requires-python") or ""
    found = found or _ini(snap.text("setup.cfg")).get("options", "python_requires", fallback="")
    if not found:
        match = re.search(r"python_requires\s*=\s*['\"]([^'\"]+)['\"]", snap.text("setup.py"))
        found = match.group(1) if match else ""
    return str(found).strip()


def declared_versions(snap: Snapshot) -> set[str]:
    """Python 3 versions the project says it supports or tests: classifiers, tox, CI, .python-version."""
    found: set[str] = set()
    for path in ("setup.py", "setup.cfg", "pyproject.toml"):
        found |= {f"{a}.{b}" for a, b in _CLASSIFIER.findall(snap.text(path))}
    found |= {f"{a}.{b}" for a, b in _TOX_ENV.findall(snap.text("tox.ini")) if a == "3"}
    found |= {f"3.{m}" for m in _VERSION.findall(snap.text(".python-version"))}
    for path, text in snap.files.items():
        if path.startswith(".github/workflows/") or path == ".travis.yml":
            found |= _ci_versions(text)
    return {v for v in found if v.startswith("3.")}


def _ci_versions(text: str) -> set[str]:
    """Values under any key naming python in a CI file (BaseLoader keeps "3.10" a string)."""
    try:
        tree = yaml.load(text, Loader=yaml.BaseLoader)
    except yaml.YAMLError:
        return set()
    found: set[str] = set()

    def walk(node: Any, under_python: bool) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                walk(value, under_python or "python" in str(key).lower())
        elif isinstance(node, list):
            for item in node:
                walk(item, under_python)
        elif under_python and isinstance(node, str):
            found.update(f"3.{m}" for m in _VERSION.findall(node))

    walk(tree, False)
    return found


def python2_only(snap: Snapshot) -> str:
    """The Python 2 versions a project declares when it declares no Python 3 at all (flask 2012:
    classifiers and tox envlist py25–py27): no suite here has a Python 2 the planner can use."""
    twos: set[str] = set()
    for path in ("setup.py", "setup.cfg", "pyproject.toml"):
        twos |= {f"{a}.{b}" for a, b in _CLASSIFIER.findall(snap.text(path)) if a == "2"}
    twos |= {f"{a}.{b}" for a, b in _TOX_ENV.findall(snap.text("tox.ini")) if a == "2"}
    if not twos or declared_versions(snap) or re.search(r"Python :: 3", snap.text("setup.py")):
        return ""
    return f"declares Python {', '.join(sorted(twos, key=_key))} only; no Python 2 here"


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


def _allowed(spec: str, version: str) -> bool:
    from packaging.specifiers import InvalidSpecifier, SpecifierSet

    try:
        return SpecifierSet(spec).contains(version + ".0", prereleases=True) if spec else True
    except InvalidSpecifier:
        return True


def choose_interpreter(snap: Snapshot, suites: dict[str, str]) -> tuple[str, str, str]:
    """(suite, version, why): what python_requires allows, nearest to the declared versions, else
    the newest released before the commit."""
    spec = python_requires(snap)
    candidates = sorted(suites.items(), key=lambda kv: _key(kv[1]))
    allowed = [(s, v) for s, v in candidates if _allowed(spec, v)] or candidates
    declared = declared_versions(snap)
    when = snap.date.date().isoformat()
    if declared:
        top = max(declared, key=_key)
        fitting = [(s, v) for s, v in allowed if _key(v) <= _key(top)]
        # A CI matrix tries the next interpreter before its release (flask 2022: "3.11-dev"); the
        # era's own is one released by then.
        out = [(s, v) for s, v in fitting if RELEASED.get(v, "0") <= when]
        suite, version = (out or fitting or allowed[:1])[-1]
        return suite, version, f"declares up to {top}" + (f", requires {spec}" if spec else "")
    released = [(s, v) for s, v in allowed if RELEASED.get(v, "0") <= when]
    suite, version = (released or allowed[:1])[-1]
    return suite, version, f"newest released before {when}" + (f", requires {spec}" if spec else "")


# ---- what to install ------------------------------------------------------------------------------


def extras(snap: Snapshot) -> list[str]:
    """The project's test extras (dev extras when there is no test extra)."""
    names = set(_get(_toml(snap), "project", "optional-dependencies"))
    setup_cfg = _ini(snap.text("setup.cfg"))
    if setup_cfg.has_section("options.extras_require"):
        names |= set(setup_cfg.options("options.extras_require"))
    # A dict literal (`"tests": [...]`) or an assignment (`EXTRAS_REQUIRE["tests"] = ...`, attrs).
    quoted = set(re.findall(r"['\"]([A-Za-z][\w-]*)['\"](?:\s*:|\]\s*=)", snap.text("setup.py")))
    declared = names | quoted
    names |= quoted & set(TEST_EXTRAS + DEV_EXTRAS)
    tests = [n for n in TEST_EXTRAS if n in names]
    chosen = tests or [n for n in DEV_EXTRAS if n in names][:1]
    # tox installs these for the suite (marshmallow 2019: `extras = tests,reco`, simplejson in reco),
    # and so does CI (python-lsp-server 2022: `pip install -e .[all,test]`, rope only in `all`),
    # or a nox session that runs pytest (`session.install(".[test]")`).
    ci = ci_extras(snap) + nox_installs(snap).extras
    more = tox_extras(snap) + [n for n in ci if n in declared]
    return chosen + [n for n in dict.fromkeys(more) if n not in chosen]


def ci_extras(snap: Snapshot) -> list[str]:
    """The project's own extras CI installs (`pip install -e .[all,test]`) in a file that runs
    the tests (pytest, tox, nox), a docs, lint or typing extra left out (dynaconf's release
    workflow installs `.[release]`: not the suite's)."""
    found: list[str] = []
    for text in _ci_texts(snap):
        if not re.search(r"\b(pytest|tox|nox)\b", text):
            continue
        for line in text.splitlines():
            if "install" not in line:
                continue
            for group in re.findall(r"(?:^|[\s'\"=])\.\/?\[([\w\s,.-]+)\]", line):
                for name in re.split(r"[\s,]+", group):
                    if name and _test_requirements(name) and name not in found:
                        found.append(name)
    return found


def tox_extras(snap: Snapshot) -> list[str]:
    """[testenv]'s extras; under a factor condition only the test envs' (attrs 2024:
    `tests: tests` / `mypy: tests-mypy`, the mypy env is no test run): a factor named like one,
    or the installing side of a pair the envlist runs the tests both ways with (pyjwt 2021:
    `py{36,37}-{crypto,nocrypto}`, `crypto: crypto`; without `cryptography` every test of the
    stage's files skipped)."""
    ini = _ini(snap.text("tox.ini"))
    raw = ini.get("testenv", "extras", fallback="")
    factors = _test_env_factors(ini.get("tox", "envlist", fallback=""))
    paired = {f for f in factors if f"no{f}" in factors}
    found = []
    for line in raw.splitlines():
        factor = _FACTOR.match(line.strip())
        if (
            factor
            and not re.search(r"test|py\d", factor.group(0))
            and not _factors(factor) <= paired
        ):
            continue
        rest = line.strip()[factor.end() :] if factor else line
        found += [n for n in re.split(r"[\s,]+", rest) if re.fullmatch(r"[A-Za-z][\w-]*", n)]
    return found


def _factors(condition: re.Match[str] | None) -> set[str]:
    """The factors a line's condition names (`py27-lowest:` → py27, lowest; none without one)."""
    return set(re.split(r"[-,:\s!]+", condition.group(0).lower())) - {""} if condition else set()


def _test_env_factors(envlist: str) -> set[str]:
    """The factors of tox envs that run on a Python version (`py39-crypto`: py39, crypto), with
    the envlist's braces expanded (`py{36,37}-{crypto,nocrypto}`)."""
    found: set[str] = set()
    for env in _expand(envlist):
        factors = env.lower().split("-")
        if any(re.fullmatch(r"(py|pypy)\d*(\.\d+)?", f) for f in factors):
            found.update(factors)
    return found


def _expand(envlist: str) -> list[str]:
    """tox's envlist as names: split at commas and line ends outside braces, braces expanded."""
    names, depth, word = [], 0, ""
    for ch in envlist + "\n":
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if ch in ",\n" and depth == 0:
            names.append(word.strip())
            word = ""
        else:
            word += ch
    expanded: list[str] = []
    for name in filter(None, names):
        group = re.search(r"\{([^{}]*)\}", name)
        if group is None:
            expanded.append(name)
            continue
        head, tail = name[: group.start()], name[group.end() :]
        for part in group.group(1).split(","):
            expanded += _expand(head + part.strip() + tail)
    return expanded


def groups(snap: Snapshot) -> list[str]:
    found = _get(_toml(snap), "dependency-groups")
    return [n for n in (*TEST_EXTRAS, *DEV_EXTRAS) if n in found][:2]


def requirement_files(snap: Snapshot) -> list[str]:
    """requirements files for tests or development (docs excluded), and the plain runtime one."""
    picked = []
    for path in sorted(snap.files):
        name = path.lower()
        if not re.search(r"requirements[^/]*\.txt$|^requirements/[^/]+\.txt$", name):
            continue
        if _test_requirements(path) and (
            path == "requirements.txt" or re.search(r"test|dev|ci", name)
        ):
            picked.append(path)
    return picked


def _test_requirements(path: str) -> bool:
    """Not the file of a docs, lint or typing job, nor of a CI variant (VCS heads, floor pins)."""
    name = path.lower()
    if "doc" in name or "lint" in name or "typing" in name or "mypy" in name:
        return False
    return not _variant_file(name)


def _variant_file(path: str) -> bool:
    """A requirements file of a CI variant rather than the era's own environment: floor pins
    (`tests-pallets-min.txt`) or development heads (`tests-pallets-dev.txt`, `devel`)."""
    words = set(re.split(r"[-_.]+", path.rsplit("/", 1)[-1].removesuffix(".txt")))
    if words & {"devel", "lowest", "min", "minimum", "oldest", "nightly", "upstream"}:
        return True
    return "dev" in words and bool(words & {"test", "tests", "testing"})


def tox_deps(snap: Snapshot, section: str = "testenv") -> list[str]:
    """The plain requirements of tox's [testenv] deps (substitutions and options left out)."""
    return read_tox(snap, section).kept


@dataclass
class ToxDeps:
    kept: list[str] = field(default_factory=list)
    files: list[str] = field(default_factory=list)  # its `-r` requirements files
    extras: list[str] = field(default_factory=list)  # of the project's own line (`.[doc]`)
    notes: list[str] = field(default_factory=list)  # the lines left out, and why


def read_tox(snap: Snapshot, section: str = "testenv") -> ToxDeps:
    """tox's deps of `section`: requirements, `-r` files, and every line left out with why.

    Factor conditions select between alternatives (`pytest27: pytest<2.8` / `pytest: pytest>=2.8`):
    one package is installed once, so an unconditional line wins, else the last factor's line
    (tox's newest variant comes last); installing every alternative asks for the impossible. A
    factor that tests a floor (`lowest:`, `click7: click<8`, `oldattrs: attrs==17.4.0`) or an
    optional integration (`twisted: twisted`) is another env than the test run's own."""
    raw = _ini(snap.text("tox.ini")).get(section, "deps", fallback="")
    found = ToxDeps()
    chosen: dict[str, tuple[bool, str]] = {}  # package → (unconditional, requirement)
    where = f"tox.ini [{section}]"
    for line in raw.splitlines():
        line = line.split("#", 1)[0].strip()
        factor = _FACTOR.match(line)
        factors = _factors(factor)
        rest = line[factor.end() :].strip() if factor else line
        if factors & _VARIANT_FACTORS or (rest and _names_its_package(factors, rest)):
            found.notes.append(f"{where}: `{line}` left out (a factor's env, not the test run's)")
            continue
        own = OWN_TREE.match(
            re.sub(r"^(-e|--editable)\s*=?\s*", "", rest).replace("{toxinidir}", ".")
        )
        if own:  # `.[doc]`: the project with these extras (tenacity 2021: tornado in `doc`)
            found.extras += [e.strip() for e in (own.group(1) or "").split(",") if e.strip()]
            continue
        nested = re.match(r"^(?:-r|--requirement)\s*=?\s*(?:\{toxinidir\}/)?(\S+)$", rest)
        if nested and not factor:
            found.files.append(posixpath.normpath(nested.group(1)))
            continue
        # URLs and VCS checkouts are never dated (and often unreachable): they are left out.
        if rest.startswith(("-", "{", ".")) or "{" in rest or "://" in rest:
            found.notes.append(f"{where}: `{line}` left out (not from the index)")
            continue
        if rest:
            name = _package(rest)
            if not (chosen.get(name, (False, ""))[0] and factor):
                chosen[name] = (not factor, rest)
    found.kept = [requirement for _, requirement in chosen.values()]
    return found


_VARIANT_FACTORS = {"lowest", "min", "minimum", "oldest", "devel"}
_VERSIONED_FACTOR = re.compile(r"([a-z][a-z_]*?)(\d+)")


def _names_its_package(factors: set[str], line: str) -> bool:
    """A factor that names the line's own package: with a version (`click7`, `django22`,
    `pytest27`) an env on another release than the era's default; with a word (`oldattrs`,
    `twisted`) an env that tests a floor or an optional integration. The test runner's own
    factor (`pytest: pytest>=2.8`) is the run's."""
    name = re.sub(r"[-_.]+", "", _package(line))
    for factor in factors:
        found = _VERSIONED_FACTOR.fullmatch(factor)
        if (
            found
            and found.group(1) not in {"py", "pypy", "python"}
            and name.startswith(found.group(1))
        ):
            return True
        if len(name) > 2 and name in factor and name not in RUNNER:
            return True
    return False


def tox_env_section(snap: Snapshot, version: str) -> str:
    """tox's own section for the chosen interpreter (`[testenv:py33]`, the nearest python 3 env
    not newer than it, else the oldest; "" when there is none): old projects list some test tools
    only there (marshmallow 2013: unittest2py3k under py33)."""
    envs = {}
    for section in _ini(snap.text("tox.ini")).sections():
        found = re.fullmatch(r"testenv:py3(\d{1,2})", section)
        if found:
            envs[int(found.group(1))] = section
    if not envs:
        return ""
    minor = int(version.split(".")[1])
    older = [m for m in envs if m <= minor]
    return envs[max(older) if older else min(envs)]


def tox_env_deps(snap: Snapshot, version: str) -> list[str]:
    section = tox_env_section(snap, version)
    return tox_deps(snap, section) if section else []


def tests_require(snap: Snapshot) -> list[str]:
    """setuptools' `tests_require` (setup.py literal or a list it names; setup.cfg [options])."""
    found = _ini(snap.text("setup.cfg")).get("options", "tests_require", fallback="")
    names = [line.strip() for line in found.replace(",", "\n").splitlines() if line.strip()]
    setup_py = snap.text("setup.py")
    value = re.search(r"tests_require\s*=\s*(\[[^\]]*\]|[A-Za-z_]\w*)", setup_py)
    if value and not value.group(1).startswith("["):  # a name: its list literal in setup.py
        value = re.search(rf"^{value.group(1)}\s*=\s*(\[[^\]]*\])", setup_py, re.M)
    if value:
        names += re.findall(r"['\"]([A-Za-z0-9][^'\"]*)['\"]", value.group(1))
    return names


def _ci_texts(snap: Snapshot) -> list[str]:
    return [
        text
        for path, text in sorted(snap.files.items())
        if path.startswith(".github/workflows/") or path == ".travis.yml"
    ]


def ci_requirement_files(snap: Snapshot) -> list[str]:
    """The test requirements files CI installs (`pip install -r requirements/tests.txt`)."""
    found: list[str] = []
    for text in _ci_texts(snap):
        for line in text.splitlines():
            if "install" not in line:
                continue
            for path in re.findall(r"(?:^|\s)(?:-r|--requirement)[\s=]*([^\s'\";&|]+)", line):
                path = posixpath.normpath(path)
                if path in snap.files and _test_requirements(path) and path not in found:
                    found.append(path)
    return found


def tox_is_the_run(snap: Snapshot) -> bool:
    """tox is how the suite runs when CI runs it, or when CI installs no requirements file."""
    texts = _ci_texts(snap)
    return any(re.search(r"\btox\b", t) for t in texts) or not ci_requirement_files(snap)


def nox_is_the_run(snap: Snapshot) -> bool:
    """nox is how the suite runs when CI runs it (strawberry 2023: `nox -t tests`)."""
    return any(re.search(r"\bnox\b", t) for t in _ci_texts(snap))


def constraint_set(snap: Snapshot, version: str, relax: bool) -> ConstraintSet:
    """Every test requirement the manifests name, one per package (constraints.py's rules), and
    what was left out. `relax`: the test runner's pins are dropped (see RUNNER)."""
    found = ConstraintSet()
    tox_rank = LISTED if tox_is_the_run(snap) else OTHER
    lines = [Line(r, "setup.py tests_require", OTHER) for r in tests_require(snap)]
    for section in ("testenv", tox_env_section(snap, version)):
        if section:
            tox = read_tox(snap, section)
            found.notes += tox.notes
            found.extras += [e for e in tox.extras if e not in found.extras]
            lines += [Line(r, f"tox.ini [{section}]", tox_rank) for r in tox.kept]
    lines += [Line(r, "pyproject.toml poetry", LISTED) for r in poetry_dev(snap)]
    lines += [Line(r, source, LISTED) for r, source in tool_dev_groups(snap)]
    nox = nox_installs(snap)
    nox_rank = LISTED if nox_is_the_run(snap) else OTHER
    lines += [Line(r, "noxfile.py", nox_rank) for r in nox.requirements]
    if nox.requirements:
        said = ", ".join(nox.requirements)
        found.notes.append(f"noxfile.py: {said} from its test sessions ({', '.join(nox.sessions)})")
    own = ci_requirement_files(snap)
    if tox_rank == LISTED:
        own += [f for f in read_tox(snap).files if f not in own]
    if nox_rank == LISTED:
        own += [f for f in nox.files if f in snap.files and f not in own]
    for path in requirement_files(snap):
        lines += read_file(snap, path, LISTED, found) if path not in own else []
    for path in own:
        lines += read_file(snap, path, OWN, found)
    lines += _compiled_lines(snap)
    if relax:
        lines = [replace(line, text=relaxed(line.text)) for line in lines]
    reconcile(lines, project_name(snap), marker_env(version), found)
    return found


def _compiled_lines(snap: Snapshot) -> list[Line]:
    """A compiled project's build requirements (the sandbox builds offline, without isolation)
    and, when it is not installed at build time, the dependencies its pyproject.toml states."""
    found = compiled(snap)
    if found is None:
        return []
    lines = [Line(r, "pyproject.toml [build-system]", OTHER) for r in found.requires]
    chosen = extras(snap)
    if static_dependencies(snap, chosen):
        project = _get(_toml(snap), "project")
        wanted = list(project.get("dependencies", []))
        for name in chosen:
            wanted += list(_get(project, "optional-dependencies").get(name, []))
        lines += [Line(str(r), "pyproject.toml [project]", OTHER) for r in wanted]
    return lines


def static_dependencies(snap: Snapshot, chosen: list[str]) -> bool:
    """Whether the project is compiled and pyproject.toml states its dependencies (and the chosen
    extras') itself: then they are installed without building the project."""
    project = _get(_toml(snap), "project")
    dynamic = set(project.get("dynamic", [])) if isinstance(project, dict) else set()
    if not project or "dependencies" in dynamic or compiled(snap) is None:
        return False
    return not (chosen and "optional-dependencies" in dynamic)


# The test runner and the packages it depends on at run time. A stage older than its interpreter's
# tooling gets pytest from that tooling's date (`TOOLS_FLOOR`); a pin of the repository's own time
# (`pytest==2.8.0`, marshmallow 2015; `iniconfig==1.0.0`, click 2020) would pull back a runner that
# does not run on this interpreter, so in such a stage those pins are dropped (the name stays).
RUNNER = ("pytest", "py", "pluggy", "iniconfig")
_RUNNER_PIN = re.compile(
    r"^\s*(" + "|".join(RUNNER) + r")\s*(\[[^\]]*\])?\s*[=<>~!][^;#]*", re.IGNORECASE
)


def relaxed(requirement: str) -> str:
    return _RUNNER_PIN.sub(lambda m: m.group(1) + (m.group(2) or "") + " ", requirement).strip()


def _package(requirement: str) -> str:
    found = re.match(r"[A-Za-z0-9][A-Za-z0-9._-]*", requirement)
    return re.sub(r"[-_.]+", "-", found.group(0)).lower() if found else requirement


def poetry_dev(snap: Snapshot) -> list[str]:
    """Poetry's dev dependencies and test groups as PEP 508 requirements, its own constraint
    syntax (`^3.0.5`, `~1.2`, tables with `python`, `extras`, `markers`, lists of them) read by
    poetry-core: a caret keeps the next major release out. Read as bare names, strawberry's
    `channels = "^3.0.5"` installed channels 4.0 in its 2023 eras, whose test helpers need
    daphne (every test module failed to import). A path, git or URL dependency stays a bare
    name, as before."""
    poetry = _get(_toml(snap), "tool", "poetry")
    tables = [_get(poetry, "dev-dependencies")]
    tables += [_get(poetry, "group", group, "dependencies") for group in (*TEST_EXTRAS, "dev")]
    found = []
    for table in tables:
        for name, spec in table.items() if isinstance(table, dict) else ():
            if name != "python":
                found += _poetry_requirements(name, spec)
    return found


def _poetry_requirements(name: str, spec: Any) -> list[str]:
    """One poetry dependency as PEP 508 requirements (one per entry of a list of constraints)."""
    found = []
    for one in spec if isinstance(spec, list) else [spec]:
        try:
            dependency = Factory.create_dependency(name, one)
        except (ValueError, TypeError, AttributeError, KeyError):
            found.append(name)
            continue
        if (
            dependency.is_vcs()
            or dependency.is_file()
            or dependency.is_directory()
            or dependency.is_url()
        ):
            found.append(name)
            continue
        try:
            found.append(str(Requirement(dependency.to_pep_508())))
        except InvalidRequirement:
            found.append(name)
    return found


def tool_dev_groups(snap: Snapshot) -> list[tuple[str, str]]:
    """(requirement, source) of the dev groups tools kept in pyproject.toml before PEP 735's
    `[dependency-groups]`: pdm's `[tool.pdm.dev-dependencies]` (its test groups, else `dev`;
    cattrs 2024 lists hypothesis only there, and its tox runs `pdm sync -G test`) and uv's
    `[tool.uv] dev-dependencies`. Both are PEP 508 lines; a lint or docs group is not the run's."""
    tool = _get(_toml(snap), "tool")
    pdm = _get(tool, "pdm", "dev-dependencies")
    names = [n for n in TEST_EXTRAS if n in pdm] or [n for n in DEV_EXTRAS if n in pdm][:1]
    found = [
        (r, f"pyproject.toml [tool.pdm.dev-dependencies] {n}")
        for n in names
        for r in (pdm[n] if isinstance(pdm[n], list) else [])
    ]
    uv = _get(tool, "uv", "dev-dependencies")
    found += [(r, "pyproject.toml [tool.uv] dev-dependencies") for r in uv or []]
    return [(r, source) for r, source in found if isinstance(r, str)]


# ---- how the project is imported and tested --------------------------------------------------------


def import_root(snap: Snapshot) -> str:
    src = any(re.match(r"^src/[^/]+(/__init__\.py|\.py)$", p) for p in snap.paths)
    return "/work/repo/src" if src else "/work/repo"


def version_file(snap: Snapshot) -> str:
    for path in ("pyproject.toml", "setup.py", "setup.cfg"):
        found = _VERSION_FILE.search(snap.text(path))
        if found and found.group(1).endswith(".py"):
            return found.group(1)
    return ""


def _has_testpaths(snap: Snapshot) -> bool:
    if _get(_toml(snap), "tool", "pytest", "ini_options").get("testpaths"):
        return True
    for path, section in (
        ("pytest.ini", "pytest"),
        ("tox.ini", "pytest"),
        ("setup.cfg", "tool:pytest"),
    ):
        if _ini(snap.text(path)).has_option(section, "testpaths"):
            return True
    return False


# The files pytest reads its configuration from, at the project's root.
PYTEST_CONFIGS = ("pyproject.toml", "pytest.ini", "tox.ini", "setup.cfg")


def python_files(snap: Snapshot) -> list[str]:
    """The globs pytest's `python_files` names test modules by, where the project sets them
    (`PYTEST_CONFIGS`; PyGithub's `tests/*.py`)."""
    found = _get(_toml(snap), "tool", "pytest", "ini_options").get("python_files")
    if not found:
        for path, section in (
            ("pytest.ini", "pytest"),
            ("tox.ini", "pytest"),
            ("setup.cfg", "tool:pytest"),
        ):
            parser = _ini(snap.text(path))
            if parser.has_option(section, "python_files"):
                found = parser.get(section, "python_files")
                break
    words = found.split() if isinstance(found, str) else found if isinstance(found, list) else []
    return [str(w) for w in words]


def test_command(snap: Snapshot) -> str:
    """pytest as the agent runs it; the suite's directory unless the pytest config names it. A git
    submodule's tree (numpy's vendored meson, with its own tests) is another project's: ignored;
    so is a nested project's when the suite is the whole tree."""
    ignored = "".join(f" --ignore={shlex.quote(p)}" for p, _ in declared(snap.text(".gitmodules")))
    if _has_testpaths(snap):
        return PYTEST + ignored
    dirs = {p.split("/", 1)[0] for p in snap.paths if "/" in p}
    where = next((d for d in TEST_DIRS if d in dirs), "")
    if not where:  # pytest walks the whole tree: other projects' tests too
        ignored += "".join(f" --ignore={shlex.quote(p)}" for p in nested_projects(snap))
    return f"{PYTEST}{ignored} {where}".strip()


def nested_projects(snap: Snapshot) -> list[str]:
    """Directories below the root with a packaging manifest of their own: another project, built
    by its own setup (bitarray 2023's examples/puff, a C extension its tests import), whose tests
    are not the suite's. Only those of a root that is a project itself; outermost first."""
    if not any(snap.text(m) for m in ("setup.py", "pyproject.toml", "setup.cfg")):
        return []
    found = sorted(
        posixpath.dirname(p)
        for p in snap.paths
        if "/" in p and posixpath.basename(p) in ("setup.py", "pyproject.toml")
    )
    outer: list[str] = []
    for path in found:
        if not any(path == o or path.startswith(o + "/") for o in outer):
            outer.append(path)
    return outer


def setup_command(snap: Snapshot) -> str:
    """A generated version module the package imports (setuptools-scm/hatch-vcs write it at build
    time, and it is never tracked): written per stage, as the agent, when it is missing; then a
    compiled project's extensions built in place from the agent's tree (python/compiled.py)."""
    build = BUILD_STEP if (found := compiled(snap)) is not None and found.builds_per_stage else ""
    if declared_points(snap):
        build = f"{WRITE_OWN_POINTS} && {build}" if build else WRITE_OWN_POINTS
    target = version_file(snap)
    if not target:
        return build
    version = snap.version
    parts = ", ".join(p for p in version.split(".") if p.isdigit())
    body = (
        f'__version__ = version = "{version}"\\n__version_tuple__ = version_tuple = ({parts},)\\n'
    )
    path = shlex.quote(target)
    written = f"[ -e {path} ] || printf '{body}' > {path}"
    return f"{written} && {build}" if build else written


def _build_notes(snap: Snapshot, config: ErasConfig) -> list[str]:
    """The compiled side and the submodules the build will lack, for the plan's notes."""
    found = compiled(snap)
    extra = config.build_args.get(project_name(snap), [])
    said = compiled_notes(found, extra) if found is not None else []
    return said + plan_notes(snap.text(".gitmodules"), config.git_mirrors)


# ---- the build ------------------------------------------------------------------------------------


def _later(a: str, b: str) -> str:
    return max(a, b)


def build_commands(
    snap: Snapshot,
    config: ErasConfig,
    cutoff: str,
    tools_cutoff: str,
    version: str,
    interpreter: str = "3.9",
    relax: bool = False,
) -> list[str]:
    """The root commands that make /opt/venv (uv is on PATH; UV_* point at the index and cache).
    `relax`: the stage is older than the interpreter's tooling, the runner's pins are dropped."""
    wanted = constraint_set(snap, interpreter, relax)
    # Test tools first, from when the interpreter was supported; the project's own requirements
    # keep them when they agree, and pin them back when they name a version.
    tools = list(config.test_packages)
    site = "--system-site-packages " if config.system_site_packages else ""
    packaged = any(p in snap.files for p in ("pyproject.toml", "setup.py", "setup.cfg"))
    chosen = extras(snap) + [e for e in wanted.extras if e not in extras(snap)]
    project = shlex.quote(f".[{','.join(chosen)}]" if chosen else ".")
    # A bare requirements.txt project has nothing to build; a compiled one whose dependencies
    # pyproject.toml states is not built here either (numpy: a full build the stage redoes anyway).
    packaged = packaged and not static_dependencies(snap, chosen)
    args = [project] if packaged else []
    commands = [f"uv venv -q {site}--python /usr/bin/python3 {VENV}"]
    for path, lines, flag in (
        (REQUIREMENTS, wanted.requirements, "-r"),
        (CONSTRAINTS, wanted.constraints, "-c"),
    ):
        if lines:
            commands.append(write_lines(path, lines))
            args.append(f"{flag} {path}")
    args += [f"--group {g}" for g in groups(snap)]
    if cutoff < SEEDED_UNTIL:
        args += config.seed_packages  # as of the build tools' date (below)
    commands += _egg_info_tags(snap)
    if tools:
        commands.append(f"uv pip install --exclude-newer {tools_cutoff} {' '.join(tools)}")
    # A setup.py that imports its build tools (Cython, numpy) with no [build-system] to say so
    # builds in the venv once they are there, not in uv's isolated environment of setuptools only.
    legacy = packaged and compiled(snap) is not None and not _get(_toml(snap), "build-system")
    if legacy and len(args) > 1:
        commands.append(_install(version, cutoff, args[1:]))
    if args:
        commands.append(_install(version, cutoff, args[:1] if legacy else args, legacy))
    found = compiled(snap)
    if found is not None:
        extra = config.build_args.get(project_name(snap), [])
        commands += compiled_commands(snap, found, PROJECT_SRC, version, extra)
    return commands + finish_commands(snap)


def _install(version: str, cutoff: str, args: list[str], in_venv: bool = False) -> str:
    # setuptools-scm and pbr read the version from git, which the exported tree lacks.
    return (
        f"cd {PROJECT_SRC} && SETUPTOOLS_SCM_PRETEND_VERSION={version} PBR_VERSION={version} "
        f"uv pip install {'--no-build-isolation ' if in_venv else ''}--exclude-newer {cutoff} "
        f"{_build_tools(max(cutoff, BUILD_TOOLS_FLOOR))}{' '.join(args)}"
    )


# A setup.py project without a [build-system] is built with uv's fallback `setuptools>=40.8.0`
# (2019): with the era's cutoff before that date nothing satisfies it and the build cannot even
# start. Old sdists need an old setuptools too (`Feature` went in 46.0, March 2020), and 3.9 needs
# one that no longer calls HTMLParser.unescape (fixed by 45): as of March 2020 fits all three
# (checked by hand: markupsafe 0.18 of 2013 builds on 3.9 then, not with 2019's or 2021's).
BUILD_TOOLS = ("setuptools", "wheel")
# Until Python 3.12 (October 2023) every virtualenv came with setuptools, and old suites import
# pkg_resources without declaring it (flask 2014: 207 of 211 tests failed without it); uv's venv has
# none, so an era before then gets it, as of the build tools' date.
SEEDED_UNTIL = "2023-10-02T00:00:00Z"
BUILD_TOOLS_FLOOR = "2020-03-01T00:00:00Z"


def _build_tools(tools_cutoff: str) -> str:
    return "".join(f"--exclude-newer-package {p}={tools_cutoff} " for p in BUILD_TOOLS)


# The era's reconciled test requirements (constraints.py), written by the build beside B_t's tree.
REQUIREMENTS = f"{PROJECT_SRC}/.prchain-requirements.txt"
CONSTRAINTS = f"{PROJECT_SRC}/.prchain-constraints.txt"


def write_lines(path: str, lines: list[str]) -> str:
    """The command that writes `lines` to `path` (read back by `written_lines`)."""
    return f"printf '%s\\n' {' '.join(shlex.quote(x) for x in lines)} > {path}"


def written_lines(command: str, path: str) -> list[str] | None:
    """The lines a `write_lines` command writes to `path`; None for any other command."""
    prefix, suffix = "printf '%s\\n' ", f" > {path}"
    if not (command.startswith(prefix) and command.endswith(suffix)):
        return None
    return shlex.split(command[len(prefix) : -len(suffix)])


def project_name(snap: Snapshot) -> str:
    """The distribution name of the project at the commit ("" when no manifest says it)."""
    name = _get(_toml(snap), "project").get("name") or _get(_toml(snap), "tool", "poetry").get(
        "name"
    )
    name = name or _ini(snap.text("setup.cfg")).get("metadata", "name", fallback="")
    if not name:
        found = re.search(r"\bname\s*=\s*['\"]([A-Za-z0-9._-]+)['\"]", snap.text("setup.py"))
        name = found.group(1) if found else ""
    return str(name)


def _egg_info_tags(snap: Snapshot) -> list[str]:
    """setup.cfg's `[egg_info] tag_date` appends today's date to the version (`0.10.dev0-20261122`,
    flask 2013), which uv rejects; the project is installed for its dependencies only, so the tags
    go from the build's copy."""
    egg_info = _ini(snap.text("setup.cfg"))
    if not any(
        egg_info.has_option("egg_info", o) for o in ("tag_build", "tag_date", "tag_svn_revision")
    ):
        return []
    where = shlex.quote(f"{PROJECT_SRC}/setup.cfg")
    return [f"sed -i -E '/^\\s*tag_(build|date|svn_revision)\\s*=/d' {where}"]


def finish_commands(snap: Snapshot) -> list[str]:
    """How every recipe ends, whoever wrote the steps before (the planner or the setup agent):
    the project's own files out of /opt/venv, /work/repo's import root on sys.path, wrappers."""
    ini = legacy_pytest_ini(snap)
    wrappers = _WRAPPERS
    if ini:
        # pytest >= 4 refuses a `[pytest]` section in setup.cfg (flask 2013–2017) and the stage's
        # files are not ours to change: its options go to an ini of the image that every pytest
        # run through the wrappers reads (-c skips the search that finds setup.cfg).
        wrappers = _WRAPPERS.replace("\\nexec", f'\\nexport PYTEST_ADDOPTS="{_LEGACY_OPTS}"\\nexec')
    return [
        _strip_project(project_name(snap)),
        f"echo {import_root(snap)} > $({VENV}/bin/python -c "
        "'import sysconfig; print(sysconfig.get_paths()[\"purelib\"])')/_prchain_repo.pth",
        *([f"printf %s {shlex.quote(ini)} > {LEGACY_INI}"] if ini else []),
        wrappers,
        *own_points_commands(snap),
    ]


# The script that writes a stage's own entry points and runs its console scripts (own_points.py).
OWN_POINTS_SCRIPT = "/usr/local/lib/prchain/own_points.py"
WRITE_OWN_POINTS = f"{VENV}/bin/python {OWN_POINTS_SCRIPT} --write"


def declared_points(snap: Snapshot) -> own_points.Points:
    """The entry points the project at `snap` declares ({} when no manifest names the project:
    there is no distribution to give them to)."""
    return own_points.declared(snap.text) if project_name(snap) else {}


def own_points_commands(snap: Snapshot) -> list[str]:
    """For a project that declares entry points: own_points.py in the image, and the project's
    .dist-info reading them from where each stage writes its tree's. None otherwise."""
    if not declared_points(snap):
        return []
    source = (Path(__file__).parent / "own_points.py").read_text()
    return [
        f"mkdir -p {posixpath.dirname(OWN_POINTS_SCRIPT)} && printf %s {shlex.quote(source)} "
        f"> {OWN_POINTS_SCRIPT} && chmod 644 {OWN_POINTS_SCRIPT}",
        f"cd / && {VENV}/bin/python -I {OWN_POINTS_SCRIPT} --install {SEALED_VERSION} "
        f"{shlex.quote(project_name(snap))}",
    ]


# Not under /opt/prchain: a repository image makes that directory root-only (it holds the mirror).
LEGACY_INI = "/etc/prchain-pytest.ini"
_LEGACY_OPTS = f"-c {LEGACY_INI} --rootdir /work/repo ${{PYTEST_ADDOPTS:-}}"


def legacy_pytest_ini(snap: Snapshot) -> str:
    """setup.cfg's `[pytest]` section as a pytest.ini, when it is the only pytest configuration."""
    setup_cfg = _ini(snap.text("setup.cfg"))
    if not setup_cfg.has_section("pytest") or setup_cfg.has_section("tool:pytest"):
        return ""
    if "pytest.ini" in snap.files or _ini(snap.text("tox.ini")).has_section("pytest"):
        return ""
    lines = [
        f"{k} = {v.strip().replace(chr(10), chr(10) + '    ')}"
        for k, v in setup_cfg.items("pytest")
    ]
    return "\n".join(["[pytest]", *lines]) + "\n"


def _strip_project(name: str) -> str:
    """The project was installed only to bring its dependencies: everything it installed goes
    again, so the agent's tree is what imports and nothing of the build's commit (the era's latest
    stage base, later than most stages it serves) is readable in the image (issue 52): its modules
    and their compiled caches, its console scripts, and its .dist-info down to a METADATA of its
    name and the version `SEALED_VERSION` (importlib.metadata.version() keeps answering; the
    build's own version is the later commit's, a setuptools_scm one even names its hash; the long
    description, README and changelog, RECORD and entry points are gone). It is found by the direct_url record pointing at
    the build's copy of B_t, or by its name: a copy from the index (a test tool that needs a newer
    one, pulled in by a later step or the setup agent) goes the same way, since site-packages
    comes before the .pth line on sys.path and would shadow /work/repo."""
    own = re.sub(r"[-_.]+", "-", name).lower()
    return _STRIP_PROJECT.replace("OWN_NAME", own).replace("SEALED_VERSION", SEALED_VERSION)


# The version the image states for the project: no commit's, so no later one's (PEP 440: a release
# below every real one, its local label saying why).
SEALED_VERSION = "0+sealed"


_STRIP_PROJECT = (
    f"{VENV}/bin/python -I -c 'import importlib.metadata as m, json, os, re, shutil\n"
    "def gone(p, dirs):\n"
    "    d = os.path.dirname(p)\n"
    "    stem = os.path.splitext(os.path.basename(p))[0]\n"
    '    cache = os.path.join(d, "__pycache__")\n'
    "    for c in (os.listdir(cache) if os.path.isdir(cache) else []):\n"
    '        if c.split(".")[0] == stem: os.unlink(os.path.join(cache, c))\n'
    "    if os.path.isfile(p) or os.path.islink(p): os.unlink(p)\n"
    "    while len(d) > 1: dirs.update((d, cache)); d, cache = os.path.dirname(d), d\n"
    "def prune(dirs):\n"
    "    for e in sorted(dirs, key=len, reverse=True):\n"
    "        if os.path.isdir(e) and not os.listdir(e): os.rmdir(e)\n"
    "for d in list(m.distributions()):\n"
    '    u = d.read_text("direct_url.json")\n'
    f'    mine = bool(u) and "{PROJECT_SRC}" in json.loads(u).get("url", "")\n'
    '    named = re.sub(r"[-_.]+", "-", d.metadata["Name"] or "").lower() == "OWN_NAME"\n'
    '    name, info = d.metadata["Name"], str(d._path)\n'
    f'    if not (mine or named) or not info.startswith("{VENV}/"): continue\n'
    "    dirs = set()\n"
    "    for f in d.files or []:\n"
    '        if ".dist-info" not in str(f): gone(os.path.normpath(str(f.locate())), dirs)\n'
    "    prune(dirs)\n"
    "    shutil.rmtree(info)\n"
    "    os.makedirs(info)\n"
    '    with open(os.path.join(info, "METADATA"), "w") as out:\n'
    '        out.write(f"Metadata-Version: 2.1\\nName: {name}\\nVersion: SEALED_VERSION\\n")\n'
    '    print("kept only the name of", name)\''
)
# Every program of the venv, the project's own console scripts among them (python-dotenv 2016's
# tests run `dotenv`: 2 of 6 failed without it), as an activated venv would put them on PATH.
_WRAPPERS = (
    f"for p in {VENV}/bin/*; do n=${{p##*/}}; case $n in activate*|deactivate*|*.*sh|*.fish"
    "|*.ps1|*.bat|*.nu) continue;; esac; if [ -f $p ] && [ -x $p ]; then "
    f"printf '#!/bin/sh\\nexec {VENV}/bin/%s \"$@\"\\n' $n "
    "> /usr/local/bin/$n && chmod 755 /usr/local/bin/$n; fi; done"
)


# Kept as it was: the sealed launcher imports pytest from the image with the tree off sys.path,
# and crossing.py keeps out modules named like the runner or the standard library.
SEALED = SealedPlaces()


@ECOSYSTEMS.register("python")
class Python:
    name = "python"
    report: TestReport = Pytest()
    sealed = SEALED

    def owns(self, path: str) -> bool:
        return path.endswith(".py")

    def detects(self, snap: Snapshot) -> bool:
        return any(p in snap.files for p in ("pyproject.toml", "setup.py", "setup.cfg")) or any(
            p.endswith(".py") for p in snap.paths
        )

    def era_facts(self, snap: Snapshot) -> dict[str, object]:
        """The manifests minus what changes without changing the environment: version lines, CI
        files (only their interpreter matrix counts), tool sections of pyproject.toml."""
        pyproject = _toml(snap)
        kept = {k: pyproject.get(k) for k in ("project", "build-system", "dependency-groups")}
        if isinstance(kept["project"], dict):
            kept["project"] = {k: v for k, v in kept["project"].items() if k != "version"}
        tool = pyproject.get("tool", {}) if isinstance(pyproject.get("tool"), dict) else {}
        tools = {k: tool[k] for k in ("poetry", "pytest", "setuptools_scm") if k in tool}
        # pdm's and uv's dev groups (only those: their other settings do not change the era).
        tools |= {f"{k}-dev": v for k in ("pdm", "uv") if (v := _get(tool, k, "dev-dependencies"))}
        kept["tool"] = tools
        others = {
            path: _without_versions(text)
            for path, text in snap.files.items()
            if _ERA_FILE.match(path)
            and (_ROOT_FILE.match(path) or _test_requirements(path))  # not docs' below the root
            and path != "pyproject.toml"
            and not path.startswith(".github/")
            and path != ".travis.yml"
        }
        return {
            "pyproject": kept,
            "files": others,
            "declared": sorted(declared_versions(snap)),
            "import_root": import_root(snap),
            "test_command": test_command(snap),
        }

    def plans(self, snap: Snapshot, config: ErasConfig) -> list[Plan]:
        suite, version, why = choose_interpreter(snap, config.suites)
        found = compiled(snap)
        cutoff = snap.date.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        floor = TOOLS_FLOOR.get(version, "1970-01-01") + "T00:00:00Z"
        dated = Plan(
            "python",
            suite,
            version,
            cutoff,
            build_commands(
                snap, config, cutoff, _later(cutoff, floor), snap.version, version, floor > cutoff
            ),
            test_command(snap),
            setup_command(snap),
            [
                f"python {version} on {suite}: {why}",
                f"packages uploaded before {cutoff[:10]}",
                *constraint_set(snap, version, floor > cutoff).notes,
                *_build_notes(snap, config),
            ],
            caveat=python2_only(snap),
            toolchain=toolchain_commands(found) if found else [],
        )
        if floor <= cutoff:
            return [dated]
        # Older than the interpreter: everything from the interpreter's first months instead.
        lifted = Plan(
            "python",
            suite,
            version,
            floor,
            build_commands(snap, config, floor, floor, snap.version, version, relax=True),
            dated.test_command,
            dated.setup_command,
            [
                dated.notes[0],
                f"packages uploaded before {floor[:10]} (python {version}'s tooling)",
                *constraint_set(snap, version, True).notes,
                *_build_notes(snap, config),
            ],
            variant="interpreter-floor",
            caveat=dated.caveat,
            toolchain=dated.toolchain,
        )
        return [dated, lifted]

    def revise(
        self, snap: Snapshot, config: ErasConfig, plan: Plan, log: str, ran: bool
    ) -> Plan | None:
        """A dependency's sdist of the era that does not build here: its first wheel instead (its
        own pin, if any, becomes a floor); a package the index no longer serves for the era: its
        nearest installable release, or dropped when only a type stub or lint tool
        (python/fallbacks.py); a project whose own
        build fails here: its requirements from the manifests instead (python/unbuilt.py). Old
        code that asks an import loader `is_package()` (flask ≤ 1.0's get_root_path) fails under
        pytest's assertion-rewriting hook, which lacks it: the suite again with `--assert=plain`."""
        from prchain.environments.eras.python.fallbacks import unavailable, unpinned
        from prchain.environments.eras.wheels import failed_package, lifted

        if not ran:
            from prchain.environments.eras.python.unbuilt import without_project

            lift = lifted(plan, log, config.index_url)
            if lift is not None and (failed := failed_package(log)) is not None:
                return unpinned(lift, *failed, (REQUIREMENTS, CONSTRAINTS))
            return unavailable(plan, log, config.index_url, REQUIREMENTS) or without_project(
                snap, plan, log
            )
        if "no tests ran" in log and ANY_TEST_FILE not in plan.test_command:
            return _any_test_file(plan)
        if "AssertionRewritingHook" not in log or "--assert=plain" in plan.test_command:
            return None
        return replace(
            plan,
            test_command=plan.test_command.replace(PYTEST, f"{PYTEST} --assert=plain", 1),
            notes=[
                *plan.notes,
                "pytest without assertion rewriting (its import hook breaks the code)",
            ],
            variant=f"{plan.variant}+assert-plain",
        )


# Suites of the nose and unittest years name their modules `api_tests.py` (arrow 2016), `tests.py`
# (markupsafe 2017, ultrajson 2016): pytest's default `test_*.py` collects none of them. One word,
# so `tests verify` keeps it when it narrows the command to the stage's files.
ANY_TEST_FILE = "--override-ini=python_files=*test*.py"


def _any_test_file(plan: Plan) -> Plan:
    """The suite again, on the same image, collecting every module whose name says test."""
    return replace(
        plan,
        test_command=plan.test_command.replace(PYTEST, f"{PYTEST} {ANY_TEST_FILE}", 1),
        notes=[*plan.notes, "pytest collects every *test*.py (none is named test_*.py)"],
        variant=f"{plan.variant}+any-test-file",
    )


def _without_versions(text: str) -> str:
    return "\n".join(
        line for line in text.splitlines() if not re.match(r"\s*(__)?version(__)?\s*[=:]", line)
    )
