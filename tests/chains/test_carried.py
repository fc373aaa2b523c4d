"""Lines a PR only carries (re-wrapped, re-indented, moved) are nobody's work: no substance of a
stage and no lineage of a later PR; and a later PR that only edits an older PR's tests (a test file,
a Rust test module) builds on no code of it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sqlalchemy import Engine, select
from sqlalchemy.orm import Session

from prchain.chains.config import ChainsConfig
from prchain.chains.evidence.changes import patch_code_lines
from prchain.chains.evidence.lines import parse_patch, takes_back
from prchain.chains.reading.carried import _lined_up, carried_in_patch, tokens
from prchain.dev.repos import git
from prchain.environments.languages.rust import _RUST_CFG_MODULE, _only_in_tests, rust_test_start
from prchain.store.models import Chain
from tests.support.history import History
from tests.support.links import links_by_number, mine_and_build

LONG_CALL = "    result = schedule_task(queue, payload, retries=3, backoff=2.5, timeout=30)\n"
WRAPPED = (
    "    result = schedule_task(\n"
    "        queue,\n"
    "        payload,\n"
    "        retries=3,\n"
    "        backoff=2.5,\n"
    "        timeout=30,\n"
    "    )\n"
)
# Black's quote style with rustfmt's reflow: the same tokens, other lines.
JOINED = '    label = "job" + str(job_id)\n'
SPLIT = "    label = (\n        'job'\n        + str(job_id)\n    )\n"


def _body(old: str, new: str) -> list[str]:
    return [f"-{line}" for line in old.splitlines()] + [f"+{line}" for line in new.splitlines()]


def carried_positions(body: list[str]) -> set[int]:
    """The carried lines of a diff of one hunk."""
    return carried_in_patch([body])[0]


def test_a_rewrapped_block_is_carried_whole_and_a_real_edit_is_not() -> None:
    rewrap = _body(LONG_CALL, WRAPPED)
    assert carried_positions(rewrap) == set(range(len(rewrap)))
    assert carried_positions(_body(JOINED, SPLIT)) == set(range(5))
    # A backslash continuation joined (black over blib2to3, black #1011).
    continued = _body(
        "    if enc == 'latin-1' or \\\n       enc.startswith('iso'):\n",
        '    if enc == "latin-1" or enc.startswith("iso"):\n',
    )
    assert carried_positions(continued) == {0, 1, 2}
    # A token deleted (rustfmt then joins the lines): the added line carries, the removed one is
    # the edit and counts.
    deleted = _body(
        "    if cfg!(debug_assertions) && size_of::<T>() > THRESHOLD {\n",
        "    if size_of::<T>() > THRESHOLD {\n",
    )
    assert carried_positions(deleted) == {1}
    # A new argument is a change on both sides; so is a token replaced.
    assert carried_positions(_body(LONG_CALL, LONG_CALL.replace("=30)", "=30, lane=1)"))) == set()
    assert carried_positions(_body(LONG_CALL, LONG_CALL.replace("retries=3", "retries=5"))) == set()
    # Tokens far apart in a long removed run are no deletion edit of one line.
    scattered = _body(
        "    first = alpha(1)\n    second = beta(2)\n    third = gamma(3)\n",
        "    alpha = gamma\n",
    )
    assert carried_positions(scattered) == set()


def test_each_line_left_over_is_lined_up_with_the_most_alike_line_near_it() -> None:
    """No two lines of this block have one shape (each edit adds a term), so each removed line
    is compared with the added lines near its place, and paired with the most alike: one
    matcher of an added line serves every removed line compared with it."""
    old = ["total = compute(alpha, beta) + 1", "result = render(gamma, delta) * 2"]
    old += ["value = parse(epsilon) - 3", "count = measure(zeta, eta) / 4"]
    new = ["count = measure(zeta, eta) / 4 / 8", "total = compute(alpha, beta) + 10 + 1"]
    new += ["result = render(gamma, delta) * 2 * 5", "value = parse(epsilon) - 3 - 9"]
    lined = dict(_lined_up([tokens(line) for line in old], [tokens(line) for line in new]))
    assert lined == {0: 1, 1: 2, 2: 3}  # in order: the last line's like comes before the others


def test_a_rename_across_the_diff_is_carried_and_a_name_changed_once_is_an_edit() -> None:
    """hyper #2966 puts `Recv` for `Body` on 236 lines: a rename, no stage's substance."""
    old = (
        "fn poll(body: Body) -> Body {\n    let next: Body = take(body);\n    wrap::<Body>(next)\n"
    )
    rename = _body(old, old.replace("Body", "Recv"))
    assert carried_positions(rename) == set(range(6))
    # Put for it on two lines only, the name is an edit.
    twice = (
        "fn poll(body: Recv) -> Recv {\n    let next: Recv = take(body);\n    wrap::<Body>(next)\n"
    )
    assert carried_positions(_body(old, twice)) == {2, 5}  # the line kept as it was
    # A line that also gets an edit of its own counts; the rename still runs over three lines.
    more = old.replace("Body", "Recv").replace("take(body)", "take(body, 1)")
    assert carried_positions(_body(old, more)) == {0, 2, 3, 5}
    renamed_again = more + old.replace("Body", "Recv")
    assert carried_positions(_body(old + old, renamed_again)) == set(range(12)) - {1, 7}
    # Whole PRs: the rename alone is no substance, the call it adds is.
    head = "diff --git a/src/body.rs b/src/body.rs\n--- a/src/body.rs\n+++ b/src/body.rs\n"
    patch = head + "@@ -1,3 +1,4 @@\n" + "\n".join(rename) + "\n+    log(next);\n"
    assert patch_code_lines(patch) == 1


