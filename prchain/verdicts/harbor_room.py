"""The Python room's verdict inside a Harbor verifier: shipped verbatim as `tests/prchain_room.py`.

A Harbor task's verifier runs in a container, with no prchain in it. This file is what of the
clean room's Python side must run there (docs/export-formats.md, "Harbor task directories"): the
allow-list of what of the agent's change crosses (`prchain/verdicts/crossing.py`, its tables and
patterns handed in `room.json` by the export), the variables that keep pytest to the image's
plugins (`prchain/environments/eras/python/seal.py: runner_env`), and the reading of the junit
report root took from the pipe (`prchain/environments/eras/python/report.py: parse_junit`) into
the decision: every FAIL_TO_PASS and PASS_TO_PASS test passed. The shell around it
(`prchain/verdicts/harbor.py: TEST_SH`) is the clean room's own scripts.

Standard library only, and Python 3.7's: it runs on the image's interpreter, as root, with `-I`.
`tests/verdicts/test_harbor_room.py` holds every function here to the one it mirrors.

    python3 -I prchain_room.py filter ROOM_JSON DIFF OUT   the change that crosses; dropped paths on stderr
    python3 -I prchain_room.py env ROOM_JSON PROBE         `export` lines for the sealed run
    python3 -I prchain_room.py decide ROOM_JSON REPORT OUT_DIR   reward.txt and verdict.json
"""

from __future__ import annotations

import json
import re
import shlex
import sys
import xml.etree.ElementTree as ET

PASSING = ("passed", "xfailed", "xpassed")
_RANK = {"passed": 0, "xpassed": 0, "xfailed": 0, "skipped": 1, "failed": 2, "error": 3}
_BYTE_SECTION = re.compile(rb"^diff --git ", re.MULTILINE)
_ESCAPE = re.compile(r"\\([0-7]{3}|[abfnrtv\\\"])")
_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}
_HEADER_PATHS = ("rename from ", "rename to ", "copy from ", "copy to ", "--- a/", "+++ b/")


class Rules:
    """The allow-list of the stage's room, from the tables the export wrote into room.json."""

    def __init__(self, data: dict) -> None:  # type: ignore[type-arg]
        self.source = frozenset(data["source_suffixes"])
        self.nested = frozenset(data["nested_data_suffixes"])
        self.config_names = frozenset(data["config_names"])
        self.config_name = re.compile(data["config_name_pattern"])
        self.metadata_dir = re.compile(data["metadata_dir_pattern"])
        self.shadowed = frozenset(data["shadowed"])
        self.import_roots = tuple(data["import_roots"])
        self.test_dirs = frozenset(data["test_dirs"])
        self.test_dir = re.compile(data["test_dir_pattern"], re.I)
        self.test_name = re.compile(data["test_name_pattern"])
        self.test_path = re.compile(data["test_path_pattern"])
        self.test_config = frozenset(data["test_config_files"])
        sealed = data["sealed"]
        self.sealed_dirs = frozenset(sealed["dirs"])
        self.sealed_top = frozenset(sealed["top_dirs"])
        self.namespaces = [space.split("/") for space in sealed["namespaces"]]
        self.libraries = frozenset(sealed["libraries"])
        self.copy_dirs = frozenset(sealed["copy_dirs"])

    def crosses(self, path: str) -> bool:
        """Does `path` of the agent's change reach the clean room (crossing.crosses)?"""
        return not self.test_side(path) and self.why_not(path) is None

    def test_side(self, path: str) -> bool:
        parts = path.split("/")
        name = parts[-1]
        if any(p.lower() in self.test_dirs or self.test_dir.fullmatch(p) for p in parts[:-1]):
            return True
        if len(parts) > 1 and parts[0] == "t":
            return True
        if self.test_name.search(name) or self.test_path.search(path):
            return True
        return name in self.test_config or name.endswith(".pth")

    def why_not(self, path: str) -> str | None:
        parts = path.split("/")
        name = parts[-1]
        if any(p.startswith(".") or self.metadata_dir.search(p) for p in parts):
            return "tool configuration or package metadata"
        suffix = (name[name.rfind(".") :] if "." in name else "").lower()
        if suffix not in self.source and not (len(parts) > 1 and suffix in self.nested):
            return "not a source or data file"
        if name in self.config_names or self.config_name.match(name):
            return "read by a test runner or build tool"
        if self._shadows(path):
            return "shadows the test runner or the standard library"
        return self._sealed(parts[:-1])

    def _shadows(self, path: str) -> bool:
        for root in self.import_roots:
            if not path.startswith(root):
                continue
            rest = path[len(root) :]
            top = rest.split("/", 1)[0]
            module = top[:-3] if "/" not in rest and top.endswith(".py") else top
            if module in self.shadowed and ("/" in rest or top.endswith((".py", ".pyi", ".pyx"))):
                return True
        return False

    def _sealed(self, dirs: list[str]) -> str | None:
        if (dirs and dirs[0] in self.sealed_top) or any(d in self.sealed_dirs for d in dirs):
            return "a place the room resolves test dependencies from"
        for run in self.namespaces:
            width = len(run)
            if any(dirs[i : i + width] == run for i in range(len(dirs) - width + 1)):
                return "in a test framework's namespace"
        below = [i for i, d in enumerate(dirs) if d.lower() in self.copy_dirs]
        if below and any(d.lower() in self.libraries for d in dirs[below[0] + 1 :]):
            return "a copy of a test library"
        return None


