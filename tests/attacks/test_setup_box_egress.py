"""Issue 52, class 3: the setup agent's box reached a listener on the host through the bridge
network. Now it has no network of its own; a proxy admits the package registries and nothing
else, by name and by address (a name resolving to the host or the LAN is refused as well)."""

from __future__ import annotations

import ipaddress
import socket
import socketserver
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from prchain.dev.repos import git
from prchain.environments.egress import EgressProxy, blocked

pytestmark = pytest.mark.docker

SECRET = f"HOST-SECRET-{uuid.uuid4().hex[:8]}"
RUN = uuid.uuid4().hex[:8]
REPO = f"seal-egress-{RUN}/box"
# Each probe prints one word: what the box reached.
PROBE = """
import os, socket, sys, urllib.request
where, port = sys.argv[1], int(sys.argv[2])
try:
    s = socket.create_connection((where, port), timeout=3)
    print("direct:", s.recv(100).decode())
except OSError as exc:
    print("direct: refused", type(exc).__name__)
for url in (f"http://{where}:{port}/", "https://example.com/", "https://pypi.org/simple/pip/"):
    try:
        with urllib.request.urlopen(url, timeout=60) as answer:
            print(url, answer.status)
    except Exception as exc:
        print(url, "refused", type(exc).__name__)
"""