def test_a_search_and_replace_is_carried_and_an_edit_made_twice_is_not() -> None:
    """scipy #416 writes `numpy.abs(` for `abs(` on 31 lines of optimize.py: one edit applied over
    and over. Lines that differ too much to be one line edited are never lined up."""
    old = (
        "        return numpy.amax(abs(x))\n"
        "    tol1 = sqrt_eps*abs(xf) + xtol / 3.0\n"
        "        if abs(e) > tol1:\n"
        "            q = abs(q)\n"
    )
    replaced = old.replace("abs(", "numpy.abs(")
    assert carried_positions(_body(old, replaced)) == set(range(8))
    twice = _body("".join(old.splitlines(True)[:2]), "".join(replaced.splitlines(True)[:2]))
    assert carried_positions(twice) == set()
    # A line with an edit of its own counts; the others still make the edit three times.
    own = replaced.replace("q = numpy.abs(q)", "q = numpy.abs(q) * scale")
    assert carried_positions(_body(old, own)) == {0, 1, 2, 4, 5, 6}
    unlike = "        return numpy.amax(abs(x))\n" * 3
    rewritten = "        raise NotImplementedError(reason)\n" * 3
    assert carried_positions(_body(unlike, rewritten)) == set()
    # Lines longer than code anyone writes (a minified bundle, tauri's) are never lined up: no
    # edit of theirs is made by hand, and difflib is quadratic in a line's tokens.
    bundle = "".join(f"var a{i}=abs(b{i});" for i in range(60))  # 720 characters
    minified = [bundle + f"c({i})\n" for i in range(3)]
    assert (
        carried_positions(_body("".join(minified), "".join(minified).replace("abs(", "Math.abs(")))
        == set()
    )
    head = "diff --git a/opt.py b/opt.py\n--- a/opt.py\n+++ b/opt.py\n@@ -1,4 +1,4 @@\n"
    assert patch_code_lines(head + "\n".join(_body(old, replaced)) + "\n") == 0
    assert patch_code_lines(head + "\n".join(_body(old, own)) + "\n") == 2


POOL = (
    "pub(crate) struct Pool<T> {\n"
    "    pub(crate) entries: Vec<T>,\n"
    "    pub(crate) clear_on_submit: bool,\n"
    "}\n\n"
    "impl<T: Default> Pool<T> {\n"
    "    pub(crate) fn new(clear_on_submit: bool) -> Self {\n"
    "        Self { entries: Vec::new(), clear_on_submit }\n"
    "    }\n\n"
    "    pub(crate) fn take(&mut self) -> T {\n"
    "        self.entries.pop().unwrap_or_default()\n"
    "    }\n"
    "}\n"
)


