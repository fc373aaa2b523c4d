"""A made-up JavaScript history spanning two Node eras, on real npm packages.

`mime` 1.x has `lookup(path)`; 2.x renamed it `getType` (the old name is gone). The `mimer` repository:
  era 1 (2023): .nvmrc 18, mime ^1.6.0 and mocha 10.2.0, no lock file; `typeOf` calls `lookup`;
                PR #1 adds lib/label.js (`label`, on `typeOf`) + a test;
  era 2 (2024): .nvmrc 20, mime 2.6.0 pinned by a package-lock.json, `node --test`; `typeOf`
                calls `getType`; PR #2 adds `isText` to lib/label.js + a test.
Both PRs change lib/label.js, so the temporal strategy chains them: a chain crossing the eras.
"""

from __future__ import annotations

import json
from pathlib import Path

from prchain.dev.repos import git
from tests.support.eras_repo import commit_files

MIME_2 = {
    "version": "2.6.0",
    "resolved": "https://registry.npmjs.org/mime/-/mime-2.6.0.tgz",
    "integrity": "sha512-USPkMeET31rOMiarsBNIHZKLGgvKc/LrjofAnBlOttf5ajRvqiRA8QsenbcooctK6d6Ts6aqZXBA+XbkKthiQg==",
    "license": "MIT",
    "bin": {"mime": "cli.js"},
    "engines": {"node": ">=4.0.0"},
}
V1 = "const mime = require('mime');\n\nexports.typeOf = (file) => mime.lookup(file);\n"
V2 = "const mime = require('mime');\n\nexports.typeOf = (file) => mime.getType(file);\n"
LABEL = (
    "const { typeOf } = require('..');\n\nexports.label = (file) => `${file} (${typeOf(file)})`;\n"
)
IS_TEXT = "\nexports.isText = (file) => (typeOf(file) || '').startsWith('text/');\n"
# Tests run under mocha (its globals) and `node --test` (node:test) alike, so the move to Node 20
# changes no test file and PR #1's revert at PR #2's base stays clean.
HEADER = (
    "const assert = require('assert');\n"
    "const { describe, it } = globalThis.describe ? globalThis : require('node:test');\n"
)
TYPE_TEST = (
    HEADER + "const { typeOf } = require('..');\n\n"
    "describe('typeOf', () => {\n  it('knows html', () => {\n"
    "    assert.strictEqual(typeOf('a.html'), 'text/html');\n  });\n});\n"
)
LABEL_TEST = (
    HEADER + "const { label } = require('../lib/label');\n\n"
    "describe('label', () => {\n  it('names the type', () => {\n"
    "    assert.strictEqual(label('a.html'), 'a.html (text/html)');\n  });\n});\n"
)
TEXT_TEST = (
    HEADER + "const { isText } = require('../lib/label');\n\n"
    "describe('isText', () => {\n  it('says css is text', () => {\n"
    "    assert.strictEqual(isText('a.css'), true);\n  });\n});\n"
)


def _package(era: int) -> str:
    if era == 1:
        deps = {"dependencies": {"mime": "^1.6.0"}, "devDependencies": {"mocha": "10.2.0"}}
        script = "mocha"
    else:
        deps, script = {"dependencies": {"mime": "2.6.0"}}, "node --test"
    tree = {"name": "mimer", "version": f"{era}.0.0", "private": True, "main": "index.js"}
    return json.dumps({**tree, "scripts": {"test": script}, **deps}, indent=2) + "\n"


def _lock() -> str:
    root = {"name": "mimer", "version": "2.0.0", "dependencies": {"mime": "2.6.0"}}
    tree = {
        "name": "mimer",
        "version": "2.0.0",
        "lockfileVersion": 3,
        "requires": True,
        "packages": {"": root, "node_modules/mime": MIME_2},
    }
    return json.dumps(tree, indent=2) + "\n"


def make_mimer(path: Path) -> Path:
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    start = {".nvmrc": "18\n", ".gitignore": "node_modules/\n", "package.json": _package(1)}
    commit_files(
        path,
        {**start, "index.js": V1, "test/type.test.js": TYPE_TEST},
        "Start",
        "2023-02-01T12:00:00Z",
    )
    commit_files(
        path,
        {"lib/label.js": LABEL, "test/label.test.js": LABEL_TEST},
        "Add label (#1)\n\nA file's name with its type.",
        "2023-03-01T12:00:00Z",
    )
    era2 = {".nvmrc": "20\n", "package.json": _package(2), "package-lock.json": _lock()}
    commit_files(path, {**era2, "index.js": V2}, "Move to mime 2", "2024-02-01T12:00:00Z")
    commit_files(
        path,
        {"lib/label.js": LABEL + IS_TEXT, "test/text.test.js": TEXT_TEST},
        "Add isText (#2)\n\nText or not.",
        "2024-03-01T12:00:00Z",
    )
    return path