def unquoted(path: str) -> str:
    """A path git quoted C-style, as the file is named (sandbox.unquoted)."""
    if "\\" not in path or not all(ord(c) < 128 for c in path):
        return path
    raw = _ESCAPE.sub(lambda m: _escaped(m.group(1)), path)
    return raw.encode("latin-1").decode("utf-8", "replace")


def _escaped(code: str) -> str:
    return chr(int(code, 8)) if code.isdigit() else _ESCAPES.get(code, code)


def section_paths(section: str) -> list[str]:
    """Every path a section's header names; an empty list when it names none it can read."""
    header = section.split("\n@@", 1)[0].split("\nGIT binary patch", 1)[0]
    lines = header.splitlines()
    found = []
    plain = re.match(r'diff --git "?a/(.+?)"? "?b/(.+?)"?$', lines[0]) if lines else None
    if plain:
        found += [plain.group(1), plain.group(2)]
    for line in lines[1:]:
        for prefix in _HEADER_PATHS:
            quoted = prefix.replace("a/", '"a/').replace("b/", '"b/')
            for start in {prefix, quoted}:
                if line.startswith(start):
                    found.append(line[len(start) :].strip('"'))
    return sorted({unquoted(p) for p in found if p})


def cross(rules: Rules, patch: bytes) -> tuple[bytes, list[str]]:
    """The sections of `patch` whose every path crosses, and the paths left out."""
    starts = [m.start() for m in _BYTE_SECTION.finditer(patch)]
    kept, dropped = [], []
    for i, start in enumerate(starts):
        section = patch[start : starts[i + 1] if i + 1 < len(starts) else len(patch)]
        paths = section_paths(section.decode("utf-8", "replace"))
        if paths and all(rules.crosses(p) for p in paths):
            kept.append(section)
        else:
            dropped += paths or ["(a section without a readable path)"]
    return b"".join(kept), dropped


# ---- the sealed run's variables (seal.runner_env) ----------------------------------------------


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", text)[:2]) or (0,)