def test_code_moved_to_another_crate_and_made_public_is_no_substance(tmp_path: Path) -> None:
    """vello #1744 moves a pool, a clip stack and filter types from one crate to another and turns
    `pub(crate)` into `pub` on 40 lines: a move, whatever the visibility it gets on the way."""
    repo = History(tmp_path / "move")
    repo.commit(
        "Initial commit",
        {"cpu/src/util.rs": POOL, "common/src/lib.rs": "pub mod clip;\n", "common/src/clip.rs": ""},
    )
    repo.pr(
        1,
        "Move the pool to common",
        {
            "cpu/src/util.rs": "pub(crate) use common::util::Pool;\n",
            "common/src/lib.rs": "pub mod clip;\npub mod util;\n",
            "common/src/util.rs": POOL.replace("pub(crate)", "pub"),
        },
    )
    # Made crate-private on two lines only, the change is the PR's own; and a line edited on the
    # way besides counts whatever else moved with it.
    public = POOL.replace("pub(crate)", "pub")
    two = public.replace("pub entries", "pub(crate) entries").replace(
        "pub fn take", "pub(crate) fn take"
    )
    repo.pr(2, "Move the pool back", {"cpu/src/util.rs": two, "common/src/util.rs": None})
    edited = two.replace(".pop()", ".pop().filter(|e| !e.is_empty())")
    repo.pr(3, "Move it again", {"cpu/src/util.rs": "", "common/src/util.rs": edited})
    third, second, first = git(repo.path, "log", "--format=%H", "-3").split()
    assert patch_code_lines(_diff(repo, first)) == 0
    assert patch_code_lines(_diff(repo, second)) == 3  # two lines written, two removed at half
    assert patch_code_lines(_diff(repo, third)) == 2  # the filter, written and removed at half


HOST = (
    "package service\n\n"
    "type serviceHost struct {\n"
    "\treceivers  *receiver.Builder\n"
    "\tprocessors *processor.Builder\n"
    "}\n\n"
    "func (host *serviceHost) receiverFactory(kind component.Type) component.Factory {\n"
    "\treturn host.receivers.Factory(kind)\n"
    "}\n\n"
    "func (host *serviceHost) processorFactory(kind component.Type) component.Factory {\n"
    "\treturn host.processors.Factory(kind)\n"
    "}\n\n"
    "func newHost(set Settings) *serviceHost {\n"
    "\treturn &serviceHost{receivers: set.Receivers, processors: set.Processors}\n"
    "}\n"
)


def test_go_code_moved_into_another_package_and_exported_is_no_substance(tmp_path: Path) -> None:
    """opentelemetry-collector #10854 moves `serviceHost` into `graph.Host`, exporting its fields
    and methods on the way: the same names with a capital letter, which lines are compared by."""
    repo = History(tmp_path / "go")
    repo.commit("Initial commit", {"service/host.go": HOST})
    exported = (
        HOST.replace("package service", "package graph")
        .replace("serviceHost", "Host")
        .replace("receivers", "Receivers")
        .replace("processors", "Processors")
        .replace("receiverFactory", "ReceiverFactory")
        .replace("processorFactory", "ProcessorFactory")
        .replace("newHost", "NewHost")
    )
    repo.pr(1, "Move the host", {"service/host.go": None, "service/graph/host.go": exported})
    diff = _diff(repo, repo.prs[1])
    assert patch_code_lines(diff) == 2  # the package clause, written and removed at half


