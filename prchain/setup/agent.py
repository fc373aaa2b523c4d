"""The setup agent's loop: the model calls tools in a build sandbox until it finishes or gives up.

Each `run` that succeeds becomes a recipe step and a checkpoint (`docker commit`); `rollback`
returns the sandbox to the last checkpoint and drops the failed steps since it. What comes back is
a recipe (the kept steps and the test command) that the caller verifies exactly as it verifies the
planner's recipes: the agent's own word that the tests ran is never taken.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from prchain.core import git
from prchain.core.errors import ContextOverflow, LLMError, PrchainError
from prchain.environments.buildbox import BoxSettings, BuildBox, StepResult
from prchain.environments.docker_client import DockerClient
from prchain.environments.languages import LANGUAGES, language_facts
from prchain.llm.prompts import render
from prchain.llm.protocol import ChatLLM, Completion, Message
from prchain.llm.toolcalls import calls_from_text
from prchain.setup.config import SetupAgentConfig

ROLE = "env_setup"
PROMPTS = Path(__file__).with_name("prompts")
TRUNCATED = "\n[... {omitted} characters omitted ...]\n"

Outcome = Literal["finished", "gave_up", "step_limit", "cost_limit", "format_errors", "llm_error"]


class SetupAgentFailed(PrchainError):
    """The setup agent ended without a recipe (gave up, or a limit stopped it)."""

    hint = "the environment needs a hand-written recipe: environment.install_commands[REPO]"


def _tool(name: str, description: str, **properties: str) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {
                "type": "object",
                "properties": {
                    k: {"type": "string", "description": v} for k, v in properties.items()
                },
                "required": list(properties),
            },
        },
    }


TOOLS = [
    _tool(
        "inspect",
        "Run a shell command only to look; not part of the recipe.",
        command="The bash command.",
    ),
    _tool(
        "run",
        "Run one install step as root in /work/repo; kept (with a checkpoint) when it succeeds.",
        command="The bash command.",
    ),
    _tool("rollback", "Return the sandbox to the last checkpoint, undoing every change since."),
    _tool(
        "finish",
        "The environment is ready; give the command that runs the test suite.",
        test_command="Run from /work/repo, e.g. `python -m pytest -q`, `cargo test`, `go test ./...`.",
    ),
    _tool("give_up", "The environment cannot be made.", reason="One line: why."),
]
TOOL_NAMES = tuple(t["function"]["name"] for t in TOOLS)


@dataclass(frozen=True)
class SetupRequest:
    """Where the planner stopped: the commit, the era's base image, its recipe and its error."""

    repo: str
    clone: Path
    sha: str  # B_t
    base_image: str
    commands: list[str] = field(default_factory=list)
    test_command: str = ""
    failure: str = ""
    ecosystem: str = "python"  # whose language and registries the prompt names


@dataclass(frozen=True)
class StepRecord:
    tool: str
    command: str
    exit_code: int | None = None
    kept: bool = False
    rolled_back: bool = False


@dataclass(frozen=True)
class AgentRecipe:
    """What the agent found. Unverified: the caller builds and verifies it like any recipe."""

    commands: list[str]
    test_command: str
    outcome: Outcome
    steps: list[StepRecord]
    rolled_back: int
    cost_usd: float
    seconds: float
    replies: int
    log: str

    @property
    def ok(self) -> bool:
        return self.outcome == "finished"

    def required(self) -> AgentRecipe:
        """Itself when the agent finished; SetupAgentFailed (one line) otherwise."""
        if self.ok:
            return self
        last = self.log.splitlines()[-1] if self.log else ""
        raise SetupAgentFailed(f"setup agent ended without a recipe ({self.outcome}): {last}")


@dataclass
class _State:
    kept: list[str] = field(default_factory=list)  # recipe steps up to the last checkpoint
    pending: list[StepRecord] = field(default_factory=list)  # failed steps since it
    steps: list[StepRecord] = field(default_factory=list)
    rolled_back: int = 0
    log: list[str] = field(default_factory=list)


