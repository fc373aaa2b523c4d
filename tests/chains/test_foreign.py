"""Names taken from other packages are no evidence that one PR builds on another (prchain.chains.reading.foreign)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from prchain.chains.config import ChainsConfig
from prchain.chains.reading.foreign import imported, own_roots
from prchain.chains.reading.imports_foreign import (
    Own,
    _tokens,
    imported_elsewhere,
    last_use,
    read_rust,
)
from prchain.chains.reading.substance import lexer_for
from tests.chains.test_string_scan import CASES as RUST_CASES
from tests.support.history import History
from tests.support.links import links_by_number, mine_and_build

MONITOR = """\
import os
from weakref import WeakMethod

from acme.state import Registry


class Monitor:
    def __init__(self):
        self.registry = Registry()
        os.register_at_fork(after_in_child=WeakMethod(self.reset_after_fork))

    def reset_after_fork(self):
        self.registry = Registry()
        self.registry.mark_forked_child()
"""


def _history(path: Path) -> History:
    """sentry-python #6159 makes its monitor fork-safe with the standard library's `WeakMethod`
    and `os.register_at_fork`; #6163 does the same in another module and shares no more with it."""
    repo = History(path)
    state = "class Registry:\n    def mark(self):\n        return 1\n"
    repo.commit("Initial commit", {"acme/__init__.py": "", "acme/state.py": state})
    forked = state + "\n    def mark_forked_child(self):\n        self.forked = True\n"
    repo.pr(1, "Make the monitor fork-safe", {"acme/monitor.py": MONITOR, "acme/state.py": forked})
    batcher = (
        "import os\nfrom weakref import WeakMethod\n\n\nclass Batcher:\n"
        "    def __init__(self):\n        self.items = []\n"
        "        os.register_at_fork(after_in_child=WeakMethod(self.clear_after_fork))\n\n"
        "    def clear_after_fork(self):\n        self.items = []\n"
        "        self.pending_count = 0\n        self.flushed_count = 0\n"
    )
    repo.pr(2, "Make the batcher fork-safe too", {"acme/batcher.py": batcher}, body="See #1.")
    worker = (
        "from acme.state import Registry\n\n\ndef restart_worker(registry: Registry):\n"
        "    registry.mark_forked_child()\n    return registry\n"
    )
    repo.pr(3, "Restart the worker after a fork", {"acme/worker.py": worker}, body="Uses #1.")
    return repo


def test_names_from_other_packages_back_no_link_and_the_older_prs_own_do(tmp_path: Path) -> None:
    repo = _history(tmp_path / "fork")
    config = ChainsConfig(
        corroboration_signs=0,
        min_chain_code_lines=0,
        min_stage_code_lines=0,
        plain_mention_min_contact=0,
    )
    links = links_by_number(mine_and_build(repo.path, tmp_path / "store.db", "acme/fork", config))
    # `WeakMethod` and `register_at_fork` are new to the code, but the standard library's.
    assert (links[2, 1].kept, links[2, 1].symbols) == (False, 0)
    assert links[2, 1].rule == "plain_mention_without_shared_lines"
    # `mark_forked_child` is #1's own.
    assert (links[3, 1].kept, links[3, 1].symbols) == (True, 1)
    assert "mark_forked_child" in links[3, 1].why


def test_imports_from_the_repository_are_its_own() -> None:
    own = own_roots(["src/acme/__init__.py", "src/acme/state.py", "tools/release.py"])
    assert {"src", "acme", "state", "tools", "release"} <= own
    text = (
        "import os.path as osp\nimport acme.state\nimport numpy as np\n"
        "from weakref import WeakMethod, ref as weak_ref\nfrom acme.state import Registry\n"
        "from . import sibling\nfrom release import *\n"
        "np.zeros(shape=3)\nWeakMethod(callback=print)\nRegistry(capacity=2)\n"
    )
    names, modules = imported(text, own)
    # The keywords of calls to what other packages define are theirs too.
    assert names == {"WeakMethod", "weak_ref", "shape", "callback"}
    assert modules == {"osp", "np"}
    assert imported("def broken(:\n", own) == (set(), set())