def test_an_argument_threaded_through_calls_is_carried_and_the_signature_is_not() -> None:
    """jaeger #6534 threads a context through span processing: the same argument put before the
    first one of many different calls is one edit applied over and over; the signature that
    takes it is written."""
    old = (
        "fn process(batch: Batch) -> Result<()> {\n"
        "    let spans = load_spans(batch)?;\n"
        "    let trace = assemble(spans, opts);\n"
        "    store.write(trace, retries)?;\n"
    )
    threaded = (
        old.replace("process(batch: Batch)", "process(ctx: &Context, batch: Batch)")
        .replace("load_spans(", "load_spans(ctx, ")
        .replace("assemble(", "assemble(ctx, ")
        .replace("write(", "write(ctx, ")
    )
    assert carried_positions(_body(old, threaded)) == {1, 2, 3, 5, 6, 7}
    twice = threaded.replace("write(ctx, ", "write(")
    assert carried_positions(_body(old, twice)) == {3, 7}  # the line kept as it was
    head = "diff --git a/src/proc.rs b/src/proc.rs\n--- a/src/proc.rs\n+++ b/src/proc.rs\n"
    patch = head + "@@ -1,4 +1,4 @@\n" + "\n".join(_body(old, threaded)) + "\n"
    assert patch_code_lines(patch) == 2  # the signature: one line written, one removed


def _formatting_history(path: Path) -> History:
    repo = History(path)
    repo.commit(
        "Initial commit",
        {"src/jobs.py": f"def run(queue, payload):\n{LONG_CALL}    return result\n"},
    )
    # #1 only runs a formatter over the file; #2 moves the function into another module.
    repo.pr(
        1, "Format src/", {"src/jobs.py": f"def run(queue, payload):\n{WRAPPED}    return result\n"}
    )
    repo.pr(
        2,
        "Move run() to its own module",
        {
            "src/jobs.py": "from .runner import run\n",
            "src/runner.py": f"def run(queue, payload):\n{WRAPPED}    return result\n",
        },
    )
    # #3 changes the retries of the call #1 re-wrapped: none of it is #1's work.
    repo.pr(
        3,
        "Retry more",
        {
            "src/runner.py": f"def run(queue, payload):\n{WRAPPED.replace('retries=3,', 'retries=max_retries(queue),')}    return result\n"
        },
        body="Follow-up to #1: the retries were too few.",
    )
    return repo


def _diff(repo: History, rev: str) -> str:
    return git(repo.path, "diff", f"{rev}~1", rev) + "\n"


def test_reformatting_and_moving_code_is_no_substance(tmp_path: Path) -> None:
    repo = _formatting_history(tmp_path / "fmt")
    log = git(repo.path, "log", "--format=%H", "-3").split()
    retry, move, fmt = log
    assert patch_code_lines(_diff(repo, fmt)) == 0
    assert patch_code_lines(_diff(repo, move)) == 0  # the function only moved; an import is none
    assert patch_code_lines(_diff(repo, retry)) == 2
    # The formatter's lines are no authored text of #1; the retry PR's are its own.
    assert not parse_patch(_diff(repo, fmt)).authored_anywhere()
    assert "retries=max_retries(queue)," in parse_patch(_diff(repo, retry)).authored_anywhere()


CODE = "pub fn area(width: u32, height: u32) -> u32 {\n    width.saturating_mul(height)\n}\n"
# The test module brings a fixture of its own: a name #1 introduces, in test code only.
TESTS = (
    "\n#[cfg(test)]\nmod tests {\n    use super::*;\n\n    struct SquareFixture(u32);\n\n"
    "    #[test]\n    fn squares() {\n"
    '        assert_eq!(area(3, 3), 9, "three by three");\n    }\n}\n'
)


