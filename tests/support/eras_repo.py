"""A made-up history spanning three dependency eras, and the index its packages come from.

`tinylib` 1.0 (uploaded mid-2020) has `greet`; 2.0 (mid-2022) drops it for `hello`. The greeter
repository asks for plain `tinylib` throughout; only its dates differ:
  era 1 (2021): code calls greet → needs 1.0;   PR #1 adds `farewell` + a test;
  era 2 (2023): code calls hello → needs 2.0;   PR #2 adds `shout` + a test;
  era 3 (2024): requires tinylib>=3 (and calls `wave`), which no index has; PR #3 adds a test.
Used by tests/environments/eras and bench/bench_eras.py.
"""

from __future__ import annotations

from pathlib import Path

from prchain.dev.repos import git
from tests.support.fake_index import Release, make_wheel

# 1.0's docstring has an invalid escape (blinker 1.4 had one): harmless once compiled at install,
# a SyntaxError when the greeter's `filterwarnings = error` is in force as the import compiles it.
V1 = '"""Greetings, \\*old\\* style."""\n\n\ndef greet(name):\n    return \'hi \' + name\n'
PYTEST_INI = "[pytest]\nfilterwarnings =\n    error\n"
V2 = "def hello(name):\n    return 'hello ' + name\n"
GREETER_V1 = "import tinylib\n\n\ndef welcome(name):\n    return tinylib.greet(name)\n"
GREETER_V2 = (
    "import tinylib\n\n\ndef welcome(name):\n    return tinylib.hello(name)\n\n\n"
    "def farewell(name):\n    return tinylib.hello(name) + ', bye'\n"
)
TEST_WELCOME_V1 = (
    "from greeter import welcome\n\n\ndef test_welcome():\n    assert welcome('ada') == 'hi ada'\n"
)
TEST_WELCOME_V2 = "from greeter import welcome\n\n\ndef test_welcome():\n    assert welcome('ada') == 'hello ada'\n"
FAREWELL = "\n\ndef farewell(name):\n    return tinylib.greet(name) + ', bye'\n"
TEST_FAREWELL = "from greeter import farewell\n\n\ndef test_farewell():\n    assert farewell('ada') == 'hi ada, bye'\n"
SHOUT = "\n\ndef shout(name):\n    return tinylib.hello(name).upper()\n"
TEST_SHOUT = (
    "from greeter import shout\n\n\ndef test_shout():\n    assert shout('ada') == 'HELLO ADA'\n"
)


def commit_files(repo: Path, files: dict[str, str], message: str, date: str) -> None:
    """Write `files` (path → text) into `repo` and commit them all at `date`."""
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message, date=date)


def make_greeter(path: Path) -> Path:
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    commit_files(
        path,
        {
            "requirements.txt": "tinylib\n",
            "pytest.ini": PYTEST_INI,
            "greeter/__init__.py": GREETER_V1,
            "tests/test_welcome.py": TEST_WELCOME_V1,
        },
        "Start greeter",
        "2021-03-01T12:00:00Z",
    )
    init = (path / "greeter/__init__.py").read_text()
    commit_files(
        path,
        {"greeter/__init__.py": init + FAREWELL, "tests/test_farewell.py": TEST_FAREWELL},
        "Add a farewell (#1)\n\nSay goodbye too.",
        "2021-04-01T12:00:00Z",
    )
    commit_files(
        path,
        {
            "greeter/__init__.py": GREETER_V2,
            "tests/test_welcome.py": TEST_WELCOME_V2,
            "tests/test_farewell.py": TEST_FAREWELL.replace("hi ada", "hello ada"),
        },
        "Move to tinylib's hello",
        "2023-02-01T12:00:00Z",
    )
    commit_files(
        path,
        {"greeter/__init__.py": GREETER_V2 + SHOUT, "tests/test_shout.py": TEST_SHOUT},
        "Add shouting (#2)\n\nLoud greetings.",
        "2023-03-01T12:00:00Z",
    )
    commit_files(
        path,
        {
            "requirements.txt": "tinylib>=3\n",
            "greeter/__init__.py": GREETER_V2.replace("hello", "wave")
            + SHOUT.replace("hello", "wave"),
        },
        "Require tinylib 3 (it waves)",
        "2024-02-01T12:00:00Z",
    )
    commit_files(
        path,
        {
            "tests/test_shout.py": TEST_SHOUT
            + "\n\ndef test_shout_again():\n    assert shout('x')\n"
        },
        "Shout twice (#3)\n\nMore tests.",
        "2024-03-01T12:00:00Z",
    )
    return path


def tinylib_releases(folder: Path) -> list[Release]:
    one = make_wheel(folder, "tinylib", "1.0", {"tinylib/__init__.py": V1})
    two = make_wheel(folder, "tinylib", "2.0", {"tinylib/__init__.py": V2})
    return [
        Release("tinylib", "1.0", "2020-06-01T00:00:00Z", one),
        Release("tinylib", "2.0", "2022-06-01T00:00:00Z", two),
    ]