GO_TABLE = """package resources

import (
\t"github.com/cloudquery/plugin-sdk/v4/schema"
\tsdkclient "github.com/cloudquery/plugin-sdk/v4/client"

\t"github.com/acme/cq/plugins/source/aws/client"
)

func Ec2Instances() *schema.Table {
\treturn &schema.Table{
\t\tName:      "aws_ec2_instances",
\t\tResolver:  client.FetchInstances,
\t\tTransform: schema.AddCqIDs,
\t\tMulti:     sdkclient.RegionMultiplexer,
\t}
}
"""


def _go_history(path: Path) -> History:
    """cloudquery's shape: #1 adds a table built with the plugin SDK's `schema.AddCqIDs`; #2
    adds a sibling table with the same SDK calls; #3 registers #1's own `Ec2Instances`."""
    repo = History(path)
    client = "package client\n\nfunc FetchInstances() {}\n\nfunc FetchBuckets() {}\n"
    repo.commit(
        "Initial commit",
        {
            "go.mod": "module github.com/acme/cq/plugins/source/aws\n\ngo 1.21\n",
            "client/client.go": client,
        },
    )
    repo.pr(1, "Add the EC2 instances table", {"resources/ec2.go": GO_TABLE})
    sibling = (
        GO_TABLE.replace("Ec2Instances", "S3Buckets")
        .replace("aws_ec2_instances", "aws_s3_buckets")
        .replace("FetchInstances", "FetchBuckets")
    )
    repo.pr(2, "Add the S3 buckets table", {"resources/s3.go": sibling}, body="See #1.")
    tables = (
        'package plugin\n\nimport "github.com/acme/cq/plugins/source/aws/resources"\n\n'
        "func Tables() []any {\n\treturn []any{resources.Ec2Instances()}\n}\n"
    )
    repo.pr(3, "Register the EC2 table", {"plugin/tables.go": tables}, body="See #1.")
    return repo


def test_names_qualified_by_an_external_go_package_back_no_link(tmp_path: Path) -> None:
    repo = _go_history(tmp_path / "cq")
    config = ChainsConfig(
        corroboration_signs=0,
        min_chain_code_lines=0,
        min_stage_code_lines=0,
        plain_mention_min_contact=0,
    )
    links = links_by_number(mine_and_build(repo.path, tmp_path / "store.db", "acme/cq", config))
    # `schema.AddCqIDs`, `schema.Table` and `sdkclient.RegionMultiplexer` are the SDK's.
    assert (links[2, 1].kept, links[2, 1].symbols) == (False, 0), links[2, 1].why
    # `resources.Ec2Instances` is #1's own: its package is the repository's module.
    assert links[3, 1].kept and links[3, 1].symbols == 1
    assert "Ec2Instances" in links[3, 1].why


RUST_FILE = """\ufeffuse serde::{
    Deserialize,
    Serialize,
};\r
use crate::rules::Rule;

pub fn run() -> &'static str {
    use itertools::Itertools;
    let text = "use nothing::Here;";
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use insta::assert_snapshot;

    #[test]
    fn runs() {
        assert_snapshot!(run(), @"use nothing::Here;");
    }
}
"""


def in_order(part: list[tuple[Any, str]], whole: list[tuple[Any, str]]) -> bool:
    """Whether `part` is `whole` with some tokens left out."""
    rest = iter(whole)
    return all(token in rest for token in part)


def test_a_rust_file_is_lexed_only_around_its_uses() -> None:
    """`read_rust` reads `use` declarations only: the code between them (here the function's
    body after its `use`, and the test module's after its last) is not lexed, nor the tokens after
    the `;` that ends the last one. What is read is the whole file's tokens with runs left out
    that hold no declaration, wherever the file is cut, whatever its newlines and its BOM, a `use`
    in a string after them included."""
    own = Own(frozenset({"src"}))
    whole = [(t, v) for t, v in lexer_for("a.rs").get_tokens(RUST_FILE) if v.strip()]
    read = _tokens(RUST_FILE, "a.rs")
    assert read is not None and in_order(read, whole) and len(read) < len(whole)
    assert ("Token.Name", "text") not in [(str(t), v) for t, v in read] and read[-1][1] == ";"
    assert (
        read_rust(read, own)
        == read_rust(whole, own)
        == (
            {"Deserialize", "Serialize", "Itertools", "assert_snapshot"},
            {"serde", "itertools", "insta"},
        )
    )
    for cut in range(len(RUST_FILE)):
        for text in (RUST_FILE[:cut], RUST_FILE[cut:]):
            every = [(t, v) for t, v in lexer_for("a.rs").get_tokens(text) if v.strip()]
            assert read_rust(_tokens(text, "a.rs") or [], own) == read_rust(every, own), text


