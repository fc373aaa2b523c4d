"""The one classifier of why an era did not verify, on root errors as the tools print them
(tests/data/root_errors: real output, regenerate.sh says how it was made)."""

from __future__ import annotations

from pathlib import Path

import pytest

from prchain.verdicts.losses import era_loss, losses, native_missing, service_needed, unit_exclusion

DATA = Path(__file__).parent.parent / "data" / "root_errors"


def _first(name: str) -> str:
    return next(line for line in (DATA / name).read_text().splitlines() if line.strip())


@pytest.mark.parametrize(
    ("name", "missing"),
    [
        ("native-header.out", "selinux/selinux.h"),  # gcc
        ("native-pkg-config.out", "alsa"),  # pkg-config --cflags alsa
        ("native-ld.out", "-lselinuxnothere"),  # ld
    ],
)
def test_a_missing_native_library_is_named_from_the_tool_s_own_words(
    name: str, missing: str
) -> None:
    text = (DATA / name).read_text()
    assert native_missing(text) == missing
    loss = era_loss(f"build failed: {_first(name)}")
    assert (loss.reason, loss.detail) == ("native library missing", missing)
    assert loss.label == f"native library missing ({missing})"


def test_node_gyp_names_the_program_it_could_not_find() -> None:
    """npm 6's node-gyp 5 building node-pcap/node_pcap's addon in a layer without make."""
    assert native_missing((DATA / "native-node-gyp-make.out").read_text()) == "make"


@pytest.mark.parametrize(
    ("root", "reason", "detail"),
    [
        # issue 81's coreutils: selinux-sys's build script
        (
            "build failed: Failed to find 'selinux/selinux.h'. Please make sure the C header files "
            "of libselinux are installed",
            "native library missing",
            "selinux/selinux.h",
        ),
        ("build failed: /bin/sh: 1: clang: not found", "native library missing", "clang"),
        (
            "build failed: error: this version of Cargo is older than the `2021` edition, and "
            "only supports `2015` and `2018` editions.",
            "toolchain unavailable",
            "",
        ),
        (
            "declares Python 2.7 only; no Python 2 here — build failed: x",
            "toolchain unavailable",
            "",
        ),
        # a 2016 pytoolz/toolz era on bullseye's Python 3.9, the oldest a suite gives
        (
            "SyntaxError: Generator expression must be parenthesized",
            "toolchain unavailable",
            "code older than the interpreter",
        ),
        (
            "ImportError: cannot import name 'Mapping' from 'collections' "
            "(/usr/lib/python3.11/collections/__init__.py)",
            "toolchain unavailable",
            "code older than the interpreter",
        ),
        (
            "ModuleNotFoundError: No module named 'distutils'",
            "toolchain unavailable",
            "code older than the interpreter",
        ),
        (
            "dial tcp 127.0.0.1:5432: connect: connection refused",
            "service needed",
            "database",
        ),
        (
            "psycopg2.OperationalError: could not connect to server: Connection refused",
            "service needed",
            "database",
        ),
        ("_tkinter.TclError: no display name and no $DISPLAY", "service needed", "display"),
        (
            "test pcm::drop panicked at src/pcm.rs:1025:88: called `Result::unwrap()` on an `Err` "
            'value: Error("snd_pcm_open", ENOENT)',
            "service needed",
            "device",
        ),
        (
            "socket.gaierror: [Errno -3] Temporary failure in name resolution",
            "service needed",
            "network",
        ),
        (
            "build failed: ERR_PNPM_FETCH_403 GET https://registry.npmjs.org/yaml/-/yaml-2.3.1.tgz: "
            "Forbidden - 403",
            "build error",
            "",
        ),
        ("./x.go:3:2: undefined: Foo", "build error", ""),
        (
            "1111 of 1165 tests passed (under eras.pass_share 0.98); first: tests/x.py::t",
            "tests failing",
            "",
        ),
        ("", "build error", ""),
    ],
)
def test_each_root_error_gets_one_reason(root: str, reason: str, detail: str) -> None:
    loss = era_loss(root)
    assert (loss.reason, loss.detail) == (reason, detail)


def test_losses_count_like_reasons_together() -> None:
    counted = losses(
        [
            "build failed: fatal error: ffi.h: No such file or directory",
            "build failed: fatal error: ffi.h: No such file or directory",
            "3 of 10 tests passed (under eras.pass_share 0.8)",
            "./x.go:3:2: undefined: Foo",
        ]
    )
    assert counted == {
        "native library missing (ffi.h)": 2,
        "tests failing": 1,
        "build error": 1,
    }


def test_a_unit_is_left_out_for_a_service_or_for_its_build() -> None:
    assert service_needed("go: downloading x\nok pkg") == ""
    refused = "E   ConnectionRefusedError: [Errno 111] Connection refused"
    assert unit_exclusion(refused, "ConnectionRefusedError: [Errno 111] Connection refused") == (
        "needs a service: network (ConnectionRefusedError: [Errno 111] Connection refused)"
    )
    said = "broken/b_test.go:6:5: undefined: Three"
    assert unit_exclusion(f"# example.com/m/broken\n{said}", said) == f"build failed: {said}"
    assert unit_exclusion("", "") == "build failed"