def run_setup_agent(
    llm: ChatLLM,
    client: DockerClient,
    request: SetupRequest,
    config: SetupAgentConfig,
    settings: BoxSettings | None = None,
) -> AgentRecipe:
    """Let the model repair the planner's recipe in a build sandbox; the recipe it ends with."""
    started = time.monotonic()
    with BuildBox(
        client,
        request.base_image,
        request.repo,
        request.clone,
        request.sha,
        memory=config.memory,
        settings=settings or BoxSettings(),
    ) as box:
        return _Session(llm, box, request, config, started).loop()


@dataclass
class _Session:
    llm: ChatLLM
    box: BuildBox
    request: SetupRequest
    config: SetupAgentConfig
    started: float
    state: _State = field(default_factory=_State)
    cost: float = 0.0
    replies: int = 0

    def loop(self) -> AgentRecipe:
        messages = self._opening()
        format_errors = 0
        while True:
            if self.replies >= self.config.max_steps:
                return self._end("step_limit")
            if self.cost >= self.config.max_cost_usd:
                return self._end("cost_limit")
            try:
                completion = self.llm.complete(ROLE, messages, tools=TOOLS, attempt=format_errors)
            except (ContextOverflow, LLMError) as exc:
                self.state.log.append(f"llm error: {exc}")
                return self._end("llm_error")
            self.replies += 1
            self.cost += completion.cost_usd
            call = self._first_call(completion)
            if call is None:
                format_errors += 1
                if format_errors >= self.config.max_format_errors:
                    return self._end("format_errors")
                messages += [
                    {"role": "assistant", "content": completion.content},
                    {
                        "role": "user",
                        "content": render(PROMPTS, "format_error.j2", tools=", ".join(TOOL_NAMES)),
                    },
                ]
                continue
            format_errors = 0
            name, args = call["function"]["name"], _arguments(call)
            observation, done = self._act(name, args)
            messages += [
                {"role": "assistant", "content": completion.content or "", "tool_calls": [call]},
                {"role": "tool", "tool_call_id": call["id"], "name": name, "content": observation},
            ]
            if done is not None:
                return done

    # -- the conversation ---------------------------------------------------------------------

    def _opening(self) -> list[Message]:
        req = self.request
        date = _commit_date(req.clone, req.sha)
        listing = git.output(req.clone, "ls-tree", "--name-only", req.sha).split()
        # What the prompt says of the ecosystem: its language and the registries its packages
        # come from (its room's facts).
        known = req.ecosystem if req.ecosystem in LANGUAGES else "python"
        language, registries = language_facts(known).setup_agent
        system = render(PROMPTS, "system.j2", date=date, language=language, registries=registries)
        task = render(
            PROMPTS,
            "task.j2",
            repo=req.repo,
            sha=req.sha,
            date=date,
            base_image=req.base_image,
            listing=", ".join(listing[:80]),
            commands=req.commands,
            test_command=req.test_command,
            failure=_truncate(req.failure, self.config.max_observation_chars),
        )
        return [{"role": "system", "content": system}, {"role": "user", "content": task}]

    def _first_call(self, completion: Completion) -> dict[str, Any] | None:
        """The reply's first tool call (native, or written as text); the others are not run."""
        calls = completion.tool_calls
        if not calls:
            found = calls_from_text(completion.content, TOOL_NAMES)
            calls = found[0] if found else []
        calls = [c for c in calls if c.get("function", {}).get("name") in TOOL_NAMES]
        if not calls:
            return None
        call = dict(calls[0])
        call["id"] = call.get("id") or f"call_{self.replies}"
        return call

    # -- tools ----------------------------------------------------------------------------------

    def _act(self, name: str, args: dict[str, str]) -> tuple[str, AgentRecipe | None]:
        command = str(args.get("command") or args.get("test_command") or args.get("reason") or "")
        self.state.log.append(f"$ {name} {command}".rstrip())
        if name == "finish":
            if not command.strip():
                return "Error: `test_command` is required.", None
            return "Finished.", self._end("finished", test_command=command)
        if name == "give_up":
            return "Stopped.", self._end("gave_up", reason=command)
        if name == "rollback":
            return self._rollback(), None
        if not command.strip():
            return "Error: `command` is required.", None
        result = self.box.run(command, timeout=self.config.command_timeout)
        self.state.log.append(_truncate(result.output, 4000) + f"[exit {result.exit_code}]")
        if name == "inspect":
            self.state.steps.append(StepRecord("inspect", command, result.exit_code))
            return self._observe(result), None
        return self._step(command, result), None

    def _step(self, command: str, result: StepResult) -> str:
        if not result.ok:
            record = StepRecord("run", command, result.exit_code)
            self.state.pending.append(record)
            self.state.steps.append(record)
            return self._observe(result) + (
                "\n[the step failed; its changes are still in the sandbox: `rollback` returns to "
                "the last checkpoint]"
            )
        # A failed step not rolled back stays in the recipe: the steps after it were made on the
        # state it left. Replayed with `|| true`, as it ran here (it failed and work went on).
        self.state.kept += [f"( {p.command} ) || true" for p in self.state.pending]
        self.state.pending.clear()
        self.state.kept.append(command)
        self.box.checkpoint()
        self.state.steps.append(StepRecord("run", command, 0, kept=True))
        return self._observe(result) + "\n[step kept; checkpoint taken]"

    def _rollback(self) -> str:
        self.box.rollback()
        undone = len(self.state.pending)
        self.state.rolled_back += undone
        self.state.steps = [
            StepRecord(s.tool, s.command, s.exit_code, s.kept, rolled_back=True)
            if any(s is p for p in self.state.pending)
            else s
            for s in self.state.steps
        ]
        self.state.pending.clear()
        self.state.log.append(f"rolled back {undone} failed step(s)")
        return f"Rolled back to the last checkpoint ({undone} failed step(s) undone)."

    def _observe(self, result: StepResult) -> str:
        text = _truncate(result.output, self.config.max_observation_chars)
        if result.timed_out:
            return text + f"\n[timed out after {self.config.command_timeout:g} s]"
        return (text if text.strip() else "[no output]") + f"\n[exit code {result.exit_code}]"

    def _end(self, outcome: Outcome, *, test_command: str = "", reason: str = "") -> AgentRecipe:
        if reason:
            self.state.log.append(f"gave up: {reason}")
        if outcome == "finished":  # failed steps never rolled back are part of the state tested
            self.state.kept += [f"( {p.command} ) || true" for p in self.state.pending]
        return AgentRecipe(
            commands=list(self.state.kept),
            test_command=test_command,
            outcome=outcome,
            steps=list(self.state.steps),
            rolled_back=self.state.rolled_back,
            cost_usd=self.cost,
            seconds=time.monotonic() - self.started,
            replies=self.replies,
            log="\n".join(self.state.log),
        )


def _arguments(call: dict[str, Any]) -> dict[str, str]:
    raw = call.get("function", {}).get("arguments") or "{}"
    try:
        args = json.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError:
        return {}
    return {str(k): str(v) for k, v in args.items()} if isinstance(args, dict) else {}


def _commit_date(clone: Path, sha: str) -> str:
    stamp = git.output(clone, "show", "-s", "--format=%ct", sha).strip()
    return datetime.fromtimestamp(int(stamp), tz=UTC).date().isoformat()


def _truncate(text: str, limit: int) -> str:
    """Head and tail: an install's error is usually at the end."""
    if len(text) <= limit:
        return text
    head, tail = limit * 2 // 3, limit // 3
    return text[:head] + TRUNCATED.format(omitted=len(text) - head - tail) + text[-tail:]