# "use" read as a token of its own in a string after an escape, a block comment, an attribute and
# a lifetime; then only words that hold it ("unused", "user", "because").
RUST_TAIL = r"""use std::fmt;

fn f() -> &'static str {
    let a = "\nuse";
    /*use*/
    #[use]
    let b: &'use str = "x\\use";
    r#use(1usize);
    unused(); user(); // because it is used
}
"""


def test_no_use_token_begins_after_the_last_use_that_no_word_character_follows() -> None:
    """`last_use` bounds where the lexer may stop (`_rust_tokens`): every token "use" of the whole
    file's, even one a word character stands before (`"\nuse"`), begins at it or before; a word
    that holds "use" later on does not keep the lexer going to the end. Cut anywhere, the
    file's declarations read from the tokens so far are those of the whole file's."""
    own = Own(frozenset({"src"}))
    lexer = lexer_for("a.rs")
    assert lexer is not None
    starts = [at for at, _t, value in lexer.get_tokens_unprocessed(RUST_TAIL) if value == "use"]
    assert len(starts) == 7  # `r#use` too: "r", "#", then the keyword
    bound = RUST_TAIL.rfind("because") + len("beca")  # its "use", which a space follows
    assert max(starts) <= last_use(RUST_TAIL) == bound < RUST_TAIL.rfind("use")  # "used"
    assert last_use("unused(); user; used") == -1 and last_use("use") == 0
    for cut in range(len(RUST_TAIL)):
        for text in (RUST_TAIL[:cut], RUST_TAIL[cut:]):
            every = [(t, v) for t, v in lexer.get_tokens(text) if v.strip()]
            assert read_rust(_tokens(text, "a.rs") or [], own) == read_rust(every, own), text


@pytest.mark.parametrize("name", sorted(RUST_CASES))
def test_a_use_anywhere_is_read_as_the_whole_files_lexing_reads_it(name: str) -> None:
    """Lexing resumes where the string scanner stands between tokens (`rust_resumes`): a
    declaration put at every offset of texts whose strings, comments, attributes, chars and
    lifetimes the lexer reads in states of their own (`test_string_scan`'s) is read as lexing the
    whole text reads it, in a string or a comment too, and so are the texts' other declarations."""
    own = Own(frozenset({"src"}))
    lexer = lexer_for("a.rs")
    assert lexer is not None
    text = RUST_CASES[name][0] + 'use y;\nlet s = "\\nuse";\n'
    for at in range(len(text) + 1):
        for use in ("use a::{b, c as d};", "use e;"):
            changed = text[:at] + use + text[at:]
            every = [(t, v) for t, v in lexer.get_tokens(changed) if v.strip()]
            read = _tokens(changed, "a.rs") or []
            assert in_order(read, every) and read_rust(read, own) == read_rust(every, own), at


def test_imports_of_go_javascript_and_rust_by_their_lexers() -> None:
    own = Own(frozenset({"src", "ruff_linter"}), ("github.com/acme/cq",))
    go = GO_TABLE.replace("acme/cq/plugins/source/aws", "acme/cq")
    # The keys of the SDK's `schema.Table{...}` are its fields.
    assert imported_elsewhere(go, "a.go", own) == (
        {"Name", "Resolver", "Transform", "Multi"},
        {"schema", "sdkclient"},
        ".",
    )
    js = (
        'import React, { useState as useLocal } from "react";\nimport * as path from "node:path";\n'
        'import { helper } from "./util";\nimport { ui } from "src/ui";\nconst fs = require("fs");\n'
    )
    names, qualifiers, member = imported_elsewhere(js, "a.tsx", own)
    assert names == {"React", "useState", "useLocal", "path"}
    assert (qualifiers, member) == ({"React", "path", "fs"}, ".")
    rust = "use serde::{Deserialize, Serialize as Ser};\nuse crate::rules::Rule;\nuse ruff_linter::Fix;\n"
    assert imported_elsewhere(rust, "a.rs", own) == (
        {"Deserialize", "Serialize", "Ser"},
        {"serde"},
        "::",
    )
