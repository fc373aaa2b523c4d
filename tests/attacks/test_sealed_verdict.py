"""Issue 52, class 2: the agent's non-test code configured the hidden-test run.

Each attack is an agent that implemented nothing and plants, in non-test places, something that
pytest or the interpreter reads as configuration or as a plugin, or that rewrites the report after
the run. On the code before the sealed room every one of them made T(p̂) pass."""

from __future__ import annotations

import subprocess
import sys
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from prchain.chains.reading.patches import split_patch
from prchain.dev.repos import ChainRepo
from prchain.verdicts.crossing import why_not
from prchain.verdicts.oracle import run_command_clean, run_tests
from prchain.verdicts.sandbox import is_test_side
from tests.attacks.test_sandbox_clean_room import F2P, FIX, FORCE_PASS, REPO, hidden_tests

pytestmark = pytest.mark.docker

# A distribution in the repository root whose entry point pytest autoloads from sys.path.
DIST_INFO = {
    "geo_force-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: geo-force\nVersion: 1.0\n",
    "geo_force-1.0.dist-info/entry_points.txt": "[pytest11]\nforce = geo.force\n",
    "geo/force.py": FORCE_PASS,
}
# `python -m pytest` runs the first `pytest` module on sys.path: the working directory's.
SHADOW = """import os, sys
_here = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _here]
import pytest as _real
sys.path.append(_here)
import geo.force
if __name__ == "__main__":
    sys.exit(_real.main(plugins=[geo.force]))
"""
# Package code that rewrites the junit report (its path is in PYTEST_ADDOPTS) once pytest is done.
CASES = "".join(
    f'<testcase classname="tests.test_shapes" name="{n}" file="tests/test_shapes.py"/>'
    for n in ("test_circle_area[unit - r]", "test_circle_area[r=2]", "test_square_area")
)
ATEXIT = f"""import atexit, os, re

def _forge():
    found = re.search(r"--junitxml[= ](\\S+)", os.environ.get("PYTEST_ADDOPTS", ""))
    if not found:
        return
    xml = '<?xml version="1.0"?><testsuites><testsuite name="pytest">{CASES}</testsuite></testsuites>'
    try:
        fd = os.open(found.group(1), os.O_WRONLY | os.O_NONBLOCK | os.O_TRUNC | os.O_CREAT, 0o644)
        os.write(fd, xml.encode())
        os.close(fd)
    except OSError:
        pass

atexit.register(_forge)
"""


def plant(env, files: dict[str, str]) -> None:
    for path, text in files.items():
        env.write_file(path, text)


@pytest.mark.parametrize(
    "files",
    [
        pytest.param(DIST_INFO, id="dist-info-entry-point"),
        pytest.param({"pytest.py": SHADOW, "geo/force.py": FORCE_PASS}, id="pytest-py-shadow"),
        pytest.param({"geo/__init__.py": ATEXIT}, id="atexit-report-rewrite"),
    ],
)
def test_the_agents_code_cannot_configure_the_hidden_test_run(stage_one, geo, files) -> None:
    plant(stage_one, files)
    verdict = run_tests(stage_one, hidden_tests(geo), timeout=120)
    assert not verdict.passed and verdict.failing == F2P, verdict.outcomes
    stage_one.write_file("geo/shapes.py", FIX)  # the same tree with a real fix still passes
    assert run_tests(stage_one, hidden_tests(geo), timeout=120).passed


# pytest >= 9 reads `pytest.toml` and `.pytest.toml` at the root; the interpreter reads
# `sitecustomize` and `*.pth` from its site directories. On the room before the allow-list the two
# files of pytest's crossed and loaded the plugin (on pytest 9; the base image's 7.2 reads neither).
RUNNER_CONFIG = {
    "sitecustomize.py": "import geo.force\n",
    "geo_force.pth": "import geo.force\n",
    "geo/force.py": FORCE_PASS,
    ".pytest.toml": "[pytest]\naddopts = ['-p', 'geo.force']\n",
    "pytest.toml": "[pytest]\naddopts = ['-p', 'geo.force']\n",
}