def _test_history(path: Path) -> History:
    repo = History(path)
    repo.commit("Initial commit", {"src/lib.rs": "pub fn unit() -> u32 {\n    1\n}\n"})
    repo.pr(
        1,
        "Add area",
        {
            "src/lib.rs": "pub fn unit() -> u32 {\n    1\n}\n\n" + CODE + TESTS,
            "tests/test_area.py": "def test_area_of_three_by_three_is_nine():\n    assert run_area(3, 3) == 9\n",
        },
    )
    # Only #1's tests change (a Rust test module, a test file): nothing of #1's code.
    repo.pr(
        2,
        "Clearer test messages",
        {
            "src/lib.rs": "pub fn unit() -> u32 {\n    2\n}\n\n"
            + CODE
            + TESTS.replace('"three by three"', '"a three by three square"').replace(
                "        assert_eq!(area(3, 3)",
                "        let side = SquareFixture(3);\n        assert_eq!(area(side.0, 3)",
            ),
            "tests/test_area.py": "def test_area_of_three_by_three_is_nine():\n    assert run_area(3, 3) == 9, 'square'\n",
        },
        body="Follow-up to #1: the test messages said too little.",
    )
    # #3 rewrites #1's code.
    repo.pr(
        3,
        "Area without saturation",
        {
            "src/lib.rs": "pub fn unit() -> u32 {\n    2\n}\n\n"
            + CODE.replace("width.saturating_mul(height)", "width.checked_mul(height).unwrap_or(0)")
            + TESTS.replace('"three by three"', '"a three by three square"'),
        },
        body="Follow-up to #1: saturation hid overflows.",
    )
    return repo


def _mined(repo: History, tmp_path: Path, name: str, **settings: Any) -> Engine:
    config = ChainsConfig(min_chain_code_lines=0, min_stage_code_lines=0, **settings)
    return mine_and_build(repo.path, tmp_path / f"{name}.db", f"acme/{name}", config)


def _test_start_by_lines(text: str) -> int | None:
    """`rust_test_start` read line by line: each module's end is the first later line that is
    `}` alone, and the modules at the file's tail count when no item of the file follows."""
    if "#[cfg(" not in text:
        return None
    lines = text.split("\n")
    modules = []
    for found in _RUST_CFG_MODULE.finditer("\n" + text):
        if _only_in_tests(found["when"]):
            first = text.count("\n", 0, found.start())
            last = next((i for i in range(first + 1, len(lines)) if lines[i].rstrip() == "}"), None)
            modules.append((first, len(lines) - 1 if last is None else last))
    tail = len(lines)
    for first, last in reversed(modules):
        items = [line for line in lines[last + 1 : tail] if line and not line[0].isspace()]
        if any(not line.startswith(("//", "}", "*", "/*")) for line in items):
            break
        tail = first
    return tail + 1 if tail < len(lines) else None


def test_a_rust_test_module_is_found_where_the_files_lines_say() -> None:
    """The test module is found by patterns, not by cutting the file into lines: the same line
    wherever the module's closing brace, the items after it and the file's end stand."""
    key = "pub fn key() -> u8 {\n    3\n}\n\n"
    tests = "mod tests {\n    #[test]\n    fn ctrl_c() {\n    }\n}\n"
    texts = [
        f"{key}#[cfg(test)]\n{tests}",
        f"{key}#[cfg(test)]\n{tests.replace(chr(10) + '}', chr(10) + '}' + chr(160) + ' ')}fn after() {{}}\n",
        f"{key}#[cfg(test)]\n{tests}/\n",  # an item after it (`/` is no comment)
        f"{key}#[cfg(test)]\n{tests}// done\n/* more */\n  indented()\n* star\n}}\n",
        f"#[cfg(test)]\n{tests}{key}#[cfg(all(test, unix))]\n{tests.rstrip()}",
        f"{key}#[cfg(test)]\nmod tests {{\n    fn open() {{}}\n",  # never closed
        f"{key}#[cfg(test)]\n{tests}#[cfg(test)]\n{tests}\r\n",
    ]
    for text in texts:
        for cut in range(len(text) + 1):
            for piece in (text, text[:cut], text[cut:]):
                assert rust_test_start(piece) == _test_start_by_lines(piece), piece
    assert [rust_test_start(text) for text in texts] == [5, None, None, 5, 11, 5, 5]


def test_lines_a_pr_only_reformatted_are_no_lineage(tmp_path: Path) -> None:
    links = links_by_number(_mined(_formatting_history(tmp_path / "fmt"), tmp_path, "fmt"))
    assert (links[3, 1].lineage, links[3, 1].kept) == (0, False)


