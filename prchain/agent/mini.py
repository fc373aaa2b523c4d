"""mini-swe-agent as the scaffold of a rollout: its prompts, its bash tool and its step, inside
prchain's own stage sandbox, its model calls through prchain's client.

The only module that imports `minisweagent`. What is mini-swe-agent's: `DefaultAgent.step` (query
the model, parse its tool calls, run them, format the observations), how tool calls become actions
and outputs observations, and the agent/model templates of the chosen config (`agent.mini_config`,
mini.yaml by default). What is prchain's: the model calls (`PolicyModel`: the `policy` role of
prchain's client, cached, priced and budgeted like the built-in loop's), the sandbox
its commands run in (`SandboxShell`, an Environment of mini-swe-agent's protocol over the stage
sandbox: offline, carry-forward B_t ⊕ Δ_(t−1) done by the runner at stage entry), the loop around
`step` (one conversation across stages and judge rounds instead of `DefaultAgent.run`'s one task),
the step and token budgets, the PRM hook after each step, and every message stored as it happens.

The model runs on the host; the sandbox sees only the commands. The API key stays in prchain's
client, never in the container, the messages or the stored config.
"""

from __future__ import annotations

import os
import platform
import shlex
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from prchain.agent.config import AgentConfig
from prchain.agent.hooks import StepHook, StepRecord
from prchain.agent.loop import Counters, StageLoop, StageRun, StepSink
from prchain.agent.tasks import ChainTask, StageTask
from prchain.core.errors import ConfigError, ContextOverflow, LLMOutputInvalid, MissingExtra
from prchain.environments.protocol import Environment
from prchain.llm.prompts import render
from prchain.llm.protocol import ChatLLM, Completion, Message, sendable

PROMPTS = Path(__file__).with_name("prompts") / "mini"
SUBMIT_LINE = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"  # mini-swe-agent's own end-of-task marker
# Fields of a message the API and the export know; mini-swe-agent's `extra` stays in memory.
_WIRE_KEYS = ("role", "content", "tool_calls", "tool_call_id", "name")
# mini-swe-agent's own observation template, for a config whose `model` section names none.
OBSERVATION = (
    "{% if output.exception_info %}<exception>{{output.exception_info}}</exception>\n{% endif %}"
    "<returncode>{{output.returncode}}</returncode>\n<output>\n{{output.output}}</output>"
)


def load_mini() -> None:
    """Import mini-swe-agent without its start-up banner, and tell litellm (which some of its
    modules import) not to fetch its price map from the internet: sandbox hosts are offline.
    Raises MissingExtra when mini-swe-agent is not installed."""
    os.environ.setdefault("MSWEA_SILENT_STARTUP", "1")
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    try:
        import minisweagent  # noqa: F401
    except ImportError as exc:
        raise MissingExtra(
            f"agent.scaffold mini-swe-agent needs the mini-swe-agent package ({exc.name} is missing)",
            hint="pip install 'prchain[mini]'",
        ) from exc


def mini_config(spec: str) -> dict[str, Any]:
    """A mini-swe-agent config by its built-in name (mini.yaml, benchmarks/swebench.yaml) or path;
    an unknown one is a ConfigError that lists the built-in names."""
    load_mini()
    from minisweagent.config import builtin_config_dir, get_config_from_spec

    try:
        return dict(get_config_from_spec(spec))
    except FileNotFoundError:
        names = sorted(
            str(p.relative_to(builtin_config_dir)) for p in builtin_config_dir.rglob("*.yaml")
        )
        raise ConfigError(
            f"agent.mini_config: no mini-swe-agent config {spec!r} (neither a file nor one of "
            f"its own: {', '.join(names)})"
        ) from None