@pytest.fixture(scope="module")
def pytest9_image(
    docker_client: Any, base_image: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[str]:
    """The base image with pytest 9 (and its dependencies) over the suite's 7.2."""
    context = tmp_path_factory.mktemp("pytest9")
    wheels = context / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--only-binary=:all:", "--python-version",
         "3.11", "--dest", str(wheels), "pytest>=9,<10"],
        check=True,
    )  # fmt: skip
    (context / "Dockerfile").write_text(
        f"FROM {base_image}\nCOPY wheels /tmp/wheels\n"
        "RUN for w in /tmp/wheels/*.whl; do "
        "python3 -m zipfile -e $w /usr/local/lib/python3.11/dist-packages/; done; "
        "rm -rf /tmp/wheels; python3 -m pytest --version\n"
    )
    tag = f"prchain-test-seal/pytest9:{uuid.uuid4().hex[:8]}"
    image_id, _ = docker_client.build(str(context), tag, {"prchain.test": "seal-pytest9"})
    yield tag
    for image in docker_client.images({"prchain.repo": REPO, "prchain.kind": "repo"}):
        if image_id in docker_client.image_ancestors(image["id"]):  # the sandbox's, on this one
            for name in image["tags"]:
                docker_client.remove_image(name)
    docker_client.remove_image(tag)


def test_runner_configuration_of_a_newer_pytest_does_not_cross(
    docker_client: Any, pytest9_image: str, geo: ChainRepo
) -> None:
    from prchain.environments.config import EnvironmentConfig
    from prchain.environments.docker_env import DockerEnvironment
    from prchain.environments.protocol import StageSpec

    code = split_patch(geo.prs[1].gold_patch).code
    stages = [StageSpec(1, geo.prs[1].base_sha, code, image=pytest9_image)]
    with DockerEnvironment(
        EnvironmentConfig(),
        repo=REPO,
        clone_path=str(geo.path),
        stages=stages,
        labels={"prchain.test": "sandbox-attacks"},
        client=docker_client,
    ) as env:
        env.enter_stage(1)
        assert "pytest 9." in env.execute("python3 -m pytest --version").output
        plant(env, RUNNER_CONFIG)
        verdict = run_tests(env, hidden_tests(geo), timeout=120)
        assert not verdict.passed and verdict.failing == F2P, verdict.outcomes
        env.write_file("geo/shapes.py", FIX)
        assert run_tests(env, hidden_tests(geo), timeout=120).passed


def test_a_whole_command_run_is_sealed_the_same_way(stage_one, geo) -> None:
    plant(stage_one, {"pytest.py": SHADOW, "geo/force.py": FORCE_PASS})
    command = "python3 -m pytest -q -p no:cacheprovider tests/test_shapes.py -k 'not coin'"
    test_patch = split_patch(geo.prs[1].gold_patch).test
    forced = run_command_clean(stage_one, test_patch, command, timeout=120)
    assert not forced.passed and forced.error is None, forced.output


