"""What today's index no longer serves of an era: each package taken at its nearest installable
release (or dropped when a type stub or lint tool), each deviation said; a resolver failure names
the package and its cause in one line.

The plan's own commands run with uv against a local index (real HTTP, PEP 691 JSON with upload
times and yanked files), in a virtualenv made here instead of the image's /opt/venv."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from uv import find_uv_bin

from prchain.dev.repos import git
from prchain.environments.eras.build import build_failure
from prchain.environments.eras.config import ErasConfig
from prchain.environments.eras.ecosystems import Plan
from prchain.environments.eras.era import Era, era_of
from prchain.environments.eras.python import PROJECT_SRC, REQUIREMENTS, VENV, written_lines
from prchain.environments.eras.wheels import resolver_failure
from tests.support.fake_index import FakeIndex, Release, make_wheel

CUTOFF = "2020-01-01T10:00:00Z"
CONFIG = {"suites": {"bookworm": "3.11"}, "test_packages": [], "seed_packages": []}


def _releases(folder: Path) -> list[Release]:
    def wheel(name: str, version: str, requires: tuple[str, ...] = ()) -> Path:
        module = {f"{name.replace('-', '_')}/__init__.py": f"V = {version!r}\n"}
        return make_wheel(folder, name, version, module, requires=requires)

    return [
        # Every release yanked: a type stub (dropped) and a library (its yanked pin installs).
        Release("types-pkg-resources", "0.1.3", "2019-01-01T00:00:00Z",
                wheel("types-pkg-resources", "0.1.3"), yanked="obsolete"),
        Release("oldlib", "1.0", "2018-01-01T00:00:00Z", wheel("oldlib", "1.0"), yanked="bad"),
        # The pinned release was deleted by its author: 1.1 is the nearest below it.
        Release("gone", "1.1", "2018-06-01T00:00:00Z", wheel("gone", "1.1")),
        Release("gone", "1.3", "2021-06-01T00:00:00Z", wheel("gone", "1.3")),
        # Uploaded again after the era (old files removed): its first release after the cutoff.
        Release("late", "2.0", "2022-03-01T12:00:00.5Z", wheel("late", "2.0")),
        Release("late", "2.1", "2023-03-01T00:00:00Z", wheel("late", "2.1")),
        # No upload time at all: uv's cutoff never keeps it.
        Release("undated", "0.9", "", wheel("undated", "0.9")),
        # A dependency of a dependency, only yanked releases.
        Release("app", "1.0", "2019-06-01T00:00:00Z", wheel("app", "1.0", ("dep",))),
        Release("dep", "3.0", "2019-05-01T00:00:00Z", wheel("dep", "3.0"), yanked="oops"),
    ]  # fmt: skip


def _era(repo: Path, requirements: str) -> Era:
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "tests").mkdir()
    (repo / "tests/test_a.py").write_text("def test_a():\n    pass\n")
    (repo / "requirements-test.txt").write_text(requirements)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "start", date=CUTOFF)
    return era_of(repo, git(repo, "rev-parse", "HEAD"))


def _build(plan: Plan, repo: Path, venv: Path, index: str) -> tuple[int, str]:
    """The plan's commands up to the install, as the image's build runs them (bash, set -e)."""
    steps = [c for c in plan.commands if c.startswith(("uv ", "printf", "cd "))]
    script = "set -euo pipefail\nset -x\n" + "\n".join(steps)
    for old, new in ((PROJECT_SRC, str(repo)), (VENV, str(venv))):
        script = script.replace(old, new)
    env = {
        **os.environ,
        "PATH": f"{Path(find_uv_bin()).parent}:{os.environ['PATH']}",
        "UV_PYTHON": f"{venv}/bin/python",
        "UV_INDEX_URL": index,
        "UV_NO_CACHE": "1",
        "UV_VENV_CLEAR": "1",  # each attempt is a fresh build
    }
    done = subprocess.run(["bash", "-c", script], env=env, capture_output=True, text=True)
    return done.returncode, done.stdout + done.stderr


def test_each_unserved_package_is_revised_until_the_era_resolves(tmp_path: Path) -> None:
    reqs = "types-pkg_resources\noldlib\ngone==1.2\nlate>=2\nundated\napp\n"
    era = _era(tmp_path / "repo", reqs)
    assert era.ecosystem is not None
    config = ErasConfig(**CONFIG)
    plan = era.ecosystem.plans(era.snap, config)[0]  # dated; the second lifts to 3.11's tooling
    (tmp_path / "files").mkdir()
    with FakeIndex(_releases(tmp_path / "files")) as index:
        config = ErasConfig(**CONFIG, index_url=index.url)
        variants, reasons = [], []
        for _ in range(8):
            code, log = _build(plan, tmp_path / "repo", tmp_path / "venv", index.url)
            if code == 0:
                break
            reasons.append(build_failure(log, code))
            revised = era.ecosystem.revise(era.snap, config, plan, log, False)
            assert revised is not None, log
            plan = revised
            variants.append(plan.variant)
    assert code == 0, log
    # One revision per package, in the order uv meets them.
    revised = [v.rsplit("+", 1)[1].removesuffix("-nearest") for v in variants]
    assert sorted(revised) == ["dep", "gone", "late", "oldlib", "types-pkg-resources", "undated"]
    assert plan.variant == "dated+" + "+".join(f"{n}-nearest" for n in revised)
    said = dict(zip(revised, reasons, strict=True))
    assert said["types-pkg-resources"].startswith(
        "no solution for `types-pkg-resources`: types-pkg-resources==0.1.3 was yanked"
    )
    assert said["gone"] == (
        "no solution for `gone`: there is no version of gone==1.2 and you require gone==1.2"
    )
    notes = dict(zip(revised, plan.notes[-6:], strict=True))
    assert "dropped (a type stub or lint tool" in notes["types-pkg-resources"]
    assert "release, 1.0 (2018-01-01, yanked; deviates from the era)" in notes["oldlib"]
    assert "release, 1.1 (2018-06-01;" in notes["gone"]
    assert "release, 2.0 (2022-03-01;" in notes["late"]
    assert "release, 0.9 (no upload time;" in notes["undated"]
    assert "release, 3.0 (2019-05-01, yanked;" in notes["dep"]
    assert all(note.startswith(f"{name}: ") for name, note in notes.items())
    lines = next(x for x in (written_lines(c, REQUIREMENTS) for c in plan.commands) if x)
    assert sorted(lines) == [
        "app",
        "dep==3.0",
        "gone==1.1",
        "late==2.0",
        "oldlib==1.0",
        "undated==0.9",
    ]
    install = next(c for c in plan.commands if c.startswith("cd "))
    assert "--exclude-newer-package late=2022-03-01T12:00:01Z" in install
    assert "--exclude-newer-package undated=false" in install
    assert "late==2.0" in log and "late==2.1" not in log


def test_a_package_revised_once_or_unknown_to_the_index_is_not_revised_again(
    tmp_path: Path,
) -> None:
    era = _era(tmp_path / "repo", "nosuch==1.0\ngone>=2\n")
    assert era.ecosystem is not None
    (tmp_path / "files").mkdir()
    with FakeIndex(_releases(tmp_path / "files")) as index:
        config = ErasConfig(**CONFIG, index_url=index.url)
        plan = era.ecosystem.plans(era.snap, config)[0]  # dated; the second lifts to 3.11's tooling
        code, log = _build(plan, tmp_path / "repo", tmp_path / "venv", index.url)
        assert code != 0 and "nosuch" in build_failure(log, code)
        assert era.ecosystem.revise(era.snap, config, plan, log, False) is None
        # A range no release ever met (`gone>=2` of a 1.x package) is no deleted release.
        alone = _era(tmp_path / "other", "gone>=2\n")
        assert alone.ecosystem is not None
        plan2 = alone.ecosystem.plans(alone.snap, config)[0]
        code, log2 = _build(plan2, tmp_path / "other", tmp_path / "venv", index.url)
        reason = build_failure(log2, code)
        assert (
            code != 0
            and reason
            == "no solution for `gone`: only gone==1.1 is available and you require gone>=2"
        )
        assert alone.ecosystem.revise(alone.snap, config, plan2, log2, False) is None
        again = Plan(**{**plan.__dict__, "variant": "dated+nosuch-nearest"})
        assert era.ecosystem.revise(era.snap, config, again, log, False) is None


@pytest.mark.parametrize(
    ("log", "expected"),
    [
        (
            "error: No solution found when resolving dependencies\n  cause: Because you require "
            "cov<5 and cov>=7, we can conclude that your requirements are unsatisfiable.\n",
            ("cov", "you require cov<5 and cov>=7"),
        ),
        (
            "  × No solution found when resolving dependencies:\n  ╰─▶ Because only gone<=1.1 is "
            "available and you require\n      gone>=1.2, we can conclude that …\n\n  hint: x",
            ("gone", "only gone<=1.1 is available and you require gone>=1.2"),
        ),
        (  # encode/httpx 2020: its requirements.txt pins black, whose sdist's metadata disagrees
            "error: No solution found when resolving dependencies\n  cause: Because black==20.8b1 has "
            "inconsistent metadata and you require black==20.8b1, we can conclude that …\n",
            ("black", "black==20.8b1 has inconsistent metadata and you require black==20.8b1"),
        ),
        (  # sqlfluff 2021 (held out): every release of a type stub yanked, said as a range
            "error: No solution found when resolving dependencies\n  cause: Because "
            "types-pkg-resources<=0.1.2 was yanked (reason: Use types-setuptools instead) and only "
            "the following versions of types-pkg-resources are available:\n",
            (
                "types-pkg-resources",
                "types-pkg-resources<=0.1.2 was yanked (reason: Use types-setuptools instead) and "
                "only the following versions of types-pkg-resources are available:",
            ),
        ),
        ("error: Failed to build `cext==1.0`", None),
    ],
)
def test_the_resolver_failure_names_the_package_and_its_cause(
    log: str, expected: tuple[str, str] | None
) -> None:
    assert resolver_failure(log) == expected


def test_a_package_whose_old_files_the_resolver_refuses_is_taken_at_its_first_usable_one(
    tmp_path: Path,
) -> None:
    """structlog 2016: tox installs twisted, whose sdists of the era are `.tar.bz2` (not PEP 625:
    uv refuses them all); its first wheel for this interpreter after the cutoff (not a Windows
    one, not a release candidate) needs a newer attrs than the era had, which is lifted in turn
    to the first release that satisfies it."""
    from tests.support.fake_index import make_failing_sdist

    files = tmp_path / "files"
    files.mkdir()
    old = make_failing_sdist(files, "twisted", "16.0.0", "never built")
    refused = old.rename(files / "Twisted-16.0.0.tar.bz2")
    wheel = make_wheel(files, "twisted", "21.2.0", {"twisted/__init__.py": ""},
                       requires=("attrs>=19.2.0",))  # fmt: skip
    attrs = [make_wheel(files, "attrs", v, {"attrs/__init__.py": ""}) for v in ("16.0", "19.2.0")]
    windows = make_wheel(files, "twisted", "16.1.0", {}, tag="cp311-cp311-win_amd64")
    candidate = make_wheel(files, "twisted", "21.2.0rc1", {"twisted/__init__.py": ""})
    releases = [
        Release("twisted", "16.0.0", "2016-01-01T00:00:00Z", refused),
        # After the cutoff but not installable here: a Windows wheel; a release candidate.
        Release("twisted", "16.1.0", "2020-03-01T00:00:00Z", windows),
        Release("twisted", "21.2.0rc1", "2021-02-15T00:00:00Z", candidate),
        Release("twisted", "21.2.0", "2021-02-28T00:00:00Z", wheel),
        Release("attrs", "16.0", "2016-05-01T00:00:00Z", attrs[0]),
        Release("attrs", "19.2.0", "2020-06-01T00:00:00Z", attrs[1]),
    ]
    era = _era(tmp_path / "repo", "twisted\n")
    assert era.ecosystem is not None
    with FakeIndex(releases) as index:
        config = ErasConfig(**CONFIG, index_url=index.url)
        plan = era.ecosystem.plans(era.snap, config)[0]
        reasons = []
        for _ in range(4):
            code, log = _build(plan, tmp_path / "repo", tmp_path / "venv", index.url)
            if code == 0:
                break
            reasons.append(build_failure(log, code))
            revised = era.ecosystem.revise(era.snap, config, plan, log, False)
            assert revised is not None, log
            plan = revised
    assert code == 0, log
    assert reasons[0].startswith("no solution for `twisted`: twisted==16.0.0 has a non-PEP 625")
    assert plan.variant == "dated+twisted-nearest+attrs-nearest"
    assert "release, 21.2.0 (2021-02-28;" in plan.notes[-2]
    assert "release, 19.2.0 (2020-06-01;" in plan.notes[-1]


# A build backend in the tree that fails as setuptools does on prettytable 2019's setup.py
# (`python_requires` missing a comma: no setuptools accepts it).
BROKEN_BACKEND = """def _fail(*args, **kwargs):
    raise SystemExit("error in pkg setup command: 'python_requires' must be a string containing "
                     "valid version specifiers; Invalid specifier: '!=3.3.* !=3.4.*'")


