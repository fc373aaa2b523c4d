"""The exceptions prchain raises on purpose.

Each name says what happened; each carries a one-line hint that the CLI prints beside the message.
Library code raises these; only the CLI edge catches them.
"""

from __future__ import annotations


class PrchainError(Exception):
    """Base of every error prchain raises deliberately."""

    hint: str = ""
    # The CLI's exit status (prchain.cli.exits): 1 work failed, 2 usage or configuration error.
    exit_status: int = 1

    def __init__(self, message: str, *, hint: str | None = None) -> None:
        super().__init__(message)
        if hint is not None:
            self.hint = hint


class ConfigError(PrchainError):
    hint = "check your config file and --set overrides (prchain config show prints the result)"
    exit_status = 2


class UnknownName(ConfigError):
    """A registry lookup for a name nobody registered."""


class MissingCredentials(PrchainError):
    hint = "export GITHUB_TOKEN=<token>[,<token>...] or mine a local clone with --source git"
    exit_status = 2


class BadCredentials(PrchainError):
    hint = "the token was refused (401); create a new one or check GITHUB_TOKEN"
    exit_status = 2


class RepoNotFound(PrchainError):
    hint = "check the owner/name spelling, or that the token can see a private repository"


class InvalidRepoName(PrchainError):
    hint = "repositories are written owner/name, e.g. astral-sh/ruff"
    exit_status = 2


class RateLimited(PrchainError):
    """The service keeps refusing us after the retry budget was spent."""

    hint = "wait for the reset or add more tokens (comma-separated GITHUB_TOKEN)"


class ServiceUnavailable(PrchainError):
    hint = "the remote service failed repeatedly; rerun later: finished work is kept"


class ServiceUnreachable(ServiceUnavailable):
    hint = "no network to the service? set GITHUB_TOKEN on a machine that reaches it, point miner.github.api_url elsewhere, or mine a local clone with --source git"


class GitError(PrchainError):
    hint = "check that the path is a git clone and that git can read it"


class NotAClone(GitError):
    """The path given as a local clone does not exist or is not a git repository (a usage error)."""

    exit_status = 2


class EnvironmentFailure(PrchainError):
    hint = "is the Docker engine running? `docker info` should answer"


class BuildFailed(EnvironmentFailure):
    """An image build ran and failed; `kind` and the hint come from its log (prchain.environments.buildlog)."""

    hint = "the image build failed; read its log"

    def __init__(
        self, message: str, *, hint: str | None = None, kind: str = "command", log: str = ""
    ) -> None:
        super().__init__(message, hint=hint)
        self.kind = kind
        self.log = log


class ContainerDied(EnvironmentFailure):
    hint = "the sandbox container exited unexpectedly; the stage is recorded as failed"


class ProcessStopping(ContainerDied):
    """Ctrl-C or SIGTERM removed this process's containers; a worker thread still running asks
    for no new one (it would run its whole command again in it before the process could exit).
    A died container to its caller: an infrastructure failure, never the agent's."""

    hint = "the run was interrupted; rerun to continue: finished work is kept"


class ReportTooLarge(EnvironmentFailure):
    """A test report past its cap (`environment.max_report_bytes`): never read, never a pass."""


class ExecOutputLost(EnvironmentFailure):
    """A command in a container ended, but its output did not arrive whole. It ran, so it is not
    run again unless it is a read; an infrastructure error, never a verdict."""

    hint = "the Docker stream lost a command's output; rerun: finished work is kept and resumes"


class CommandTooLong(EnvironmentFailure):
    """The kernel refused to start an exec: one of its arguments is longer than it takes (128 KiB
    on 4 KiB pages), or all of them together are. Nothing ran; running it again cannot help."""

    hint = "pass large content through a file or standard input, not as one argument"


class NoShellInImage(EnvironmentFailure):
    """The engine could not start `sh` in a container. Every exec runs in a small sh wrapper
    (prchain.environments.exec_stream), so nothing can run there; running again cannot help."""

    hint = "use an image with a POSIX shell at /bin/sh (a scratch or distroless image cannot serve)"