def test_lineage_in_an_older_prs_tests_backs_no_link(tmp_path: Path) -> None:
    repo = _test_history(tmp_path / "tests")
    lib = git(repo.path, "show", "HEAD:src/lib.rs")
    assert rust_test_start(lib) == lib[: lib.index("#[cfg(test)]")].count("\n") + 1
    # A module built only for tests on one platform is tests too; one built for a feature is not.
    key = "pub fn key() -> u8 {\n    3\n}\n\n"
    tests = "mod tests {\n    #[test]\n    fn ctrl_c() {}\n}\n"
    assert rust_test_start(f"{key}#[cfg(all(test, windows))]\n{tests}") == 5
    assert rust_test_start(f"{key}#[cfg(all(unix, not(windows), test))]\n{tests}") == 5
    assert rust_test_start(f'{key}#[cfg(any(test, feature = "fake"))]\n{tests}') is None
    assert rust_test_start(f"{key}#[cfg(all(not(test), unix))]\n{tests}") is None
    assert rust_test_start(f"{key}#[cfg(test)]\npub(crate) {tests}") == 5
    # A test module in the middle of the file is followed by code: only the tail is tests.
    helpers = f'#[cfg(all(test, feature = "remote"))]\n{tests}\n'
    assert rust_test_start(f"{key}{helpers}{key}#[cfg(test)]\n{tests}") == 15
    assert rust_test_start(f"{key}{helpers}// the tests\n\n#[cfg(test)]\n{tests}") == 5
    links = links_by_number(_mined(repo, tmp_path, "tests"))
    tests_only, code = links[2, 1], links[3, 1]
    # Nor does a name #1's test module brings in, used by #2's tests.
    assert (tests_only.lineage, tests_only.symbols, tests_only.kept) == (0, 0, False)
    assert "2 line(s) of the older PR's tests" in tests_only.why
    assert (code.lineage, code.kept) == (1, True)


CHECKS = "".join(f"    assert parse_size('{n}kb') == {n * 1024}\n" for n in range(1, 6))
SNAPSHOT = "".join(f"size {n}kb -> {n * 1024} bytes\n" for n in range(1, 6))


def test_rewriting_enough_of_an_older_prs_test_code_backs_a_link(tmp_path: Path) -> None:
    """arrow-adbc #403 renames #381's TLS tests and adds cases for the options #381 built;
    lancedb #3016 changes what #3013's `__getitems__` returns and rewrites its tests. Neither
    touches a line of the older code. Rewriting four lines of another PR's test code changes
    what that PR promised; four lines of its snapshot, a rendering of output, do not."""
    repo = History(tmp_path / "checks")
    repo.commit("Initial commit", {"src/units.py": "UNITS = {}\n", "src/cli.py": "ARGS = []\n"})
    repo.pr(
        1,
        "Parse sizes",
        {
            "src/units.py": "UNITS = {'kb': 1024}\n\ndef parse_size(text):\n"
            "    return int(text[:-2]) * UNITS[text[-2:]]\n",
            "tests/test_units.py": f"def test_parse_size():\n{CHECKS}",
            "tests/snapshots/sizes.snap": SNAPSHOT,
        },
    )
    decimal = CHECKS.replace("* 1024", "* 1000")
    for n in range(1, 6):
        decimal = decimal.replace(f"== {n * 1024}", f"== {n * 1000}")
    repo.pr(
        2,
        "Decimal kilobytes on the command line",
        {
            "src/cli.py": "ARGS = ['--decimal']\nDECIMAL = True\n",
            "tests/test_units.py": f"def test_parse_size():\n{decimal}",
        },
        body="Follow-up to #1: sizes are decimal now.",
    )
    repo.pr(
        3,
        "Byte counts in the report",
        {
            "src/cli.py": "ARGS = ['--decimal']\nDECIMAL = True\nREPORT = 'bytes'\n",
            "tests/snapshots/sizes.snap": SNAPSHOT.replace("bytes", "B"),
        },
        body="Follow-up to #1: shorter units in the report.",
    )
    links = links_by_number(_mined(repo, tmp_path, "checks"))
    checks, snapshot = links[2, 1], links[3, 1]
    assert (checks.lineage, checks.kept, checks.rule) == (0, True, None)
    assert "5 line(s) of the older PR's tests" in checks.why
    assert (snapshot.lineage, snapshot.kept) == (0, False)
    assert snapshot.rule == "wording_without_shared_code"
    assert "5 line(s) of the older PR's tests (0 of them test code)" in snapshot.why


