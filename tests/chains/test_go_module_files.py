"""A Go module file under another name is no code: nats.go keeps its test dependencies in
`go_test.mod` (read through `go test -modfile=go_test.mod`), and its two Go version bumps #1773
and #1821 were a code link through 9 rewritten lines of it (round 45). The same requirement
lines in `go.mod`, or in `go_test.mod`, link nothing; written as Go code, they do."""

from __future__ import annotations

from pathlib import Path

import pytest

from prchain.chains.config import ChainsConfig
from tests.support.history import History
from tests.support.links import links_by_number, mine_and_build


def _module(version: str) -> str:
    return (
        "module github.com/acme/client\n\ngo 1.21\n\nrequire (\n"
        + "".join(f"\tgithub.com/acme/{version}lib{i} v1.{i}.0 // indirect\n" for i in range(12))
        + ")\n"
    )


def _table(version: str) -> str:
    """The same requirements written as Go code."""
    return (
        "package client\n\nvar requires = []Dep{\n"
        + "".join(f"\t{{Path: {version}lib{i}, Version: v1_{i}_0}},\n" for i in range(12))
        + "}\n"
    )


def _code(name: str, count: int) -> str:
    return "package client\n\n" + "".join(
        f'func {name}{i}(c *Conn) error {{ return c.send({i}, "{name}") }}\n' for i in range(count)
    )


def _history(path: Path, module_file: str) -> History:
    """#1 moves to other requirements and adds its own code; #2, a month on, moves on again
    beside code of its own in another file: all they share are the 12 requirement lines."""
    repo = History(path)
    render = _table if module_file.endswith(".go") else _module
    repo.commit("Initial commit", {module_file: render("old"), "client.go": _code("base", 3)})
    repo.pr(
        1,
        "Bump go version to 1.22",
        {module_file: render("next"), "stream.go": _code("stream", 20)},
    )
    repo.pr(
        2,
        "Bump go version to 1.23",
        {module_file: render("last"), "kv.go": _code("kv", 20)},
        day=40,
    )
    return repo


@pytest.mark.parametrize("module_file", ["go_test.mod", "go.mod"])
def test_requirements_under_any_module_file_name_link_nothing(
    tmp_path: Path, module_file: str
) -> None:
    config = ChainsConfig(min_chain_code_lines=0, corroboration_signs=0)
    control = mine_and_build(
        _history(tmp_path / "src", "deps.go").path, tmp_path / "src.db", "acme/src", config
    )
    link = links_by_number(control).get((2, 1))
    assert link is not None and link.kept and link.lineage >= 10, link and (
        link.rule,
        link.lineage,
        link.why,
    )
    store = mine_and_build(
        _history(tmp_path / "mod", module_file).path, tmp_path / "mod.db", "acme/mod", config
    )
    link = links_by_number(store).get((2, 1))
    assert link is None or not (link.kept or link.lineage), link.why