@dataclass
class PolicyModel:
    """mini-swe-agent's model protocol over prchain's own client, as the `policy` role: every call
    is cached, priced into the rollout, held to `llm.budget_*`, retried and repaired (a tool call
    written as text excepted) like the built-in loop's, and stored in `llm_calls` with the rollout.
    What mini-swe-agent's model class adds stays its own: its `bash` tool, how tool calls become
    actions (and its format errors), and how outputs become observations."""

    llm: ChatLLM
    rollout_id: int | None
    templates: dict[
        str, Any
    ]  # the config's `model` section (observation and format-error templates)
    attempt: int = 0  # format errors in a row so far: a retry is another request, never the cache's
    config: dict[str, Any] = field(init=False)  # mini-swe-agent's Model protocol asks for one

    def __post_init__(self) -> None:
        self.config = {"model_name": "policy", **self.templates}

    def query(self, messages: list[dict[str, Any]], **_: Any) -> dict[str, Any]:
        from minisweagent.exceptions import FormatError
        from minisweagent.models.utils.actions_toolcall import BASH_TOOL

        sent = sendable([{k: v for k, v in m.items() if k != "extra"} for m in messages])
        reply = self.llm.complete(
            "policy",
            sent,
            tools=[dict(BASH_TOOL)],
            rollout_id=self.rollout_id,
            attempt=self.attempt,
            check=self._check,
        )
        used = {"prompt_tokens": reply.prompt_tokens, "completion_tokens": reply.completion_tokens}
        extra = {
            "response": {"usage": used, "finish_reason": reply.finish_reason},
            "cost": reply.cost_usd,
            "timestamp": time.time(),
        }
        try:
            actions = self._actions(reply)
        except FormatError as exc:
            exc.messages[0]["extra"].update(extra)
            raise
        return {**reply.as_message(), "extra": {"actions": actions, **extra}}

    def _actions(self, reply: Completion) -> list[dict[str, Any]]:
        """mini-swe-agent's reading of the reply's tool calls (FormatError when unusable)."""
        from minisweagent.models.utils.actions_toolcall import parse_toolcall_actions

        calls = [
            SimpleNamespace(id=call.get("id"), function=SimpleNamespace(**call["function"]))
            for call in reply.tool_calls
        ]
        return parse_toolcall_actions(
            calls,
            format_error_template=self._template("format_error_template", "{{ error }}"),
            template_kwargs={"finish_reason": reply.finish_reason},
        )

    def _check(self, reply: Completion) -> None:
        """Refuses (for the cache) a reply mini-swe-agent cannot act on."""
        from minisweagent.exceptions import FormatError

        try:
            self._actions(reply)
        except FormatError as exc:
            raise LLMOutputInvalid(str(exc.messages[0]["content"])) from None

    def format_message(self, **kwargs: Any) -> dict[str, Any]:
        return dict(kwargs)

    def format_observation_messages(
        self, message: dict[str, Any], outputs: list[dict[str, Any]], template_vars: Any = None
    ) -> list[dict[str, Any]]:
        from minisweagent.models.utils.actions_toolcall import (
            format_toolcall_observation_messages,
        )

        return format_toolcall_observation_messages(
            actions=message.get("extra", {}).get("actions", []),
            outputs=outputs,
            observation_template=self._template("observation_template", OBSERVATION),
            template_vars=template_vars,
        )

    def get_template_vars(self, **_: Any) -> dict[str, Any]:
        return dict(self.config)

    def serialize(self) -> dict[str, Any]:
        return {"info": {"config": {"model_type": f"{__name__}.{type(self).__name__}"}}}

    def _template(self, key: str, default: str) -> str:
        return str(self.templates.get(key) or default)


@dataclass
class SandboxShell:
    """mini-swe-agent's Environment protocol over a prchain sandbox: each command runs where the
    built-in agent's `bash` tool would (the stage's checkout, as the agent user, offline)."""

    env: Environment
    timeout: float
    config: dict[str, Any] = field(default_factory=dict)
    outputs: list[dict[str, Any]] = field(default_factory=list)  # this step's, in action order

    def execute(self, action: dict[str, Any], cwd: str = "") -> dict[str, Any]:
        from minisweagent.exceptions import Submitted

        command = str(action.get("command", ""))
        if cwd:
            command = f"cd {shlex.quote(cwd)} && {command}"
        result = self.env.execute(command, timeout=self.timeout)
        timed_out = f"the command timed out after {self.timeout:g} s and was killed"
        output = {
            "output": result.output,
            "returncode": result.exit_code,
            "exception_info": timed_out if result.timed_out else "",
        }
        self.outputs.append(output)
        lines = result.output.lstrip().splitlines(keepends=True)
        if lines and lines[0].strip() == SUBMIT_LINE and result.exit_code == 0:
            submission = "".join(lines[1:])
            extra = {"exit_status": "Submitted", "submission": submission}
            raise Submitted({"role": "exit", "content": submission, "extra": extra})
        return output

    def get_template_vars(self, **kwargs: Any) -> dict[str, Any]:
        # The sandbox shares the host's kernel: uname is the same inside.
        return {**self.config, **platform.uname()._asdict(), **kwargs}

    def serialize(self) -> dict[str, Any]:
        kind = f"{type(self.env).__module__}.{type(self.env).__name__}"
        return {"info": {"config": {"environment_type": kind}}}