def test_a_revert_pushed_without_a_pr_undoes_the_older_pr(tmp_path: Path) -> None:
    repo = History(tmp_path / "pushed")
    repo.commit("Initial commit", {"src/codec.py": "LIMIT = None\n"})
    first = repo.pr(1, "Max line length", {"src/codec.py": "LIMIT = configured_limit('lines')\n"})
    # A maintainer reverts #1 on the branch itself: no PR, so no reference names it.
    repo.commit(
        f'Revert "Max line length (#1)"\n\nThis reverts commit {first}.',
        {"src/codec.py": "LIMIT = None\n"},
    )
    repo.pr(
        2,
        "Max line length, again",
        {"src/codec.py": "LIMIT = configured_limit('lines', default=4096)\n"},
        body="Second attempt at #1, which was reverted.",
    )
    # Without "This reverts commit", the quoted subject's number names the PR.
    repo.pr(3, "Faster codec", {"src/codec.py": "LIMIT = fast_limit('lines', default=4096)\n"})
    repo.commit(
        'Revert "Faster codec (#3)"',
        {"src/codec.py": "LIMIT = configured_limit('lines', default=4096)\n"},
    )
    repo.pr(
        4,
        "Faster codec without the crash",
        {"src/codec.py": "LIMIT = fast_limit('lines', default=4096, safe=True)\n"},
        body="Follow-up to #3.",
    )
    links = links_by_number(_mined(repo, tmp_path, "pushed"))
    assert links[2, 1].rule == "older_reverted_before"
    assert links[4, 3].rule == "older_reverted_before"


PARSER_V1 = "".join(
    f"def parse_field_{i}(text):\n    return text.split(':')[{i}].strip()\n\n" for i in range(6)
)


def test_a_reland_writes_back_what_its_revert_removed_and_the_trio_is_kept(tmp_path: Path) -> None:
    repo = History(tmp_path / "reland")
    repo.commit("Initial commit", {"src/fields.py": "FIELDS = 6\n"})
    first = repo.pr(1, "Field parsers", {"src/fields.py": "FIELDS = 6\n\n" + PARSER_V1})
    repo.pr(
        2,
        'Revert "Field parsers (#1)"',
        {"src/fields.py": "FIELDS = 6\n"},
        body=f"This reverts commit {first}. It broke the nightly build.",
    )
    # The re-land names both; the revert wrote no line for it to rewrite, only removed the lines
    # it writes back.
    repo.pr(
        3,
        "Field parsers, again",
        {
            "src/fields.py": "FIELDS = 6\n\n"
            + PARSER_V1
            + "def parse_all(text):\n    return text.split(':')\n"
        },
        body="Relands #1 and #2 with the nightly fix.",
    )
    engine = _mined(repo, tmp_path, "reland", revert_stages=True)
    links = links_by_number(engine)
    assert links[3, 2].kept and "writes back 12 line(s) the older one removed" in links[3, 2].why
    with Session(engine) as session:
        labels = [c.label for c in session.scalars(select(Chain))]
    assert labels == ["revert_reland"]