# A project whose tests load its build's output (yargs' of 2020 load ./build/lib, which its
# `pretest` compiles with tsc): `pretest` runs `build`, a script of its own that writes build/
# from src/ (no dependency, so no registry); build/ is ignored by git.
BUILT_PACKAGE = {
    "name": "shout",
    "version": "1.0.0",
    "private": True,
    "scripts": {"pretest": "npm run build", "build": "node build.js", "test": "node --test"},
}
BUILT_SCRIPT = """const fs = require('fs');
fs.mkdirSync('build', { recursive: true });
for (const name of fs.readdirSync('src')) {
  fs.writeFileSync(`build/${name}`, '// built\\n' + fs.readFileSync(`src/${name}`, 'utf8'));
}
"""
SHOUT = "exports.shout = (s) => s.toUpperCase();\n"
WHISPER = "\nexports.whisper = (s) => s.toLowerCase();\n"
BUILT_TEST = """const test = require('node:test');
const assert = require('node:assert');
const lib = require('../build/shout.js');

test('{name}', () => {{
  assert.strictEqual(lib.{name}('Ab'), '{want}');
}});
"""


def make_built(path: Path) -> Path:
    start = {
        ".nvmrc": "20\n",
        ".gitignore": "node_modules/\nbuild/\n",
        "package.json": json.dumps(BUILT_PACKAGE, indent=2) + "\n",
        "build.js": BUILT_SCRIPT,
        "src/shout.js": SHOUT,
        "test/shout.test.js": BUILT_TEST.format(name="shout", want="AB"),
    }
    pr = {
        "src/shout.js": SHOUT + WHISPER,
        "test/whisper.test.js": BUILT_TEST.format(name="whisper", want="ab"),
    }
    return _one_pr(path, start, pr, "2025-02")


def _one_pr(path: Path, start: dict[str, str], pr: dict[str, str], month: str) -> Path:
    """A history of `start` and one PR, #1, that adds `whisper` five days later."""
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    commit_files(path, start, "Start shout", f"{month}-10T12:00:00Z")
    commit_files(path, pr, "Whisper too (#1)\n\nQuietly.", f"{month}-15T12:00:00Z")
    return path


# eslint's layout: its Makefile.js hands `tests/lib/**/*.js` to mocha, which given no files finds
# none in ./test, so verification runs a sample of the test files; tests/performance/ holds a
# bundle that needs a browser's `window` (eslint's jshint.js), a test file by its path that
# throws when mocha loads it.
SAMPLED_PACKAGE = {
    "name": "sampled",
    "version": "1.0.0",
    "private": True,
    "scripts": {"test": "node Makefile.js test"},
    "devDependencies": {"mocha": "10.2.0"},
}
MAKEFILE = """const { execFileSync } = require('child_process');
if (process.argv[2] === 'test') {
  execFileSync('node_modules/.bin/mocha', ['tests/lib/*.js'], { stdio: 'inherit' });
}
"""
MOCHA_TEST = """const assert = require('assert');
const lib = require('../../lib/shout');

describe('{name}', () => {{
  before(() => {{
    // the project loaded cold, as a file run alone finds it: longer than mocha's default 2 s
    const start = Date.now();
    while (Date.now() - start < 2500);
  }});

  it('changes the case', () => {{
    assert.strictEqual(lib.{name}('Ab'), '{want}');
  }});
}});
"""


def make_sampled(path: Path) -> Path:
    start = {
        ".nvmrc": "18\n",
        ".gitignore": "node_modules/\n",
        "package.json": json.dumps(SAMPLED_PACKAGE, indent=2) + "\n",
        "Makefile.js": MAKEFILE,
        "lib/shout.js": SHOUT,
        "tests/lib/shout.js": MOCHA_TEST.format(name="shout", want="AB"),
        "tests/performance/bundle.js": "(function (w) { w.bundle = {}; })(window);\n",
    }
    pr = {
        "lib/shout.js": SHOUT + WHISPER,
        "tests/lib/whisper.js": MOCHA_TEST.format(name="whisper", want="ab"),
    }
    return _one_pr(path, start, pr, "2023-02")


# mocha 1.x (before 2.2, 2015) refuses `--reporter-options` as an unknown option, and, given no
# files, finds none in ./test and says only "0 passing": eslint's eras of 2013-2014 (tests under
# tests/lib/) ran none of their tests. No Node declared: the era's is the oldest the rooms give.
OLD_MOCHA_PACKAGE = {
    "name": "shout",
    "version": "0.1.0",
    "private": True,
    "scripts": {"test": "node Makefile.js test"},
    "devDependencies": {"mocha": "~1.13.0"},  # eslint's of 2014
}


def make_old_mocha(path: Path) -> Path:
    start = {
        ".gitignore": "node_modules/\n",
        "package.json": json.dumps(OLD_MOCHA_PACKAGE, indent=2) + "\n",
        "Makefile.js": MAKEFILE,
        "lib/shout.js": SHOUT,
        "tests/lib/shout.js": MOCHA_TEST.format(name="shout", want="AB"),
    }
    pr = {
        "lib/shout.js": SHOUT + WHISPER,
        "tests/lib/whisper.js": MOCHA_TEST.format(name="whisper", want="ab"),
    }
    return _one_pr(path, start, pr, "2014-09")