def wire(message: dict[str, Any]) -> Message:
    """The message as stored and exported: OpenAI chat fields only (mini's `extra` dropped)."""
    out: dict[str, Any] = {k: message[k] for k in _WIRE_KEYS if message.get(k) is not None}
    out["content"] = out.get("content") or ""
    if calls := out.get("tool_calls"):
        out["tool_calls"] = [
            {
                "id": call["id"],
                "type": "function",
                "function": {
                    "name": call["function"]["name"],
                    "arguments": call["function"].get("arguments") or "{}",
                },
            }
            for call in calls
        ]
    else:
        out.pop("tool_calls", None)
    if out["role"] == "tool":
        out.setdefault("name", "bash")
    return out


def usage(message: dict[str, Any]) -> tuple[int, int]:
    """(prompt, completion) tokens the server reported for this reply."""
    used = (message.get("extra", {}).get("response") or {}).get("usage") or {}
    return int(used.get("prompt_tokens") or 0), int(used.get("completion_tokens") or 0)


@dataclass
class MiniLoop(StageLoop):
    """mini-swe-agent working the stages of one rollout (prchain.agent.scaffold.StageAgent)."""

    mini: dict[str, Any] = field(default_factory=dict)  # the mini-swe-agent config, read once

    def __post_init__(self) -> None:
        load_mini()
        from minisweagent.agents.default import DefaultAgent

        self.model = PolicyModel(self.llm, self.rollout_id, self.mini.get("model") or {})

        self.shell = SandboxShell(self.env, self.config.command_timeout)
        templates = (self.mini.get("agent") or {}).items()
        agent = {k: v for k, v in templates if k.endswith("_template")}
        # Limits are prchain's (checked before every step); mini's own are switched off.
        self.agent = DefaultAgent(self.model, self.shell, **agent, step_limit=0, cost_limit=0)
        self.agent.messages = self.messages  # one list: a resumed rollout's conversation goes on
        self.tools = tool_schemas()

    # -- the stage seam -----------------------------------------------------------------------

    def opening(self, task: ChainTask, stage: StageTask) -> list[tuple[str, Message]]:
        n = len(task.stages)
        if stage.idx != task.stages[0].idx:
            text = self._render("next_task.j2", idx=stage.idx, n_stages=n, query=stage.query)
            return [("query", {"role": "user", "content": text})]
        first = self._render("first_task.j2", n_stages=n, overview=task.overview, query=stage.query)
        variables = self.agent.get_template_vars(task=first)
        system = self._template(self.agent.config.system_template, variables)
        instance = self._template(self.agent.config.instance_template, variables)
        return [
            ("system", {"role": "system", "content": system}),
            ("query", {"role": "user", "content": instance}),
        ]

    def feedback(self, comment: str) -> Message:
        return {"role": "user", "content": self._render("feedback.j2", comment=comment)}

    def run_stage(
        self, stage_idx: int, task: str, *, opening: list[tuple[str, Message]]
    ) -> StageRun:
        self.stage_idx, self.task, self.stage = stage_idx, task, Counters()
        for kind, message in opening:
            self.add(kind, message)
        return self.work()

    def add(self, kind: str, message: Message, **extra: Any) -> None:
        self.agent.messages.append(message)
        self._record(kind, message, **extra)

    def work(self) -> StageRun:
        """mini-swe-agent's steps until it submits, or a budget or its format errors end the stage."""
        from minisweagent.exceptions import FormatError, Submitted

        format_errors = 0
        while (reason := self._limit_reached()) is None:
            start, self.shell.outputs = len(self.agent.messages), []
            self.model.attempt = format_errors
            try:
                self.agent.step()
            except ContextOverflow as exc:
                return StageRun(False, f"context window exceeded (the server refused: {exc})")
            except FormatError as exc:
                format_errors += 1
                self._count_reply(exc.messages[0])
                for message in exc.messages:
                    self.add("format_error", wire(message))
                if format_errors >= self.config.max_format_errors:
                    return StageRun(False, f"{format_errors} replies without a usable action")
                continue
            except Submitted:
                self._observe_submit(start)
                return StageRun(True)
            format_errors = 0
            self._recorded_since(start)
            self._maybe_hook(self.tools)
        return StageRun(False, reason)

    # -- one step -----------------------------------------------------------------------------

    def _observe_submit(self, start: int) -> None:
        """The submitting step: its assistant turn and a tool result for every call it made (the
        conversation goes on into the next stage, and every call needs its answer)."""
        assistant, outputs = self.agent.messages[-1], self.shell.outputs
        variables = self.agent.get_template_vars()
        observed = self.model.format_observation_messages(assistant, outputs, variables)
        self.agent.messages.extend(observed)
        self._recorded_since(start)

    def _recorded_since(self, start: int) -> None:
        """Store the messages `step` appended (an assistant turn and its observations)."""
        new = self.agent.messages[start:]
        assistant = next((m for m in new if m.get("role") == "assistant"), None)
        observations: list[str] = []
        for message in new:
            if message.get("role") == "assistant":
                self._count_reply(message)
                prompt, completion = usage(message)
                self._record(
                    "assistant", wire(message), prompt_tokens=prompt, completion_tokens=completion
                )
            else:
                observations.append(str(message.get("content") or ""))
                call = self._call_of(assistant, message.get("tool_call_id"))
                self._record("tool", wire(message), tool_call=call, observation=observations[-1])
        if assistant is not None:
            calls = len(assistant.get("tool_calls") or [])
            for counters in (self.chain, self.stage):
                counters.tool_calls += calls
            record = StepRecord(self.chain.steps, self.stage_idx, wire(assistant), observations)
            self.history.append(record)

    @staticmethod
    def _call_of(assistant: dict[str, Any] | None, call_id: Any) -> dict[str, Any] | None:
        calls = wire(assistant).get("tool_calls", []) if assistant else []
        return next((call for call in calls if call["id"] == call_id), None)

    def _record(self, kind: str, message: Message, **extra: Any) -> None:
        if self.sink is not None:
            self.sink.step(self.stage_idx, kind, message, **extra)

    def _count_reply(self, message: dict[str, Any]) -> None:
        self._tally(*usage(message))

    # -- prompts ------------------------------------------------------------------------------

    def _render(self, name: str, **variables: Any) -> str:
        return render(PROMPTS, name, submit_line=SUBMIT_LINE, **variables)

    @staticmethod
    def _template(text: str, variables: dict[str, Any]) -> str:
        from jinja2 import StrictUndefined, Template

        return Template(text, undefined=StrictUndefined).render(**variables)