@pytest.fixture
def host_listener() -> Iterator[int]:
    """A service on every address of the host, as a database or a metadata endpoint would be."""

    class Answer(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            self.request.sendall(f"HTTP/1.0 200 OK\r\n\r\n{SECRET}".encode())

    server = socketserver.ThreadingTCPServer(("0.0.0.0", 0), Answer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def _tiny_repo(path: Path) -> str:
    path.mkdir()
    git(path, "init", "-q", "-b", "main")
    (path / "README.md").write_text("box\n")
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "start")
    return git(path, "rev-parse", "HEAD").strip()


def _gateway(docker_client: Any) -> str:
    """The host's address on the bridge network: where a container finds a host service."""
    ipam = docker_client.api.inspect_network("bridge")["IPAM"]["Config"][0]
    return ipam.get("Gateway") or str(next(ipaddress.ip_network(ipam["Subnet"]).hosts()))


def test_the_setup_box_reaches_the_registries_and_nothing_on_the_host(
    docker_client: Any,
    base_image: str,
    host_listener: int,
    tmp_path: Path,
    fake_llm: Any,
    llm_config: Any,
) -> None:
    """The setup agent (scripted) runs the probe in its box, as `env setup`'s ladder starts it;
    what the box reached comes back to the agent as the step's output. Before the proxy the box
    was on the bridge network and read the host's secret."""
    from prchain.environments.config import EnvironmentConfig
    from prchain.environments.eras.build import cache_volume
    from prchain.environments.eras.config import ErasConfig
    from prchain.environments.eras.manifests import snapshot
    from prchain.llm.client import LLMClient
    from prchain.setup.config import SetupAgentConfig
    from prchain.setup.ladder import RepairRequest
    from prchain.setup.repair import agent_repair

    gateway = _gateway(docker_client)
    probe = f"python3 -c '{PROBE}' {gateway} {host_listener}"
    fake_llm.push(
        model="env_setup", tool_calls=[{"name": "inspect", "arguments": {"command": probe}}]
    )
    fake_llm.push(
        model="env_setup", tool_calls=[{"name": "give_up", "arguments": {"reason": "seen"}}]
    )
    eras = ErasConfig(
        suites={"bookworm": "3.11"}, extra_base_packages=[], cache_volume=f"prchain-seal-{RUN}"
    )
    sha = _tiny_repo(tmp_path / "box")
    repair = agent_repair(
        LLMClient(llm_config), EnvironmentConfig(), eras, SetupAgentConfig(), client=docker_client
    )
    request = RepairRequest(
        REPO, str(tmp_path / "box"), sha, "e1", snapshot(tmp_path / "box", sha), None, "no", ""
    )
    try:
        assert repair(request) is None  # the agent gave up
    finally:
        docker_client.remove_volume(cache_volume(eras, REPO))
    last = fake_llm.requests_for("env_setup")[-1]["messages"]
    seen = "\n".join(str(m["content"]) for m in last if m["role"] == "tool")
    assert SECRET not in seen, seen
    assert "direct: refused" in seen, seen
    assert f"http://{gateway}:{host_listener}/ refused" in seen
    assert "https://example.com/ refused" in seen
    assert "https://pypi.org/simple/pip/ 200" in seen  # the registry is reachable


@pytest.mark.parametrize(
    ("address", "refused"),
    [("127.0.0.1", True), ("172.17.0.1", True), ("10.1.2.3", True), ("169.254.169.254", True),
     ("::1", True), ("151.101.0.223", False)],
)  # fmt: skip
def test_the_proxy_refuses_the_host_and_the_lan_by_address(address: str, refused: bool) -> None:
    """(unit) a registry name that resolves to the host or the LAN is no way out."""
    assert blocked(address) is refused
    with EgressProxy(["pypi.org"]) as proxy:
        assert Path(proxy.directory, "proxy.sock").exists()
    assert not Path(proxy.directory).exists()
    assert socket.AF_UNIX  # the proxy's socket family exists here


def test_an_era_build_reaches_the_index_and_nothing_on_the_host(
    docker_client: Any, base_image: str, host_listener: int, tmp_path: Path
) -> None:
    """A build step (a build backend runs as root there) probes the host as the box's agent did,
    then installs from the configured index, a local one on the host's 127.0.0.1 as the era
    tests use. Before the proxy the build was on the bridge network and read the host's secret."""
    from prchain.environments.config import EnvironmentConfig
    from prchain.environments.eras.build import cache_volume, ensure_era_image
    from prchain.environments.eras.config import ErasConfig
    from prchain.environments.eras.ecosystems import Plan
    from tests.support.fake_index import FakeIndex, Release, make_wheel

    gateway = _gateway(docker_client)
    wheels = tmp_path / "wheels"
    wheels.mkdir()
    wheel = make_wheel(wheels, "tinyseal", "1.0", {"tinyseal/__init__.py": "X = 'fetched'\n"})
    repo = f"seal-egress-{RUN}/build"
    commands = [
        f"python3 -c '{PROBE}' {gateway} {host_listener}",
        "uv venv -q -p /usr/bin/python3 /tmp/v && uv pip install -q --python /tmp/v/bin/python "
        "tinyseal && /tmp/v/bin/python -c 'import tinyseal; print(\"installed:\", tinyseal.X)'",
    ]
    with FakeIndex([Release("tinyseal", "1.0", "2023-01-01T00:00:00Z", wheel)]) as index:
        eras = ErasConfig(
            suites={"bookworm": "3.11"},
            extra_base_packages=[],
            cache_volume=f"prchain-seal-{RUN}",
            index_url=index.url,
        )
        plan = Plan("python", "bookworm", "3.11", "2024-01-01T00:00:00Z", commands, "true")
        sha = _tiny_repo(tmp_path / "build")
        try:
            built = ensure_era_image(
                docker_client,
                EnvironmentConfig(),
                eras,
                repo=repo,
                clone=tmp_path / "build",
                sha=sha,
                plan=plan,
                era_key="e",
                notify=print,
            )
        finally:
            for image in docker_client.images({"prchain.repo": repo, "prchain.kind": "era"}):
                for tag in image["tags"]:
                    docker_client.remove_image(tag)
            docker_client.remove_volume(cache_volume(eras, repo))
    assert SECRET not in built.log, built.log[-3000:]
    assert "direct: refused" in built.log
    assert f"http://{gateway}:{host_listener}/ refused" in built.log
    assert "https://pypi.org/simple/pip/ 200" in built.log  # a registry by name
    assert "installed: fetched" in built.log and built.image_id, built.log[-3000:]  # the index