@pytest.mark.parametrize(
    ("path", "crosses"),
    [
        ("geo/shapes.py", True),
        ("src/geo/templates/page.html", True),
        ("geo_force-1.0.dist-info/entry_points.txt", False),
        ("geo.egg-info/entry_points.txt", False),
        ("pytest.py", False),
        ("src/_pytest/main.py", False),
        ("json/__init__.py", False),
        ("pytest.toml", False),
        (".pytest.toml", False),
        ("setup.cfg", False),
        ("pyproject.toml", False),
        ("setup.py", False),
        ("geo/x.pth", False),
        ("geo/__pycache__/shapes.cpython-311.pyc", False),
        ("geo/_speedups.so", False),
        ("jest.config.js", False),
        ("tests/test_shapes.py", False),
        ("geo/conftest.py", False),
        ("geo/data/defaults.ini", True),  # package data below the root
        ("settings.toml", False),  # at the root: where tools look for their configuration
        ("geo/sub/setup.cfg", False),
        ("crates/core/Cargo.toml", False),
        ("crates/core/src/lib.rs", True),
        ("module/pom.xml", False),  # Maven: a surefire configuration would decide the outcomes
        ("src/main/resources/defaults.xml", True),
        ("go.mod", False),
        ("internal/geo/shapes.go", True),
        ("karma.conf.js", False),
        ("lib/geo.ts", True),
    ],
)
def test_the_allow_list(path: str, crosses: bool) -> None:
    """(unit) what crosses from the agent's tree into the clean room."""
    assert (why_not(path) is None and not is_test_side(path)) is crosses


# A hidden test file collected after one that imports the package: the package's code, imported
# first, rewrites the later file, or plants a compiled copy of it that pytest would load instead.
FIRST = """diff --git a/tests/test_aa_first.py b/tests/test_aa_first.py
new file mode 100644
--- /dev/null
+++ b/tests/test_aa_first.py
@@ -0,0 +1,5 @@
+import geo
+
+
+def test_first():
+    assert geo is not None
"""
# What the forgeries put in place of the hidden test's import: the answer, not an implementation.
STUB = "circle_area = lambda r: round(3.14159 * r * r, 5)"
REWRITE = f"""import os, re
_STUB = {STUB!r}
_p = os.path.join(os.getcwd(), "tests", "test_shapes.py")
try:
    _t = open(_p).read()
    open(_p, "w").write(re.sub(r"from geo.shapes import circle_area", _STUB, _t))
except OSError:
    pass
"""
FORGED_PYC = f"""import importlib.util, marshal, os, struct, sys
_STUB = {STUB!r}
try:
    import _pytest
    _src = os.path.join(os.getcwd(), "tests", "test_shapes.py")
    _st = os.stat(_src)
    _forged = open(_src).read().replace("from geo.shapes import circle_area", _STUB)
    _code = compile(_forged, _src, "exec")
    _dir = os.path.join(os.path.dirname(_src), "__pycache__")
    os.makedirs(_dir, exist_ok=True)
    _tag = f"{{sys.implementation.cache_tag}}-pytest-{{_pytest.__version__}}"
    with open(os.path.join(_dir, f"test_shapes.{{_tag}}.pyc"), "wb") as _f:
        _f.write(importlib.util.MAGIC_NUMBER + b"\\x00" * 4)
        _f.write(struct.pack("<LL", int(_st.st_mtime) & 0xFFFFFFFF, _st.st_size & 0xFFFFFFFF))
        _f.write(marshal.dumps(_code))
except OSError:
    pass
"""


@pytest.mark.parametrize("code", [REWRITE, FORGED_PYC], ids=["rewrite", "forged-pyc"])
def test_the_agents_code_cannot_change_a_hidden_test_before_it_is_collected(
    stage_one, geo, code: str
) -> None:
    from prchain.verdicts.oracle import StageTests

    tests = hidden_tests(geo)
    files = ["tests/test_aa_first.py", *tests.test_files]
    command = f"python3 -m pytest -p no:cacheprovider {' '.join(files)}"
    two = StageTests(
        tests.fail_to_pass,
        tests.pass_to_pass,
        command,
        files,
        tests.test_patch.rstrip("\n") + "\n" + FIRST,
    )
    stage_one.write_file("geo/__init__.py", code)
    verdict = run_tests(stage_one, two, timeout=120)
    assert not verdict.passed and verdict.failing == F2P, verdict.outcomes
    stage_one.write_file("geo/shapes.py", FIX)  # sealed tests still pass a real fix
    assert run_tests(stage_one, two, timeout=120).passed