get_requires_for_build_wheel = prepare_metadata_for_build_wheel = build_wheel = _fail
get_requires_for_build_editable = prepare_metadata_for_build_editable = build_editable = _fail
"""
BROKEN_PYPROJECT = """[build-system]
requires = []
build-backend = "broken"
backend-path = ["."]

[project]
name = "pkg"
dynamic = ["version", "dependencies", "optional-dependencies"]
"""
BROKEN_SETUP_CFG = (
    "[options]\ninstall_requires =\n    app\n\n[options.extras_require]\ntests =\n    gone<2\n"
)


def test_a_project_whose_own_build_fails_gets_its_requirements_instead(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for rel, text in {
        "pyproject.toml": BROKEN_PYPROJECT,
        "broken.py": BROKEN_BACKEND,
        "setup.cfg": BROKEN_SETUP_CFG,
        "pkg/__init__.py": "",
        "tests/test_a.py": "def test_a():\n    pass\n",
    }.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)  # fmt: skip
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "start", date=CUTOFF)
    era = era_of(repo, git(repo, "rev-parse", "HEAD"))
    assert era.ecosystem is not None
    (tmp_path / "files").mkdir()
    with FakeIndex(_releases(tmp_path / "files")) as index:
        config = ErasConfig(**CONFIG, index_url=index.url)
        plan = era.ecosystem.plans(era.snap, config)[0]
        code, log = _build(plan, repo, tmp_path / "venv", index.url)
        assert code != 0 and "python_requires" in log
        revised = era.ecosystem.revise(era.snap, config, plan, log, False)
        assert revised is not None, log
        assert revised.variant == "dated+without-project"
        note = revised.notes[-1]
        assert "the project's own build fails here" in note and "python_requires" in note
        assert "2 requirements" in note
        plan = revised
        for _ in range(3):  # then dep, needed by app, as the other fallbacks take it
            code, log = _build(plan, repo, tmp_path / "venv", index.url)
            if code == 0:
                break
            again = era.ecosystem.revise(era.snap, config, plan, log, False)
            assert again is not None, log
            plan = again
        assert code == 0, log
        # Its own requirement (app) and its test extra's (gone<2), never the project itself.
        done = subprocess.run([tmp_path / "venv/bin/python", "-c", "import app, gone; print(gone.V)"],
                              capture_output=True, text=True)  # fmt: skip
        assert done.stdout.strip() == "1.1", done.stderr
        assert not list((tmp_path / "venv").glob("lib/*/site-packages/pkg*"))
        # Revised once: the same failure again is not revised again.
        assert (
            era.ecosystem.revise(
                era.snap, config, revised, log + "\nbuild backend returned an error", False
            )
            is None
        )


def test_a_pinned_dependency_whose_sdist_does_not_build_is_lifted_past_its_pin(
    tmp_path: Path,
) -> None:
    """msgpack 2018's requirements.txt pins `Cython==0.27.3`, whose sdist does not build on 3.9:
    the lift to its first wheel for the interpreter must not be refused by the pin itself (uv:
    "cython==0.27.3 has no usable wheels and you require cython==0.27.3"); the pin becomes a floor,
    said in the notes, and the era resolves to that first wheel."""
    from tests.support.fake_index import make_failing_sdist

    files = tmp_path / "files"
    files.mkdir()
    module = {"cext/__init__.py": ""}
    releases = [
        Release("cext", "1.0", "2019-06-01T00:00:00Z",
                make_failing_sdist(files, "cext", "1.0", "gcc: error: command failed")),
        Release("cext", "1.5", "2020-06-01T00:00:00Z", make_wheel(files, "cext", "1.5", module)),
        Release("cext", "2.0", "2023-06-01T00:00:00Z", make_wheel(files, "cext", "2.0", module)),
    ]  # fmt: skip
    era = _era(tmp_path / "repo", "cext==1.0\n")
    assert era.ecosystem is not None
    with FakeIndex(releases) as index:
        config = ErasConfig(**CONFIG, index_url=index.url)
        plan = era.ecosystem.plans(era.snap, config)[0]
        for _ in range(3):
            code, log = _build(plan, tmp_path / "repo", tmp_path / "venv", index.url)
            if code == 0:
                break
            revised = era.ecosystem.revise(era.snap, config, plan, log, False)
            assert revised is not None, log
            plan = revised
    assert code == 0, log
    assert plan.variant == "dated+cext-wheel"
    assert "cext==1.5" in log and "cext==2.0" not in log
    assert plan.notes[-1] == "cext==1.0 gives way to the lift: cext>=1.0"
    assert "cext>=1.0" in next(
        x for x in (written_lines(c, REQUIREMENTS) for c in plan.commands) if x
    )