def test_a_patch_that_turns_the_older_one_around_is_a_revert_whatever_its_title(
    tmp_path: Path,
) -> None:
    repo = History(tmp_path / "undo")
    repo.commit("Initial commit", {"src/fields.py": "FIELDS = 6\n"})
    repo.pr(1, "Field parsers", {"src/fields.py": "FIELDS = 6\n\n" + PARSER_V1})
    # vite's wording: neither a quoted title nor "revert #1", yet the patch is #1's turned around.
    repo.pr(2, "fix: revert field parsers #1", {"src/fields.py": "FIELDS = 6\n"})
    repo.pr(
        3,
        "Parse the first field",
        {"src/fields.py": "FIELDS = 6\n\ndef parse_field_0(text):\n    return text[:4]\n"},
        body="Follow-up to #1, simpler.",
    )
    engine = _mined(repo, tmp_path, "undo")
    links = links_by_number(engine)
    assert (links[2, 1].evidence_class, links[2, 1].kept) == ("revert", True)
    assert "its patch undoes the older one's" in links[2, 1].why
    assert links[3, 1].rule == "older_reverted_before"
    with Session(engine) as session:
        assert not session.scalars(select(Chain)).all()  # "A, revert A" is no task


def test_one_line_written_back_is_no_evidence(tmp_path: Path) -> None:
    repo = History(tmp_path / "one")
    repo.commit("Initial commit", {"src/limits.py": "LEGACY_LIMIT = compute_limit(default=10)\n"})
    repo.pr(1, "Drop the legacy limit", {"src/limits.py": "LIMIT = compute_limit(default=64)\n"})
    # #2 shares nothing with #1 but one common line that comes back elsewhere.
    repo.pr(
        2,
        "Old clients",
        {
            "src/limits.py": "LIMIT = compute_limit(default=64)\nMAX_CLIENTS = 8\n",
            "src/compat.py": "LEGACY_LIMIT = compute_limit(default=10)\nCLIENTS = load_clients()\n",
        },
        body="Following up a review comment on #1.",
    )
    links = links_by_number(_mined(repo, tmp_path, "one"))
    assert (links[2, 1].kept, links[2, 1].rule) == (False, "wording_without_shared_code")
    assert "writes back 1 line(s) the older one removed" in links[2, 1].why


CLI_GENERATE = """def run(client, prompt, options):
    request = build_generate_request(prompt, options)
    request.set_context(options.context_window)
    request.set_template(options.template_name)
    reply = client.post("/api/generate", request)
    for piece in reply.stream_pieces():
        print_piece(piece.response)
        remember_context(piece.context)
    flush_terminal_output()
    return reply.final_stats()
"""
CLI_CHAT = """def run(client, prompt, options):
    history = load_chat_history(options.session)
    history.append_user_message(prompt)
    history.trim_to_window(options.context_window)
    reply = client.post("/api/chat", history.as_request(options))
    for piece in reply.stream_pieces():
        history.append_assistant_piece(piece.message)
        render_markdown_piece(piece.message.content)
    history.close_turn()
    return history.save_and_report()
"""
SERVER_CHAT = """def chat_handler(request):
    messages = request.json_body()["messages"]
    model = select_model(request.json_body()["model"])
    prompt = model.template.render_messages(messages)
    return stream_completion(model, prompt, request.options())
"""


def test_a_patch_that_takes_back_part_of_the_older_one_is_a_revert(tmp_path: Path) -> None:
    """ollama #1383 puts the CLI back on /api/generate and keeps #991's chat endpoint: no text
    names #991, the patch is a revert of its CLI half, and no stage of a chain."""
    repo = History(tmp_path / "takeback")
    repo.commit("Initial commit", {"cli/run.py": CLI_GENERATE, "server/__init__.py": ""})
    repo.pr(1, "Chat API", {"cli/run.py": CLI_CHAT, "server/chat.py": SERVER_CHAT})
    repo.pr(2, "Put the CLI back on the generate endpoint", {"cli/run.py": CLI_GENERATE})
    engine = _mined(repo, tmp_path, "takeback")
    links = links_by_number(engine)
    assert links[2, 1].evidence_class == "revert", links[2, 1].why
    assert "its patch undoes the older one's" in links[2, 1].why
    with Session(engine) as session:
        assert not session.scalars(select(Chain)).all()
    whole = parse_patch(git(repo.path, "diff", "HEAD~2", "HEAD~1"))
    part = parse_patch(git(repo.path, "diff", "HEAD~1", "HEAD"))
    assert takes_back(part, whole) and not takes_back(whole, part)
