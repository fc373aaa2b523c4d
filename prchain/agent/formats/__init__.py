"""The export's output formats, one module each; every one starts from the OpenAI-shaped record
`prchain.agent.export.build_record` makes (messages, tools, metadata).

- openai: that record (reasoning in `reasoning_content` when kept)
- sharegpt: LLaMA-Factory's `conversations` with human/gpt/function_call/observation turns
- atif: Harbor's Agent Trajectory Interchange Format (steps with tool calls and observations)
The container follows the file name: `.parquet` writes Parquet, anything else JSON Lines.
"""
