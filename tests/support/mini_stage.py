"""mini-swe-agent on one exported stage by its `image_name`, as a SWE-bench user runs it: its own
`benchmarks/swebench.yaml`, its `DockerEnvironment` on the row's image with no network, the row's
install commands first (the image holds no checkout), the problem statement as the task, and a model
behind an OpenAI-compatible `base_url` (the scripted server in tests and benches)."""

from __future__ import annotations

from typing import Any

from tests.support.llm_fixtures import FAKE_API_KEY


def mini_swe_agent_on(row: dict[str, Any], base_url: str) -> dict[str, Any]:
    """Run mini-swe-agent on a runnable row; its exit info (the submission is the patch)."""
    from prchain.agent.mini import load_mini

    load_mini()  # quietly: no banner, no price-map download
    from minisweagent.agents.default import DefaultAgent
    from minisweagent.config import get_config_from_spec
    from minisweagent.environments.docker import DockerEnvironment
    from minisweagent.models.litellm_model import LitellmModel

    config = get_config_from_spec("benchmarks/swebench.yaml")
    install = row["install_config"]
    env_config = {**config["environment"], "cwd": install["workdir"], "image": row["image_name"]}
    env_config.pop("environment_class")
    env_config["run_args"] = ["--rm", "--network", "none"]
    env = DockerEnvironment(**env_config)
    try:
        for command in install["install"]:
            done = env.execute({"command": command}, cwd="/")
            if done["returncode"] != 0:
                raise RuntimeError(f"install step failed: {command}: {done['output'][-300:]}")
        model = LitellmModel(
            model_name="openai/policy",
            model_kwargs={"api_base": base_url, "api_key": FAKE_API_KEY},
            cost_tracking="ignore_errors",
            observation_template=config["model"]["observation_template"],
            format_error_template=config["model"]["format_error_template"],
        )
        agent = DefaultAgent(model, env, **config["agent"])
        return agent.run(row["problem_statement"])
    finally:
        env.cleanup()
