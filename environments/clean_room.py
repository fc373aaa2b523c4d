"""A clean room: where hidden tests run, out of the agent's reach.

A fresh container of the stage's image in which no agent process ever ran. Root builds its tree
(the stage base C_t, with the files the hidden tests need taken from B_t) and hands it to the
tester, a user that is not the agent. The agent's change arrives as bytes and is applied with a
plain `git apply` outside any repository, so no git config, filter or hook of the agent's exists
there to run. The container is removed afterwards: nothing the tests read or write goes back.
"""

from __future__ import annotations

import posixpath

from environments import carry
from environments.config import EnvironmentConfig
from environments.docker_client import DockerClient, RawExec
from environments.protocol import ExecResult
from environments.run import INTERNAL_LIMIT, run_command

TESTER_ENV = {
    "HOME": carry.TESTER_HOME,
    "USER": carry.TESTER,
    "LOGNAME": carry.TESTER,
    "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
    "LANG": "C.UTF-8",
    "TERM": "dumb",
    "PYTHONDONTWRITEBYTECODE": "1",
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_GLOBAL": "/dev/null",
}


class DockerCleanRoom:
    """The clean room's Workspace: commands, reads and writes as the tester in /work/repo."""

    def __init__(
        self, client: DockerClient, container: str, config: EnvironmentConfig, setup: str = ""
    ) -> None:
        self.client, self.container, self.config = client, container, config
        self.setup = setup  # the stage's setup command, run as the tester after the change

    def apply(self, patch: bytes) -> str | None:
        """Apply the agent's change (bytes, `git diff --binary`), then the stage's setup command;
        None when both succeeded."""
        raw = self._raw(carry.ROOM_APPLY, stdin=patch)
        if raw.exit_code != 0:
            return raw.output.decode("utf-8", "replace").strip()[-1500:] or "git apply failed"
        if self.setup:
            done = self.execute(self.setup, timeout=self.config.test_timeout)
            if done.exit_code != 0:
                return f"the setup command failed (exit {done.exit_code}): {done.output[-1000:]}"
        return None

    def execute(self, command: str, timeout: float | None = None) -> ExecResult:
        return run_command(
            self.client,
            self.container,
            command,
            user=carry.TESTER,
            workdir=carry.WORKDIR,
            env=TESTER_ENV,
            timeout=timeout or self.config.command_timeout,
            max_output=self.config.max_output_bytes,
        )

    def read_file(self, path: str) -> str:
        raw = self._raw('test -f "$1" || exit 3; cat -- "$1"', self._abs(path), idempotent=True)
        if raw.exit_code == 3:
            raise FileNotFoundError(f"no such file in the clean room: {path}")
        if raw.exit_code != 0:
            raise PermissionError(f"cannot read {path}: {raw.output[-300:]!r}")
        return raw.output.decode("utf-8", "replace")

    def write_file(self, path: str, content: str) -> None:
        script = 'mkdir -p -- "$(dirname -- "$1")" && cat > "$1"'
        raw = self._raw(script, self._abs(path), stdin=content.encode(), idempotent=True)
        if raw.exit_code != 0:
            raise PermissionError(f"cannot write {path} in the clean room")

    def _abs(self, path: str) -> str:
        return posixpath.normpath(posixpath.join(carry.WORKDIR, path))

    def _raw(
        self, script: str, *args: str, stdin: bytes | None = None, idempotent: bool = False
    ) -> RawExec:
        argv = ["bash", "-c", script, "prchain", *args]
        return self.client.exec(
            self.container,
            argv,
            user=carry.TESTER,
            workdir=carry.WORKDIR,
            env=TESTER_ENV,
            limit=INTERNAL_LIMIT,
            deadline=600,
            stdin=stdin,
            idempotent=idempotent,
        )
