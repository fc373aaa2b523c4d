"""Reasoning models and servers whose tool-call parser missed: the real openai client against the
scripted server for reasoning fields and <think> blocks, and every text tool-call shape we read."""

from __future__ import annotations

import json

import pytest
from sqlalchemy import Engine

from prchain.agent.guard import missing_arguments, no_call_error
from prchain.core.errors import BudgetExhausted
from prchain.dev.fake_llm import ScriptedLLMServer
from prchain.llm.client import LLMClient
from prchain.llm.config import LLMConfig
from prchain.llm.parsing import extract_json_object
from prchain.llm.reasoning import split_think
from prchain.llm.toolcalls import calls_from_text, echoed_tool, unknown_tool
from tests.support.llm_fixtures import make_test_llm_config

ASK = [{"role": "user", "content": "Score this patch."}]
NAMES = ("bash", "str_replace_editor", "submit")


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
def test_a_reasoning_field_is_kept_apart_and_cached(
    fake_llm: ScriptedLLMServer, llm_config: LLMConfig, engine: Engine, field: str
) -> None:
    # vLLM/SGLang/llama.cpp send `reasoning_content`; newer vLLM and Ollama send `reasoning`.
    thought = 'Maybe {"score": 0.1}? No, the patch is fine.'
    fake_llm.push(model="judge", content='{"score": 0.9}', **{field: thought})
    value, completion = LLMClient(llm_config, engine).complete_parsed(
        "judge", ASK, extract_json_object
    )
    assert value == {"score": 0.9} and completion.reasoning == thought
    again = LLMClient(llm_config, engine).complete("judge", ASK)
    assert again.cached and again.reasoning == thought


def test_a_think_block_never_reaches_the_parser(
    fake_llm: ScriptedLLMServer, llm_config: LLMConfig
) -> None:
    fake_llm.push(model="judge", content='<think>\n{"score": 0.1} first?\n</think>\n{"score": 0.8}')
    value, completion = LLMClient(llm_config).complete_parsed("judge", ASK, extract_json_object)
    assert value == {"score": 0.8} and completion.content == '{"score": 0.8}'
    assert completion.reasoning == '{"score": 0.1} first?'


@pytest.mark.parametrize(
    ("content", "answer", "reasoning"),
    [
        ("<think>a</think>b", "b", "a"),
        ("a</think>\nb", "b", "a"),  # DeepSeek-R1: the opening tag was in the prompt
        ("b <think>a</think> c", "b  c", "a"),
        ("b <think>cut off by max_tokens", "b", "cut off by max_tokens"),
        ("no reasoning", "no reasoning", ""),
    ],
)
def test_think_blocks_in_every_position(content: str, answer: str, reasoning: str) -> None:
    assert split_think(content) == (answer, reasoning)


BASH_LS = {"name": "bash", "arguments": {"command": "ls"}}


@pytest.mark.parametrize(
    "text",
    [
        '<tool_call>\n{"name": "bash", "arguments": {"command": "ls"}}\n</tool_call>',  # Hermes/Qwen2.5
        'I will look first.\n<tool_call>{"name": "bash", "arguments": {"command": "ls"}}',  # unclosed
        '<function=bash>{"command": "ls"}</function>',  # Llama 3.1 custom format
        "<function=bash>\n<parameter=command>\nls\n</parameter>\n</function>",  # Qwen3-Coder
        '<|python_tag|>{"name": "bash", "parameters": {"command": "ls"}}',  # Llama 3.x JSON
        'Let me list.\n{"name": "bash", "arguments": {"command": "ls"}}',  # bare JSON after prose
        '```json\n{"type": "function", "function": {"name": "bash", "arguments": "{\\"command\\": \\"ls\\"}"}}\n```',
        '[{"name": "bash", "arguments": {"command": "ls"}}]',
    ],
)
def test_tool_calls_written_as_text_are_read_in_every_server_shape(text: str) -> None:
    found = calls_from_text(text, NAMES)
    assert found is not None
    [call], _prose = found
    assert call["function"]["name"] == "bash"
    assert json.loads(call["function"]["arguments"]) == BASH_LS["arguments"]


@pytest.mark.parametrize(
    "text",
    [
        "I looked at the code and it seems fine.",
        '{"name": "rm_rf", "arguments": {}}',  # not one of our tools
        '{"score": 0.9}',
        "<tool_call>not json</tool_call>",
    ],
)
def test_text_without_a_call_of_our_tools_is_not_a_call(text: str) -> None:
    assert calls_from_text(text, NAMES) is None


def test_a_budget_without_a_store_counts_this_process(fake_llm: ScriptedLLMServer) -> None:
    fake_llm.push(model="judge", content="fine", times=None)
    client = LLMClient(make_test_llm_config(budget_tokens=400, cache=False))
    with pytest.raises(BudgetExhausted, match=r"spent .* over \d+ paid calls"):
        for _ in range(100):
            client.complete("judge", ASK)
    assert 0 < len(fake_llm.requests) < 100
    spent = client.budget.spent()
    assert spent.calls == len(fake_llm.requests) and spent.tokens <= 400


@pytest.mark.parametrize(
    ("text", "prose"),
    [
        # Two calls in one reply: both are read and neither stays behind as text (issue 21).
        (
            'First:\n{"name": "bash", "arguments": {"command": "ls"}}\n'
            '{"name": "bash", "arguments": {"command": "pwd"}}',
            "First:",
        ),
        ('{"name": "bash", "arguments": {"command": "ls"}}}', ""),  # a stray brace after it
        ('<tool_call>{"name": "bash", "arguments": {"command": "ls"}}}</tool_call>', ""),
        (
            'Looking.\n<tool_call>{"name": "bash", "arguments": {"command": "ls"}}</tool_call>\n}',
            "Looking.",
        ),
    ],
)
def test_nothing_of_a_call_stays_in_the_prose(text: str, prose: str) -> None:
    found = calls_from_text(text, NAMES)
    assert found is not None
    calls, left = found
    assert json.loads(calls[0]["function"]["arguments"]) == {"command": "ls"} and left == prose


def test_an_echoed_tool_definition_is_not_a_call_and_is_named() -> None:
    echoed = json.dumps(
        {
            "name": "bash",
            "description": "Run a shell command.",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
        }
    )
    assert calls_from_text(echoed, NAMES) is None
    assert echoed_tool(echoed, NAMES) == "bash"
    assert no_call_error(echoed).startswith("Your reply repeated the definition of the `bash` tool")
    assert no_call_error('{"name": "python", "arguments": {}}').startswith("You called `python`")
    assert unknown_tool('{"name": "bash", "arguments": {}}', NAMES) is None


def test_a_call_missing_required_arguments_names_them() -> None:
    call = {
        "id": "c",
        "type": "function",
        "function": {"name": "str_replace_editor", "arguments": "{}"},
    }
    assert missing_arguments([call]) == (
        "Your call to `str_replace_editor` is missing the required arguments `command`, `path`."
    )
    bash = {
        "id": "c",
        "type": "function",
        "function": {"name": "bash", "arguments": '{"command": "ls"}'},
    }
    assert missing_arguments([bash]) is None