@dataclass(frozen=True)
class MiniScaffold:
    """Makes the MiniLoop of each rollout (prchain.agent.scaffold.Scaffold)."""

    mini: dict[str, Any]  # the mini-swe-agent config (agent.mini_config), read once

    def loop(
        self,
        llm: ChatLLM,
        env: Environment,
        config: AgentConfig,
        sink: StepSink,
        hook: StepHook | None,
        rollout_id: int,
        messages: list[Message],
        chain: Counters,
    ) -> MiniLoop:
        return MiniLoop(
            llm, env, config, sink, hook, rollout_id, messages=messages, chain=chain, mini=self.mini
        )


def tool_schemas() -> list[dict[str, Any]]:
    """The tools a mini-swe-agent trajectory was made with (its one `bash` tool)."""
    load_mini()
    from minisweagent.models.utils.actions_toolcall import BASH_TOOL

    return [dict(BASH_TOOL)]


def provenance(config_spec: str) -> dict[str, str]:
    """The rollout row's prompt and tool-schema hashes for mini-swe-agent rollouts: its config's
    text with prchain's stage prompts for it, and its tool schema."""
    import hashlib
    import json

    from prchain.agent.provenance import prompts_hash, tool_schema_hash

    config = json.dumps(mini_config(config_spec), sort_keys=True)
    digest = hashlib.sha256(f"{prompts_hash(PROMPTS)}\0{config}".encode())
    return {"prompt_hash": digest.hexdigest(), "tool_schema_hash": tool_schema_hash(tool_schemas())}
