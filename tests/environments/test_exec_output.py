"""An exec's output is whole or it is not handed back (prchain/environments/exec_stream.py).

Real containers; the faults come from tests/support/exec_proxy.py, a proxy between docker-py and
the engine that spoils the stream of chosen execs while the commands themselves run to their end.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from typing import Any

import pytest

from prchain.core.errors import CommandTooLong, ExecOutputLost, NoShellInImage, UserNotInImage
from prchain.environments.exec_stream import NONCE_VAR, Bounded, not_started
from tests.support.docker_fixtures import CALC_REPO
from tests.support.exec_proxy import ExecProxy

NONCE = "0123456789abcdef0123456789abcdef"
# What Docker 20.10 (runc) writes in an exec's stream, with exit 126, when the image has no `sh`.
NO_SH = (
    b'OCI runtime exec failed: exec failed: unable to start container process: exec: "sh": '
    b"executable file not found in $PATH: unknown\r\n"
)
# What it writes (stdout, exit 126) when the exec's user is not in the image's /etc/passwd; with a
# `user:group` whose group is missing: unable to find group G: no matching entries in group file.
NO_USER = b"unable to find user root: no matching entries in passwd file\r\n"
# What Docker 26 (runc 1.1) writes, with exit 1, when an argument is past the kernel's MAX_ARG_STRLEN.
TOO_LONG = b"exec /usr/bin/sh: argument list too long\n"


# ---- the bounded buffer and its trailer (no engine) ---------------------------------------------


def _fed(limit: int, *chunks: bytes) -> Bounded:
    buffer = Bounded(limit, reserve=64)
    for chunk in chunks:
        buffer.feed(chunk)
    return buffer


@pytest.mark.parametrize("size", [0, 5, 49, 50, 51, 99, 100, 101, 5000])
def test_the_trailer_is_stripped_and_the_limit_kept_wherever_the_trailer_lands(size: int) -> None:
    output = bytes(range(48, 58)) * (size // 10) + b"x" * (size % 10)
    buffer = _fed(100, output, f"{NONCE} 0\n".encode())
    assert buffer.strip_trailer(NONCE)
    buffer.settle()
    kept = bytes(buffer.head + buffer.tail)
    assert buffer.dropped == max(0, size - 100) and len(kept) == min(size, 100)
    assert kept[: len(buffer.head)] == output[: len(buffer.head)]
    assert kept[len(buffer.head) :] == output[len(output) - len(buffer.tail) :]


def test_a_trailer_across_the_seam_of_head_and_tail_is_stripped() -> None:
    trailer = f"{NONCE} 1\n".encode()
    for split in range(1, len(trailer)):
        buffer = Bounded(200, reserve=64)
        buffer.feed(b"a" * (100 - split) + trailer)  # head is 100 bytes: the seam cuts the line
        assert buffer.strip_trailer(NONCE) and bytes(buffer.head + buffer.tail) == b"a" * (
            100 - split
        )


def test_an_output_without_its_trailer_is_said_to_be_incomplete() -> None:
    other = "f" * 32
    for data in (b"", b"hello\n", f"{other} 0\n".encode(), f"{NONCE} \n".encode()):
        assert not _fed(100, data).strip_trailer(NONCE)


def test_only_the_last_trailer_is_the_wrappers() -> None:
    forged = f"{NONCE} 0\n".encode()  # a command that knew the nonce printed it early
    buffer = _fed(1000, b"a", forged, b"b\n", f"{NONCE} 3\n".encode())
    assert (
        buffer.strip_trailer(NONCE) and bytes(buffer.head + buffer.tail) == b"a" + forged + b"b\n"
    )


@pytest.mark.parametrize(
    ("output", "why"),
    [
        (NO_SH, "no shell"),
        (
            b"OCI runtime exec failed: exec failed: executable file `sh` not found in $PATH",
            "no shell",
        ),
        (NO_SH.replace(b'"sh"', b'"dash"'), None),  # another program: not the wrapper's
        (NO_USER, "no user"),
        (b"unable to find user prchain-nobody: no matching entries in passwd file\r\n", "no user"),
        (b"unable to find group staff2: no matching entries in group file\r\n", "no user"),
        (b"unable to find user root: permission denied\r\n", None),  # not the lookup's miss
        (b"building...\n" + NO_USER, None),  # more than the engine's one line: a command's output
        (NO_SH + NO_USER, None),
        (TOO_LONG, "too long"),
        (b'OCI runtime exec failed: exec failed: exec: "sh": argument list too long', "too long"),
        (b"xargs: argument list too long\n", None),  # a command's own word, not the engine's
        (b"", None),
    ],
)
def test_the_engines_word_that_it_could_not_start_the_exec_is_recognised(
    output: bytes, why: str | None
) -> None:
    found = not_started(output)
    assert (found and found[0]) == why
    assert found is None or found[1] == output.decode().strip()


# ---- real containers --------------------------------------------------------------------------------


def _engine_socket() -> str:
    host = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    if not host.startswith("unix://"):
        pytest.skip(f"the exec proxy needs the engine on a unix socket, not {host}")
    return host.removeprefix("unix://")


@pytest.fixture
def proxy(docker_client: Any) -> Iterator[ExecProxy]:
    started = ExecProxy(_engine_socket()).start()
    yield started
    started.stop()


@pytest.fixture
def proxied(proxy: ExecProxy) -> Any:
    import docker

    from prchain.environments.docker_client import DockerClient

    return DockerClient(docker.DockerClient(base_url=proxy.url, timeout=300))


@pytest.fixture
def container(docker_client: Any, base_image: str) -> Iterator[str]:
    from prchain.environments.cleanup import owner_labels
    from prchain.environments.config import EnvironmentConfig
    from prchain.environments.docker_client import ContainerSpec

    name = f"prchain-test-exec-{secrets.token_hex(4)}"
    spec = ContainerSpec(EnvironmentConfig().base_image, name, owner_labels(), {})
    found = docker_client.run(spec)
    yield found
    docker_client.remove_container(found)


def _sh(client: Any, container: str, script: str, **kwargs: Any) -> Any:
    limit, user = kwargs.pop("limit", 1 << 20), kwargs.pop("user", "root")
    env = {"PATH": "/usr/bin:/bin"}
    return client.exec(
        container, ["sh", "-c", script], user=user, workdir="/", env=env, limit=limit, **kwargs
    )


def _runs(docker_client: Any, container: str, name: str) -> int:
    return int(_sh(docker_client, container, f"cat /tmp/{name} | wc -l").output)


@pytest.mark.docker
def test_a_read_whose_output_is_lost_runs_again_and_says_what_it_read(
    docker_client: Any, proxied: Any, proxy: ExecProxy, container: str
) -> None:
    proxy.add("count-read", "drop", times=2)
    raw = _sh(proxied, container, "echo run >> /tmp/count-read; echo hello", idempotent=True)
    assert raw.output == b"hello\n" and raw.exit_code == 0
    assert len(proxy.spoiled) == 2 and _runs(docker_client, container, "count-read") == 3


@pytest.mark.docker
def test_a_read_lost_every_time_fails_clearly_after_its_attempts(
    docker_client: Any, proxied: Any, proxy: ExecProxy, container: str
) -> None:
    proxy.add("count-always", "drop", times=10)
    with pytest.raises(ExecOutputLost, match="did not arrive whole in 3 runs"):
        _sh(proxied, container, "echo run >> /tmp/count-always; echo hello", idempotent=True)
    assert _runs(docker_client, container, "count-always") == 3


@pytest.mark.parametrize("mode", ["drop", "cut"])
@pytest.mark.docker
def test_a_command_whose_output_is_lost_is_never_run_twice(
    docker_client: Any, proxied: Any, proxy: ExecProxy, container: str, mode: str
) -> None:
    proxy.add("count-once", mode, keep=100)
    script = "echo run >> /tmp/count-once; seq 1 5000"
    with pytest.raises(ExecOutputLost, match="ran once and is not run again"):
        _sh(proxied, container, script)
    assert _runs(docker_client, container, "count-once") == 1
    assert _sh(proxied, container, script).output.endswith(b"4999\n5000\n")  # spoiled once only


def _derived(
    docker_client: Any, base_image: str, kind: str, script: str, user: str
) -> Iterator[str]:
    """A container (running as `user`) of an image tagged prchain-test-<kind>-<random>: the base
    image after root ran `script` in it; container and image are removed afterwards."""
    from prchain.environments.cleanup import owner_labels
    from prchain.environments.docker_client import ContainerSpec

    tag = f"prchain-test-{kind}-{secrets.token_hex(4)}:latest"
    name = tag.split(":")[0]
    source = docker_client.run(ContainerSpec(base_image, f"{name}-source", owner_labels(), {}))
    try:
        _sh(docker_client, source, script)
        docker_client.commit_image(source, tag, {"prchain.kind": f"test-{kind}"}, [])
    finally:
        docker_client.remove_container(source)
    found = docker_client.run(ContainerSpec(tag, name, owner_labels(), {}, user=user))
    yield found
    docker_client.remove_container(found)
    docker_client.remove_image(tag)


@pytest.fixture
def shell_less(docker_client: Any, base_image: str) -> Iterator[str]:
    """A container of an image with no `sh` at all: the base image with /bin/sh removed (/bin is
    /usr/bin there; the wrapper's own sh is already running when it goes)."""
    yield from _derived(docker_client, base_image, "nosh", "rm /usr/bin/sh", "root")


@pytest.mark.docker
def test_an_image_without_sh_fails_at_once_and_says_so(
    proxied: Any, proxy: ExecProxy, shell_less: str
) -> None:
    """Not ExecOutputLost after three runs: nothing ran, and nothing will."""
    with pytest.raises(NoShellInImage, match="prchain-test-nosh-.* has no POSIX shell at /bin/sh"):
        _sh(proxied, shell_less, "true", idempotent=True)
    assert len(proxy.starts) == 1 and not proxy.spoiled


@pytest.mark.docker
def test_an_argument_past_the_kernels_limit_fails_at_once_and_says_so(
    proxied: Any, proxy: ExecProxy, container: str
) -> None:
    """Not ExecOutputLost after three runs: the kernel refused to start it, so nothing ran."""
    with pytest.raises(CommandTooLong, match=r"a command of 140,0\d\d bytes .* too long"):
        _sh(proxied, container, "true " + "a" * 140_000, idempotent=True)
    assert len(proxy.starts) == 1 and not proxy.spoiled
    assert _sh(proxied, container, "echo " + "a" * 120_000).output == b"a" * 120_000 + b"\n"


@pytest.fixture
def rootless(docker_client: Any, base_image: str) -> Iterator[str]:
    """A container of an image whose /etc/passwd has no root: the base image with root's line cut.
    It runs as uid 0, which needs no lookup; `user="root"` does."""
    yield from _derived(docker_client, base_image, "nouser", "sed -i '/^root:/d' /etc/passwd", "0")


@pytest.mark.docker
def test_an_exec_as_root_where_the_image_has_no_root_fails_at_once_and_says_so(
    proxied: Any, proxy: ExecProxy, rootless: str
) -> None:
    """Not ExecOutputLost after three runs: the engine found no such user, so nothing ran."""
    with pytest.raises(UserNotInImage) as failed:
        _sh(proxied, rootless, "true", idempotent=True)
    said = str(failed.value)
    assert said.startswith("image prchain-test-nouser-") and "has no user root" in said
    assert f"container {rootless[:12]}: unable to find user root: no matching" in said
    assert "\n" not in said and len(proxy.starts) == 1 and not proxy.spoiled
    assert _sh(proxied, rootless, "id -u", user="0").output == b"0\n"  # uid 0 needs no lookup


@pytest.mark.docker
def test_an_exec_as_a_user_the_image_lacks_fails_at_once_and_names_it(
    proxied: Any, proxy: ExecProxy, container: str
) -> None:
    env = {"PATH": "/usr/bin:/bin"}
    for user in ("prchain-nobody", "root:prchain-nogroup"):
        with pytest.raises(UserNotInImage, match=f"has no user {user}, .* {container[:12]}: "):
            proxied.exec(
                container, ["true"], user=user, workdir="/", env=env, limit=1000, idempotent=True
            )
    assert len(proxy.starts) == 2 and not proxy.spoiled


@pytest.mark.docker
@pytest.mark.parametrize(("words", "code"), [(NO_USER, 126), (NO_SH, 127)])
def test_a_command_that_prints_the_engines_words_itself_returns_them(
    proxied: Any, proxy: ExecProxy, container: str, words: bytes, code: int
) -> None:
    """Its wrapper ran and printed the trailer: its output and exit code are the command's own,
    whatever the output says."""
    echoed = _sh(proxied, container, f"cat; exit {code}", stdin=words, idempotent=True)
    assert echoed.exit_code == code and echoed.output == words and len(proxy.starts) == 1


@pytest.mark.docker
def test_a_commands_own_missing_program_is_its_exit_127_not_a_missing_shell(
    proxied: Any, proxy: ExecProxy, container: str
) -> None:
    """The trailer proves the wrapper ran: the command's own missing program is exit 127."""
    env = {"PATH": "/usr/bin:/bin"}
    missing = proxied.exec(
        container, ["prchain-no-such-program"], user="root", workdir="/", env=env, limit=1000
    )
    assert missing.exit_code == 127 and b"prchain-no-such-program: not found" in missing.output
    assert len(proxy.starts) == 1


@pytest.mark.docker
def test_output_that_came_with_the_exec_answers_headers_is_kept(
    proxied: Any, proxy: ExecProxy, container: str
) -> None:
    """docker-py read the socket past http.client's buffer and lost these bytes (#3332)."""
    proxy.add("with-headers", "coalesce", times=2)
    assert _sh(proxied, container, "echo with-headers").output == b"with-headers\n"
    failed = _sh(proxied, container, "printf 'with-headers'; exit 4")
    assert failed.output == b"with-headers" and failed.exit_code == 4 and len(proxy.spoiled) == 2


@pytest.mark.docker
def test_the_trailer_and_its_nonce_never_reach_the_output(
    docker_client: Any, container: str
) -> None:
    cases = {
        "": b"",
        "printf 'no newline'": b"no newline",
        "echo out; echo err >&2": b"out\nerr\n",
        "echo failed; exit 3": b"failed\n",
        f"env | grep -c {NONCE_VAR}; true": b"0\n",  # the nonce left the command's environment
    }
    for script, expected in cases.items():
        raw = _sh(docker_client, container, script)
        assert raw.output == expected, script
    fed = _sh(docker_client, container, "cat", stdin=b"x" * 100_000)
    assert fed.output == b"x" * 100_000


@pytest.mark.docker
def test_large_outputs_keep_their_head_and_tail(docker_client: Any, container: str) -> None:
    whole = b"".join(b"%d\n" % i for i in range(1, 100_001))
    raw = _sh(docker_client, container, "seq 1 100000", limit=1000)
    assert len(raw.output) == 1000 and raw.dropped == len(whole) - 1000 and raw.head == 500
    assert raw.output[:500] == whole[:500] and raw.output[500:] == whole[-500:]
    for extra in (0, 1, 30):  # at the limit, and just past it: the trailer takes none of it
        exact = _sh(docker_client, container, f"head -c {1000 + extra} /dev/zero", limit=1000)
        assert len(exact.output) == 1000 and exact.dropped == extra


@pytest.mark.docker
def test_a_deadline_still_ends_the_wait_for_a_stream_left_open(
    docker_client: Any, container: str
) -> None:
    raw = _sh(docker_client, container, "echo started; exec sleep 60", deadline=2)
    assert raw.output == b"started\n" and raw.exit_code == 137 and raw.seconds < 30


# ---- through the sandbox ----------------------------------------------------------------------


@pytest.fixture
def proxied_env(proxied: Any, calc_image: Any, calc_chain: Any) -> Iterator[Any]:
    from prchain.environments.config import EnvironmentConfig
    from prchain.environments.docker_env import DockerEnvironment

    env = DockerEnvironment(
        EnvironmentConfig(),
        repo=CALC_REPO,
        clone_path=str(calc_chain.path),
        stages=calc_chain.stages,
        client=proxied,
    )
    yield env
    env.close()


@pytest.mark.docker
def test_the_sandbox_reads_again_what_it_lost_and_never_reruns_the_agents_command(
    proxy: ExecProxy, proxied_env: Any
) -> None:
    proxy.add("id -u agent", "drop")  # the start-up read that once failed a Ray rollout
    proxy.add("diff.err", "drop")  # the diff script
    env = proxied_env.start()
    env.enter_stage(1)
    env.write_file("notes.txt", "one\n")
    assert "notes.txt" in env.diff()
    proxy.add("count-agent", "drop")
    with pytest.raises(ExecOutputLost):
        env.execute("echo run >> /tmp/count-agent; python3 -c 'print(1)'")
    assert env.execute("cat /tmp/count-agent").output == "run\n"
    assert [mode for mode, _argv in proxy.spoiled] == ["drop"] * 3


@pytest.mark.docker
def test_an_offline_sandbox_has_its_loopbacks_ipv6_address_and_nothing_else(
    docker_client: Any, container: str
) -> None:
    """c-ares' suite serves on `::1`: the offline namespace holds `lo` alone, with `::1` up."""
    seen = _sh(docker_client, container, "cat /proc/net/if_inet6; ls /sys/class/net").output
    assert seen.split()[0] == b"0" * 31 + b"1" and seen.split()[-1] == b"lo"
    assert b"eth0" not in seen


@pytest.mark.docker
def test_an_offline_sandbox_resolves_its_own_host_name_to_a_loopback_address(
    docker_client: Any, container: str
) -> None:
    """nacos's `InetUtils` falls back on `InetAddress.getLocalHost()`, which resolves the host's
    name; in a bare `none` namespace that name is in no hosts file, and 112 tests errored."""
    resolved = _sh(docker_client, container, "getent hosts $(hostname)").output.split()
    assert resolved == [b"127.0.1.1", b"sandbox"]
    assert _sh(docker_client, container, "getent hosts localhost").output.split()[0] == b"::1"