class UserNotInImage(EnvironmentFailure):
    """The engine could not start an exec as its user: the name (or group) is not in the image's
    /etc/passwd (or /etc/group). Nothing ran; running again cannot help."""

    hint = "run as a user the image lists in /etc/passwd (root too), or add that user to the image"


class ArchiveRefused(EnvironmentFailure):
    """An image archive carries an image or a name the task file does not state, or would replace
    an image the engine already has (issue 77). Nothing of it was loaded; the message says which
    image, so it stands alone on one line."""

    hint = ""


class LLMError(PrchainError):
    hint = "check OPENAI_BASE_URL / OPENAI_API_KEY and the model names in your config"


class LLMNotConfigured(LLMError):
    """No server to talk to (no URL, no key) or a key the server refused: configuration, not work."""

    exit_status = 2


class LLMOutputInvalid(LLMError):
    """The model answered, but not in the shape its role's parser requires."""

    hint = "the model's reply could not be parsed even after retries; try a stronger model for this role"


class JudgeOutputInvalid(LLMOutputInvalid):
    pass


class JudgeInputTooLarge(PrchainError):
    """The judge's prompt would exceed agent.max_judge_prompt_tokens; the stage ends unjudged."""

    hint = "the agent's diff is too large to judge; raise agent.max_judge_prompt_tokens if it is legitimate"


class NothingToDo(PrchainError):
    hint = "run the earlier pipeline stage first (mine → chains build → queries build → rollout)"


class LLMUnavailable(LLMError):
    """The LLM server kept failing (429, 5xx, timeouts, refused connections) after the retry budget."""

    hint = "the LLM server kept failing; rerun later: finished work and cached replies are kept"


class ContextOverflow(LLMError):
    """The server refused the request because the conversation no longer fits the model's context."""

    hint = "the conversation outgrew the model's context window; lower the step budget or use a longer-context model"


class PRMOutputInvalid(LLMOutputInvalid):
    """The PRM's reply is not a verdict of the shape its variant asks for."""


class GithubQueryFailed(PrchainError):
    """GitHub answered, but refused the request for a reason retrying cannot fix (e.g. a GraphQL error)."""

    hint = "the GitHub API refused a query; rerun with -v for details, finished work is kept"


class BackendUnavailable(PrchainError):
    """The execution backend (a Ray cluster) could not be started or reached."""

    hint = "check `ray status`, or run with --backend local"


class StoreNotShared(ConfigError):
    """The store cannot be written by every worker of the backend (a SQLite file, remote workers)."""

    hint = "use PostgreSQL for a cluster: --db postgresql+psycopg://user:password@host/prchain"


class MissingExtra(PrchainError):
    """An optional dependency group is not installed (e.g. plotly for `prchain report`)."""

    hint = "pip install 'prchain[report]' (make install installs every extra)"
    exit_status = 2


class OutputPathError(PrchainError):
    """An output path that cannot or must not be written (unwritable, a device, a FIFO, ...)."""

    hint = "choose a regular file in a directory you can write to"
    exit_status = 2


class GithubReplyInvalid(ServiceUnavailable):
    """GitHub (or whatever answers at the configured URL) sent something that is not JSON."""

    hint = "is miner.github.api_url the GitHub API (https://api.github.com), not a web page or a proxy's login page?"


class StoreUnavailable(PrchainError):
    """The store cannot be opened: wrong URL or password, server down, or not a database file."""

    hint = "check --db / store.url (`prchain config show` prints the effective one)"


class BudgetExhausted(PrchainError):
    """The run reached its --budget-usd / --budget-tokens; work stopped before the next LLM call."""

    hint = "finished work is kept: rerun (with a larger budget) to resume where it stopped"


class StoreOutdated(StoreUnavailable):
    """The store's schema is older than this prchain's (or it predates migrations)."""

    hint = "run `prchain db upgrade` with the same --db/--config (back the store up first)"


class StoreTooNew(StoreUnavailable):
    """The store was written by a newer prchain: its schema revision is unknown here."""

    hint = "use the prchain that wrote this store (pip install -U prchain), or point --db elsewhere"


class StoreUnrecognised(StoreUnavailable):
    """The database holds tables, but not a prchain store's."""

    hint = "point --db at a prchain store or at an empty database"