def runner_env(probe: str, command: str, own: tuple[str, ...] = ()) -> dict[str, str]:
    """The variables that keep pytest to the image's plugins and the project's own."""
    versions = [
        _version(line.split()[1]) for line in probe.splitlines() if line.startswith("VERSION ")
    ]
    if not versions or min(versions) < (3, 7):
        return {}
    by_name = min(versions) >= (4, 5)
    blocked = set(re.findall(r"-p\s*no:([\w.-]+)", command))
    names, modules = [], set()
    for line in probe.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == "PLUGIN" and parts[1] not in blocked:
            names.append(parts[1] if by_name else parts[2])
            modules.add(parts[2])
    names += [m for m in own if m not in modules and m not in blocked]
    options = " ".join("-p " + shlex.quote(n) for n in dict.fromkeys(names))
    found = {"PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    if options:
        found["PYTEST_ADDOPTS"] = options
    return found


# ---- the junit report (python/report.py) -------------------------------------------------------


def parse_junit(text: str) -> dict[str, str]:
    """Node id → outcome for every test case of the report's first document."""
    root = ET.fromstring(_first_document(text))
    outcomes: dict[str, str] = {}
    for case in root.iter("testcase"):
        if not case.get("name") and not case.get("classname"):
            continue
        test, outcome = junit_nodeid(dict(case.attrib)), _case_outcome(case)
        previous = outcomes.get(test)
        if previous is None or _RANK.get(outcome, 3) > _RANK.get(previous, 3):
            outcomes[test] = outcome
    return outcomes


def _first_document(text: str) -> str:
    opened = text.find("<testsuite")
    if opened < 0:
        return text
    end = "</testsuites>" if text.startswith("<testsuites", opened) else "</testsuite>"
    at = text.find(end, opened)
    return text[: at + len(end)] if at >= 0 else text


def _case_outcome(case: ET.Element) -> str:
    tags = {child.tag: child for child in case}
    if "error" in tags:
        return "error"
    if "failure" in tags:
        return "failed"
    skipped = tags.get("skipped")
    if skipped is not None:
        return "xfailed" if skipped.get("type") == "pytest.xfail" else "skipped"
    return "passed"


def junit_nodeid(attrs: dict[str, str]) -> str:
    classname, name, file = attrs.get("classname", ""), attrs.get("name", ""), attrs.get("file")
    if not classname:
        return file or name.replace(".", "/") + ".py"
    if file:
        module = file[:-3].replace("/", ".") if file.endswith(".py") else file
        if classname == module or classname.startswith(module + "."):
            classes = classname[len(module) :].strip(".")
            return "::".join(p for p in [file, *classes.split("."), name] if p)
    parts = classname.split(".")
    cut = next((i for i, p in enumerate(parts) if p[:1].isupper()), len(parts))
    return "::".join(["/".join(parts[:cut]) + ".py", *parts[cut:], name])


def decide(room: dict, report: str | None) -> dict:  # type: ignore[type-arg]
    """The verdict: every required test (FAIL_TO_PASS and PASS_TO_PASS) passed."""
    required = list(room["FAIL_TO_PASS"]) + list(room["PASS_TO_PASS"])
    outcomes: dict[str, str] = {}
    error = ""
    if report is None:
        error = "no test report reached root"
    else:
        try:
            outcomes = parse_junit(report)
        except ET.ParseError as exc:
            error = "not a junit XML report: " + str(exc)
    seen = {test: outcomes.get(test, "missing") for test in required}
    failing = [test for test in required if seen[test] not in PASSING]
    resolved = bool(required) and not failing and not error
    return {"resolved": resolved, "failing": failing, "outcomes": seen, "error": error}


def _read_report(path: str, cap: int) -> str | None:
    try:
        with open(path, "rb") as handle:
            data = handle.read(cap + 1)
    except OSError:
        return None
    if len(data) > cap:
        raise ValueError(f"the test report is over {cap:,} bytes: not read")
    return data.decode("utf-8", "replace") or None


def main(argv: list[str]) -> int:
    command, room_path = argv[0], argv[1]
    with open(room_path, encoding="utf-8") as handle:
        room = json.load(handle)
    if command == "filter":
        with open(argv[2], "rb") as handle:
            kept, dropped = cross(Rules(room["rules"]), handle.read())
        with open(argv[3], "wb") as out:
            out.write(kept)
        for path in dropped:
            sys.stderr.write(f"left out of the clean room: {path}\n")
        return 0
    if command == "env":
        with open(argv[2], encoding="utf-8", errors="replace") as handle:
            found = runner_env(handle.read(), room["test_command"], tuple(room["own_plugins"]))
        for key, value in found.items():
            print(f"export {key}={shlex.quote(value)}")
        return 0
    try:
        result = decide(room, _read_report(argv[2], int(room["max_report_bytes"])))
    except ValueError as exc:
        result = {"resolved": False, "failing": [], "outcomes": {}, "error": str(exc)}
    with open(argv[3] + "/verdict.json", "w", encoding="utf-8") as out:
        json.dump(result, out, indent=1)
    with open(argv[3] + "/reward.txt", "w", encoding="utf-8") as out:
        out.write("1\n" if result["resolved"] else "0\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
